/* measured-stacks.c — measured functions (no heap work, no bound before the
 * run) where the probe's depth is not plain: the first call of a new thread
 * (its stack not yet known to the runtime) and a signal handler on another
 * stack (sigaltstack).  After either, a recursion without heap work must
 * still reach the report's peak stack.  The first argument picks which
 * (thread, altstack); the program prints how deep the recursion went below
 * the frame that started it, and the thread's stack base is the runtime's. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *deepest = (char *)-1;
static char *start;
static volatile sig_atomic_t handled;
static char alt[65536];

static __attribute__((noinline)) void note(char *p)
{
  if (p < deepest) deepest = p;
}

static long down(int n)
{
  volatile char pad[64];
  pad[n % 64] = (char)n;
  note((char *)pad);
  return n ? down(n - 1) + pad[n % 64] : 0;
}

static void *worker(void *arg)
{
  char here;
  start = &here;
  return (void *)down((int)(long)arg);
}

static void on_signal(int sig)
{
  handled = sig;
}

int main(int argc, char **argv)
{
  const char *mode = argc > 1 ? argv[1] : "thread";
  char *kept = malloc(8);
  long r = 0;
  if (!kept) return 1;
  if (strcmp(mode, "thread") == 0) {
    pthread_t th;
    void *out;
    if (pthread_create(&th, NULL, worker, (void *)200L) != 0 || pthread_join(th, &out) != 0) return 1;
    r = (long)out;
  } else {
    stack_t ss;
    struct sigaction sa;
    char here;
    ss.ss_sp = alt;
    ss.ss_size = sizeof alt;
    ss.ss_flags = 0;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_ONSTACK;
    if (sigaltstack(&ss, NULL) != 0 || sigaction(SIGUSR1, &sa, NULL) != 0) return 1;
    raise(SIGUSR1);
    start = &here;
    r = down(200) + handled;
  }
  free(kept);
  printf("r %ld\n", r);
  printf("below %ld\n", (long)(start - deepest));
  return 0;
}
