/* branches.c — every shape --mw-branches rewrites, in C89, with side effects
 * in the conditions: built with and without cc-memwrap --mw-branches it must
 * print the same (each condition evaluated once, same value and type) and
 * add no warning under -pedantic -Werror (test/e2e/branches.test.ts).
 * Also the places left alone: constant expressions, sizeof, case values.
 */
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

enum { SMALL = sizeof(int) < 8 && 1 ? 4 : 8 };

static jmp_buf env;
static int calls;
static int jumps;

static int bump(int v) {
  calls++;
  return v;
}

static const char *word(int n) {
  switch (n) {
  case 0:
  case 1:
    return "few";
  case 2:
    n++;
    /* FALLTHROUGH */
  case 3:
    return n == 3 ? "three" : "many";
  case sizeof(char) ? 4 : 5:
    return "four";
  default:
    break;
  }
  return "other";
}

static int nested(int a, int b) {
  int r = 0;
  switch (bump(a)) {
  case 1:
    switch (b) {
    case 1: r = 11; break;
    case 2: r = 12; break;
    }
    break;
  case 2: {
    r = 20;
    break;
  }
  }
  return r;
}

static double pick(double x, const char *p) {
  static const int always = sizeof(int) > 2 && sizeof(long) > 2;
  int sizes[sizeof(long) > 4 ? 2 : 3];
  sizes[0] = always;
  if (p && *p == 'y') return x > 0.5 ? x : -x;
  if (!p || (x < 0.0 && sizes[0])) return 0.25;
  return (double)(bump(1) || bump(2)) + (double)(bump(0) && bump(3));
}

int main(int argc, char **argv) {
  int i, total = 0;
  unsigned char small = 200;
  char *none = NULL;
  (void)argv;
  for (i = 0; i < 6; i++) {
    if (bump(i) % 2 == 0 && bump(i) > 1)
      total += 1;
    else if (i == 3 || bump(i) == 5)
      total += 10;
    else
      total += 100;
    printf("%d %s\n", i, word(i));
  }
  printf("nested %d %d %d %d\n", nested(1, 1), nested(1, 2), nested(1, 3), nested(2, 0));
  printf("pick %.2f %.2f %.2f %.2f\n", pick(0.75, "y"), pick(0.25, "yes"), pick(-1.0, none), pick(-1.0, "n"));
  small = (unsigned char)(small > 100 ? small - 100 : small);
  if (setjmp(env) == 0 && argc > 0) {
    jumps += 1000;
    longjmp(env, 1);
  }
  printf("total %d small %u calls %d size %d %d\n", total + jumps, (unsigned)small, calls, SMALL, (int)strlen(word(7)));
  return total > 0 ? 0 : 1;
}
