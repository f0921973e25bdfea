/* endings.c — a program that ends badly on request.
 *
 * argv[1]: "segv" dereferences NULL, "abort" calls abort(), "hang" allocates
 * then waits to be killed (the test sends SIGKILL), "exit" calls exit(3) from
 * five frames deep, anything else returns 0.  Before ending it makes 5
 * allocations, so each trace must hold at least those 5 and the calls.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void deep(int n, const char *how) {
  char local[64];
  memset(local, n, sizeof local);
  if (n > 0) {
    deep(n - 1, how);
    return;
  }
  if (strcmp(how, "segv") == 0) {
    volatile int *nowhere = NULL;
    *nowhere = local[0];
  } else if (strcmp(how, "abort") == 0) {
    abort();
  } else if (strcmp(how, "exit") == 0) {
    exit(3);
  } else if (strcmp(how, "hang") == 0) {
    printf("ready\n");
    fflush(stdout);
    for (;;) pause();
  }
}

int main(int argc, char **argv) {
  void *keep[5];
  int i;
  for (i = 0; i < 5; i++) keep[i] = malloc((size_t)(100 + i));
  deep(5, argc > 1 ? argv[1] : "");
  for (i = 0; i < 5; i++) free(keep[i]);
  return 0;
}
