/* call-paths.c — heap by call path, worked out by hand, for `cc-memwrap export --format folded`.
 *
 * A node is 24 bytes (a pointer and 16 chars). Requested heap over the run:
 *   build(3)  main;build;new_node  3 × 24       heap  72
 *   build(2)  main;build;new_node  2 × 24       heap 120
 *   scratch   main;scratch         100          heap 220
 *   calloc    main                 4 × 8 = 32   heap 252
 *   release(a)                     frees 72     heap 180
 *   realloc   main                 100 → 200    heap 280   the peak: b 48, t 32, s 200 live
 *   free(t)                                     heap 248   leaked at the end: b 48, s 200
 *
 *   metric     line
 *   allocated  main 232; main;build;new_node 120; main;scratch 100
 *   count      main 2;   main;build;new_node 5;   main;scratch 1
 *   peak       main 232; main;build;new_node 48
 *   leaked     main 200; main;build;new_node 48
 * (realloc's new block belongs to main, which called realloc, not to scratch, which made the old one.)
 */
#include <stdlib.h>
#include <string.h>

struct node {
  struct node *next;
  char tag[16];
};

static struct node *new_node(struct node *next) {
  struct node *n = malloc(sizeof *n);
  n->next = next;
  memset(n->tag, 0, sizeof n->tag);
  return n;
}

static struct node *build(int k) {
  struct node *head = NULL;
  for (int i = 0; i < k; i++) head = new_node(head);
  return head;
}

static char *scratch(void) {
  char *s = malloc(100);
  memset(s, 1, 100);
  return s;
}

static void release(struct node *n) {
  while (n != NULL) {
    struct node *next = n->next;
    free(n);
    n = next;
  }
}

int main(void) {
  struct node *a = build(3);
  struct node *b = build(2);
  char *s = scratch();
  int *t = calloc(4, 8);
  release(a);
  s = realloc(s, 200);
  free(t);
  return b != NULL && s != NULL ? 0 : 1;
}
