/* libraries.c — heap calls made by libc itself (fopen allocates its FILE
 * inside libc.so.6; strdup, called through a function pointer, allocates
 * there too) next to calls at instrumented sites: `report --by library`
 * has a libc row and an "(instrumented code)" row. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *(*volatile dup)(const char *) = strdup;

int main(void)
{
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return 1;
  char line[256];
  if (!fgets(line, sizeof line, f)) return 2;
  fclose(f);
  char *copy = dup("a string libc copies");
  char *mine = malloc(100);
  if (!copy || !mine) return 3;
  printf("%zu\n", strlen(copy));
  free(copy);
  free(mine);
  return 0;
}
