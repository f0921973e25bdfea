/* heap-calls.c — every allocation function, the edge cases Valgrind counts
 * in its own way, and allocations made inside libc (stdio, fopen) and through
 * a function pointer, which only the interposed allocator sees.
 *
 * Expected: the trace's Valgrind-style totals equal Valgrind's "total heap
 * usage" line for the plain build (test/heap-totals.test.ts).
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TWICE(p, n) do { (p) = malloc(n); free(p); (p) = malloc(2 * (n)); } while (0)

static char counter_name[32] = "heap-calls";
static int calls;

static void *through_pointer(void *(*allocate)(size_t), size_t n) {
  calls++;
  return allocate(n);
}

int main(void) {
  char *a, *b, *c, *d, *e, *f, *g, *h;
  void *m = NULL;
  FILE *fp;
  a = malloc(10);
  b = calloc(4, 25);
  a = realloc(a, 100);          /* moves or grows: one alloc + one free */
  c = realloc(NULL, 7);         /* same as malloc */
  d = malloc(0);                /* an allocation of 0 bytes */
  free(NULL);                   /* nothing at all */
  if (posix_memalign(&m, 64, 200) != 0) return 1;
  e = aligned_alloc(32, 64);
  f = memalign(16, 48);
  g = strdup("hello, heap");
  h = strndup("abcdefghijklmnop", 5);
  TWICE(a, 33);                 /* leaks the first a; the macro's line counts */
  fp = fopen("/proc/self/status", "r");   /* libc allocates inside */
  if (fp) fclose(fp);
  free(through_pointer(malloc, 77));
  b = reallocarray(b, 10, 20);
  c = realloc(c, 0);            /* glibc frees and returns NULL */
  printf("%s %s %s %d\n", g, h, counter_name, calls);
  free(a); free(b); free(d); free(m); free(e); free(f); free(g); free(h);
  return 0;
}
