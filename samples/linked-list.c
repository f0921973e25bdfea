/* linked-list.c — what a free really releases.
 *
 * The example of the published design: three list nodes, each allocated in
 * turn and linked from the one before.  Freeing the middle node releases
 * 24 bytes, but the third node is linked only from it: after that free
 * nothing points to the third node any more, and it leaks.
 *
 * Expected observations (checked by test/record.test.ts):
 *   - 3 allocations of sizeof(struct node) at lines 31, 32 and 33;
 *   - the free at line 38 releases the block from line 32, and its linked
 *     set is exactly the block from line 33;
 *   - at exit, the blocks from lines 31 and 33 are still allocated.
 */
#include <stdio.h>
#include <stdlib.h>

struct node {
  int value;
  struct node *next;
};

static struct node *make_node(int value, struct node *next) {
  struct node *n = malloc(sizeof *n);
  if (n == NULL) exit(1);
  n->value = value;
  n->next = next;
  return n;
}

int main(void) {
  struct node *data = malloc(sizeof *data);
  data->next = malloc(sizeof *data->next);
  data->next->next = malloc(sizeof *data->next->next);
  data->value = 1;
  data->next->value = 2;
  data->next->next->value = 3;
  data->next->next->next = NULL;
  free(data->next); /* the third node is orphaned here */
  data->next = make_node(4, NULL);
  printf("first=%d second=%d\n", data->value, data->next->value);
  free(data->next);
  return 0;
}
