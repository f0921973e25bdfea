/* recursion.c — every call costs stack.
 *
 * depth(n) keeps a 256-byte buffer in its frame and calls itself n times, so
 * the stack in use grows by at least 256 bytes per level and falls back to
 * where it started when the recursion returns.
 *
 * Expected observations (checked by test/record.test.ts): for DEPTH = 50,
 * the deepest depth() frame is at least 50 * 256 bytes below the first one,
 * and after the last return the stack is back at the first frame's depth.
 */
#include <stdio.h>
#include <string.h>

#define DEPTH 50

static unsigned depth(unsigned n, const char *tag) {
  char buf[256];
  unsigned sum;
  memset(buf, (int)n, sizeof buf);
  if (n == 0) return (unsigned char)buf[0];
  sum = depth(n - 1, tag) + (unsigned char)buf[n % sizeof buf];
  return sum;
}

int main(void) {
  printf("sum=%u\n", depth(DEPTH, "r"));
  printf("again=%u\n", depth(DEPTH / 2, "r"));
  return 0;
}
