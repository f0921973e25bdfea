/* mw-online.c — online mode (MEMWRAP_MODE=online): no event trace; the
 * per-function, per-library and per-thread heap tables of
 * `cc-memwrap report --by function|library|thread`, and the run's heap
 * totals, kept in a small memory-mapped file (runtime/ONLINE-FORMAT.md).
 *
 * The recording machinery is unchanged: entries, exits and the other records
 * still go into the thread's chunk, but the chunk is a small anonymous
 * scratch buffer whose refill only resets the cursor (mw_online_scratch).
 * Where the trace file would have an encoder thread (x86-64), the thread
 * writes them there as the encoder's words and blobs (MW_RING_SCRATCH,
 * mw-internal.h): the same shadow stack, and no record encoded that nobody
 * reads.
 * The heap calls (core/mw-heap.c) charge each event here instead of writing a
 * record: to the function of the innermost open frame, to the loaded object
 * that called the interposed allocator (or "instrumented code"), and to the
 * thread.  The names the tables need (UNIT, EXT/LIBRARY and PROGRAM records,
 * in the trace's encoding) are copied into a log in the same file.
 *
 * The file is MAP_SHARED and every update is a store into the mapping, so a
 * crash or SIGKILL leaves the tables as they were at the last heap call.
 * One lock (none while the process is single-threaded) orders the updates:
 * each table's min and max are those of its running net in that order.
 */
#define _GNU_SOURCE 1
#define _FILE_OFFSET_BITS 64
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mw-internal.h"

struct mw_online mw_online = {.fd = -1};
__thread struct mw_online_cache mw_online_tc MW_TLS;

#define MW_ONLINE_SCRATCH (16u * 1024u)     /* payload of a thread's scratch chunk */
#define MW_ONLINE_SEG_FIRST (16u * 1024u)   /* first segment payload; later ones double (up to 4 MiB) */
#define MW_ONLINE_SEG_HEAD 16

/* Grows the file to hold `need` bytes (fallocate: a full disk fails here, not as SIGBUS). */
static int mw_online_grow(uint64_t need)
{
  if (need <= mw_online.file_size) return 1;
  uint64_t step = 64u * 1024u, size = (need + step - 1) / step * step;
  if (fallocate(mw_online.fd, 0, (off_t)mw_online.file_size, (off_t)(size - mw_online.file_size)) != 0) {
    if (errno != EOPNOTSUPP && errno != ENOSYS && errno != EINVAL) return 0;
    if (ftruncate(mw_online.fd, (off_t)size) != 0) return 0;
  }
  mw_online.file_size = size;
  return 1;
}

/* A new segment of `kind` with at least `need` payload bytes; its payload,
 * or NULL (the file could not grow, or no mapping slot is left). */
static unsigned char *mw_online_segment(uint32_t kind, size_t need, uint32_t *cap_out, uint32_t **used_out)
{
  if (mw_online.nmaps >= MW_ONLINE_MAPS) return NULL;
  size_t cap = MW_ONLINE_SEG_FIRST << (mw_online.nmaps < 8 ? mw_online.nmaps : 8);
  while (cap < need) cap <<= 1;
  if (cap > 0x40000000u) return NULL;
  uint64_t off = mw_online.file_end, total = MW_ONLINE_SEG_HEAD + cap;
  uint64_t map_off = off & ~(uint64_t)(mw_g.page - 1);
  size_t len = (size_t)(off + total - map_off);
  if (!mw_online_grow(off + total)) return NULL;
  void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, mw_online.fd, (off_t)map_off);
  if (m == MAP_FAILED) return NULL;
  mw_online.maps[mw_online.nmaps].addr = m;
  mw_online.maps[mw_online.nmaps].len = len;
  mw_online.nmaps++;
  unsigned char *head = (unsigned char *)m + (off - map_off);
  uint32_t c32 = (uint32_t)cap, zero = 0;
  memcpy(head + 4, &kind, 4);
  memcpy(head + 8, &c32, 4);
  memcpy(head + 12, &zero, 4);
  mw_fence();
  memcpy(head, "MWOS", 4);
  mw_online.file_end = off + total;
  *cap_out = c32;
  *used_out = (uint32_t *)(void *)(head + 12);
  return head + MW_ONLINE_SEG_HEAD;
}

static void mw_online_incomplete(void)
{
  if (mw_online.header) mw_online.header[17] |= 4;
}

/* ---- the file ---- */

int mw_online_wanted(void)
{
  const char *s = mw_getenv("MEMWRAP_MODE");
  if (!s || !*s || strcmp(s, "trace") == 0) return 0;
  if (strcmp(s, "online") == 0) return 1;
  mw_say("MEMWRAP_MODE=", s, ": unknown mode (trace or online); recording a trace\n", NULL, NULL);
  return 0;
}

/* Creates the file (named as a trace would be) and maps its header; 0 = run unrecorded. */
static int mw_online_open(void)
{
  char path[PATH_MAX];
  int fd = mw_record_file_open("cannot create the online tables file ", 0, path);
  if (fd < 0) return 0;
  mw_online.fd = fd;
  mw_online.file_size = 0;
  mw_online.file_end = MW_ONLINE_HEADER_SIZE;
  void *h = MAP_FAILED;
  if (mw_online_grow(MW_ONLINE_HEADER_SIZE)) h = mmap(NULL, mw_g.page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (h == MAP_FAILED) {
    mw_say("cannot map the online tables file ", path, "; the program runs unrecorded\n", NULL, NULL);
    close(fd);
    unlink(path);
    mw_online.fd = -1;
    return 0;
  }
  unsigned char *hd = mw_put_header(h, "MWONLINE", MW_ONLINE_MAJOR, MW_ONLINE_MINOR, MW_ONLINE_HEADER_SIZE);
  mw_online.header = hd;
  mw_online.totals = (struct mw_online_totals *)(void *)(hd + 48);
  mw_g.header = hd; /* _exit tells a vfork child by the pid at 20; a normal end sets bit 0 of byte 17 */
  return 1;
}

/* How the run ended: how 0 = exit (status), 1 = fatal signal (signo; no locks: signal handlers call it).  A normal
 * exit also cuts the file after its last segment (threads still running may add one: the size stays known). */
static void mw_online_mark_end(int how, int code)
{
  unsigned char *hd = mw_online.header;
  if (!hd) return;
  if (!how) {
    mw_lock(&mw_online.lock);
    if (mw_online.file_end < mw_online.file_size && ftruncate(mw_online.fd, (off_t)mw_online.file_end) == 0)
      mw_online.file_size = mw_online.file_end;
    mw_unlock(&mw_online.lock);
  }
  uint32_t c = (uint32_t)code;
  memcpy(hd + 40, &c, 4);
  mw_fence();
  hd[28] = (unsigned char)(how ? 2 : 1);
}

/* In a fork child: let go of the parent's file unwritten (the child makes its own on its first record). */
static void mw_online_close_child(void)
{
  for (unsigned i = 0; i < mw_online.nmaps; i++) munmap(mw_online.maps[i].addr, mw_online.maps[i].len);
  if (mw_online.slots) munmap(mw_online.slots, mw_online.slots_len);
  if (mw_online.fd >= 0) close(mw_online.fd);
  unsigned gen = mw_online.gen;
  memset(&mw_online, 0, sizeof mw_online);
  mw_online.gen = gen + 1; /* the threads' cached entries were the parent's */
  mw_online.fd = -1;
  mw_trace_close_child(); /* mw_g.header is our header: unmapped there */
}

/* ---- the thread's scratch chunk ---- */

/* The thread's records go into its scratch as words (x86-64, as the encoder thread's ring would take them). */
static void mw_online_words(struct mw_thread *t)
{
#if MW_RING
  if (t->ring != MW_RING_SCRATCH) mw_ring_no_compact_exit(t); /* words only: no compact EXIT (mw-ring.c) */
  t->ring = MW_RING_SCRATCH;
#else
  (void)t;
#endif
}

static int mw_online_scratch(struct mw_thread *t, size_t need, int nonblocking)
{
  (void)nonblocking; /* an anonymous mapping: no lock */
  int st = mw_state();
  if (st != MW_ACTIVE && st != MW_INITIALIZING) return 0;
  /* the scratch's start (payload and used move with each blob when the thread writes words) */
  unsigned char *start = t->chunk_map ? (unsigned char *)t->chunk_map + MW_CHUNK_HEAD : NULL;
  size_t cap = start ? (size_t)(t->end - start) : 0;
  if (!t->chunk_map || cap < need) {
    size_t want = MW_ONLINE_SCRATCH;
    while (want < need) want <<= 1;
    size_t len = (MW_CHUNK_HEAD + want + mw_g.page - 1) & ~(mw_g.page - 1);
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return 0;
    void *old = t->chunk_map;
    size_t old_len = t->chunk_map_len;
    t->end = NULL;
    mw_fence();
    t->chunk_map = m;
    t->chunk_map_len = len;
    t->chunk_off = 0;
    t->payload = (unsigned char *)m + MW_CHUNK_HEAD;
    t->used = (uint32_t *)(void *)((unsigned char *)m + 12);
    t->cur = t->payload;
    t->chunks++;
    mw_fence();
    t->end = (unsigned char *)m + len;
    if (old) munmap(old, old_len);
    mw_online_words(t);
    return 1;
  }
  /* refill: the records written so far are not kept */
  t->payload = t->cur = start;
  t->used = (uint32_t *)(void *)(start - 4);
  *t->used = 0;
  mw_online_words(t);
  return 1;
}

/* ---- names ---- */

/* Appends a record (UNIT, EXT/LIBRARY, PROGRAM, in the trace's encoding) to the names log. */
static void mw_online_names(const unsigned char *rec, size_t n)
{
  if (!mw_online.header || !n) return;
  mw_lock(&mw_online.lock);
  if (!mw_online.names || mw_online.names_cap - *mw_online.names_used < n) {
    uint32_t cap, *used;
    unsigned char *seg = mw_online_segment(MW_ONLINE_SEG_NAMES, n, &cap, &used);
    if (!seg) {
      mw_online_incomplete();
      mw_unlock(&mw_online.lock);
      return;
    }
    mw_online.names = seg;
    mw_online.names_cap = cap;
    mw_online.names_used = used;
  }
  uint32_t at = *mw_online.names_used;
  memcpy(mw_online.names + at, rec, n);
  mw_fence();
  *mw_online.names_used = at + (uint32_t)n;
  mw_unlock(&mw_online.lock);
}

/* ---- the tables ---- */

static inline size_t mw_online_hash(uint64_t k, size_t mask)
{
  k *= 0x9e3779b97f4a7c15ull;
  return (size_t)(k >> 29) & mask;
}

/* Doubles the (anonymous, private) index from keys to entries. */
static int mw_online_rehash(void)
{
  size_t n = mw_online.nslots ? mw_online.nslots * 2 : 1024;
  size_t len = n * sizeof(struct mw_online_slot);
  void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return 0;
  struct mw_online_slot *s = m;
  for (size_t i = 0; i < mw_online.nslots; i++) {
    struct mw_online_slot *o = &mw_online.slots[i];
    if (!o->e) continue;
    size_t h = mw_online_hash(o->key, n - 1);
    while (s[h].e) h = (h + 1) & (n - 1);
    s[h] = *o;
  }
  if (mw_online.slots) munmap(mw_online.slots, mw_online.slots_len);
  mw_online.slots = s;
  mw_online.nslots = n;
  mw_online.slots_len = len;
  return 1;
}

/* The entry of (kind, key), made (zero) on first use; NULL when it cannot be stored. */
static struct mw_online_entry *mw_online_entry(uint32_t kind, uint64_t key, uint64_t aux)
{
  uint64_t k = ((uint64_t)kind << 56) ^ key;
  if (mw_online.nslots) {
    size_t mask = mw_online.nslots - 1, h = mw_online_hash(k, mask);
    for (struct mw_online_slot *s = &mw_online.slots[h]; s->e; s = &mw_online.slots[h = (h + 1) & mask])
      if (s->key == k) return s->e;
  }
  if ((mw_online.nused + 1) * 2 > mw_online.nslots && !mw_online_rehash()) return NULL;
  const size_t esize = sizeof(struct mw_online_entry);
  if (!mw_online.ents || mw_online.ents_cap - *mw_online.ents_used < esize) {
    uint32_t cap, *used;
    unsigned char *seg = mw_online_segment(MW_ONLINE_SEG_ENTRIES, esize, &cap, &used);
    if (!seg) return NULL;
    mw_online.ents = seg;
    mw_online.ents_cap = cap;
    mw_online.ents_used = used;
  }
  uint32_t at = *mw_online.ents_used;
  struct mw_online_entry *e = (struct mw_online_entry *)(void *)(mw_online.ents + at);
  memset(e, 0, esize);
  e->kind = kind;
  e->key = key;
  e->aux = aux;
  mw_fence();
  *mw_online.ents_used = at + (uint32_t)esize;
  size_t mask = mw_online.nslots - 1, h = mw_online_hash(k, mask);
  while (mw_online.slots[h].e) h = (h + 1) & mask;
  mw_online.slots[h].key = k;
  mw_online.slots[h].e = e;
  mw_online.nused++;
  return e;
}

static inline void mw_online_add(struct mw_online_entry *e, size_t added, size_t freed, int counter)
{
  if (!e) {
    mw_online_incomplete();
    return;
  }
  int64_t net = e->net + (int64_t)added - (int64_t)freed;
  e->net = net;
  if (net < e->min) e->min = net;
  if (net > e->max) e->max = net;
  e->allocated += added;
  e->freed += freed;
  if (counter >= 0) e->counts[counter]++;
}

/* The count an allocation by allocator `kind` (a site kind) goes to: malloc, calloc, aligned, strdup, realloc. */
static int mw_online_counter(unsigned kind)
{
  switch (kind) {
  case MW_SITE_CALLOC:
    return MW_ONLINE_C_CALLOC;
  case MW_SITE_ALIGNED_ALLOC:
  case MW_SITE_POSIX_MEMALIGN:
  case MW_SITE_MEMALIGN:
  case MW_SITE_VALLOC:
  case MW_SITE_PVALLOC:
    return MW_ONLINE_C_ALIGNED;
  case MW_SITE_STRDUP:
  case MW_SITE_STRNDUP:
    return MW_ONLINE_C_STRDUP;
  case MW_SITE_REALLOC:
  case MW_SITE_REALLOCARRAY:
    return MW_ONLINE_C_REALLOC;
  default:
    return MW_ONLINE_C_MALLOC;
  }
}

/* One heap event: `added` bytes of a block it made, `freed` of one it ended; `what` says which totals it counts in. */
static void mw_online_heap(struct mw_thread *t, unsigned fn, uintptr_t ra, unsigned kind, size_t added, size_t freed,
                    unsigned what)
{
  if (!mw_online.header) return;
  /* the function of the innermost open frame (0: none), the object that called the interposed allocator */
  unsigned site = t->top ? t->frames[t->top - 1].site : 0;
  uint64_t lib = fn ? mw_caller_library(t, ra) : MW_ONLINE_LIB_INSTRUMENTED;
  struct mw_online_cache *c = &mw_online_tc;
  if (MW_UNLIKELY(c->gen != mw_online.gen + 1)) {
    memset(c, 0, sizeof *c);
    c->gen = mw_online.gen + 1;
  }
  struct mw_online_cache_slot *fs = &c->functions[site & (MW_ONLINE_CACHED - 1)];
  /* as `report --by` counts: every REALLOC call, a FREE that ended a block, an ALLOC by its allocator */
  int counter = what & MW_HEAP_REALLOC ? MW_ONLINE_C_REALLOC
                : what & MW_HEAP_ENDED ? MW_ONLINE_C_FREE
                : what & MW_HEAP_MADE  ? mw_online_counter(kind)
                                         : -1;
  mw_lock(&mw_online.lock);
  struct mw_online_totals *T = mw_online.totals;
  if (what & MW_HEAP_MADE) {
    T->allocations++;
    T->allocated += added;
  }
  if (what & MW_HEAP_ENDED) {
    T->frees++;
    T->freed += freed;
  }
  if (what & MW_HEAP_UNTRACKED) T->untracked_frees++;
  if (what & MW_HEAP_FAILED) T->failed_reallocs++;
  T->live += (int64_t)added - (int64_t)freed;
  if (T->live > T->peak) T->peak = T->live;
  /* entries never move: each thread keeps the ones it used last */
  if (MW_UNLIKELY(!fs->e || fs->key != site)) {
    fs->e = mw_online_entry(MW_ONLINE_FUNCTION, site, 0);
    fs->key = site;
  }
  mw_online_add(fs->e, added, freed, counter);
  if (MW_UNLIKELY(!c->library || c->library_key != lib)) {
    c->library = mw_online_entry(MW_ONLINE_LIBRARY, lib, 0);
    c->library_key = lib;
  }
  mw_online_add(c->library, added, freed, counter);
  if (MW_UNLIKELY(!c->thread)) {
    c->thread = mw_online_entry(MW_ONLINE_THREAD, t->index, 0);
    if (c->thread && !c->thread->aux) c->thread->aux = (uint64_t)(uint32_t)mw_gettid();
  }
  mw_online_add(c->thread, added, freed, counter);
  mw_unlock(&mw_online.lock);
}

/* ---- the sink ---- */

/* The end of a run (mw_sink.end): the tables file says how; after a normal exit recording is closed and the
 * thread's scratch chunk let go. */
static void mw_online_end(struct mw_thread *t, int how, int code)
{
  if (how) {
    mw_online_mark_end(1, code);
    return;
  }
  mw_lock(&mw_g.file_lock);
  mw_online_mark_end(0, code);
  if (mw_g.header) mw_g.header[17] |= 1;
  __atomic_store_n(&mw_g.state, MW_CLOSED, __ATOMIC_RELEASE);
  mw_unlock(&mw_g.file_lock);
  mw_chunk_drop(t);
}

static void mw_online_forget_tail(struct mw_thread *t) { (void)t; /* scratch: nothing on disk */ }

/* The thread lets go of its scratch (thread end, fork child, recording off). */
static void mw_online_drop(struct mw_thread *t)
{
  t->ring = NULL;
  mw_chunk_drop(t);
}

const struct mw_sink mw_online_sink = {
  .open = mw_online_open,
  .chunk = mw_online_scratch,
  .drop = mw_online_drop,
  .thread_end = mw_online_forget_tail,
  .end = mw_online_end,
  .child = mw_online_close_child,
  .named = mw_online_names,
  .heap = mw_online_heap,
};
