/* left-out.c — tiny functions for --mw-no-calls: is_even is a leaf called
 * for every node, push allocates, drop frees a list whose every node links
 * the next (the linked sets), one block leaks. */
#include <stdio.h>
#include <stdlib.h>

struct node {
  struct node *next;
  int value;
};

static int is_even(int v) { return v % 2 == 0; }

static struct node *push(struct node *head, int value)
{
  struct node *n = malloc(sizeof *n);
  if (!n) exit(1);
  n->next = head;
  n->value = value;
  return n;
}

static int count_even(const struct node *n)
{
  int count = 0;
  for (; n; n = n->next) count += is_even(n->value);
  return count;
}

static void drop(struct node *n)
{
  while (n) {
    struct node *next = n->next;
    free(n);
    n = next;
  }
}

int main(void)
{
  struct node *list = NULL;
  char *kept;
  int i;
  for (i = 0; i < 1000; i++) list = push(list, i);
  printf("%d even\n", count_even(list));
  kept = malloc(24);
  if (kept) kept[0] = 1;
  drop(list);
  return 0;
}
