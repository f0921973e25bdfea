/* A parent that forks one child part way through its run, both allocating
 * step by step over some milliseconds: the two traces of `cc-memwrap view
 * parent child`, whose lanes must show the child starting later, on one
 * wall-time axis.  Each step makes 200 calls, so the runtime (which reads
 * the clock once every 256 records of a thread) stamps every step.
 *
 *   parent  20 steps of 1 KiB, fork, 20 more steps, waits, frees all 40
 *   child   30 steps of 2 KiB, frees all but the last, _exit(0): its lane
 *           ends with 2 KiB live, drawn no further than its last event */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int tick(int i)
{
  return i * 2;
}

static void *step(size_t size)
{
  char *p = malloc(size);
  int k, sum = 0;
  if (p) memset(p, 1, size);
  for (k = 0; k < 200; k++) sum += tick(k);
  if (p) p[0] = (char)sum;
  usleep(1000);
  return p;
}

int main(void)
{
  void *keep[40];
  int i, status;
  pid_t child;
  for (i = 0; i < 20; i++) keep[i] = step(1024);
  child = fork();
  if (child == 0) {
    void *mine[30];
    for (i = 0; i < 30; i++) mine[i] = step(2048);
    for (i = 0; i < 29; i++) free(mine[i]);
    _exit(0);
  }
  for (i = 20; i < 40; i++) keep[i] = step(1024);
  waitpid(child, &status, 0);
  for (i = 0; i < 40; i++) free(keep[i]);
  return WEXITSTATUS(status);
}
