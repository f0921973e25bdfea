/* mw-plain.h — builds the hand-rewritten test programs WITHOUT the runtime
 * (cc -DMW_PLAIN): every recording call becomes the plain call it replaced,
 * so the same source gives the uninstrumented baseline for Valgrind's heap
 * totals and for timing. */
#ifndef MW_PLAIN_H
#define MW_PLAIN_H 1
#include <stdlib.h>
#include <string.h>
#include <malloc.h>
#include "memwrap.h"

static inline struct __mw_frame mw_plain_enter(void)
{
  struct __mw_frame f = {0u, 0u};
  return f;
}
static inline void mw_plain_leave(struct __mw_frame *f) { (void)f; }

#define __mw_enter(u, e, x) mw_plain_enter()
#define __mw_leave mw_plain_leave
#define __mw_resume(f, r) (r)
#define __mw_malloc(u, s, n) malloc(n)
#define __mw_calloc(u, s, n, m) calloc(n, m)
#define __mw_realloc(u, s, p, n) realloc(p, n)
#define __mw_reallocarray(u, s, p, n, m) reallocarray(p, n, m)
#define __mw_free(u, s, p) free(p)
#define __mw_aligned_alloc(u, s, a, n) aligned_alloc(a, n)
#define __mw_posix_memalign(u, s, p, a, n) posix_memalign(p, a, n)
#define __mw_memalign(u, s, a, n) memalign(a, n)
#define __mw_valloc(u, s, n) valloc(n)
#define __mw_pvalloc(u, s, n) pvalloc(n)
#define __mw_strdup(u, s, p) strdup(p)
#define __mw_strndup(u, s, p, n) strndup(p, n)
#endif
