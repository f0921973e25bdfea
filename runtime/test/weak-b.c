/* weak-b.c — the second object of the weak-copy test (see weak-a.c); also
 * built as a shared library (with its own runtime copy) for an executable
 * made from weak-a.c: one trace, both units, and this file's static. */
#include "memwrap.h"
#include <stdlib.h>

static int bcount;
static const struct __mw_site __mw_sites[8] = { {MW_SITE_ENTRY, 7, "weak-b.c", "b_make", "b_make"}, {MW_SITE_FALLOFF, 7, "weak-b.c", "b_make", "b_make"}, {MW_SITE_RETURN, 7, "weak-b.c", "b_make", "b_make"}, {MW_SITE_CALLOC, 7, "weak-b.c", "b_make", "calloc"}, {MW_SITE_ENTRY, 8, "weak-b.c", "b_drop", "b_drop"}, {MW_SITE_FALLOFF, 8, "weak-b.c", "b_drop", "b_drop"}, {MW_SITE_FREE, 8, "weak-b.c", "b_drop", "free"}, {MW_SITE_STATIC, 5, "weak-b.c", "", "bcount"} };
static struct __mw_unit __mw_u = { 0u, 8u, __mw_sites };
static struct __mw_unit *const __mw_unit_ref __attribute__((used, section("mw_units"))) = &__mw_u;
void *b_make(unsigned n) { struct __mw_frame __mw_f __attribute__((cleanup(__mw_leave))) = __mw_enter(&__mw_u, 0u, 1u); bcount++; { __mw_f.site = __mw_u.base + 2u; return __mw_calloc(&__mw_u, 3u, n, 1); } }
void b_drop(void *p) { struct __mw_frame __mw_f __attribute__((cleanup(__mw_leave))) = __mw_enter(&__mw_u, 4u, 5u); __mw_free(&__mw_u, 6u, p); }
static const struct __mw_static_ref __mw_s0 __attribute__((used, section("mw_statics"))) = { &__mw_u, 7u, &bcount, sizeof(bcount) };
