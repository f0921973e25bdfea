/* sort.c — callback-heavy: sorts and searches arrays of records through the
 * C library's qsort and bsearch, which call the program's comparator
 * through a pointer tens of millions of times.  One array a round is
 * allocated and freed. */
#include <stdio.h>
#include <stdlib.h>

struct record {
  unsigned key;
  unsigned id;
};

static int by_key(const void *a, const void *b)
{
  const struct record *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

int main(int argc, char **argv)
{
  long n = argc > 1 ? atol(argv[1]) : 200000, found = 0;
  unsigned s = 12345;
  int round;
  for (round = 0; round < 5; round++) {
    struct record *v = malloc(sizeof *v * (size_t)n);
    long i;
    if (!v) return 1;
    for (i = 0; i < n; i++) {
      s = s * 1103515245u + 12345u;
      v[i].key = s >> 12;
      v[i].id = (unsigned)i;
    }
    qsort(v, (size_t)n, sizeof *v, by_key);
    for (i = 0; i < n; i += 7) found += bsearch(&v[i], v, (size_t)n, sizeof *v, by_key) != NULL;
    free(v);
  }
  printf("found %ld\n", found);
  return 0;
}
