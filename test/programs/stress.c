/* stress.c — the runtime under load and at the edges, one mode per argument:
 *
 *   threads   16 threads, each 5,000 × (malloc 24, realloc to 48, free),
 *             ending through pthread_exit from two calls deep
 *   fork      a child that allocates and _exits, and a child that execs
 *   signal    1,000 SIGUSR1 raised; the handler allocates 100 and frees it
 *   longjmp   10,000 levels of recursion, each allocating 8 bytes, left by
 *             one longjmp from the deepest; main then frees them all
 *   deep      recursion 100,000 deep
 *   huge      one 1 GiB block, touched at both ends
 *   oom       malloc of 2 GiB under an address-space limit: NULL
 *   edges     realloc(p, 0) and free(NULL)
 *   quick     quick_exit(5) with an at_quick_exit handler that allocates
 *   double    free of the same block twice (glibc aborts the program)
 *   badfree   free of a pointer to the stack (glibc aborts the program)
 *
 * The counts each mode must leave in the trace are worked out by hand in
 * test/e2e/stress.test.ts. */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define THREADS 16
#define ROUNDS 5000

static void finish_thread(void)
{
  pthread_exit(NULL);
}

static void *churn(void *arg)
{
  int i;
  (void)arg;
  for (i = 0; i < ROUNDS; i++) {
    char *p = malloc(24);
    char *q;
    if (!p) abort();
    p[0] = (char)i;
    q = realloc(p, 48);
    if (!q) abort();
    free(q);
  }
  finish_thread();
  return NULL;
}

static int threads(void)
{
  pthread_t t[THREADS];
  int i;
  for (i = 0; i < THREADS; i++)
    if (pthread_create(&t[i], NULL, churn, NULL) != 0) return 1;
  for (i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  printf("%d threads done\n", THREADS);
  return 0;
}

static int forks(const char *self)
{
  int status;
  pid_t child = fork();
  if (child == 0) {
    char *a = malloc(10), *b = malloc(20);
    free(a);
    free(b);
    _exit(0);
  }
  waitpid(child, &status, 0);
  printf("child exited %d\n", WEXITSTATUS(status));
  fflush(stdout);
  child = fork();
  if (child == 0) {
    execl(self, self, "edges", (char *)NULL);
    _exit(127);
  }
  waitpid(child, &status, 0);
  printf("exec child exited %d\n", WEXITSTATUS(status));
  return 0;
}

static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
  char *p = malloc(100);
  (void)sig;
  if (p) p[99] = 0;
  free(p); /* in the handler */
  handled++;
}

static int signals(void)
{
  int i;
  signal(SIGUSR1, on_usr1);
  for (i = 0; i < 1000; i++) raise(SIGUSR1);
  printf("handled %d\n", (int)handled);
  return 0;
}

#define LEVELS 10000
static jmp_buf out;
static void *kept[LEVELS];

static void descend(int level)
{
  kept[level] = malloc(8);
  if (!kept[level]) return;
  if (level + 1 < LEVELS)
    descend(level + 1);
  else
    longjmp(out, 1);
}

static int jumps(void)
{
  int i;
  if (setjmp(out) == 0) descend(0);
  for (i = 0; i < LEVELS; i++) free(kept[i]);
  printf("back from %d levels\n", LEVELS);
  return 0;
}

static long down(long n)
{
  volatile char pad[16];
  pad[0] = (char)n;
  return n == 0 ? pad[0] : 1 + down(n - 1);
}

static int huge(void)
{
  size_t n = (size_t)1 << 30;
  char *p = malloc(n);
  if (!p) return 1;
  p[0] = 1;
  p[n - 1] = 2;
  printf("touched %d\n", p[0] + p[n - 1]);
  free(p);
  return 0;
}

static int oom(void)
{
  void *p = malloc((size_t)1 << 31);
  printf("%s\n", p ? "allocated" : "NULL");
  free(p);
  return 0;
}

static int edges(void)
{
  char *p = malloc(32);
  void *r = realloc(p, 0);
  free(NULL);
  printf("realloc to 0 gave %s\n", r ? "a block" : "NULL");
  free(r);
  return 0;
}

static void on_quick_exit(void)
{
  char *p = malloc(50);
  if (p) p[49] = 0;
  free(p); /* at quick exit */
  if (write(1, "handler ran\n", 12) != 12) abort();
}

static int quick(void)
{
  at_quick_exit(on_quick_exit);
  quick_exit(5);
}

/* The pointers are volatile so that the compiler cannot see the mistake
 * and delete the calls (at -O2 it removes an unused malloc/free pair). */
static int double_free(void)
{
  char *volatile p = malloc(40);
  printf("freeing twice\n");
  fflush(stdout);
  free(p);
  free(p); /* the second time */
  return 0;
}

static int bad_free(void)
{
  /* on_stack[0] is what glibc reads as p's size field: zero, not whatever
   * the stack held, so its message does not depend on what ran before */
  long on_stack[4] = {0, 0, 0, 0};
  long *volatile p = on_stack + 1;
  printf("freeing the stack\n");
  fflush(stdout);
  free(p); /* not a heap block */
  return 0;
}

int main(int argc, char **argv)
{
  const char *mode = argc > 1 ? argv[1] : "";
  if (!strcmp(mode, "threads")) return threads();
  if (!strcmp(mode, "fork")) return forks(argv[0]);
  if (!strcmp(mode, "signal")) return signals();
  if (!strcmp(mode, "longjmp")) return jumps();
  if (!strcmp(mode, "deep")) return printf("depth %ld\n", down(100000)) < 0;
  if (!strcmp(mode, "huge")) return huge();
  if (!strcmp(mode, "oom")) return oom();
  if (!strcmp(mode, "edges")) return edges();
  if (!strcmp(mode, "quick")) return quick();
  if (!strcmp(mode, "double")) return double_free();
  if (!strcmp(mode, "badfree")) return bad_free();
  fprintf(stderr, "usage: stress threads|fork|signal|longjmp|deep|huge|oom|edges|quick|double|badfree\n");
  return 2;
}
