/* With lto-make.c: a program of two units for the LTO tests (test/e2e/lto.test.ts). make() is defined in the
 * other unit and called once, so a link-time optimised build inlines it into main and the program has no
 * symbol `make` left, while a build without LTO across the units keeps it. */
#include <stdio.h>
#include <stdlib.h>

int *make(int n);

int main(void)
{
  int *numbers = make(10);
  char *note = malloc(24);
  snprintf(note, 24, "third=%d", numbers[3]);
  puts(note);
  free(numbers);
  free(note);
  return 0;
}
