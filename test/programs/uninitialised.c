/* uninitialised.c — a program with an uninitialised read of its own, run
 * under Valgrind by test/e2e/under-valgrind.test.ts (which checks the line
 * numbers: keep them).
 *
 * A list of 200 nodes, each with words it never writes, is built and then
 * freed node by node from the head, so every free's linked scan reads those
 * words and follows the rest of the list; one more node stays reachable to
 * the end, for the leak scan at exit to read.  Then main branches on an int
 * in a block it never wrote (line 46): memcheck must report that, and only
 * that. */
#include <stdio.h>
#include <stdlib.h>

struct node {
  struct node *next;
  long value;
  long unset[6]; /* never written */
};

static struct node *kept;

static struct node *push(struct node *head, long value)
{
  struct node *n = malloc(sizeof *n); /* line 24 */
  if (!n) exit(1);
  n->next = head;
  n->value = value;
  return n;
}

int main(void)
{
  struct node *head = NULL;
  long sum = 0;
  int *counts, big = 0;
  kept = push(NULL, 0);
  for (long i = 1; i <= 200; i++) head = push(head, i);
  while (head) {
    struct node *next = head->next;
    sum += head->value;
    free(head); /* line 41 */
    head = next;
  }
  counts = malloc(4 * sizeof *counts);
  counts[0] = counts[1] = counts[3] = 0;
  if (counts[2] > 100) big = 1; /* line 46: counts[2] was never written */
  free(counts);
  printf("sum %ld\n", sum);
  (void)big; /* what the read found must not change the output */
  return 0;
}
