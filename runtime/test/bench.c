/* bench.c — quick cost measurement, in the rewriter's shape; build it with
 * and without -DMW_PLAIN and compare (run-smoke.sh bench does).
 *   bench calls N      fib() calls: N ENTER/EXIT pairs in total (about)
 *   bench malloc N     N malloc/free pairs of 16..1039 bytes, 64 live
 *   bench list N       build a list of N nodes, free it from the head
 * Prints the elapsed nanoseconds per operation. */
#ifdef MW_PLAIN
#include "mw-plain.h"
#else
#include "memwrap.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct __mw_site __mw_sites[9] = {
  {MW_SITE_ENTRY, 20, "bench.c", "fib", "fib"}, {MW_SITE_FALLOFF, 24, "bench.c", "fib", "fib"},
  {MW_SITE_RETURN, 22, "bench.c", "fib", "fib"}, {MW_SITE_RETURN, 23, "bench.c", "fib", "fib"},
  {MW_SITE_MALLOC, 30, "bench.c", "main", "malloc"}, {MW_SITE_FREE, 31, "bench.c", "main", "free"},
  {MW_SITE_ENTRY, 40, "bench.c", "main", "main"}, {MW_SITE_FALLOFF, 60, "bench.c", "main", "main"},
  {MW_SITE_RETURN, 59, "bench.c", "main", "main"}};
static struct __mw_unit __mw_u = {0u, 9u, __mw_sites};
static struct __mw_unit *const __mw_unit_ref __attribute__((used, section("mw_units"))) = &__mw_u;

__attribute__((noinline)) static long fib(int n)
{
  struct __mw_frame __mw_f __attribute__((cleanup(__mw_leave))) = __mw_enter(&__mw_u, 0u, 1u);
  if (n < 2) { __mw_f.site = __mw_u.base + 2u; return n; }
  { __mw_f.site = __mw_u.base + 3u; return fib(n - 1) + fib(n - 2); }
}

struct node {
  struct node *next;
  long v;
};

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
  struct __mw_frame __mw_f __attribute__((cleanup(__mw_leave))) = __mw_enter(&__mw_u, 6u, 7u);
  const char *what = argc > 1 ? argv[1] : "calls";
  long n = argc > 2 ? atol(argv[2]) : 1000000;
  double t0 = now(), ops = (double)n;
  long sink = 0;
  if (!strcmp(what, "calls")) {
    /* fib(k) makes 2*F(k+1) - 1 calls; pick k for about n calls */
    long a = 1, b = 1;
    int k = 1;
    while (2 * b - 1 < n) { long c = a + b; a = b; b = c; k++; }
    volatile int vk = k;
    ops = (double)(2 * b - 1);
    t0 = now();
    sink = fib(vk);
  } else if (!strcmp(what, "malloc")) {
    void *live[64] = {0};
    for (long i = 0; i < n; i++) {
      int slot = (int)(i & 63);
      __mw_free(&__mw_u, 5u, live[slot]);
      live[slot] = __mw_malloc(&__mw_u, 4u, (size_t)(16 + (i * 7919) % 1024));
      ((char *)live[slot])[0] = 1;
    }
    for (int s = 0; s < 64; s++) __mw_free(&__mw_u, 5u, live[s]);
  } else if (!strcmp(what, "list")) {
    struct node *head = NULL;
    for (long i = 0; i < n; i++) {
      struct node *x = __mw_malloc(&__mw_u, 4u, sizeof *x);
      x->next = head;
      x->v = i;
      head = x;
    }
    while (head) {
      struct node *next = head->next;
      sink += head->v;
      __mw_free(&__mw_u, 5u, head);
      head = next;
    }
  }
  double t1 = now();
  printf("%s %.0f ops %.1f ns/op (sink %ld)\n", what, ops, (t1 - t0) / ops, sink);
  { __mw_f.site = __mw_u.base + 8u; return 0; }
}
