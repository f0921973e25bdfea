/* mw-blocks.c — the live-block index: start address → (block id, requested
 * size) for every live heap block, to answer "is this word the start of a
 * live block" quickly from any thread.
 *
 * 64 stripes chosen by the address's page, each with its own spin lock and
 * open-addressing table (linear probing, backward-shift deletion) in mmap'd
 * memory, so threads seldom wait for one another.  A global [lo, hi) range of
 * addresses ever inserted lets the linked scan skip most words unlocked.
 */
#define _GNU_SOURCE 1
#include <string.h>
#include <sys/mman.h>

#include "mw-internal.h"

#define MW_STRIPE_BITS 6
#define MW_STRIPES (1u << MW_STRIPE_BITS)
#define MW_SLOTS_FIRST 16u

struct mw_slot {
  uintptr_t addr;               /* 0 = empty */
  uint64_t id;
  size_t size;
};

struct mw_stripe {
  int lock;
  unsigned count;
  size_t mask;                  /* slots − 1; 0 = no table yet */
  struct mw_slot *slots;
} __attribute__((aligned(64)));

struct mw_stripe mw_stripes[MW_STRIPES];
uintptr_t mw_blocks_lo_inv;     /* ~lowest block address (0 = none yet) */
uintptr_t mw_blocks_hi;         /* highest block address + 1 */

/* The stripe is the block's 4 KiB page modulo 64 (top bits of the result);
 * the home slot (bits 24 and up) is the address with those stripe bits taken
 * out, so blocks allocated one after another — the common case — sit in
 * neighbouring slots and an insert or a free touches cache lines the previous
 * one brought in.  (A scattering hash missed the cache on nearly every call
 * once the index outgrew it.)  Bits above 2^34 slots are folded in, so far-apart
 * regions (heap, mmap'd blocks) do not all start at slot 0. */
static inline uint64_t mw_hash(uintptr_t a)
{
  uint64_t x = (uint64_t)a;
  uint64_t stripe = (x >> 12) & (MW_STRIPES - 1);
  uint64_t key = ((x >> (12 + MW_STRIPE_BITS)) << 8) | ((x >> 4) & 0xff);
  key = (key ^ (key >> 34)) & ((1ull << 34) - 1);
  return (stripe << (64 - MW_STRIPE_BITS)) | (key << 24);
}
static inline struct mw_stripe *mw_stripe_of(uint64_t h) { return &mw_stripes[h >> (64 - MW_STRIPE_BITS)]; }
static inline size_t mw_home(uint64_t h, size_t mask) { return (size_t)(h >> 24) & mask; }

/* Index of addr's slot in s, or of the empty slot where it would go. */
static inline size_t mw_probe(const struct mw_stripe *s, uintptr_t addr, uint64_t h)
{
  size_t i = mw_home(h, s->mask);
  while (s->slots[i].addr && s->slots[i].addr != addr) i = (i + 1) & s->mask;
  return i;
}

static size_t mw_slots_bytes(size_t n) { return n * sizeof(struct mw_slot); }

/* Doubles the stripe's table (or makes the first).  0 if mmap fails. */
static int mw_stripe_grow(struct mw_stripe *s)
{
  size_t n = s->mask ? (s->mask + 1) * 2 : MW_SLOTS_FIRST;
  struct mw_slot *fresh = mmap(NULL, mw_slots_bytes(n), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (fresh == MAP_FAILED) return 0;
  struct mw_slot *old = s->slots;
  size_t old_n = s->mask ? s->mask + 1 : 0;
  s->slots = fresh;
  s->mask = n - 1;
  for (size_t i = 0; i < old_n; i++) {
    if (!old[i].addr) continue;
    size_t j = mw_probe(s, old[i].addr, mw_hash(old[i].addr));
    s->slots[j] = old[i];
  }
  if (old) munmap(old, mw_slots_bytes(old_n));
  return 1;
}

static void mw_remove_at(struct mw_stripe *s, size_t i)
{
  size_t j = i;
  for (;;) {
    j = (j + 1) & s->mask;
    if (!s->slots[j].addr) break;
    size_t k = mw_home(mw_hash(s->slots[j].addr), s->mask);
    /* move j back to i unless its home lies cyclically in (i, j] */
    if (i <= j ? (i < k && k <= j) : (i < k || k <= j)) continue;
    s->slots[i] = s->slots[j];
    i = j;
  }
  s->slots[i].addr = 0;
  s->count--;
}

static void mw_widen(uintptr_t addr, size_t size)
{
  uintptr_t inv = __atomic_load_n(&mw_blocks_lo_inv, __ATOMIC_RELAXED);
  while (addr < ~inv && !__atomic_compare_exchange_n(&mw_blocks_lo_inv, &inv, ~addr, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  uintptr_t end = addr + (size ? size : 1), hi = __atomic_load_n(&mw_blocks_hi, __ATOMIC_RELAXED);
  while (end > hi && !__atomic_compare_exchange_n(&mw_blocks_hi, &hi, end, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
}

/* Adds (or replaces: the address was reused) a live block. */
void mw_index_insert(uintptr_t addr, uint64_t id, size_t size)
{
  uint64_t h = mw_hash(addr);
  struct mw_stripe *s = mw_stripe_of(h);
  mw_widen(addr, size);
  mw_lock(&s->lock);
  if ((!s->mask || (s->count + 1) * 2 > s->mask + 1) && !mw_stripe_grow(s) &&
      (!s->mask || s->count + 1 > s->mask)) {
    mw_unlock(&s->lock); /* no memory for the index: the block stays unknown */
    return;
  }
  size_t i = mw_probe(s, addr, h);
  if (!s->slots[i].addr) s->count++;
  s->slots[i].addr = addr;
  s->slots[i].id = id;
  s->slots[i].size = size;
  mw_unlock(&s->lock);
}

/* Locks addr's stripe and returns addr's slot, or NULL when addr is not the
 * start of a live block.  The stripe stays locked either way: the caller
 * reads (or copies) the block and releases it with mw_unlock(&(*sp)->lock). */
static struct mw_slot *mw_lookup_locked(uintptr_t addr, struct mw_stripe **sp)
{
  uint64_t h = mw_hash(addr);
  struct mw_stripe *s = mw_stripe_of(h);
  *sp = s;
  mw_lock(&s->lock);
  if (!s->mask) return NULL;
  size_t i = mw_probe(s, addr, h);
  return s->slots[i].addr ? &s->slots[i] : NULL;
}

/* Removes addr's block and returns it; 0 if addr is not a live block. */
int mw_index_take(uintptr_t addr, struct mw_block *out)
{
  struct mw_stripe *s;
  struct mw_slot *slot = mw_lookup_locked(addr, &s);
  if (slot) {
    out->id = slot->id;
    out->size = slot->size;
    mw_remove_at(s, (size_t)(slot - s->slots));
  }
  mw_unlock(&s->lock);
  return slot != NULL;
}

/* A block freed without being recorded leaves the index too, so no scan
 * copies it afterwards.  From a signal handler that interrupted the
 * recorder (`may_wait` = 0) only if its stripe is free right now. */
void mw_index_forget(uintptr_t addr, int may_wait)
{
  if (!__atomic_load_n(&mw_blocks_hi, __ATOMIC_RELAXED)) return; /* nothing was ever indexed */
  uint64_t h = mw_hash(addr);
  struct mw_stripe *s = mw_stripe_of(h);
  if (may_wait)
    mw_lock(&s->lock);
  else if (!mw_trylock(&s->lock))
    return;
  if (s->mask) {
    size_t i = mw_probe(s, addr, h);
    if (s->slots[i].addr) mw_remove_at(s, i);
  }
  mw_unlock(&s->lock);
}

int mw_index_find(uintptr_t addr, struct mw_block *out)
{
  struct mw_stripe *s;
  struct mw_slot *slot = mw_lookup_locked(addr, &s);
  if (slot) {
    out->id = slot->id;
    out->size = slot->size;
  }
  mw_unlock(&s->lock);
  return slot != NULL;
}

/* Removes addr's block only if it is still block `id` (another thread may
 * have been given the address again meanwhile). */
int mw_index_drop(uintptr_t addr, uint64_t id)
{
  struct mw_stripe *s;
  struct mw_slot *slot = mw_lookup_locked(addr, &s);
  int found = slot != NULL && slot->id == id;
  if (found) mw_remove_at(s, (size_t)(slot - s->slots));
  mw_unlock(&s->lock);
  return found;
}

/* Looks addr up and, while its stripe is locked (so no thread can free it
 * meanwhile: frees take the lock first), copies up to `max` bytes of it. */
int mw_index_copy(uintptr_t addr, struct mw_block *out, void *buf, size_t max, size_t *copied)
{
  struct mw_stripe *s;
  struct mw_slot *slot = mw_lookup_locked(addr, &s);
  *copied = 0;
  if (slot) {
    out->id = slot->id;
    out->size = slot->size;
    size_t n = out->size < max ? out->size : max;
    if (n) memcpy(buf, (const void *)addr, n);
    *copied = n;
  }
  mw_unlock(&s->lock);
  return slot != NULL;
}

/* Copies up to `max` live blocks (address, id, size) into `out`, one stripe at
 * a time under its lock; returns how many there were (more than `max`: the
 * rest did not fit).  Blocks allocated or freed meanwhile by other threads may
 * or may not be in the list. */
size_t mw_index_live(struct mw_live_block *out, size_t max)
{
  size_t n = 0;
  for (unsigned k = 0; k < MW_STRIPES; k++) {
    struct mw_stripe *s = &mw_stripes[k];
    mw_lock(&s->lock);
    for (size_t i = 0; s->mask && i <= s->mask; i++) {
      if (!s->slots[i].addr) continue;
      if (n < max) {
        out[n].addr = s->slots[i].addr;
        out[n].id = s->slots[i].id;
        out[n].size = s->slots[i].size;
      }
      n++;
    }
    mw_unlock(&s->lock);
  }
  return n;
}

/* Live blocks right now (unlocked: a hint for sizing mw_index_live's buffer). */
size_t mw_index_count(void)
{
  size_t n = 0;
  for (unsigned k = 0; k < MW_STRIPES; k++) n += __atomic_load_n(&mw_stripes[k].count, __ATOMIC_RELAXED);
  return n;
}

/* Copies bytes [off, off + n) of the block at addr (clipped to its size) while
 * its stripe is locked, only if it is still block `id`; returns the bytes
 * copied (0: gone or past its end). */
size_t mw_index_read(uintptr_t addr, uint64_t id, size_t off, void *buf, size_t n)
{
  struct mw_stripe *s;
  struct mw_slot *slot = mw_lookup_locked(addr, &s);
  size_t got = 0;
  if (slot && slot->id == id && off < slot->size) {
    got = slot->size - off < n ? slot->size - off : n;
    memcpy(buf, (const unsigned char *)addr + off, got);
  }
  mw_unlock(&s->lock);
  return got;
}

/* Every block ever indexed started in [*lo, *hi): a cheap unlocked filter. */
void mw_index_bounds(uintptr_t *lo, uintptr_t *hi)
{
  *lo = ~__atomic_load_n(&mw_blocks_lo_inv, __ATOMIC_RELAXED);
  *hi = __atomic_load_n(&mw_blocks_hi, __ATOMIC_RELAXED);
}

void mw_index_lock_all(void)
{
  for (unsigned i = 0; i < MW_STRIPES; i++) mw_lock(&mw_stripes[i].lock);
}

void mw_index_unlock_all(void)
{
  for (unsigned i = 0; i < MW_STRIPES; i++) mw_unlock(&mw_stripes[i].lock);
}

/* In a fork child: unlock, and forget the parent's blocks (the child's trace
 * never saw them allocated, so their frees are recorded as untracked). */
void mw_index_reset_child(void)
{
  for (unsigned i = 0; i < MW_STRIPES; i++) {
    struct mw_stripe *s = &mw_stripes[i];
    if (s->mask) munmap(s->slots, mw_slots_bytes(s->mask + 1));
    s->slots = NULL;
    s->mask = 0;
    s->count = 0;
    s->lock = 0;
  }
}
