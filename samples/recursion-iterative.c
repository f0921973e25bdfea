/* recursion-iterative.c — recursion.c without the recursion.
 *
 * recursion.c's depth(n) keeps a 256-byte buffer in each of its n + 1
 * frames at once.  Here the loop in depth() calls level() once per level;
 * each call's buffer is gone before the next one starts, so the stack holds
 * one buffer whatever n is.  It prints the same sums as recursion.c.
 *
 * Its call tree is fixed: main → depth → level (memset and printf are
 * libc's), so the compiler's frame sizes give the worst case exactly.
 * Lesson text: recursion.md; checked by test/e2e/lessons.test.ts.
 */
#include <stdio.h>
#include <string.h>

#define DEPTH 50

/* What one level of recursion.c's depth() adds: a buffer filled with n. */
static unsigned level(unsigned n) {
  char buf[256];
  memset(buf, (int)n, sizeof buf);
  return (unsigned char)buf[n % sizeof buf];
}

static unsigned depth(unsigned n) {
  unsigned sum = level(0), k;
  for (k = 1; k <= n; k++) sum += level(k);
  return sum;
}

int main(void) {
  printf("sum=%u\n", depth(DEPTH));
  printf("again=%u\n", depth(DEPTH / 2));
  return 0;
}
