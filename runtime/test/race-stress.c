/* race-stress.c — stresses the trace's chunk hand-off between threads and the
 * pre-fault thread (mw-prefault.c): THREADS threads each make ROUNDS (argv[1],
 * default 1,000,000) allocations and frees inside three nested calls, so the
 * trace passes 4 MiB and takes chunks from the pre-fault thread's spans many
 * times over; the main thread forks once the workers are half way, and the
 * child allocates and calls on its own (its own trace) before exiting.
 *
 * With "park" as argv[2] the workers do not end: they wait in pause() while
 * the main thread returns from main, so no thread-specific-data destructor
 * runs (ThreadSanitizer's runtime ends a thread's state in the last
 * destructor round, before the recorder's THREAD_END; race-check.sh).
 *
 * Built with cc-memwrap (runtime/test/race-check.sh, test/e2e/races.test.ts).
 * Expected: THREADS * ROUNDS allocations and as many frees from the workers,
 * plus 1 in the main thread (freed); the child's trace has CHILD_ROUNDS
 * allocations, all freed.  Prints "done" and the child's exit status 0.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define THREADS 8
#define CHILD_ROUNDS 100000

static long rounds = 1000000;
static int halfway, finished, park;

static char *leaf(long i) {
  char *p = malloc((size_t)(16 + (i % 200)));
  if (p) p[0] = (char)i;
  return p;
}

static int middle(long i) {
  char *p = leaf(i);
  int v = p ? p[0] : 0;
  free(p);
  return v;
}

static int outer(long i) { return middle(i) + 1; }

static void *worker(void *arg) {
  long i, sum = 0;
  (void)arg;
  for (i = 0; i < rounds; i++) {
    sum += outer(i);
    if (i == rounds / 2) __atomic_add_fetch(&halfway, 1, __ATOMIC_RELEASE);
  }
  __atomic_add_fetch(&finished, 1, __ATOMIC_RELEASE);
  while (park) pause();
  return (void *)(sum & 1);
}

int main(int argc, char **argv) {
  pthread_t tid[THREADS];
  int t, status = -1;
  char *mine;
  if (argc > 1) rounds = atol(argv[1]);
  park = argc > 2 && strcmp(argv[2], "park") == 0;
  mine = malloc(64);
  for (t = 0; t < THREADS; t++)
    if (pthread_create(&tid[t], NULL, worker, NULL) != 0) return 1;
  while (__atomic_load_n(&halfway, __ATOMIC_ACQUIRE) < THREADS) usleep(1000);
  pid_t pid = fork();
  if (pid == 0) {
    long i, sum = 0;
    for (i = 0; i < CHILD_ROUNDS; i++) sum += outer(i);
    _exit((int)(sum & 0));
  }
  if (pid > 0) waitpid(pid, &status, 0);
  if (park)
    while (__atomic_load_n(&finished, __ATOMIC_ACQUIRE) < THREADS) usleep(1000);
  else
    for (t = 0; t < THREADS; t++) pthread_join(tid[t], NULL);
  free(mine);
  printf("done, child status %d\n", status);
  return 0;
}
