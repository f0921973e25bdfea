/* ring-kill.c — a run to kill at random points, or end with abort(): step
 * after step, each a few recorded calls and one allocation of a size that
 * names the step (16 + step % 4096 bytes), then the step's number written to
 * standard output with write(2), so the last number a killed run printed
 * names a step whose records were all stored before the kill.
 *
 *   ring-kill N         N steps, then a normal exit
 *   ring-kill N abort   N steps, then abort(): END(signal) is the last record */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int depth(int n) { return n <= 0 ? 0 : 1 + depth(n - 1); }

static void say(long step)
{
  char buf[24];
  int n = 0;
  char tmp[24];
  do {
    tmp[n++] = (char)('0' + step % 10);
    step /= 10;
  } while (step);
  for (int i = 0; i < n; i++) buf[i] = tmp[n - 1 - i];
  buf[n] = '\n';
  if (write(1, buf, (size_t)n + 1) < 0) exit(2);
}

int main(int argc, char **argv)
{
  long steps = argc > 1 ? atol(argv[1]) : 100000, sum = 0;
  void *keep[64];
  memset(keep, 0, sizeof keep);
  for (long i = 1; i <= steps; i++) {
    sum += depth((int)(i % 5));
    void *p = malloc(16 + (size_t)(i % 4096));
    if (!p) return 1;
    free(keep[i % 64]);
    keep[i % 64] = p;
    say(i);
  }
  if (argc > 2 && strcmp(argv[2], "abort") == 0) abort();
  return sum == 0;
}
