/* mw-blocks.c — a target's live blocks: a fixed open-addressing table of
 * (address, id, requested size) for every block the heap calls made and have
 * not ended (its size is the driver's --mw-blocks option), the linked scan
 * read in place (one thread: no block can be freed under it), and the
 * record of who called the allocator (none: no loaded objects).
 *
 * The table gives a free its block's id and size, and the linked scan its
 * "is this word a live block's start".  A block made while the table is full
 * is recorded but not kept, so its free is an untracked FREE with its
 * address; the report says how many blocks that was (the LOST count).
 */
#include <string.h>

#include "../mw-internal.h"

/* Where addr's probe starts (blocks are 8-aligned: the low bits carry nothing). */
static unsigned mw_home(uintptr_t addr) { return (unsigned)((addr >> 3) * 2654435761u) & (mw_block_cap - 1); }

/* addr's slot, or the empty slot where it would go. */
static unsigned mw_slot(uintptr_t addr)
{
  unsigned i = mw_home(addr);
  while (mw_block_slots[i].addr && mw_block_slots[i].addr != addr) i = (i + 1) & (mw_block_cap - 1);
  return i;
}

/* A block's 64-bit id from the 32 bits kept: the largest id not above the counter with those bits. */
static uint64_t mw_full_id(uint32_t low)
{
  uint64_t now = mw_seq_counter, id = (now & ~(uint64_t)0xffffffffu) | low;
  return id > now ? id - ((uint64_t)1 << 32) : id;
}

void mw_index_insert(uintptr_t addr, uint64_t id, size_t size)
{
  if (mw_g.nblocks + 1 >= mw_block_cap) {
    mw_t.lost++; /* the table is full: this block's free will be untracked */
    return;
  }
  unsigned i = mw_slot(addr);
  if (!mw_block_slots[i].addr) mw_g.nblocks++;
  mw_block_slots[i].addr = addr;
  mw_block_slots[i].id = (uint32_t)id;
  mw_block_slots[i].size = (uint32_t)size;
  if (!mw_g.blocks_lo || addr < mw_g.blocks_lo) mw_g.blocks_lo = addr;
  if (addr + size > mw_g.blocks_hi) mw_g.blocks_hi = addr + size;
}

/* Empties slot i, moving later entries of its run back (no tombstones). */
static void mw_slot_clear(unsigned i)
{
  const unsigned mask = mw_block_cap - 1;
  unsigned j = i;
  for (;;) {
    mw_block_slots[i].addr = 0;
    for (;;) {
      j = (j + 1) & mask;
      if (!mw_block_slots[j].addr) return;
      unsigned h = mw_home(mw_block_slots[j].addr);
      /* j's entry may move to i when its home is not in (i, j] */
      if (i <= j ? (h <= i || h > j) : (h <= i && h > j)) break;
    }
    mw_block_slots[i] = mw_block_slots[j];
    i = j;
  }
}

int mw_index_find(uintptr_t addr, struct mw_block *out)
{
  if (!addr) return 0;
  unsigned i = mw_slot(addr);
  if (!mw_block_slots[i].addr) return 0;
  out->id = mw_full_id(mw_block_slots[i].id);
  out->size = mw_block_slots[i].size;
  return 1;
}

int mw_index_take(uintptr_t addr, struct mw_block *out)
{
  if (!mw_index_find(addr, out)) return 0;
  mw_slot_clear(mw_slot(addr));
  mw_g.nblocks--;
  return 1;
}

void mw_index_forget(uintptr_t addr, int may_wait)
{
  struct mw_block b;
  (void)may_wait;
  mw_index_take(addr, &b);
}

/* ---- the linked scan, in place ---- */

/* The blocks found by the last scan, breadth-first, and where each one is. */
uint64_t mw_link_found[MW_LINK_MAX];
uintptr_t mw_link_at[MW_LINK_MAX];
uint32_t mw_link_size[MW_LINK_MAX];

const uint64_t *mw_link_ids(struct mw_thread *t)
{
  (void)t;
  return mw_link_found;
}

void mw_link_release(struct mw_thread *t) { (void)t; }

/* Adds the live blocks `words` points to; 0 when the block limit stopped the scan. */
static int mw_link_words(const uintptr_t *words, size_t count, unsigned *n, size_t *budget, int *partial)
{
  const uintptr_t lo = mw_g.blocks_lo, span = mw_g.blocks_hi - mw_g.blocks_lo;
  for (size_t k = 0; k < count; k++) {
    uintptr_t w = words[k];
    struct mw_block b;
    if ((w & 7u) || w - lo >= span || !mw_index_find(w, &b)) continue;
    unsigned seen = 0;
    while (seen < *n && mw_link_at[seen] != w) seen++;
    if (seen < *n) continue;
    if (*n == mw_g.link_blocks || *n == MW_LINK_MAX) {
      *partial = 1;
      return 0;
    }
    mw_link_found[*n] = b.id;
    mw_link_at[*n] = w;
    size_t len = b.size < *budget ? b.size : *budget;
    if (len < b.size) *partial = 1;
    mw_link_size[*n] = (uint32_t)len;
    *budget -= len;
    (*n)++;
  }
  return 1;
}

/* The live blocks reachable from the `size` bytes at block, transitively (as
 * the host's scan, mw-linked.c, without copies: nothing frees a block while
 * this thread scans). */
unsigned mw_link_scan(struct mw_thread *t, const void *block, size_t size, int *partial)
{
  unsigned n = 0;
  size_t budget = mw_g.link_bytes;
  (void)t;
  *partial = 0;
  if (!mw_g.link_blocks || !budget || mw_g.blocks_hi <= mw_g.blocks_lo) return 0;
  size_t first = size < budget ? size : budget;
  if (first < size) *partial = 1;
  budget -= first;
  int go = mw_link_words(block, first / sizeof(uintptr_t), &n, &budget, partial);
  for (unsigned i = 0; go && i < n; i++)
    go = mw_link_words((const uintptr_t *)mw_link_at[i], mw_link_size[i] / sizeof(uintptr_t), &n, &budget, partial);
  return n;
}

/* No loaded objects to name: an interposed call's record stands alone. */
void mw_write_caller(struct mw_thread *t, uintptr_t ra)
{
  (void)t;
  (void)ra;
}

/* No leak classes on a target yet: the blocks live at the end are the leaks. */
void mw_write_leaks(struct mw_thread *t) { (void)t; }
