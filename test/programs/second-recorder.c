/* second-recorder.c — the main thread allocates and frees without a pause
 * while other threads start recording beside it: one made by pthread_create,
 * one by C11's thrd_create (which glibc starts without calling the
 * pthread_create a program or runtime can interpose), one by a SIGEV_THREAD
 * timer (glibc's own helper thread running our callback).  While only the
 * main thread records, the runtime's heap index and sequence number take no
 * atomic instructions; each newcomer must end that before its first record.
 *
 * Every round allocates a pair (a node pointing at a payload) and frees the
 * node first, so each free scans a block and finds one linked block, then
 * frees the payload.  Expected: main MAIN_ROUNDS pairs, each of the three
 * threads THREAD_ROUNDS pairs; all freed; prints the totals.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

#define MAIN_ROUNDS 3000000
#define THREAD_ROUNDS 300000

struct node {
  struct node *next;
  char *payload;
};

static volatile int started, finished;

static void pairs(long rounds) {
  for (long i = 0; i < rounds; i++) {
    struct node *n = malloc(sizeof *n);
    n->next = NULL;
    n->payload = malloc((size_t)(16 + (i % 48)));
    n->payload[0] = (char)i;
    char *p = n->payload;
    free(n);
    free(p);
  }
}

static void *by_pthread(void *arg) {
  (void)arg;
  pairs(THREAD_ROUNDS);
  __atomic_add_fetch(&finished, 1, __ATOMIC_SEQ_CST);
  return NULL;
}

static int by_thrd(void *arg) {
  (void)arg;
  pairs(THREAD_ROUNDS);
  __atomic_add_fetch(&finished, 1, __ATOMIC_SEQ_CST);
  return 0;
}

static void by_timer(union sigval v) {
  (void)v;
  pairs(THREAD_ROUNDS);
  __atomic_add_fetch(&finished, 1, __ATOMIC_SEQ_CST);
}

int main(void) {
  pthread_t pt;
  thrd_t ct;
  timer_t timer;
  struct sigevent ev;
  struct itimerspec soon;
  long done = 0, step = MAIN_ROUNDS / 8;
  memset(&ev, 0, sizeof ev);
  ev.sigev_notify = SIGEV_THREAD;
  ev.sigev_notify_function = by_timer;
  memset(&soon, 0, sizeof soon);
  soon.it_value.tv_nsec = 1000;
  /* each thread starts while the main thread is in the middle of its loop */
  pairs(step), done += step;
  if (pthread_create(&pt, NULL, by_pthread, NULL) != 0) return 1;
  pairs(step), done += step;
  if (thrd_create(&ct, by_thrd, NULL) != thrd_success) return 1;
  pairs(step), done += step;
  if (timer_create(CLOCK_MONOTONIC, &ev, &timer) != 0 || timer_settime(timer, 0, &soon, NULL) != 0) return 1;
  pairs(MAIN_ROUNDS - done);
  pthread_join(pt, NULL);
  thrd_join(ct, NULL);
  while (__atomic_load_n(&finished, __ATOMIC_SEQ_CST) < 3) usleep(1000);
  timer_delete(timer);
  printf("main %d pairs, threads 3 x %d pairs\n", MAIN_ROUNDS, THREAD_ROUNDS);
  return 0;
}
