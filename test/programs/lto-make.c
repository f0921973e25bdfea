/* The second unit of lto-main.c: one allocation, in a function the other unit calls. */
#include <stdlib.h>

int *make(int n)
{
  int *numbers = malloc(n * sizeof *numbers);
  for (int i = 0; i < n; i++) numbers[i] = i;
  return numbers;
}
