/* mw-leaks.c — leak classification at a normal exit, like LeakSanitizer:
 * every block still live is
 *   still reachable (2): reachable, through live blocks, from a root — the
 *     writable PT_LOAD segments of the executable and its loaded objects
 *     (dl_iterate_phdr; the runtime's mw_g left out) and the exiting thread's
 *     stack from here to its base;
 *   indirect (1): not reachable, but pointed to by another unreachable block;
 *   direct (0): neither.
 * A pointer is what the linked scan takes for one (mw-linked.c): an aligned
 * pointer-sized word holding a live block's start address, looked up in the
 * live-block index.  Other threads' stacks, TLS and registers are not roots.
 *
 * Bounded: at most MW_LEAK_SCAN_MAX bytes are scanned; past that the result
 * is flagged partial.  Scratch memory is one mmap; other blocks are read in
 * windows copied under their index stripe lock (mw_index_read), so a thread
 * still running cannot free one under us.
 *
 * Written as EXT/LEAKS (TRACE-FORMAT.md) just before END.
 */
#define _GNU_SOURCE 1
#include <link.h>
#include <string.h>
#include <sys/mman.h>

#include "mw-internal.h"

#define MW_W sizeof(uintptr_t)
#define MW_LEAK_SCAN_MAX ((size_t)256 << 20)
#define MW_LEAK_WINDOW ((size_t)64 << 10)

enum { MW_LEAK_DIRECT = 0, MW_LEAK_INDIRECT = 1, MW_LEAK_REACHABLE = 2 };

struct mw_leaks {
  struct mw_live_block *blk;    /* the live blocks at the snapshot */
  unsigned char *cls;           /* class of each, MW_LEAK_* */
  uint32_t *hash;               /* block id → index + 1 (0 = empty) */
  size_t hmask;
  uint32_t *stack;              /* reachable blocks still to scan */
  size_t top;
  uintptr_t *window;            /* MW_LEAK_WINDOW bytes */
  size_t n;
  size_t budget;                /* bytes still allowed to scan */
  uintptr_t lo, hi;             /* live blocks start in [lo, hi) */
  uintptr_t ex_lo, ex_hi;       /* not a root: the runtime's own state */
  int partial;
};

static size_t mw_up(size_t n, size_t a) { return (n + a - 1) & ~(a - 1); }

static inline size_t mw_hslot(const struct mw_leaks *L, uint64_t id)
{
  return (size_t)((id * 0x9E3779B97F4A7C15ull) >> 32) & L->hmask;
}

/* The snapshot index of the live block starting at w, or (size_t)-1. */
static size_t mw_leak_lookup(const struct mw_leaks *L, uintptr_t w)
{
  const uintptr_t align = 2 * sizeof(void *) - 1;
  if (MW_LIKELY((w & align) || w - L->lo >= L->hi - L->lo)) return (size_t)-1;
  struct mw_block b;
  if (!mw_index_find(w, &b)) return (size_t)-1;
  for (size_t i = mw_hslot(L, b.id); L->hash[i]; i = (i + 1) & L->hmask) {
    size_t k = L->hash[i] - 1;
    if (L->blk[k].id == b.id) return L->blk[k].addr == w ? k : (size_t)-1;
  }
  return (size_t)-1; /* allocated after the snapshot */
}

/* Scans words for pointers to blocks in class DIRECT; marks them `cls`
 * (pushing reachable ones), leaving block `self` alone. */
static void mw_leak_words(struct mw_leaks *L, const uintptr_t *words, size_t count, unsigned char cls, size_t self)
{
  for (size_t k = 0; k < count; k++) {
    size_t b = mw_leak_lookup(L, words[k]);
    if (b == (size_t)-1 || b == self || L->cls[b] != MW_LEAK_DIRECT) continue;
    L->cls[b] = cls;
    if (cls == MW_LEAK_REACHABLE) L->stack[L->top++] = (uint32_t)b;
  }
}

/* Takes n bytes from the budget; 0 (and partial) if they are not there. */
static int mw_leak_spend(struct mw_leaks *L, size_t n)
{
  if (n > L->budget) {
    L->budget = 0;
    L->partial = 1;
    return 0;
  }
  L->budget -= n;
  return 1;
}

/* A root region, read in place (skipping the runtime's own state). */
static void mw_leak_region(struct mw_leaks *L, uintptr_t from, uintptr_t to)
{
  from = mw_up(from, MW_W);
  to &= ~(uintptr_t)(MW_W - 1);
  if (to <= from) return;
  if (L->ex_lo < to && from < L->ex_hi) {
    if (from < L->ex_lo) mw_leak_region(L, from, L->ex_lo);
    if (L->ex_hi < to) mw_leak_region(L, L->ex_hi, to);
    return;
  }
  if (!mw_leak_spend(L, to - from)) return;
  mw_leak_words(L, (const uintptr_t *)from, (to - from) / MW_W, MW_LEAK_REACHABLE, (size_t)-1);
}

/* A block, read in windows copied under its stripe lock. */
static void mw_leak_block(struct mw_leaks *L, size_t b, unsigned char cls)
{
  const struct mw_live_block *blk = &L->blk[b];
  size_t size = blk->size & ~(MW_W - 1);
  for (size_t off = 0; off < size; off += MW_LEAK_WINDOW) {
    size_t want = size - off < MW_LEAK_WINDOW ? size - off : MW_LEAK_WINDOW;
    if (!mw_leak_spend(L, want)) return;
    size_t got = mw_index_read(blk->addr, blk->id, off, L->window, want);
    if (!got) return; /* freed meanwhile */
    mw_leak_words(L, L->window, got / MW_W, cls, b);
  }
}

static int mw_leak_phdr(struct dl_phdr_info *info, size_t size, void *arg)
{
  struct mw_leaks *L = arg;
  (void)size;
  for (unsigned i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W)) continue;
    uintptr_t from = (uintptr_t)info->dlpi_addr + (uintptr_t)ph->p_vaddr;
    mw_leak_region(L, from, from + (uintptr_t)ph->p_memsz);
  }
  return 0;
}

static void mw_leak_drain(struct mw_leaks *L)
{
  while (L->top && L->budget) mw_leak_block(L, L->stack[--L->top], MW_LEAK_REACHABLE);
}

/* Classifies the live blocks and writes EXT/LEAKS.  Called by mw_finish on the
 * exiting thread, busy, before END. */
__attribute__((noinline)) void mw_write_leaks(struct mw_thread *t)
{
  if (mw_sink.heap) return; /* a sink of heap tables (online mode) keeps no leak classes */
  uintptr_t sp = (uintptr_t)__builtin_frame_address(0); /* our callers' frames and up */
  struct mw_leaks L;
  memset(&L, 0, sizeof L);
  size_t cap = mw_index_count();
  cap += cap / 8 + 64;
  if (cap > 0x7fffffffu) cap = 0x7fffffffu;
  size_t hsize = 16;
  while (hsize < cap * 2) hsize <<= 1;
  /* one mapping: blocks, classes, hash, stack, window, the record's payload */
  size_t o_blk = 0, o_cls = mw_up(o_blk + cap * sizeof(struct mw_live_block), 16);
  size_t o_hash = mw_up(o_cls + cap, 16), o_stack = mw_up(o_hash + hsize * 4, 16);
  size_t o_win = mw_up(o_stack + cap * 4, 16), o_pay = o_win + MW_LEAK_WINDOW;
  size_t len = mw_up(o_pay + 24 + cap * 11, mw_g.page ? mw_g.page : 4096);
  void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) return;
  unsigned char *base = m;
  L.blk = (struct mw_live_block *)(void *)(base + o_blk);
  L.cls = base + o_cls;
  L.hash = (uint32_t *)(void *)(base + o_hash);
  L.hmask = hsize - 1;
  L.stack = (uint32_t *)(void *)(base + o_stack);
  L.window = (uintptr_t *)(void *)(base + o_win);
  L.budget = MW_LEAK_SCAN_MAX;
  L.ex_lo = (uintptr_t)&mw_g;
  L.ex_hi = (uintptr_t)(&mw_g + 1);

  size_t n = mw_index_live(L.blk, cap);
  if (n > cap) {
    n = cap;
    L.partial = 1;
  }
  L.n = n;
  mw_index_bounds(&L.lo, &L.hi);
  for (size_t k = 0; k < n; k++) {
    size_t i = mw_hslot(&L, L.blk[k].id);
    while (L.hash[i]) i = (i + 1) & L.hmask;
    L.hash[i] = (uint32_t)(k + 1);
  }

  if (n && L.hi > L.lo) {
    mw_quiet_begin(); /* stack, data and blocks are read whether or not the program wrote them */
    /* roots: the stack above this function's frame, then static data */
    if (t->stack_base > sp && t->stack_base - sp < t->depth_cap) {
      mw_leak_region(&L, sp, t->stack_base);
      mw_leak_drain(&L);
    }
    dl_iterate_phdr(mw_leak_phdr, &L);
    mw_leak_drain(&L);
    /* every unreachable block marks the unreachable blocks it points to */
    for (size_t b = 0; b < n && L.budget; b++)
      if (L.cls[b] != MW_LEAK_REACHABLE) mw_leak_block(&L, b, MW_LEAK_INDIRECT);
    mw_quiet_end();
  }

  unsigned char *pay = base + o_pay, *p = pay;
  p = mw_put_u(p, L.partial ? 1 : 0);
  p = mw_put_u(p, n);
  for (size_t k = 0; k < n; k++) {
    p = mw_put_s(p, (int64_t)(t->seq - L.blk[k].id));
    *p++ = L.cls[k];
  }
  size_t plen = (size_t)(p - pay);
  if (mw_room(t, plen + 24)) {
    unsigned char *q = t->cur;
    *q++ = MW_REC_EXT;
    q = mw_put_u(q, MW_EXT_LEAKS);
    q = mw_put_u(q, plen);
    memcpy(q, pay, plen);
    mw_commit(t, q + plen);
  }
  munmap(m, len);
}
