/* weak-a.c — with weak-b.c: two objects that each embed the weakened runtime
 * (as `cc-memwrap cc -c` makes them), linked by the plain compiler; the
 * program must write one consistent trace with both units (bases 1 and 5)
 * and weak-b.c's static.
 * Written in the rewriter's shape. */
#include "memwrap.h"
#include <stdio.h>
#include <stdlib.h>

void *b_make(unsigned n);
void b_drop(void *p);

static const struct __mw_site __mw_sites[4] = { {MW_SITE_ENTRY, 12, "weak-a.c", "main", "main"}, {MW_SITE_FALLOFF, 20, "weak-a.c", "main", "main"}, {MW_SITE_RETURN, 19, "weak-a.c", "main", "main"}, {MW_SITE_MALLOC, 14, "weak-a.c", "main", "malloc"} };
static struct __mw_unit __mw_u = { 0u, 4u, __mw_sites };
static struct __mw_unit *const __mw_unit_ref __attribute__((used, section("mw_units"))) = &__mw_u;
int main(void) { struct __mw_frame __mw_f __attribute__((cleanup(__mw_leave))) = __mw_enter(&__mw_u, 0u, 1u);
  void *p = __mw_malloc(&__mw_u, 3u, 10);
  void *q = b_make(20);
  b_drop(p);
  free(q);
  printf("weak ok\n");
  { __mw_f.site = __mw_u.base + 2u; return 0; }
}
