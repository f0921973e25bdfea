/* threads.c — 8 threads each make 100,000 allocations and frees.
 *
 * Expected: 800,000 allocations and 800,000 frees from threads 1..8, each
 * block freed by the thread that allocated it except every 100th, which is
 * handed to the main thread and freed there; nothing lost or duplicated.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 8
#define ROUNDS 100000

struct work {
  int index;
  void *handed[ROUNDS / 100];
};

static void *worker(void *arg) {
  struct work *w = arg;
  int i, kept = 0;
  for (i = 0; i < ROUNDS; i++) {
    char *p = malloc((size_t)(16 + (i % 64)));
    p[0] = (char)i;
    if (i % 100 == 0) w->handed[kept++] = p;
    else free(p);
  }
  return NULL;
}

int main(void) {
  pthread_t tid[THREADS];
  static struct work work[THREADS];
  int t, i;
  for (t = 0; t < THREADS; t++) {
    work[t].index = t;
    if (pthread_create(&tid[t], NULL, worker, &work[t]) != 0) return 1;
  }
  for (t = 0; t < THREADS; t++) pthread_join(tid[t], NULL);
  for (t = 0; t < THREADS; t++)
    for (i = 0; i < ROUNDS / 100; i++) free(work[t].handed[i]);
  printf("done %d threads\n", THREADS);
  return 0;
}
