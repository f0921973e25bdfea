/* Two threads and a static table, for the viewer's export and count tests.
 *
 * main fills a 2 KiB static table, makes three 100-byte blocks, and starts
 * a worker that makes a 64-byte block, grows it by realloc to 128 then 256
 * bytes (each realloc ends the block it was given and makes a new one),
 * makes two 32-byte blocks and frees one of them and the grown buffer.
 * After the join main frees two of its blocks and, through a recursion four
 * deep with a 256-byte buffer per frame, reaches its deepest stack.
 *
 * Then 1000 calls of churn() each make and free a 16-byte block: enough
 * events that the whole run is drawn as summarised columns.
 *
 * Counted by hand, the program's own blocks: made 3 + 1 + 2 + 2 + 1000 =
 * 1008 (2 by realloc), ended 2 (by realloc) + 2 (worker's frees) + 2
 * (main's frees) + 1000 = 1006; the worker's other 32-byte block and
 * main's third block stay live at exit. libc may add blocks of its own
 * (the stdout buffer, the thread's), which every panel counts alike. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char table[2048];

static void *worker(void *arg) {
  (void)arg;
  char *buf = malloc(64);
  buf = realloc(buf, 128);
  buf = realloc(buf, 256);
  char *a = malloc(32);
  char *b = malloc(32);
  memset(buf, 1, 256);
  free(a);
  free(buf);
  return b;
}

static int deep(int level) {
  char scratch[256];
  memset(scratch, level, sizeof scratch);
  return level == 0 ? scratch[7] : scratch[level] + deep(level - 1);
}

static int churn(int i) {
  char *p = malloc(16);
  p[0] = (char)i;
  int v = p[0];
  free(p);
  return v;
}

int main(void) {
  memset(table, 3, sizeof table);
  char *x = malloc(100);
  char *y = malloc(100);
  char *z = malloc(100);
  pthread_t t;
  void *kept = NULL;
  if (pthread_create(&t, NULL, worker, NULL) != 0) return 1;
  pthread_join(t, &kept);
  free(x);
  free(y);
  int sum = 0;
  for (int i = 0; i < 1000; i++) sum += churn(i);
  printf("%d %d %d %p %p\n", deep(4), table[5], sum, (void *)z, kept);
  return 0;
}
