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
 *   FLOOR_RING    with FLOOR_BITMAP: records go as 8-byte words into a ring
 *                 that a second thread drains, encodes and writes to a file
 *                 (below): the shape of a recorder that encodes off the
 *                 program's threads.  With FLOOR_RING_RAW too, the second
 *                 thread writes the words as they are, unencoded (8 bytes
 *                 an event): what the hand-off costs without the encoding.
 *   FLOOR_LAZY    with FLOOR_BITMAP and floor-lazy.h: entries only pushed on a
 *                 shadow stack; the ring gets the frames live at each heap
 *                 call, a call deeper than any since the last heap call, and
 *                 the exits of the frames written (no stack deeper than its
 *                 65,536 frames, no threads beside the first).
 * The inline headers (floor-inline.h, floor-byte.h, floor-ring.h, floor-lazy.h) give the
 * entry/exit stores as inline code in the instrumented function instead of
 * calls; floor-byte.h's ring is here too. */
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

/* floor-byte.h's ring of bytes, as large as the ring of words. */
__thread unsigned char *floor_byte_cur, *floor_byte_end;
static __thread unsigned char *floor_byte_ring;

unsigned char *floor_byte_refill(void);
unsigned char *floor_byte_refill(void)
{
  if (!floor_byte_ring) floor_byte_ring = calloc(RING_WORDS * sizeof(unsigned), 1);
  floor_byte_end = floor_byte_ring + RING_WORDS * sizeof(unsigned);
  return floor_byte_cur = floor_byte_ring;
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


/* ---- FLOOR_RING: the ring drained and encoded by a writer thread ---- */

#ifdef FLOOR_RING
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The ring: SEGMENTS segments of SEG_WORDS words.  The recording thread's
 * inline path only compares its cursor with the end of its segment; at the
 * end it publishes the segment (ring_refill) and waits only if the writer has
 * not yet drained the next one.  The writer encodes each published segment
 * as the runtime's format 1.4 would (prediction table, depth deltas, exit
 * deltas, varints; a shadow stack to match exits) and writes the bytes with
 * write(2) to floor-ring.trace in the working directory, a file unlinked as
 * soon as it is open: it costs what a trace costs and leaves nothing. */
#define SEG_WORDS ((size_t)8192)
#define SEGMENTS 64u
#define TAG(w) ((unsigned)((w) >> 61))

__thread unsigned long *ring_cur, *ring_end;
__thread volatile unsigned char ring_busy;
static unsigned long *ring;
static unsigned published, consumed, writer_sleeping, writer_stop;
static pthread_t writer;
static int out_fd = -1;

static long futex(unsigned *a, int op, unsigned v, const struct timespec *ts)
{
  return syscall(SYS_futex, a, op, v, ts, NULL, 0);
}

/* ---- the writer's encoder ---- */
static unsigned char obuf[1 << 20];
static size_t olen;
static uint64_t predict[1024];
static unsigned history, last_enter;
static uintptr_t last_depth, stack_base;
static struct { uintptr_t depth; unsigned site; } frames[1 << 16];
static unsigned top = 1;
static uintptr_t last_addr;

static unsigned char *put_u(unsigned char *p, uint64_t v)
{
  while (v >= 0x80) {
    *p++ = (unsigned char)(v | 0x80);
    v >>= 7;
  }
  *p++ = (unsigned char)v;
  return p;
}
static unsigned char *put_s(unsigned char *p, int64_t v) { return put_u(p, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63)); }

static void flush_out(void)
{
  if (olen && write(out_fd, obuf, olen) < 0) abort();
  olen = 0;
}

/* Encodes one segment (a heap record never crosses one: ring_room keeps it
 * in one).  The state lives in locals while it runs: every byte stored
 * through p may alias a global, which would otherwise be reloaded each time. */
static void encode(const unsigned long *w, size_t n)
{
  size_t i = 0;
  unsigned h = history, last = last_enter, tp = top;
  uintptr_t ld = last_depth, la = last_addr, base = stack_base;
  unsigned char *p = obuf + olen, *limit = obuf + sizeof obuf - 64;
  while (i < n) {
    unsigned long x = w[i];
    if (p > limit) {
      olen = (size_t)(p - obuf);
      flush_out();
      p = obuf;
    }
    switch (TAG(x)) {
    case 1: { /* ENTER */
      unsigned site = (unsigned)x;
      uintptr_t sp = (uintptr_t)((x >> 32) & 0x1ffffffful) << 3, d;
      intptr_t dd;
      uint64_t *slot, want;
      if (!base) base = sp + 256;
      d = base - sp;
      while (tp > 1 && frames[tp - 1].depth > d) tp--; /* frames a longjmp left */
      dd = (intptr_t)(d - ld);
      slot = predict + ((uint32_t)(h * 2654435761u) >> 22);
      want = (uint64_t)(uint32_t)dd << 32 | site;
      if (*slot == want)
        *p++ = 4 | 0x10;
      else {
        *slot = want;
        *p++ = 4 | 0x20;
        p = put_s(p, (int32_t)(site - last));
        p = put_s(p, dd);
      }
      ld = d;
      last = site;
      h = ((h << 2) ^ site) & 0xffff;
      if (tp < (1u << 16)) {
        frames[tp].depth = d;
        frames[tp].site = site;
        tp++;
      }
      i++;
      break;
    }
    case 2: { /* EXIT */
      unsigned site = (unsigned)x;
      int32_t dx = (int32_t)(site - (tp > 1 ? frames[tp - 1].site : 0));
      if (tp > 1) tp--;
      h = ((h << 2) ^ (uint32_t)dx) & 0xffff;
      if ((uint32_t)dx - 1u < 15u)
        *p++ = (unsigned char)(5 | dx << 4);
      else {
        *p++ = 5;
        p = put_u(p, ((uint32_t)dx << 1) ^ (uint32_t)(dx >> 31));
      }
      i++;
      break;
    }
    case 3: /* ALLOC: site, address, size */
    case 4: /* FREE: site, address, linked count */
      *p++ = TAG(x) == 3 ? 7 : 8;
      p = put_u(p, (unsigned)x);
      p = put_s(p, (intptr_t)(w[i + 1] - la));
      la = w[i + 1];
      p = put_u(p, w[i + 2]);
      i += 3;
      break;
    default: /* the rest of a segment left unused */
      i = n;
      break;
    }
  }
  olen = (size_t)(p - obuf);
  history = h;
  last_enter = last;
  top = tp;
  last_depth = ld;
  last_addr = la;
  stack_base = base;
}

static void *writer_main(void *arg)
{
  (void)arg;
  for (;;) {
    unsigned pub = __atomic_load_n(&published, __ATOMIC_ACQUIRE);
    if (consumed == pub) {
      if (__atomic_load_n(&writer_stop, __ATOMIC_ACQUIRE)) break;
      __atomic_store_n(&writer_sleeping, 1, __ATOMIC_SEQ_CST);
      if (__atomic_load_n(&published, __ATOMIC_SEQ_CST) == pub && !__atomic_load_n(&writer_stop, __ATOMIC_SEQ_CST)) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        futex(&published, FUTEX_WAIT_PRIVATE, pub, &ts);
      }
      __atomic_store_n(&writer_sleeping, 0, __ATOMIC_RELAXED);
      continue;
    }
#ifdef FLOOR_RING_RAW
    if (write(out_fd, ring + (size_t)(consumed % SEGMENTS) * SEG_WORDS, SEG_WORDS * sizeof *ring) < 0) abort();
#else
    encode(ring + (size_t)(consumed % SEGMENTS) * SEG_WORDS, SEG_WORDS);
#endif
    __atomic_store_n(&consumed, consumed + 1, __ATOMIC_RELEASE);
    futex(&consumed, FUTEX_WAKE_PRIVATE, 1, NULL);
  }
  flush_out();
  return NULL;
}

static void publish(void)
{
  __atomic_store_n(&published, published + 1, __ATOMIC_RELEASE);
  if (__atomic_load_n(&writer_sleeping, __ATOMIC_SEQ_CST)) futex(&published, FUTEX_WAKE_PRIVATE, 1, NULL);
}

static void ring_finish(void)
{
  if (!ring) return;
  while (ring_cur < ring_end) *ring_cur++ = 0;
  publish();
  __atomic_store_n(&writer_stop, 1, __ATOMIC_SEQ_CST);
  futex(&published, FUTEX_WAKE_PRIVATE, 1, NULL);
  pthread_join(writer, NULL);
  close(out_fd);
}

/* The segment after the full one, once the writer has drained it. */
unsigned long *ring_refill(void)
{
  unsigned next;
  if (!ring) {
    ring = calloc(SEGMENTS * SEG_WORDS, sizeof *ring);
    out_fd = open("floor-ring.trace", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    unlink("floor-ring.trace");
    pthread_create(&writer, NULL, writer_main, NULL);
    atexit(ring_finish);
    next = 0;
  } else {
    while (ring_cur < ring_end) *ring_cur++ = 0;
    publish();
    next = published;
  }
  for (;;) {
    unsigned c = __atomic_load_n(&consumed, __ATOMIC_ACQUIRE);
    if (next - c < SEGMENTS) break;
    futex(&consumed, FUTEX_WAIT_PRIVATE, c, NULL);
  }
  ring_cur = ring + (size_t)(next % SEGMENTS) * SEG_WORDS;
  ring_end = ring_cur + SEG_WORDS;
  return ring_cur;
}

/* Room for k words in the current segment (a heap record stays in one). */
static unsigned long *ring_room(size_t k)
{
  unsigned long *p = ring_cur;
  if (!p || p + k > ring_end) p = ring_refill();
  return p;
}
#endif

/* ---- FLOOR_LAZY: pending entries (floor-lazy.h) ---- */

#ifdef FLOOR_LAZY
struct floor_pending {
  unsigned site;
  unsigned sp;
};
__thread struct floor_pending floor_stack[1 << 16];
__thread unsigned floor_top, floor_written, floor_deep = ~0u;

/* The pending frames [floor_written, end) as ENTER words, oldest first. */
static void lazy_write(unsigned end)
{
  unsigned i;
  for (i = floor_written; i < end; i++) {
    unsigned *q = room();
    q[0] = floor_stack[i].site;
    q[1] = floor_stack[i].sp;
    floor_cur = q + 2;
  }
  if (end > floor_written) floor_written = end;
}

void floor_left(unsigned frame);
void floor_left(unsigned frame)
{
  unsigned *q;
  if (frame >= floor_written) { /* pending, and deeper than any since the last heap call */
    lazy_write(frame + 1);
    floor_deep = floor_stack[frame].sp;
  }
  q = room();
  q[0] = floor_stack[frame].site | 0x80000000u;
  floor_cur = q + 1;
  floor_written = frame;
}

/* Before a heap record: the frames it happens in. */
static void lazy_heap(void)
{
  lazy_write(floor_top);
  floor_deep = ~0u;
}
#else
static void lazy_heap(void) {}
#endif

/* ---- heap calls ---- */

#ifdef FLOOR_RING
/* A heap record: tag 3 ALLOC (n = size) or 4 FREE (n = linked count). */
static void ring_heap(unsigned long tag, unsigned site, void *p, size_t n)
{
  unsigned long *q;
  ring_busy = 1;
  q = ring_room(3);
  q[0] = tag << 61 | site;
  q[1] = (uintptr_t)p;
  q[2] = n;
  ring_cur = q + 3;
  ring_busy = 0;
}

static void *rec(unsigned site, void *p, size_t n)
{
  insert(p, n);
  ring_heap(3, site, p, n);
  return p;
}

static void rec_free(unsigned site, void *p)
{
  size_t size = take((uintptr_t)p);
  ring_heap(4, site, p, size ? linked(p, size) : 0);
}
#else
static void *rec(unsigned site, void *p, size_t n)
{
  unsigned *q;
  lazy_heap();
  q = room();
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
  unsigned *q;
  lazy_heap();
  q = room();
  q[0] = site;
  q[1] = (unsigned)(uintptr_t)p;
  q[2] = size ? linked(p, size) : 0;
  floor_cur = q + 3;
}
#endif

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
