/* leaf-callers.c — summarised calls made by functions that are never
 * summarised themselves: main, a function other units can call, one called
 * through a pointer (each does heap work, so each is recorded), and a qsort
 * comparator, which does none and is measured.  Each calls pad(), a leaf
 * with a large frame, and the report's peak stack must count it.  The first
 * argument picks the caller (main, exported, pointer, sort); the program
 * prints the deepest stack pad reached, from the stack base as the trace
 * measures depths, and how many comparisons the sort made. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern void *__libc_stack_end;

static char *deepest = (char *)-1;
static long comparisons;

static __attribute__((noinline)) void note_depth(char *p)
{
  if (p < deepest) deepest = p;
}

static __attribute__((noinline)) int pad(int v)
{
  volatile char room[3000];
  room[v % 3000] = (char)v;
  note_depth((char *)room);
  return room[v % 3000];
}

int exported(int v)
{
  char *p = malloc(16);
  int r;
  if (!p) exit(1);
  r = pad(v) + 1;
  free(p);
  return r;
}

static int pointed(int v)
{
  char *p = malloc(32);
  int r;
  if (!p) exit(1);
  r = pad(v) + 2;
  free(p);
  return r;
}

static int compare(const void *a, const void *b)
{
  int x = *(const int *)a, y = *(const int *)b;
  comparisons++;
  if (comparisons == 1000) pad(x & 7);
  return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
  const char *mode = argc > 1 ? argv[1] : "main";
  int (*op)(int) = pointed;
  char *kept = malloc(8);
  int sum = 0;
  if (!kept) return 1;
  if (strcmp(mode, "main") == 0) sum = pad(argc);
  else if (strcmp(mode, "exported") == 0) sum = exported(argc);
  else if (strcmp(mode, "pointer") == 0) sum = op(argc);
  else if (strcmp(mode, "sort") == 0) {
    int n = 20000, i, *v = malloc(sizeof *v * (size_t)n);
    unsigned s = 1;
    if (!v) return 1;
    for (i = 0; i < n; i++) {
      s = s * 1103515245u + 12345u;
      v[i] = (int)(s >> 8);
    }
    qsort(v, (size_t)n, sizeof *v, compare);
    sum = v[n / 2] & 0xff;
    free(v);
  }
  free(kept);
  printf("sum %d\n", sum);
  printf("comparisons %ld\n", comparisons);
  printf("deepest %ld\n", (long)((char *)__libc_stack_end - deepest));
  return 0;
}
