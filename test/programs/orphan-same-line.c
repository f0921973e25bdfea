/* One free that releases a node and orphans another made at the same line: both come from new_node's malloc
 * (line 15). free(head) at line 26 ends head; tail, still linked from head, is never freed: orphaned by that free.
 * By hand: 2 allocations of 16 B (x86-64: an int, padding, a pointer), 1 free, 16 B leaked (tail).
 */
#include <stdio.h>
#include <stdlib.h>

struct node {
  int value;
  struct node *next;
};

static struct node *new_node(int value, struct node *next)
{
  struct node *n = malloc(sizeof *n);
  n->value = value;
  n->next = next;
  return n;
}

int main(void)
{
  struct node *tail = new_node(2, NULL);
  struct node *head = new_node(1, tail);
  printf("head=%d tail=%d\n", head->value, head->next->value);
  free(head);
  return 0;
}
