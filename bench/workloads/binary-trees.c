/* binary-trees.c — allocation- and call-heavy: builds and walks many short-
 * lived binary trees (the Benchmarks Game program, simplified).  Every node
 * is one malloc and one free; every visit is a call. */
#include <stdio.h>
#include <stdlib.h>

struct tree {
  struct tree *left, *right;
};

static struct tree *bottom_up(int depth) {
  struct tree *t = malloc(sizeof *t);
  if (!t) exit(1);
  if (depth > 0) {
    t->left = bottom_up(depth - 1);
    t->right = bottom_up(depth - 1);
  } else {
    t->left = t->right = NULL;
  }
  return t;
}

static long check(const struct tree *t) {
  if (!t->left) return 1;
  return 1 + check(t->left) + check(t->right);
}

static void release(struct tree *t) {
  if (t->left) {
    release(t->left);
    release(t->right);
  }
  free(t);
}

int main(int argc, char **argv) {
#ifdef DEPTH
  int max_depth = DEPTH; /* a firmware has no arguments to read (bench/firmware.ts) */
  (void)argc;
  (void)argv;
#else
  int max_depth = argc > 1 ? atoi(argv[1]) : 16;
#endif
  int depth;
  struct tree *long_lived = bottom_up(max_depth);
  for (depth = 4; depth <= max_depth; depth += 2) {
    long iterations = 1L << (max_depth - depth + 4), i, sum = 0;
    for (i = 0; i < iterations; i++) {
      struct tree *t = bottom_up(depth);
      sum += check(t);
      release(t);
    }
    printf("%ld trees of depth %d check %ld\n", iterations, depth, sum);
  }
  printf("long lived tree of depth %d check %ld\n", max_depth, check(long_lived));
  release(long_lived);
  return 0;
}
