/* Several index buckets of events (about 100,000), for the HTML report of a
 * trace opened through its index (test/gui/html-report-index.test.ts): its
 * window around the total peak — one 1 MiB buffer in the middle of the run —
 * holds events whose answers reach outside it: frames entered before it (main
 * and six levels of work), and a ring of 1,024 slots, each holding a block
 * that points to another, freed alone when its slot comes round again (about
 * 25,000 events later): the block freed after the window, the one it points
 * to orphaned after it. */
#include <stdlib.h>
#include <string.h>

#define ROUNDS 4000
#define RING 1024

struct node { struct node *next; int v; };

static struct node *ring[RING];

static struct node *make(struct node *next, int v) {
  struct node *n = malloc(sizeof *n);
  n->next = next;
  n->v = v;
  return n;
}

static void round_of(int r) {
  free(ring[r % RING]); /* the block it points to is orphaned */
  ring[r % RING] = make(make(NULL, r), r);
  struct node *list = NULL;
  for (int i = 0; i < 4; i++) list = make(list, i);
  while (list != NULL) {
    struct node *next = list->next;
    free(list);
    list = next;
  }
  if (r == ROUNDS / 2) {
    char *big = malloc(1 << 20);
    memset(big, 1, 1 << 20);
    free(big);
  }
}

static void work(int depth) {
  if (depth > 0) {
    work(depth - 1);
    return;
  }
  for (int r = 0; r < ROUNDS; r++) round_of(r);
}

int main(void) {
  work(5);
  for (int i = 0; i < RING; i++) free(ring[i]);
  return 0;
}
