/* mw-heap.c — heap recording: the __mw_* calls the rewrite puts at
 * allocation sites, and the interposed allocator (malloc, free, … defined
 * here, so libc internals, uninstrumented code and calls through function
 * pointers are recorded too, with the "interposed" flag and site 0).
 *
 * Both call glibc's real allocator (__libc_malloc & co.) directly, so nothing
 * is counted twice (unless built without the interposer, see MW_INTERPOSE).  Order of work, per TRACE-FORMAT.md: a new block's
 * sequence number is drawn after the allocator returned it; an ending block
 * leaves the index, is scanned for linked blocks and draws its number before
 * it goes back to the allocator.  While the thread is busy (recording, or the
 * runtime's own libc calls) every call passes straight through.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "../mw-internal.h"

/* ---- begin / end of a recorded heap call ---- */

static inline struct mw_thread *mw_heap_begin(void)
{
  struct mw_thread *t = &mw_t;
  if (MW_UNLIKELY(t->busy)) {
    if (t->busy == MW_BUSY_RECORDING) t->lost++; /* a signal handler re-entered us */
    return NULL;
  }
  if (MW_UNLIKELY(!t->end) && !mw_thread_ready(t)) return NULL;
  t->busy = MW_BUSY_RECORDING;
  mw_fence();
  if (MW_UNLIKELY(t->lost)) mw_flush_lost(t);
  if (t->written != t->top) mw_flush_pending(t); /* the calls this one is made in */
  return t;
}

static inline void mw_heap_end(struct mw_thread *t)
{
#if MW_TARGET
  mw_fence();
  t->busy = 0;
#else
  /* release: a thread joining the recorders waits for this (mw_recorder_join), then sees the index as we left it */
  __atomic_store_n(&t->busy, 0, __ATOMIC_RELEASE);
#endif
}

static inline unsigned mw_site(struct mw_thread *t, struct __mw_unit *u, unsigned local)
{
  unsigned base = __atomic_load_n(&u->base, __ATOMIC_ACQUIRE);
  if (MW_UNLIKELY(!base)) base = mw_unit_register(t, u);
  return base + local;
}

static inline unsigned char *mw_put_addr(struct mw_thread *t, unsigned char *p, void *ptr, size_t req)
{
  uintptr_t a = (uintptr_t)ptr;
  size_t usable = malloc_usable_size(ptr);
  p = mw_put_s(p, (int64_t)((uint64_t)a - (uint64_t)~t->last_addr_inv));
  t->last_addr_inv = ~a;
  return mw_put_u(p, usable > req ? usable - req : 0);
}

/* LINKED after the FREE/REALLOC just written (t->seq is its seq). */
void mw_write_linked(struct mw_thread *t, unsigned count, int partial)
{
  if (!count && !partial) return;
  if (!mw_room(t, 12 + (size_t)count * 10)) return;
  const uint64_t *ids = count ? mw_link_ids(t) : NULL;
  unsigned char *p = t->cur;
  *p++ = (unsigned char)(MW_REC_LINKED | (partial ? MW_F_PARTIAL : 0));
  p = mw_put_u32(p, count);
  for (unsigned i = 0; i < count; i++) p = mw_put_u(p, t->seq - ids[i]);
  mw_commit(t, p);
}

/* ---- the three record shapes ---- */

/* A new block p of `req` bytes: index it, write ALLOC.  fn != 0 = interposed; kind = the allocator (fn, or the
 * instrumented site's kind), for online mode's counts. */
static inline __attribute__((always_inline)) void mw_rec_alloc(struct mw_thread *t, unsigned site, unsigned fn, unsigned kind, uintptr_t ra, void *p, size_t req)
{
  uint64_t seq = mw_next_seq();
  mw_index_insert((uintptr_t)p, seq, req);
  if (MW_UNLIKELY(mw_sink.heap != NULL)) {
    mw_sink.heap(t, fn, ra, kind, req, 0, MW_HEAP_MADE);
    return;
  }
  if (!mw_room(t, MW_SMALL_RECORD)) return;
  unsigned char *q = t->cur, *tag = q;
  *q++ = (unsigned char)(MW_REC_ALLOC | (fn ? MW_F_INTERPOSED : 0));
  q = mw_put_seq(t, tag, q, seq);
  q = mw_put_u32(q, site);
  if (fn) q = mw_put_u32(q, fn);
  q = mw_put_u(q, req);
  q = mw_put_addr(t, q, p, req);
  mw_commit(t, q);
  if (fn) mw_write_caller(t, ra);
  if (MW_UNLIKELY(__atomic_load_n(&mw_g.alloc_call, __ATOMIC_RELAXED)))
    mw_sink.from_alloc(t); /* e.g. the file's pre-fault thread starts here (mw-prefault.c) */
}

static inline __attribute__((always_inline)) void mw_do_free(struct mw_thread *t, unsigned site, unsigned fn, uintptr_t ra, void *p)
{
  struct mw_block b;
  int known = mw_index_take((uintptr_t)p, &b), partial = 0;
  if (MW_UNLIKELY(mw_sink.heap != NULL)) {
    mw_sink.heap(t, fn, ra, 0, 0, known ? b.size : 0, known ? MW_HEAP_ENDED : MW_HEAP_UNTRACKED);
    return;
  }
  unsigned linked = known ? mw_link_scan(t, p, b.size, &partial) : 0;
  uint64_t seq = mw_next_seq();
  if (!mw_room(t, MW_SMALL_RECORD)) return;
  unsigned char *q = t->cur, *tag = q;
  *q++ = (unsigned char)(MW_REC_FREE | (fn ? MW_F_INTERPOSED : 0) | (known ? 0 : MW_F_UNTRACKED));
  q = mw_put_seq(t, tag, q, seq);
  q = mw_put_u32(q, site);
  if (fn) q = mw_put_u32(q, fn);
  q = mw_put_u(q, known ? seq - b.id : (uint64_t)(uintptr_t)p);
  mw_commit(t, q);
  if (known) mw_write_linked(t, linked, partial);
  if (fn) mw_write_caller(t, ra);
}

/* realloc-shaped calls: n = requested bytes (already overflow-checked). */
static void *mw_do_realloc(struct mw_thread *t, unsigned site, unsigned fn, uintptr_t ra, void *p, size_t n)
{
  struct mw_block b;
  int known = p ? mw_index_take((uintptr_t)p, &b) : 0, partial = 0;
  unsigned linked = 0;
  unsigned char flags = fn ? MW_F_INTERPOSED : 0;
  void *r;
  uint64_t seq;
  int online = mw_sink.heap != NULL;
  if (p && n == 0) {
    /* glibc frees p and returns NULL: scan before it goes back */
    if (known && !online) linked = mw_link_scan(t, p, b.size, &partial);
    seq = mw_next_seq();
    flags |= MW_F_UNTRACKED;
    r = NULL;
  } else {
    r = MW_REAL(realloc)(p, n);
    if (!r) {
      if (known) mw_index_insert((uintptr_t)p, b.id, b.size); /* still live */
      if (!p) return NULL; /* a failed malloc: nothing recorded */
      seq = mw_next_seq();
      flags |= MW_F_UNTRACKED | MW_F_FAILED;
    } else {
      /* moved: the old contents now sit in r; scan them there */
      if (known && r != p && !online) linked = mw_link_scan(t, r, b.size < n ? b.size : n, &partial);
      seq = mw_next_seq();
      mw_index_insert((uintptr_t)r, seq, n);
    }
  }
  if (MW_UNLIKELY(online)) {
    unsigned what = MW_HEAP_REALLOC | (known && !(flags & MW_F_FAILED) ? MW_HEAP_ENDED : 0) |
                    (r ? MW_HEAP_MADE : 0) | (flags & MW_F_FAILED ? MW_HEAP_FAILED : 0);
    mw_sink.heap(t, fn, ra, 0, r ? n : 0, what & MW_HEAP_ENDED ? b.size : 0, what);
  } else if (mw_room(t, MW_SMALL_RECORD)) {
    unsigned char *q = t->cur, *tag = q;
    *q++ = (unsigned char)(MW_REC_REALLOC | flags);
    q = mw_put_seq(t, tag, q, seq);
    q = mw_put_u32(q, site);
    if (fn) q = mw_put_u32(q, fn);
    q = mw_put_u(q, known ? seq - b.id : 0);
    q = mw_put_u(q, n);
    if (r) q = mw_put_addr(t, q, r, n);
    mw_commit(t, q);
    if (known && !(flags & MW_F_FAILED) && r != p) mw_write_linked(t, linked, partial);
    if (fn) mw_write_caller(t, ra);
  }
  return r;
}

/* ---- the real allocator's remaining shapes ---- */

static int mw_real_posix_memalign(void **out, size_t al, size_t n)
{
  if (al % sizeof(void *) != 0 || (al & (al - 1)) != 0 || al == 0) return EINVAL;
  int saved = errno;
  void *p = MW_REAL(memalign)(al, n);
  errno = saved;
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}

static int mw_mul_overflows(size_t a, size_t b, size_t *out)
{
  return __builtin_mul_overflow(a, b, out);
}

/* ---- shared bodies: (u, local site) from the rewrite, or u = NULL and
 * fn = the allocator function when interposed ---- */

#define MW_SITE(t) (u ? mw_site((t), u, local) : 0)
#define MW_KIND (u ? u->sites[local].kind : fn)

static void *mw_malloc_as(struct __mw_unit *u, unsigned local, unsigned fn, uintptr_t ra, size_t n)
{
  struct mw_thread *t = mw_heap_begin();
  void *p = MW_REAL(malloc)(n);
  if (!t) return p;
  if (p) mw_rec_alloc(t, MW_SITE(t), fn, MW_KIND, ra, p, n);
  mw_heap_end(t);
  return p;
}

static void *mw_calloc_as(struct __mw_unit *u, unsigned local, unsigned fn, uintptr_t ra, size_t nmemb, size_t size)
{
  struct mw_thread *t = mw_heap_begin();
  void *p = MW_REAL(calloc)(nmemb, size);
  if (!t) return p;
  if (p) mw_rec_alloc(t, MW_SITE(t), fn, MW_KIND, ra, p, nmemb * size);
  mw_heap_end(t);
  return p;
}

static void *mw_memalign_as(struct __mw_unit *u, unsigned local, unsigned fn, uintptr_t ra, size_t al, size_t n)
{
  struct mw_thread *t = mw_heap_begin();
  void *p = MW_REAL(memalign)(al, n);
  if (!t) return p;
  if (p) mw_rec_alloc(t, MW_SITE(t), fn, MW_KIND, ra, p, n);
  mw_heap_end(t);
  return p;
}

static int mw_posix_memalign_as(struct __mw_unit *u, unsigned local, unsigned fn, uintptr_t ra, void **out, size_t al, size_t n)
{
  struct mw_thread *t = mw_heap_begin();
  int rc = mw_real_posix_memalign(out, al, n);
  if (!t) return rc;
  if (rc == 0) mw_rec_alloc(t, MW_SITE(t), fn, MW_KIND, ra, *out, n);
  mw_heap_end(t);
  return rc;
}

static void *mw_valloc_as(struct __mw_unit *u, unsigned local, unsigned fn, uintptr_t ra, size_t n, int page_rounded)
{
  struct mw_thread *t = mw_heap_begin();
  void *p = page_rounded ? MW_REAL(pvalloc)(n) : MW_REAL(valloc)(n);
  if (!t) return p;
  if (p) mw_rec_alloc(t, MW_SITE(t), fn, MW_KIND, ra, p, n);
  mw_heap_end(t);
  return p;
}

/* An unrecorded free or realloc still takes the block out of the index. */
static void mw_pass_through_end(void *p)
{
  if (p) mw_index_forget((uintptr_t)p, mw_t.busy != MW_BUSY_RECORDING);
}

static void mw_free_as(struct __mw_unit *u, unsigned local, unsigned fn, uintptr_t ra, void *p)
{
  if (!p) return; /* free(NULL) is not recorded */
  struct mw_thread *t = mw_heap_begin();
  if (t) {
    mw_do_free(t, MW_SITE(t), fn, ra, p);
    mw_heap_end(t);
  } else {
    mw_pass_through_end(p);
  }
  MW_REAL(free)(p);
}

static void *mw_realloc_as(struct __mw_unit *u, unsigned local, unsigned fn, uintptr_t ra, void *p, size_t n)
{
  struct mw_thread *t = mw_heap_begin();
  if (!t) {
    mw_pass_through_end(p);
    return MW_REAL(realloc)(p, n);
  }
  void *r = mw_do_realloc(t, MW_SITE(t), fn, ra, p, n);
  mw_heap_end(t);
  if (p && n == 0) return MW_REAL(realloc)(p, 0); /* recorded as freed above */
  return r;
}

static void *mw_reallocarray_as(struct __mw_unit *u, unsigned local, unsigned fn, uintptr_t ra, void *p, size_t nmemb, size_t size)
{
  size_t n;
  if (mw_mul_overflows(nmemb, size, &n)) {
    errno = ENOMEM;
    return NULL;
  }
  return mw_realloc_as(u, local, fn, ra, p, n);
}

/* ---- called by rewritten code ---- */

void *__mw_malloc(struct __mw_unit *u, unsigned site, size_t size)
{
  return mw_malloc_as(u, site, 0, 0, size);
}

void *__mw_calloc(struct __mw_unit *u, unsigned site, size_t nmemb, size_t size)
{
  return mw_calloc_as(u, site, 0, 0, nmemb, size);
}

void *__mw_realloc(struct __mw_unit *u, unsigned site, void *ptr, size_t size)
{
  return mw_realloc_as(u, site, 0, 0, ptr, size);
}

void *__mw_reallocarray(struct __mw_unit *u, unsigned site, void *ptr, size_t nmemb, size_t size)
{
  return mw_reallocarray_as(u, site, 0, 0, ptr, nmemb, size);
}

void __mw_free(struct __mw_unit *u, unsigned site, void *ptr)
{
  if (ptr) mw_free_as(u, site, 0, 0, ptr);
}

void *__mw_aligned_alloc(struct __mw_unit *u, unsigned site, size_t alignment, size_t size)
{
  return mw_memalign_as(u, site, 0, 0, alignment, size);
}

int __mw_posix_memalign(struct __mw_unit *u, unsigned site, void **memptr, size_t alignment, size_t size)
{
  return mw_posix_memalign_as(u, site, 0, 0, memptr, alignment, size);
}

void *__mw_memalign(struct __mw_unit *u, unsigned site, size_t alignment, size_t size)
{
  return mw_memalign_as(u, site, 0, 0, alignment, size);
}

void *__mw_valloc(struct __mw_unit *u, unsigned site, size_t size)
{
  return mw_valloc_as(u, site, 0, 0, size, 0);
}

void *__mw_pvalloc(struct __mw_unit *u, unsigned site, size_t size)
{
  return mw_valloc_as(u, site, 0, 0, size, 1);
}

char *__mw_strdup(struct __mw_unit *u, unsigned site, const char *s)
{
  size_t n = strlen(s) + 1;
  char *p = mw_malloc_as(u, site, 0, 0, n);
  if (p) memcpy(p, s, n);
  return p;
}

char *__mw_strndup(struct __mw_unit *u, unsigned site, const char *s, size_t n)
{
  size_t len = strnlen(s, n);
  char *p = mw_malloc_as(u, site, 0, 0, len + 1);
  if (p) {
    memcpy(p, s, len);
    p[len] = 0;
  }
  return p;
}

/* ---- the interposed allocator ---- */
#if MW_INTERPOSE
/* The caller's return address, taken in the interposed function itself. */
#define MW_RA ((uintptr_t)__builtin_return_address(0))


void *malloc(size_t size) { return mw_malloc_as(NULL, 0, MW_SITE_MALLOC, MW_RA, size); }
void *calloc(size_t nmemb, size_t size) { return mw_calloc_as(NULL, 0, MW_SITE_CALLOC, MW_RA, nmemb, size); }
void *realloc(void *ptr, size_t size) { return mw_realloc_as(NULL, 0, MW_SITE_REALLOC, MW_RA, ptr, size); }
void free(void *ptr) { mw_free_as(NULL, 0, MW_SITE_FREE, MW_RA, ptr); }

void *reallocarray(void *ptr, size_t nmemb, size_t size)
{
  return mw_reallocarray_as(NULL, 0, MW_SITE_REALLOCARRAY, MW_RA, ptr, nmemb, size);
}

void *aligned_alloc(size_t alignment, size_t size)
{
  return mw_memalign_as(NULL, 0, MW_SITE_ALIGNED_ALLOC, MW_RA, alignment, size);
}

int posix_memalign(void **memptr, size_t alignment, size_t size)
{
  return mw_posix_memalign_as(NULL, 0, MW_SITE_POSIX_MEMALIGN, MW_RA, memptr, alignment, size);
}

void *memalign(size_t alignment, size_t size) { return mw_memalign_as(NULL, 0, MW_SITE_MEMALIGN, MW_RA, alignment, size); }
void *valloc(size_t size) { return mw_valloc_as(NULL, 0, MW_SITE_VALLOC, MW_RA, size, 0); }
void *pvalloc(size_t size) { return mw_valloc_as(NULL, 0, MW_SITE_PVALLOC, MW_RA, size, 1); }
#endif /* MW_INTERPOSE */

/* ---- a target's C library, through the linker's --wrap ----
 * The driver links firmware with --wrap for malloc, calloc, realloc, free,
 * memalign, aligned_alloc, posix_memalign and reallocarray, and with newlib
 * also for _malloc_r, _calloc_r, _realloc_r, _free_r and _memalign_r (which
 * its malloc & co. call), so every call the C library or uninstrumented code
 * makes lands here; the instrumented sites' own __mw_* calls do not.  A call
 * made while the thread is busy (from inside the allocator: picolibc's calloc
 * and realloc call malloc and free, newlib's malloc calls _malloc_r; or while
 * a record is made) goes straight to the C library's own function. */
#if MW_TARGET
#include <newlib.h> /* __PICOLIBC__, or newlib */
#define MW_RA ((uintptr_t)__builtin_return_address(0))
extern void *__real_malloc(size_t);
extern void *__real_calloc(size_t, size_t);
extern void *__real_realloc(void *, size_t);
extern void __real_free(void *);
extern void *__real_memalign(size_t, size_t);

/* The C library's own allocator, called with the thread marked internal, so
 * that the calls it makes of its own wrapped names pass through. */
#define MW_REAL_CALL(type, call)                                                                                       \
  {                                                                                                                    \
    struct mw_thread *t = &mw_t;                                                                                       \
    unsigned busy = t->busy;                                                                                           \
    t->busy = MW_BUSY_INTERNAL;                                                                                        \
    type r = call;                                                                                                     \
    t->busy = busy;                                                                                                    \
    return r;                                                                                                          \
  }
void *mw_real_malloc(size_t n) MW_REAL_CALL(void *, __real_malloc(n))
void *mw_real_calloc(size_t nmemb, size_t size) MW_REAL_CALL(void *, __real_calloc(nmemb, size))
void *mw_real_realloc(void *p, size_t n) MW_REAL_CALL(void *, __real_realloc(p, n))
void *mw_real_memalign(size_t al, size_t n) MW_REAL_CALL(void *, __real_memalign(al, n))
void *mw_real_valloc(size_t n) { return mw_real_memalign(4096, n); }
void *mw_real_pvalloc(size_t n) { return mw_real_memalign(4096, (n + 4095) & ~(size_t)4095); }
void mw_real_free(void *p)
{
  struct mw_thread *t = &mw_t;
  unsigned busy = t->busy;
  t->busy = MW_BUSY_INTERNAL;
  __real_free(p);
  t->busy = busy;
}

/* A free or realloc passing through still takes its block out of the index. */
static void mw_free_through(void *p)
{
  mw_pass_through_end(p);
  __real_free(p);
}

void *__wrap_malloc(size_t n)
{
  if (MW_UNLIKELY(mw_t.busy)) return __real_malloc(n);
  return mw_malloc_as(NULL, 0, MW_SITE_MALLOC, MW_RA, n);
}
void *__wrap_calloc(size_t nmemb, size_t size)
{
  if (MW_UNLIKELY(mw_t.busy)) return __real_calloc(nmemb, size);
  return mw_calloc_as(NULL, 0, MW_SITE_CALLOC, MW_RA, nmemb, size);
}
void *__wrap_realloc(void *p, size_t n)
{
  if (MW_UNLIKELY(mw_t.busy)) {
    mw_pass_through_end(p);
    return __real_realloc(p, n);
  }
  return mw_realloc_as(NULL, 0, MW_SITE_REALLOC, MW_RA, p, n);
}
void __wrap_free(void *p)
{
  if (MW_UNLIKELY(mw_t.busy)) mw_free_through(p);
  else mw_free_as(NULL, 0, MW_SITE_FREE, MW_RA, p);
}
void *__wrap_memalign(size_t al, size_t n)
{
  if (MW_UNLIKELY(mw_t.busy)) return __real_memalign(al, n);
  return mw_memalign_as(NULL, 0, MW_SITE_MEMALIGN, MW_RA, al, n);
}
void *__wrap_aligned_alloc(size_t al, size_t n)
{
  if (MW_UNLIKELY(mw_t.busy)) return __real_memalign(al, n);
  return mw_memalign_as(NULL, 0, MW_SITE_ALIGNED_ALLOC, MW_RA, al, n);
}
int __wrap_posix_memalign(void **out, size_t al, size_t n)
{
  if (MW_UNLIKELY(mw_t.busy)) return mw_real_posix_memalign(out, al, n);
  return mw_posix_memalign_as(NULL, 0, MW_SITE_POSIX_MEMALIGN, MW_RA, out, al, n);
}
void *__wrap_reallocarray(void *p, size_t nmemb, size_t size)
{
  return mw_reallocarray_as(NULL, 0, MW_SITE_REALLOCARRAY, MW_RA, p, nmemb, size);
}

#ifndef __PICOLIBC__
/* newlib: malloc & co. call these with the thread's reentrancy struct; the calls above pass _REENT again */
extern void *__real__malloc_r(void *, size_t);
extern void *__real__calloc_r(void *, size_t, size_t);
extern void *__real__realloc_r(void *, void *, size_t);
extern void __real__free_r(void *, void *);
extern void *__real__memalign_r(void *, size_t, size_t);

void *__wrap__malloc_r(void *r, size_t n)
{
  if (MW_UNLIKELY(mw_t.busy)) return __real__malloc_r(r, n);
  return mw_malloc_as(NULL, 0, MW_SITE_MALLOC, MW_RA, n);
}
void *__wrap__calloc_r(void *r, size_t nmemb, size_t size)
{
  if (MW_UNLIKELY(mw_t.busy)) return __real__calloc_r(r, nmemb, size);
  return mw_calloc_as(NULL, 0, MW_SITE_CALLOC, MW_RA, nmemb, size);
}
void *__wrap__realloc_r(void *r, void *p, size_t n)
{
  if (MW_UNLIKELY(mw_t.busy)) {
    mw_pass_through_end(p);
    return __real__realloc_r(r, p, n);
  }
  return mw_realloc_as(NULL, 0, MW_SITE_REALLOC, MW_RA, p, n);
}
void __wrap__free_r(void *r, void *p)
{
  if (MW_UNLIKELY(mw_t.busy)) {
    mw_pass_through_end(p);
    __real__free_r(r, p);
    return;
  }
  mw_free_as(NULL, 0, MW_SITE_FREE, MW_RA, p);
}
void *__wrap__memalign_r(void *r, size_t al, size_t n)
{
  if (MW_UNLIKELY(mw_t.busy)) return __real__memalign_r(r, al, n);
  return mw_memalign_as(NULL, 0, MW_SITE_MEMALIGN, MW_RA, al, n);
}
#endif /* newlib */
#endif /* MW_TARGET */
