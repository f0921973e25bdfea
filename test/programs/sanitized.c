/* Built with sanitizers and cc-memwrap together (e2e: test/e2e/sanitizers.test.ts).
 * Line numbers of the allocations are checked by the test: keep them.
 *   no argument   three list nodes (24 B each) made and freed, one 40-byte
 *                 block leaked: the sanitizer stays quiet but for the leak
 *   "overflow"    writes one byte past an 8-byte block (line 33)
 *   "overflow-int" a signed int overflow for UBSan (line 37) */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node {
  struct node *next;
  long value;
  long spare;
};

static struct node *push(struct node *head, long value)
{
  struct node *n = malloc(sizeof *n);           /* line 20 */
  n->next = head;
  n->value = value;
  n->spare = 0;
  return n;
}

int main(int argc, char **argv)
{
  const char *what = argc > 1 ? argv[1] : "";
  if (strcmp(what, "overflow") == 0) {
    char *p = malloc(8);
    volatile size_t n = 9;
    memset(p, 0, n);                            /* line 33 */
    free(p);
  } else if (strcmp(what, "overflow-int") == 0) {
    volatile int big = INT_MAX;
    int sum = big + argc;                       /* line 37 */
    printf("%d\n", sum);
  }
  struct node *head = NULL;
  for (long i = 0; i < 3; i++) head = push(head, i);
  long sum = 0;
  while (head) {
    struct node *next = head->next;
    sum += head->value;
    free(head);
    head = next;
  }
  char *lost = malloc(40);                      /* line 49 */
  lost[0] = (char)sum;
  lost = NULL;
  printf("sum %ld\n", sum);
  return 0;
}
