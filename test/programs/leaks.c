/* Leak classes at exit (e2e: test/e2e/leaks.test.ts).  Line numbers of the
 * malloc calls are checked by the test: keep them where they are. */
#include <stdio.h>
#include <stdlib.h>

struct node {
  struct node *next;
  long value;
};

static struct node *kept; /* static root: kept and kept->next still reachable */

static void make_leaks(void)
{
  kept = malloc(sizeof *kept);                  /* line 15: reachable (static) */
  kept->next = malloc(sizeof *kept->next);      /* line 16: reachable (through kept) */
  kept->next->next = NULL;
  struct node *head = malloc(sizeof *head);     /* line 18: direct leak */
  head->next = malloc(sizeof *head->next);      /* line 19: indirect leak */
  head->next->next = NULL;
  head = NULL;
}

int main(void)
{
  make_leaks();
  void *volatile on_stack = malloc(32);         /* line 27: reachable (main's stack) */
  char *gone = malloc(8);                       /* line 28: freed */
  free(gone);
  printf("%p\n", (void *)&on_stack);
  exit(0);
}
