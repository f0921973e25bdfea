/* A longjmp back into main after `count` has changed: gcc -O2 -Wextra warns that `count` might be clobbered by
 * longjmp. The instrumented unit has other code around the setjmp, and gcc 12 does not warn there
 * (test/e2e/diagnostics.test.ts, docs/using.md, "Diagnostics"). */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

static jmp_buf on_error;

static void step(int n)
{
  if (n > 2) longjmp(on_error, 1);
}

int main(int argc, char **argv)
{
  int count = argc > 1 ? atoi(argv[1]) : 0;
  char *buffer = malloc(16);
  if (setjmp(on_error)) {
    printf("jumped at %d\n", count);
    free(buffer);
    return 0;
  }
  for (int i = 0; i < 5; i++) {
    count++;
    step(count);
  }
  free(buffer);
  return 1;
}
