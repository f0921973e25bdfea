/* floor-runtime.c — the least any runtime behind memwrap.h's calls can do,
 * to measure how far the cost of recording can fall at all.  It is not a
 * recorder: records go to a thread-local ring in memory that is overwritten
 * when full and never written anywhere, there is no shadow stack, no
 * longjmp/signal/fork handling, no thread safety, no site table.
 *
 * Built four ways by bench/floor.ts:
 *   FLOOR_EMPTY   __mw_enter/__mw_leave do nothing: the price of the calls.
 *   (default)     8 bytes per entry, 4 per exit, 12 per heap call, stored.
 *   FLOOR_EXACT   as default, plus what exact linked frees need at least: a
 *                 single-threaded open-addressing index of live blocks, and
 *                 on each free a look-up of every pointer-sized word of the
 *                 freed block in that index.
 *   FLOOR_BITMAP  the same with the index as a start-of-block bitmap (one bit
 *                 per 16-byte granule, set on allocation, cleared on free)
 *                 and each block's size beside its bit, in 64 MiB regions
 *                 mapped lazily (MAP_NORESERVE): the shape of the runtime's
 *                 index (runtime/mw-blocks.c), without its locks.
 * FLOOR_INLINE_HEADER (floor-inline.h) gives the entry/exit stores as inline
 * code in the instrumented function instead of calls. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "memwrap.h"

#define RING_WORDS ((size_t)4 << 20)

__thread unsigned *floor_cur, *floor_end;
static __thread unsigned *floor_ring;

unsigned *floor_refill(void);
unsigned *floor_refill(void)
{
  if (!floor_ring) floor_ring = calloc(RING_WORDS + 64, sizeof(unsigned));
  floor_end = floor_ring + RING_WORDS;
  return floor_cur = floor_ring;
}

static unsigned *room(void)
{
  unsigned *p = floor_cur;
  return p && p < floor_end ? p : floor_refill();
}

struct __mw_frame __mw_enter(struct __mw_unit *u, unsigned entry_site, unsigned exit_site)
{
  struct __mw_frame f;
#ifndef FLOOR_EMPTY
  unsigned *p = room();
  p[0] = entry_site;
  p[1] = (unsigned)(uintptr_t)__builtin_frame_address(0);
  floor_cur = p + 2;
#endif
  (void)u;
  f.site = exit_site;
  f.depth = entry_site;
  return f;
}

void __mw_leave(struct __mw_frame *f)
{
#ifndef FLOOR_EMPTY
  unsigned *p = room();
  p[0] = f->site;
  floor_cur = p + 1;
#else
  (void)f;
#endif
}

int __mw_resume(struct __mw_frame *f, int r)
{
  (void)f;
  return r;
}

/* ---- the live-block index (FLOOR_EXACT) ---- */

#ifdef FLOOR_EXACT
struct slot {
  uintptr_t addr;
  size_t size;
};
static struct slot *slots;
static size_t mask, count;
static uintptr_t lo = UINTPTR_MAX, hi;

static size_t home(uintptr_t a) { return (size_t)((a >> 4) * 0x9E3779B97F4A7C15ull >> 20) & mask; }

static size_t find(uintptr_t a)
{
  size_t i = home(a);
  while (slots[i].addr && slots[i].addr != a) i = (i + 1) & mask;
  return i;
}

static void grow(void)
{
  struct slot *old = slots;
  size_t n = old ? (mask + 1) * 2 : 1 << 16, oldn = old ? mask + 1 : 0, i;
  slots = calloc(n, sizeof *slots);
  mask = n - 1;
  for (i = 0; i < oldn; i++)
    if (old[i].addr) slots[find(old[i].addr)] = old[i];
  free(old);
}

static void insert(void *p, size_t n)
{
  uintptr_t a = (uintptr_t)p;
  if (!p) return;
  if ((count + 1) * 2 > mask + 1 || !slots) grow();
  size_t i = find(a);
  if (!slots[i].addr) count++;
  slots[i].addr = a;
  slots[i].size = n;
  if (a < lo) lo = a;
  if (a + n > hi) hi = a + n;
}

/* Removes a and returns its size (0 = not a live block). */
static size_t take(uintptr_t a)
{
  if (!slots) return 0;
  size_t i = find(a), j, size = slots[i].size;
  if (!slots[i].addr) return 0;
  for (j = (i + 1) & mask; slots[j].addr; j = (j + 1) & mask) {
    size_t k = home(slots[j].addr);
    if (i <= j ? (i < k && k <= j) : (i < k || k <= j)) continue;
    slots[i] = slots[j];
    i = j;
  }
  slots[i].addr = 0;
  count--;
  return size;
}

/* How many words of the block point at a live block's start. */
static unsigned linked(const void *p, size_t size)
{
  const uintptr_t *w = p;
  unsigned n = 0;
  size_t i;
  for (i = 0; i < size / sizeof *w; i++)
    if (w[i] >= lo && w[i] < hi && slots[find(w[i])].addr) n++;
  return n;
}
#elif defined(FLOOR_BITMAP)
#define REGION_SHIFT 26
#define GRANULES ((size_t)1 << (REGION_SHIFT - 4))
struct region {
  uint64_t bits[GRANULES / 64];
  size_t size[GRANULES];
};
static struct region **regions; /* 2^22 pointers: addresses below 2^48 */
static uintptr_t lo = UINTPTR_MAX, hi;

static struct region *region_of(uintptr_t a, int make)
{
  struct region **r;
  if (!regions) {
    if (!make) return NULL;
    regions = mmap(NULL, sizeof *regions << (48 - REGION_SHIFT), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  }
  r = &regions[a >> REGION_SHIFT];
  if (!*r && make) *r = mmap(NULL, sizeof **r, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return *r;
}

static void insert(void *p, size_t n)
{
  uintptr_t a = (uintptr_t)p;
  size_t g = (a >> 4) & (GRANULES - 1);
  struct region *r;
  if (!p || (a & 15)) return;
  r = region_of(a, 1);
  r->bits[g / 64] |= 1ull << (g % 64);
  r->size[g] = n;
  if (a < lo) lo = a;
  if (a + n > hi) hi = a + n;
}

static size_t take(uintptr_t a)
{
  size_t g = (a >> 4) & (GRANULES - 1);
  struct region *r = region_of(a, 0);
  if (!r || !(r->bits[g / 64] >> (g % 64) & 1)) return 0;
  r->bits[g / 64] &= ~(1ull << (g % 64));
  return r->size[g];
}

static unsigned linked(const void *p, size_t size)
{
  const uintptr_t *w = p;
  unsigned n = 0;
  size_t i;
  for (i = 0; i < size / sizeof *w; i++) {
    uintptr_t a = w[i];
    struct region *r;
    size_t g;
    if ((a & 15) || a < lo || a >= hi || !(r = regions[a >> REGION_SHIFT])) continue;
    g = (a >> 4) & (GRANULES - 1);
    n += (unsigned)(r->bits[g / 64] >> (g % 64) & 1);
  }
  return n;
}
#else
static void insert(void *p, size_t n) { (void)p, (void)n; }
static size_t take(uintptr_t a) { (void)a; return 0; }
static unsigned linked(const void *p, size_t size) { (void)p, (void)size; return 0; }
#endif

/* ---- heap calls ---- */

static void *rec(unsigned site, void *p, size_t n)
{
  unsigned *q = room();
  insert(p, n);
  q[0] = site;
  q[1] = (unsigned)(uintptr_t)p;
  q[2] = (unsigned)n;
  floor_cur = q + 3;
  return p;
}

static void rec_free(unsigned site, void *p)
{
  size_t size = take((uintptr_t)p);
  unsigned *q = room();
  q[0] = site;
  q[1] = (unsigned)(uintptr_t)p;
  q[2] = size ? linked(p, size) : 0;
  floor_cur = q + 3;
}

void *__mw_malloc(struct __mw_unit *u, unsigned s, size_t n) { (void)u; return rec(s, malloc(n), n); }
void *__mw_calloc(struct __mw_unit *u, unsigned s, size_t a, size_t b) { (void)u; return rec(s, calloc(a, b), a * b); }
void *__mw_realloc(struct __mw_unit *u, unsigned s, void *o, size_t n)
{
  (void)u;
  if (o) take((uintptr_t)o);
  return rec(s, realloc(o, n), n);
}
void *__mw_reallocarray(struct __mw_unit *u, unsigned s, void *o, size_t a, size_t b) { return __mw_realloc(u, s, o, a * b); }
void __mw_free(struct __mw_unit *u, unsigned s, void *p)
{
  (void)u;
  rec_free(s, p);
  free(p);
}
void *__mw_aligned_alloc(struct __mw_unit *u, unsigned s, size_t a, size_t n) { (void)u; return rec(s, aligned_alloc(a, n), n); }
int __mw_posix_memalign(struct __mw_unit *u, unsigned s, void **m, size_t a, size_t n)
{
  int r = posix_memalign(m, a, n);
  (void)u;
  if (r == 0) rec(s, *m, n);
  return r;
}
void *__mw_memalign(struct __mw_unit *u, unsigned s, size_t a, size_t n) { return __mw_aligned_alloc(u, s, a, n); }
void *__mw_valloc(struct __mw_unit *u, unsigned s, size_t n) { return __mw_aligned_alloc(u, s, 4096, n); }
void *__mw_pvalloc(struct __mw_unit *u, unsigned s, size_t n) { return __mw_aligned_alloc(u, s, 4096, (n + 4095) & ~(size_t)4095); }
char *__mw_strdup(struct __mw_unit *u, unsigned s, const char *x) { (void)u; return rec(s, strdup(x), strlen(x) + 1); }
char *__mw_strndup(struct __mw_unit *u, unsigned s, const char *x, size_t n)
{
  char *p = strndup(x, n);
  (void)u;
  return rec(s, p, p ? strlen(p) + 1 : 0);
}
