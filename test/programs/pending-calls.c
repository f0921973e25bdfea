/* pending-calls.c — calls written only where they matter (--mw-calls=heap,
 * the default at -O1 and above).  Every function here is recorded: each can
 * reach lookup(), which allocates on a miss; most calls hit and do no heap
 * work.  argv[1] picks how the run goes on after a warm-up of 100,000 hits:
 *   run     returns normally
 *   segv    dereferences NULL ten calls deep (descend)
 *   exit    calls exit(3) ten calls deep
 *   jump    longjmps to main from ten calls deep, past calls written and
 *           calls still pending, then allocates in main
 *   signal  raises SIGUSR1 ten calls deep; the handler allocates
 *   fork    forks ten calls deep; the child allocates and exits
 *   reach   a shallow call whose leaf takes a large frame, after a deeper
 *           chain of calls: prints the deepest stack the leaf reached, from
 *           the stack base as the trace measures depths
 * It prints the sum of the warm-up so that a plain build can be compared. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern void *__libc_stack_end;

struct entry {
  int key;
  struct entry *next;
};

static struct entry *table[64];
static jmp_buf back;
static const char *how = "run";
static char *deepest = (char *)-1;

static struct entry *lookup(int key)
{
  struct entry **slot = &table[key & 63], *e;
  for (e = *slot; e; e = e->next)
    if (e->key == key) return e;
  e = malloc(sizeof *e);
  if (!e) exit(1);
  e->key = key;
  e->next = *slot;
  *slot = e;
  return e;
}

static int step(int key) { return lookup(key)->key & 1; }

static long warm_up(int n)
{
  long sum = 0;
  int i;
  for (i = 0; i < n; i++) sum += step((i * 7) % 500);
  return sum;
}

static void on_signal(int sig)
{
  char *p = malloc(40);
  if (!p) _exit(1);
  p[0] = (char)sig;
  free(p);
}

/* Ten calls deep, then the ending asked for.  The outer five allocate (key 1000 + n is new), so their calls are
 * written; the inner six make no call before the ending, so theirs are still pending there. */
static int descend(int n)
{
  int r = n > 5 ? step(1000 + n) : n;
  if (n > 0) return descend(n - 1) + r;
  if (strcmp(how, "segv") == 0) {
    volatile int *nowhere = NULL;
    *nowhere = r;
  } else if (strcmp(how, "exit") == 0) {
    exit(3);
  } else if (strcmp(how, "jump") == 0) {
    longjmp(back, 1);
  } else if (strcmp(how, "signal") == 0) {
    raise(SIGUSR1);
  } else if (strcmp(how, "fork") == 0) {
    pid_t child = fork();
    if (child == 0) {
      char *p = malloc(9);
      if (!p) _exit(1);
      free(p);
      _exit(0);
    }
    if (child > 0) waitpid(child, NULL, 0);
  }
  return r;
}

static __attribute__((noinline)) void note_depth(char *p)
{
  if (p < deepest) deepest = p;
}

/* A leaf with a large frame: summarised, its bound added to its callers' frames. */
static __attribute__((noinline)) int pad(int v)
{
  volatile char room[3000];
  room[v % 3000] = (char)v;
  note_depth((char *)room);
  return room[v % 3000];
}

static int shallow(int v) { return pad(v) + step(v); }

static int chain(int n) { return n > 0 ? chain(n - 1) + step(n) : step(0); }

int main(int argc, char **argv)
{
  long sum;
  if (argc > 1) how = argv[1];
  signal(SIGUSR1, on_signal);
  sum = warm_up(100000);
  printf("sum %ld\n", sum);
  fflush(stdout);
  if (strcmp(how, "reach") == 0) {
    free(malloc(1)); /* a record: the chain's calls below are the deepest since */
    sum += chain(40);
    sum += shallow(3);
    printf("deepest %ld\n", (long)((char *)__libc_stack_end - deepest));
    return 0;
  }
  if (strcmp(how, "jump") == 0 && setjmp(back) != 0) {
    char *after = malloc(7);
    free(after);
    printf("jumped\n");
    return 0;
  }
  sum += descend(10);
  return sum < 0;
}
