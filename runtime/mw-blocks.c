/* mw-blocks.c — the live-block index: start address → (block id, requested
 * size) for every live heap block, to answer "is this word the start of a
 * live block" quickly from any thread.
 *
 * A start-of-block bitmap: one bit per granule (2 × pointer size: 16 bytes
 * on 64-bit, 8 on 32-bit, glibc's smallest malloc alignment or a divisor of
 * it), set on allocation, cleared on free.  Beside the bits, one 8-byte entry
 * per granule packs the block's id (below 2^40) and requested size (below
 * 16 MiB − 1), so an allocation or a free writes two places found by shifts
 * alone, next to those the previous one wrote, and a word that is no block
 * start costs one load of a bit (the linked scan's common case).  A block
 * whose id or size does not fit keeps its bit, MW_SIZE_SIDE in its entry and
 * its full id and size in its stripe's hash table (a side entry).  Packing
 * halves the entries' cache lines against a 16-byte (id, size) pair: on
 * binary-trees the entries missed the cache about as often as the program's
 * own nodes.  Both live in regions of 64 MiB of address
 * space (4 MiB on 32-bit), each one mmap made on the region's first block
 * with MAP_NORESERVE: only the pages blocks touch are ever backed.  A
 * top-level table of region pointers (one mmap, MAP_NORESERVE too) covers
 * the whole address space below 2^48.
 *
 * Writers take the lock of one of 64 stripes chosen by the address's 4 KiB
 * page, so threads seldom wait for one another and there is no global lock;
 * the lock also keeps a block from being freed while another thread copies
 * it (mw_index_copy, mw_index_read).  A block the bitmap cannot hold — not
 * aligned to a granule, above 2^48, or its region could not be mapped —
 * goes into that stripe's open-addressing hash table instead (linear
 * probing, backward-shift deletion), so the index stays exact for any
 * allocator; the linked scan only follows aligned words, which never name
 * such a block.  A global [lo, hi) range of addresses ever inserted lets the
 * scan skip most words before looking at a bit.
 */
#define _GNU_SOURCE 1
#include <string.h>
#include <sys/mman.h>

#include "mw-internal.h"

#define MW_STRIPE_BITS 6
#define MW_STRIPES (1u << MW_STRIPE_BITS)
#define MW_SLOTS_FIRST 16u

/* A hash-table slot (blocks the bitmap cannot hold). */
struct mw_slot {
  uintptr_t addr;               /* 0 = empty */
  struct mw_block e;
};

struct mw_stripe {
  int lock;
  unsigned count;               /* live blocks in the stripe */
  unsigned hashed;              /* hash slots in use (blocks outside the bitmap, and side entries) */
  size_t mask;                  /* slots − 1; 0 = no table yet */
  struct mw_slot *slots;
} __attribute__((aligned(64)));

/* ---- the bitmap's regions (layout: struct mw_region, mw-internal.h) ---- */

/* A bitmap word's granules lie in one 4 KiB page, so in one stripe: every
 * change to a word happens under that stripe's lock, and a plain
 * read-modify-write (atomic loads and stores, relaxed, so the unlocked
 * readers below see whole words) cannot lose another writer's bit. */
_Static_assert(MW_WORD_BITS * MW_G <= 4096, "a bitmap word spans more than a page");

struct mw_region **mw_regions;  /* MW_REGIONS pointers (NULL until the first block) */
struct mw_region *mw_region_list;
int mw_blocks_hashed;           /* a stripe has made a hash table (cleared only in a fork child) */

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
  __atomic_store_n(&s->mask, n - 1, __ATOMIC_RELAXED); /* read unlocked by mw_surely_absent */
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
  s->hashed--;
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

/* The region holding addr, made (mapped and published) if there is none yet;
 * NULL when the bitmap cannot hold a block at addr.  Out of line: it runs once
 * per 64 MiB region. */
static __attribute__((noinline)) struct mw_region *mw_region_make(uintptr_t addr)
{
#if MW_ADDR_BITS < 64 && UINTPTR_MAX > 0xffffffffu
  if (addr >> MW_ADDR_BITS) return NULL;
#endif
  struct mw_region **top = __atomic_load_n(&mw_regions, __ATOMIC_ACQUIRE);
  if (!top) {
    void *m = mmap(NULL, MW_REGIONS * sizeof *top, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return NULL;
    struct mw_region **none = NULL;
    if (__atomic_compare_exchange_n(&mw_regions, &none, (struct mw_region **)m, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
      top = m;
    else {
      munmap(m, MW_REGIONS * sizeof *top);
      top = none;
    }
  }
  size_t k = (size_t)(addr >> MW_REGION_SHIFT);
  struct mw_region *r = __atomic_load_n(&top[k], __ATOMIC_ACQUIRE);
  if (r) return r;
  void *m = mmap(NULL, sizeof *r, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) return NULL;
  struct mw_region *fresh = m;
  fresh->base = (uintptr_t)k << MW_REGION_SHIFT;
  if (!__atomic_compare_exchange_n(&top[k], &r, fresh, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    munmap(m, sizeof *r); /* another thread made it first */
    return r;
  }
  struct mw_region *head = __atomic_load_n(&mw_region_list, __ATOMIC_RELAXED);
  do fresh->next = head;
  while (!__atomic_compare_exchange_n(&mw_region_list, &head, fresh, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
  return fresh;
}

/* The region holding addr; with `make`, made if there is none yet. */
static inline struct mw_region *mw_region_of(uintptr_t addr, int make)
{
  struct mw_region *r = mw_region_find(addr);
  if (MW_LIKELY(r != NULL) || !make) return r;
  return mw_region_make(addr);
}

/* Under the stripe lock of g's page (see the _Static_assert above). */
static inline void mw_bit_set(struct mw_region *r, size_t g, int on)
{
  unsigned long *w = &r->bits[g / MW_WORD_BITS], m = 1ul << (g % MW_WORD_BITS);
  unsigned long v = __atomic_load_n(w, __ATOMIC_RELAXED);
  __atomic_store_n(w, on ? v | m : v & ~m, __ATOMIC_RELAXED);
}

/* Is addr the start of a live block held by the bitmap?  Unlocked: the answer
 * may be stale by the time the caller acts on it, so a "yes" is only a hint
 * to take the lock and look again (mw_lookup_locked); a "no" for an address
 * no other thread is allocating or freeing right now is exact.  A region
 * pointer is published after its mapping exists (release/acquire). */
static inline int mw_maybe_start(uintptr_t addr)
{
  if (addr & (MW_G - 1)) return 0;
  struct mw_region *r = mw_region_of(addr, 0);
  return r && mw_bit(r, mw_granule(r, addr));
}

static inline struct mw_stripe *mw_stripe_at(uintptr_t addr)
{
  return &mw_stripes[(addr >> 12) & (MW_STRIPES - 1)];
}

/* A live block found under its stripe's lock. */
struct mw_ref {
  struct mw_stripe *s;          /* locked */
  int found;                    /* 0: not a live block */
  struct mw_block b;            /* its id and requested size */
  struct mw_region *r;          /* in the bitmap: its region and granule (NULL: not) */
  size_t g;
  int slotted;                  /* a hash slot holds it (outside the bitmap, or a side entry) */
  size_t i;                     /* that slot */
};

/* The hash slot of addr in s, if any (stripe locked). */
static inline int mw_slot_of(const struct mw_stripe *s, uintptr_t addr, size_t *i)
{
  if (!s->mask) return 0;
  *i = mw_probe(s, addr, mw_hash(addr));
  return s->slots[*i].addr != 0;
}

/* Finds addr's block in its stripe, which the caller has locked.  A block
 * lives in the bitmap (its entry packed, or MW_SIZE_SIDE and a side entry in
 * the hash table) or only in the hash table: the bitmap takes every block it
 * can hold. */
static void mw_lookup_in(struct mw_stripe *s, uintptr_t addr, struct mw_ref *ref)
{
  ref->s = s;
  ref->found = 0;
  ref->r = NULL;
  ref->slotted = 0;
  struct mw_region *r = (addr & (MW_G - 1)) ? NULL : mw_region_find(addr);
  if (r) {
    size_t g = mw_granule(r, addr);
    if (mw_bit(r, g)) {
      uint64_t e = r->entries[g];
      ref->r = r;
      ref->g = g;
      ref->found = 1;
      if (MW_LIKELY((e & MW_SIZE_SIDE) != MW_SIZE_SIDE)) {
        ref->b.id = e >> MW_SIZE_BITS;
        ref->b.size = (size_t)(e & MW_SIZE_SIDE);
        return;
      }
    }
  }
  if (mw_slot_of(s, addr, &ref->i)) {
    ref->slotted = 1;
    ref->found = 1;
    ref->b = s->slots[ref->i].e;
  } else if (ref->r) {
    ref->found = 0; /* a side entry that could not be stored: unknown, as if never indexed */
    ref->r = NULL;
  }
}

/* Locks addr's stripe and finds addr's block.  The stripe stays locked
 * either way: the caller reads (or copies) the block and releases it with
 * mw_heap_unlock(&ref->s->lock). */
static void mw_lookup_locked(uintptr_t addr, struct mw_ref *ref)
{
  struct mw_stripe *s = mw_stripe_at(addr);
  mw_heap_lock(&s->lock);
  mw_lookup_in(s, addr, ref);
}

/* Unlocked: addr is surely not a live block's start (its bit is clear and its
 * stripe has no hash table), as far as any lookup made now could tell. */
static inline int mw_surely_absent(uintptr_t addr)
{
  return !mw_maybe_start(addr) && !__atomic_load_n(&mw_stripe_at(addr)->mask, __ATOMIC_RELAXED);
}

static void mw_ref_remove(struct mw_ref *ref)
{
  if (ref->r) mw_bit_set(ref->r, ref->g, 0);
  if (ref->slotted) mw_remove_at(ref->s, ref->i);
  ref->s->count--;
  ref->found = 0;
}

/* Stores (addr, id, size) in s's hash table (locked); 0 when there is no
 * memory for it. */
static int mw_slot_put(struct mw_stripe *s, uintptr_t addr, uint64_t id, size_t size)
{
  if ((!s->mask || (s->hashed + 1) * 2 > s->mask + 1) && !mw_stripe_grow(s) &&
      (!s->mask || s->hashed + 1 > s->mask))
    return 0;
  size_t i = mw_probe(s, addr, mw_hash(addr));
  if (!s->slots[i].addr) s->hashed++;
  s->slots[i].addr = addr;
  s->slots[i].e.id = id;
  s->slots[i].e.size = size;
  return 1;
}

/* Adds (or replaces: the address was reused) a live block. */
void mw_index_insert(uintptr_t addr, uint64_t id, size_t size)
{
  struct mw_stripe *s = mw_stripe_at(addr);
  struct mw_region *r = (addr & (MW_G - 1)) ? NULL : mw_region_of(addr, 1);
  mw_widen(addr, size);
  mw_heap_lock(&s->lock);
  if (MW_LIKELY(r != NULL)) {
    size_t g = mw_granule(r, addr);
    int was = mw_bit(r, g);
    if (MW_LIKELY(id < MW_ID_PACKED && size < MW_SIZE_SIDE)) {
      if (MW_UNLIKELY(was) && (r->entries[g] & MW_SIZE_SIDE) == MW_SIZE_SIDE) {
        size_t i;
        if (mw_slot_of(s, addr, &i)) mw_remove_at(s, i); /* the replaced block's side entry */
      }
      r->entries[g] = id << MW_SIZE_BITS | (uint64_t)size;
    } else if (mw_slot_put(s, addr, id, size)) {
      r->entries[g] = MW_SIZE_SIDE;
    } else {
      if (was) {
        mw_bit_set(r, g, 0); /* no memory for the index: the block stays unknown */
        s->count--;
      }
      mw_heap_unlock(&s->lock);
      return;
    }
    if (!was) {
      mw_bit_set(r, g, 1);
      s->count++;
    }
    mw_heap_unlock(&s->lock);
    return;
  }
  size_t i;
  int was = mw_slot_of(s, addr, &i);
  if (mw_slot_put(s, addr, id, size)) {
    if (!was) s->count++;
    __atomic_store_n(&mw_blocks_hashed, 1, __ATOMIC_RELAXED); /* read by mw_index_maybe_fast */
  }
  mw_heap_unlock(&s->lock); /* without memory for the index the block stays unknown */
}

/* Removes addr's block and returns it; 0 if addr is not a live block.  The
 * bitmap's case with a packed entry (nearly every free) is written out here,
 * so a free costs a lock, a bit, an entry and no calls. */
int mw_index_take(uintptr_t addr, struct mw_block *out)
{
  struct mw_stripe *s = mw_stripe_at(addr);
  struct mw_region *r = (addr & (MW_G - 1)) ? NULL : mw_region_find(addr);
  mw_heap_lock(&s->lock);
  if (MW_LIKELY(r != NULL)) {
    size_t g = mw_granule(r, addr);
    uint64_t e = r->entries[g];
    if (MW_LIKELY(mw_bit(r, g)) && MW_LIKELY((e & MW_SIZE_SIDE) != MW_SIZE_SIDE)) {
      out->id = e >> MW_SIZE_BITS;
      out->size = (size_t)(e & MW_SIZE_SIDE);
      mw_bit_set(r, g, 0);
      s->count--;
      mw_heap_unlock(&s->lock);
      return 1;
    }
  }
  struct mw_ref ref;
  mw_lookup_in(s, addr, &ref);
  int found = ref.found;
  if (found) {
    *out = ref.b;
    mw_ref_remove(&ref);
  }
  mw_heap_unlock(&s->lock);
  return found;
}

/* A block freed without being recorded leaves the index too, so no scan
 * copies it afterwards.  From a signal handler that interrupted the
 * recorder (`may_wait` = 0) only if its stripe is free right now. */
void mw_index_forget(uintptr_t addr, int may_wait)
{
  if (!__atomic_load_n(&mw_blocks_hi, __ATOMIC_RELAXED)) return; /* nothing was ever indexed */
  struct mw_stripe *s = mw_stripe_at(addr);
  if (may_wait)
    mw_heap_lock(&s->lock);
  else if (!mw_heap_trylock(&s->lock))
    return;
  struct mw_ref ref;
  mw_lookup_in(s, addr, &ref);
  if (ref.found) mw_ref_remove(&ref);
  mw_heap_unlock(&s->lock);
}

/* Unlocked and cheap: 0 when addr is surely not a live block's start (the
 * linked scan asks this of every word in range before anything else). */
int mw_index_maybe(uintptr_t addr) { return !mw_surely_absent(addr); }

/* Removes addr's block only if it is still block `id` (another thread may
 * have been given the address again meanwhile). */
int mw_index_drop(uintptr_t addr, uint64_t id)
{
  struct mw_ref ref;
  mw_lookup_locked(addr, &ref);
  int found = ref.found && ref.b.id == id;
  if (found) mw_ref_remove(&ref);
  mw_heap_unlock(&ref.s->lock);
  return found;
}

/* Looks addr up and, while its stripe is locked (so no thread can free it
 * meanwhile: frees take the lock first), copies up to `max` bytes of it.
 * An address whose bit is clear is answered without the lock. */
int mw_index_copy(uintptr_t addr, struct mw_block *out, void *buf, size_t max, size_t *copied)
{
  *copied = 0;
  if (mw_surely_absent(addr)) return 0;
  struct mw_ref ref;
  mw_lookup_locked(addr, &ref);
  if (ref.found) {
    *out = ref.b;
    size_t n = out->size < max ? out->size : max;
    if (n) memcpy(buf, (const void *)addr, n);
    *copied = n;
  }
  mw_heap_unlock(&ref.s->lock);
  return ref.found;
}

int mw_index_find(uintptr_t addr, struct mw_block *out)
{
  size_t copied;
  return mw_index_copy(addr, out, NULL, 0, &copied);
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
    mw_heap_lock(&s->lock);
    for (size_t i = 0; s->mask && i <= s->mask; i++) {
      uintptr_t a = s->slots[i].addr;
      if (!a) continue;
      struct mw_region *r = (a & (MW_G - 1)) ? NULL : mw_region_find(a);
      if (r && mw_bit(r, mw_granule(r, a))) continue; /* a side entry: the bitmap's walk lists it */
      if (n < max) {
        out[n].addr = s->slots[i].addr;
        out[n].id = s->slots[i].e.id;
        out[n].size = s->slots[i].e.size;
      }
      n++;
    }
    mw_heap_unlock(&s->lock);
  }
  /* the bitmap: one word (64 granules, within one page) at a time under the
   * lock of that page's stripe; untouched words read the zero page */
  for (struct mw_region *r = __atomic_load_n(&mw_region_list, __ATOMIC_ACQUIRE); r; r = r->next) {
    for (size_t w = 0; w < MW_REGION_GRANULES / MW_WORD_BITS; w++) {
      if (!__atomic_load_n(&r->bits[w], __ATOMIC_RELAXED)) continue;
      uintptr_t at = r->base + ((uintptr_t)w * MW_WORD_BITS << MW_G_SHIFT);
      struct mw_stripe *s = mw_stripe_at(at);
      mw_heap_lock(&s->lock);
      unsigned long bits = __atomic_load_n(&r->bits[w], __ATOMIC_RELAXED);
      while (bits) {
        size_t g = w * MW_WORD_BITS + (size_t)__builtin_ctzl(bits);
        bits &= bits - 1;
        uintptr_t a = r->base + ((uintptr_t)g << MW_G_SHIFT);
        uint64_t e = r->entries[g];
        size_t i;
        if ((e & MW_SIZE_SIDE) == MW_SIZE_SIDE && !mw_slot_of(s, a, &i)) continue;
        if (n < max) {
          out[n].addr = a;
          if ((e & MW_SIZE_SIDE) == MW_SIZE_SIDE) {
            out[n].id = s->slots[i].e.id;
            out[n].size = s->slots[i].e.size;
          } else {
            out[n].id = e >> MW_SIZE_BITS;
            out[n].size = (size_t)(e & MW_SIZE_SIDE);
          }
        }
        n++;
      }
      mw_heap_unlock(&s->lock);
    }
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
  struct mw_ref ref;
  mw_lookup_locked(addr, &ref);
  size_t got = 0;
  if (ref.found && ref.b.id == id && off < ref.b.size) {
    got = ref.b.size - off < n ? ref.b.size - off : n;
    memcpy(buf, (const unsigned char *)addr + off, got);
  }
  mw_heap_unlock(&ref.s->lock);
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
  for (unsigned i = 0; i < MW_STRIPES; i++) mw_heap_lock(&mw_stripes[i].lock);
}

void mw_index_unlock_all(void)
{
  for (unsigned i = 0; i < MW_STRIPES; i++) mw_heap_unlock(&mw_stripes[i].lock);
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
    s->hashed = 0;
    s->lock = 0;
  }
  mw_blocks_hashed = 0;
  struct mw_region *r = mw_region_list;
  while (r) {
    struct mw_region *next = r->next;
    munmap(r, sizeof *r);
    r = next;
  }
  mw_region_list = NULL;
  if (mw_regions) munmap(mw_regions, MW_REGIONS * sizeof *mw_regions);
  mw_regions = NULL;
}
