/* realloc-growth.c — how an array grows decides how often it is copied.
 *
 * append() puts COUNT ints into an array that grows when full.  Growing by
 * one element calls realloc for every append; growing by doubling calls it
 * only when the size reaches a power of two, at the price of some unused
 * room at the end.
 *
 * Build it as it is (grow by one), then with -DDOUBLING.  Lesson text:
 * realloc-growth.md; checked by test/e2e/lessons.test.ts.
 */
#include <stdio.h>
#include <stdlib.h>

#define COUNT 1000

#ifdef DOUBLING
#define GROW(cap) ((cap) == 0 ? 1 : 2 * (cap))
#else
#define GROW(cap) ((cap) + 1)
#endif

struct array {
  int *items;
  size_t len, cap;
};

static void append(struct array *a, int value) {
  if (a->len == a->cap) {
    a->cap = GROW(a->cap);
    /* realloc(NULL, n) is malloc(n): the first growth allocates */
    a->items = realloc(a->items, a->cap * sizeof *a->items);
    if (a->items == NULL) exit(1);
  }
  a->items[a->len++] = value;
}

int main(void) {
  struct array a = {NULL, 0, 0};
  long sum = 0;
  size_t i;
  setvbuf(stdout, NULL, _IONBF, 0); /* no stdio buffer on the heap */
  for (i = 0; i < COUNT; i++) append(&a, (int)i);
  for (i = 0; i < a.len; i++) sum += a.items[i];
  printf("%lu items, room for %lu, sum %ld\n", (unsigned long)a.len, (unsigned long)a.cap, sum);
  free(a.items);
  return 0;
}
