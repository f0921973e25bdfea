/* mw-linked.c — linked frees: before a block goes back to the allocator, find
 * the live blocks reachable from it through aligned pointer-sized words that
 * hold a live block's start address, transitively, and write them as LINKED.
 *
 * Bounded work (MEMWRAP_LINK_BLOCKS blocks, MEMWRAP_LINK_BYTES bytes scanned
 * per free; the LINKED record says "partial" when a limit hits).  The freed
 * block belongs to the freeing thread and is read in place; every other block
 * is copied while its index stripe is locked (a free must take that lock
 * before the block can be given back), and scanned from the copy unlocked.
 */
#define _GNU_SOURCE 1
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "mw-internal.h"

#define MW_W sizeof(uintptr_t)

/* Per-thread scratch, one mapping:
 *   ids[B], off[B], len[B]  the blocks found, in breadth-first order
 *   keys[S], gens[S]        visited addresses (valid when gens == scan_gen)
 *   arena[bytes + B*W]      copies of the found blocks' words */
struct mw_scan {
  uint64_t *ids;
  size_t *off, *len;
  uintptr_t *keys;
  unsigned *gens;
  unsigned char *arena;
  size_t set_mask;
  unsigned n, max_blocks;
  unsigned gen;
  size_t budget, arena_used;
  uintptr_t lo, hi;             /* live blocks start in [lo, hi) */
  int partial;
};

static size_t mw_set_size(unsigned blocks)
{
  size_t s = 16;
  while (s < (size_t)blocks * 2) s <<= 1;
  return s;
}

static size_t mw_align_up(size_t n, size_t a) { return (n + a - 1) & ~(a - 1); }

/* Points s into the scratch at `base` (0 = only measure); returns its size. */
static size_t mw_scan_layout(struct mw_scan *s, uintptr_t base)
{
  size_t B = mw_g.link_blocks, S = mw_set_size(mw_g.link_blocks), o = 0;
  s->ids = (uint64_t *)(base + o);
  o = mw_align_up(o + B * sizeof(uint64_t), 16);
  s->off = (size_t *)(base + o);
  o = mw_align_up(o + B * sizeof(size_t), 16);
  s->len = (size_t *)(base + o);
  o = mw_align_up(o + B * sizeof(size_t), 16);
  s->keys = (uintptr_t *)(base + o);
  o = mw_align_up(o + S * sizeof(uintptr_t), 16);
  s->gens = (unsigned *)(base + o);
  o = mw_align_up(o + S * sizeof(unsigned), 16);
  s->arena = (unsigned char *)(base + o);
  o += mw_g.link_bytes + B * MW_W;
  s->set_mask = S - 1;
  s->max_blocks = (unsigned)B;
  return o;
}

void mw_link_release(struct mw_thread *t)
{
  if (t->scan_map) munmap(t->scan_map, t->scan_map_len);
  t->scan_map = NULL;
  t->scan_map_len = 0;
}

const uint64_t *mw_link_ids(struct mw_thread *t)
{
  struct mw_scan s;
  mw_scan_layout(&s, (uintptr_t)t->scan_map);
  return s.ids;
}

/* The visited-set slot of w: holding w, or the empty slot for it. */
static size_t mw_slot(const struct mw_scan *s, uintptr_t w)
{
  size_t i = (size_t)(((uint64_t)w >> 4) * 0x9E3779B97F4A7C15ull >> 32) & s->set_mask;
  while (s->gens[i] == s->gen && s->keys[i] != w) i = (i + 1) & s->set_mask;
  return i;
}

/* Scans `count` words; returns 0 when the block limit stops the whole scan. */
static int mw_scan_words(struct mw_scan *s, const uintptr_t *words, size_t count)
{
  const uintptr_t lo = s->lo, span = s->hi - s->lo, align = 2 * sizeof(void *) - 1;
  for (size_t k = 0; k < count; k++) {
    uintptr_t w = words[k];
    if (MW_LIKELY((w & align) || w - lo >= span)) continue; /* cannot be a block start */
    if (!mw_index_maybe_fast(w)) continue;                   /* its start bit is clear */
    size_t slot = mw_slot(s, w);
    if (s->gens[slot] == s->gen) continue; /* visited */
    struct mw_block b;
    if (s->n == s->max_blocks) {
      /* full: one more live, unvisited block means the list is partial */
      if (mw_index_find(w, &b)) {
        s->partial = 1;
        return 0;
      }
      continue;
    }
    size_t room = s->budget & ~(MW_W - 1), copied;
    if (!mw_index_copy(w, &b, s->arena + s->arena_used, room, &copied)) continue;
    s->gens[slot] = s->gen;
    s->keys[slot] = w;
    s->ids[s->n] = b.id;
    s->off[s->n] = s->arena_used;
    s->len[s->n] = copied;
    s->n++;
    s->arena_used += mw_align_up(copied, MW_W);
    s->budget -= copied;
    if (copied < (b.size & ~(MW_W - 1))) s->partial = 1;
  }
  return 1;
}

/* Might any of the `count` words be a live block's start?  The first look at
 * a freed block: most hold none (no pointers, or pointers to blocks already
 * freed), and then the scan's scratch is never touched. */
static int mw_any_start_each(const uintptr_t *words, size_t count, uintptr_t lo, uintptr_t hi)
{
  const uintptr_t span = hi - lo, align = 2 * sizeof(void *) - 1;
  for (size_t k = 0; k < count; k++) {
    uintptr_t w = words[k];
    if (MW_LIKELY((w & align) || w - lo >= span)) continue;
    if (mw_index_maybe_fast(w)) return 1;
  }
  return 0;
}

#if UINTPTR_MAX > 0xffffffffu && defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* Eight words at a time, as 32-bit vector lanes (SSE2 on x86-64, NEON on
 * AArch64): a word can only be a block start if its high half lies in the
 * live blocks' range of high halves.  A freed buffer of text or numbers — a
 * large block's common contents — fails that for every word, at two compares
 * per two words; a group where a word passes is looked at word by word. */
typedef int32_t mw_lanes __attribute__((vector_size(16)));

/* Lanes 1 and 3 (the high halves of two words) set where above > lane > below;
 * lanes 0 and 2 are the low halves' noise, masked off by the caller. */
static inline mw_lanes mw_lanes_between(const uintptr_t *w, int32_t below, int32_t above)
{
  mw_lanes v;
  memcpy(&v, w, sizeof v);
  return (v > below) & (v < above); /* signed: a user-space address's high half is below 2^31 */
}

static int mw_any_start(const uintptr_t *words, size_t count, uintptr_t lo, uintptr_t hi)
{
  const uintptr_t top_lo = lo >> 32, top_hi = (hi - 1) >> 32;
  if (top_hi >= 0x7fffffffu) return mw_any_start_each(words, count, lo, hi); /* not a user-space range */
  const int32_t below = (int32_t)top_lo - 1, above = (int32_t)top_hi + 1;
  size_t k = 0;
  for (; k + 8 <= count; k += 8) {
    mw_lanes any = (mw_lanes_between(words + k, below, above) | mw_lanes_between(words + k + 2, below, above) |
                    mw_lanes_between(words + k + 4, below, above) | mw_lanes_between(words + k + 6, below, above)) &
                   (mw_lanes){0, -1, 0, -1};
    uint64_t halves[2];
    memcpy(halves, &any, sizeof halves);
    if (MW_UNLIKELY(halves[0] | halves[1]) && mw_any_start_each(words + k, 8, lo, hi)) return 1;
  }
  return mw_any_start_each(words + k, count - k, lo, hi);
}
#else
static int mw_any_start(const uintptr_t *words, size_t count, uintptr_t lo, uintptr_t hi)
{
  return mw_any_start_each(words, count, lo, hi);
}
#endif

unsigned mw_link_scan(struct mw_thread *t, const void *block, size_t size, int *partial)
{
  struct mw_scan s;
  *partial = 0;
  if (!mw_g.link_blocks || !mw_g.link_bytes) return 0;
  {
    uintptr_t lo, hi;
    mw_index_bounds(&lo, &hi);
    if (hi <= lo) return 0;
    size_t first = size & ~(MW_W - 1), most = mw_g.link_bytes & ~(MW_W - 1);
    mw_quiet_begin();
    int any = mw_any_start(block, (first < most ? first : most) / MW_W, lo, hi);
    mw_quiet_end();
    if (!any) {
      *partial = first > most;
      return 0;
    }
  }
  if (!t->scan_map) {
    size_t len = mw_align_up(mw_scan_layout(&s, 0), mw_g.page);
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) {
      *partial = 1;
      return 0;
    }
    t->scan_map = m;
    t->scan_map_len = len;
    t->scan_gen = 0;
  }
  mw_scan_layout(&s, (uintptr_t)t->scan_map);
  if (++t->scan_gen == 0) {
    memset(s.gens, 0, (s.set_mask + 1) * sizeof(unsigned));
    t->scan_gen = 1;
  }
  s.gen = t->scan_gen;
  s.n = 0;
  s.partial = 0;
  s.budget = mw_g.link_bytes;
  s.arena_used = 0;
  mw_index_bounds(&s.lo, &s.hi);
  if (s.hi <= s.lo) return 0;

  size_t first = size & ~(MW_W - 1);
  if (first > (s.budget & ~(MW_W - 1))) {
    first = s.budget & ~(MW_W - 1);
    s.partial = 1;
  }
  s.budget -= first;
  /* the words are read whether or not the program wrote them */
  mw_quiet_begin();
  int go = mw_scan_words(&s, block, first / MW_W);
  for (unsigned i = 0; go && i < s.n; i++)
    go = mw_scan_words(&s, (const uintptr_t *)(void *)(s.arena + s.off[i]), s.len[i] / MW_W);
  mw_quiet_end();
  *partial = s.partial;
  return s.n;
}
