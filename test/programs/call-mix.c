/* call-mix.c: calls of every shape the recorder writes ENTER and EXIT for,
 * deterministic from run to run (the worker thread runs while main waits):
 * a loop of tiny calls (predicted once the call history repeats), recursion
 * at changing depths, a function with several returns, a longjmp out of
 * nested frames (UNWIND), and heap blocks made and freed among them, one
 * freed with another linked from it. Used to check that format 1.4's compact
 * call records change no number of the report. */
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

struct cell {
  struct cell *next;
  int value;
};

static jmp_buf out;

static int square(int v) { return v * v; }

static int sign(int v) {
  if (v < 0) return -1;
  if (v == 0) return 0;
  return 1;
}

static int depth_sum(int n) {
  int pad[4] = {n, n + 1, n + 2, n + 3};
  if (n == 0) return pad[0];
  return pad[n % 4] + depth_sum(n - 1);
}

static void escape(int n) {
  if (n == 0) longjmp(out, 1);
  escape(n - 1);
}

static struct cell *cons(int value, struct cell *next) {
  struct cell *c = malloc(sizeof *c);
  c->value = value;
  c->next = next;
  return c;
}

static void *worker(void *arg) {
  int *n = arg;
  for (int i = 0; i < 2000; i++) *n += square(i % 7) + sign(i % 3 - 1);
  return NULL;
}

int main(void) {
  long total = 0;
  for (int i = 0; i < 20000; i++) total += square(i % 13) + sign(i % 5 - 2);
  for (int i = 0; i < 300; i++) total += depth_sum(i % 40);
  for (int i = 0; i < 50; i++) {
    if (setjmp(out) == 0) escape(i % 6);
    struct cell *list = cons(i, cons(i + 1, NULL));
    free(list); /* the second cell is linked from the first */
    free(cons(i, NULL));
  }
  int n = 0;
  pthread_t t;
  pthread_create(&t, NULL, worker, &n);
  pthread_join(t, NULL);
  printf("%ld %d\n", total, n);
  return 0;
}
