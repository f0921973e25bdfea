/* mw-calls.c — function entry and exit (__mw_enter, __mw_leave,
 * __mw_resume): ENTER, EXIT and UNWIND records and the shadow stack of open
 * frames.
 *
 * Depth = the thread's stack base − the address of __mw_enter's own frame:
 * the bytes of stack in use when the function was entered.  The shadow stack
 * keeps (depth, entry site) per open frame; frames[-1] is a sentinel of depth
 * 0 so the top is always readable.  ENTER and EXIT are thread-local: a TLS
 * pointer, a few varint bytes into the thread's chunk, no atomics or
 * syscalls.  Where the shadow stack's memory and the stack base come from is
 * the platform's (mw-threads.c).
 */
#define _GNU_SOURCE 1
#include <string.h>

#include "../mw-internal.h"

/* The slot of the thread's prediction table its call history picks. */
static inline uint64_t *mw_predict_slot(const struct mw_thread *t, unsigned history)
{
  return t->predict + ((uint32_t)(history * 2654435761u) >> (32 - MW_PREDICT_BITS));
}

/* A slot's two words (site, depth delta) as the one 64-bit word they are in memory. */
static inline uint64_t mw_predict_word(unsigned site, intptr_t dd)
{
  uint32_t want[2] = {site, (uint32_t)dd};
  uint64_t w;
  memcpy(&w, want, sizeof w);
  return w;
}

/* An ENTER the table did not predict: the slot learns it, and the record
 * gives the site and the depth delta.  With the compact forms off the table
 * is left all zeros, which no ENTER matches (sites start at 1), so the fast
 * path's one comparison sends every ENTER here. */
static unsigned char *mw_put_enter_miss(struct mw_thread *t, unsigned char *p, uint64_t *slot, unsigned site,
                                        intptr_t dd)
{
  if (mw_g.compact_calls) {
    if (MW_PREDICT) *slot = mw_predict_word(site, dd);
    *p = MW_REC_ENTER | MW_F_ENTER_SITE_DELTA;
    p = mw_put_sw(p + 1, (intptr_t)(int32_t)(site - t->last_enter));
  } else {
    *p = MW_REC_ENTER;
    p = mw_put_u32(p + 1, site);
  }
  return mw_put_sw(p, dd);
}

/* The thread's ENTER state after an ENTER of site at depth d (TRACE-FORMAT.md). */
static inline void mw_entered(struct mw_thread *t, unsigned site, uintptr_t d, unsigned history)
{
  t->last_depth = d;
  t->last_enter = site;
  t->history = ((history << 2) ^ site) & MW_HISTORY_MASK;
}

/* Format 1.4's ENTER: one tag byte when the thread's prediction table, at the
 * slot its call history picks, holds this site and depth delta; otherwise the
 * site as a delta from the previous ENTER's and the depth delta, and the slot
 * learns them.  The reader keeps the same table from the same records, so the
 * bytes alone decide every value (runtime/TRACE-FORMAT.md).  Needs 16 bytes of
 * room and the shadow stack mapped (the table lives in front of it). */
static unsigned char *mw_put_enter(struct mw_thread *t, unsigned char *p, unsigned site, uintptr_t d)
{
  intptr_t dd = (intptr_t)(d - t->last_depth);
  unsigned history = t->history;
  uint64_t *slot = MW_PREDICT ? mw_predict_slot(t, history) : NULL;
  if (MW_PREDICT && *slot == mw_predict_word(site, dd))
    *p++ = MW_REC_ENTER | MW_F_ENTER_PREDICTED;
  else
    p = mw_put_enter_miss(t, p, slot, site, dd);
  mw_entered(t, site, d, history);
  return p;
}

/* The word an ENTER of site at depth d is in a ring (MW_RW_ENTER). */
static inline uint64_t mw_enter_word(unsigned site, uintptr_t d)
{
  return MW_RW_ENTER | (uint64_t)site << 2 | (uint64_t)d << 34;
}

/* An ENTER of site at depth d, encoded here or, in a ring, as a word for the
 * encoder thread; 0 = no room (recording is off). */
int mw_write_enter(struct mw_thread *t, unsigned site, uintptr_t d)
{
#if MW_RING
  if (t->ring) return mw_ring_word(t, mw_enter_word(site, d));
#endif
  if (!mw_room(t, 16)) return 0;
#if MW_RING
  if (t->ring) { /* the thread joined a ring for this room: the blob begun is let go, the word goes there */
    t->cur -= 8;
    return mw_ring_word(t, mw_enter_word(site, d));
  }
#endif
  mw_commit_call(t, mw_put_enter(t, t->cur, site, d));
  return 1;
}

unsigned char *mw_encode_enter(struct mw_thread *out, unsigned char *p, unsigned site, uintptr_t d)
{
  return mw_put_enter(out, p, site, d);
}

/* ---- pending frames ---- */

/* A record is about to be made inside the pending frames: their ENTERs go
 * first, outermost first, at the depths they were entered at. */
void mw_flush_pending(struct mw_thread *t)
{
  while (t->written < t->top) {
    const struct mw_frame_slot *s = &t->frames[t->written];
    if (!mw_write_enter(t, s->site, s->depth)) return; /* no room: recording is off */
    t->written++;
  }
}

/* Closes the open frames above new_top: one UNWIND for those written, none
 * for those still pending. */
void mw_pop_frames(struct mw_thread *t, unsigned new_top)
{
  if (t->written > new_top) {
    mw_write_unwind(t, t->written - new_top);
    t->written = new_top;
  }
  if (t->top > new_top) t->top = new_top;
}

/* The end of a thread or of the run: the calls it ended in, still pending,
 * are written so that the trace names them, then every frame is closed. */
void mw_end_frames(struct mw_thread *t)
{
  mw_flush_pending(t);
  mw_pop_frames(t, 0);
}

/* ---- entry ---- */

/* Everything the fast path leaves out.  u = NULL: entry_site and exit_site
 * are global sites already (the unit's base was known); else the unit's own. */
static __attribute__((noinline)) struct __mw_frame mw_enter_slow(struct mw_thread *t, struct __mw_unit *u,
                                                                 unsigned entry_site, unsigned exit_site, uintptr_t sp)
{
  struct __mw_frame f;
  f.site = 0;
  f.depth = MW_FRAME_NONE;
  if (t->busy) {
    if (t->busy == MW_BUSY_RECORDING) {
      t->lost++;
      f.depth = MW_FRAME_LOST;
    }
    return f;
  }
  if (!t->end && !mw_thread_ready(t)) return f;
  t->busy = MW_BUSY_RECORDING;
  mw_fence();
  mw_flush_lost(t);
  unsigned base = 0;
  if (u) {
    base = __atomic_load_n(&u->base, __ATOMIC_ACQUIRE);
    if (!base) base = mw_unit_register(t, u);
  }
  if (t->top >= t->cap && !mw_frames_grow(t)) {
    t->lost++;
    f.depth = MW_FRAME_LOST;
  } else {
    uintptr_t d = t->stack_base - sp, top_depth = t->frames[(ptrdiff_t)t->top - 1].depth;
    if (d >= t->depth_cap) {
      d = top_depth; /* another stack (sigaltstack, coroutine): no growth */
    } else if (d < top_depth) {
      /* frames deeper than this entry were left without an exit (a longjmp
       * the rewrite did not see): close them */
      unsigned keep = t->top;
      while (keep > 0 && t->frames[keep - 1].depth > d) keep--;
      mw_pop_frames(t, keep);
    }
    mw_flush_pending(t);
    unsigned site = base + entry_site;
    if (t->written == t->top && mw_write_enter(t, site, d)) {
      t->frames[t->top].depth = d;
      t->frames[t->top].site = site;
      f.site = base + exit_site;
      f.depth = t->top++;
      t->written = t->top;
    }
  }
  mw_fence();
  t->busy = 0;
  return f;
}

/* The stack address the depth is measured at: __mw_enter's own frame address.
 * On x86 that is the call frame address less the return address and the
 * saved frame pointer, which gcc finds without setting up a frame pointer. */
#if defined(__x86_64__) || defined(__i386__)
#define MW_ENTER_SP() ((uintptr_t)__builtin_dwarf_cfa() - 2 * sizeof(void *))
#else
#define MW_ENTER_SP() ((uintptr_t)__builtin_frame_address(0))
#endif

/* d < top (a longjmp left frames open) or d >= cap (another stack), in one
 * comparison: top < cap holds for every depth the shadow stack keeps. */
static inline int mw_depth_outside(uintptr_t d, uintptr_t top, uintptr_t cap)
{
  return d - top >= cap - top;
}

static inline struct __mw_frame mw_frame_of(unsigned site, unsigned depth)
{
  struct __mw_frame f;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  /* built as one register: gcc otherwise packs the two halves in a vector register */
  uint64_t v = (uint64_t)depth << 32 | site;
  memcpy(&f, &v, sizeof f);
#else
  f.site = site;
  f.depth = depth;
#endif
  return f;
}

/* The rare end of a fast entry: TIME is due.  Out of line, so the fast path
 * keeps nothing across a call. */
static __attribute__((noinline)) struct __mw_frame mw_enter_timed(struct mw_thread *t, unsigned xsite, unsigned top)
{
  mw_time_tick(t);
  mw_fence();
  t->busy = 0;
  return mw_frame_of(xsite, top);
}

/* The end of a fast entry whose record ends just before p: the frame pushed,
 * the record committed, busy released. */
static inline __attribute__((always_inline)) struct __mw_frame mw_enter_done(struct mw_thread *t, unsigned char *p,
                                                                            struct mw_frame_slot *slot, unsigned site,
                                                                            uintptr_t d, unsigned top, unsigned xsite)
{
  slot->depth = d;
  slot->site = site;
  t->top = top + 1;
  t->written = top + 1;
  t->cur = p;
  mw_fence();
  *t->used = (uint32_t)(p - t->payload);
  if (MW_UNLIKELY(--t->tick == 0)) return mw_enter_timed(t, xsite, top);
  mw_fence();
  t->busy = 0;
  return mw_frame_of(xsite, top);
}

#if MW_RING
/* A fast entry into a ring: one word for the encoder thread, which keeps the
 * prediction table; the thread keeps only its shadow stack. */
static inline __attribute__((always_inline)) struct __mw_frame mw_enter_ring(struct mw_thread *t, unsigned char *p,
                                                                            struct mw_frame_slot *slot, unsigned site,
                                                                            uintptr_t d, unsigned top, unsigned xsite)
{
  uint64_t *w = (uint64_t *)(void *)mw_word_align(p);
  __atomic_store_n(w, mw_enter_word(site, d), __ATOMIC_RELAXED);
  slot->depth = d;
  slot->site = site;
  t->top = top + 1;
  t->written = top + 1;
  t->cur = (unsigned char *)(w + 1);
  if (MW_UNLIKELY(--t->tick == 0)) return mw_enter_timed(t, xsite, top);
  mw_fence();
  t->busy = 0;
  return mw_frame_of(xsite, top);
}
#endif

#if MW_PREDICT
/* A fast entry the table did not predict: out of line, so that the common
 * path of __mw_enter needs no register kept across a call. */
static __attribute__((noinline)) struct __mw_frame mw_enter_unpredicted(unsigned char *p, unsigned site, uintptr_t d,
                                                                        unsigned top, unsigned xsite)
{
  struct mw_thread *t = &mw_t;
  intptr_t dd = (intptr_t)(d - t->last_depth);
  unsigned history = t->history;
  p = mw_put_enter_miss(t, p, mw_predict_slot(t, history), site, dd);
  mw_entered(t, site, d, history);
  return mw_enter_done(t, p, &t->frames[top], site, d, top, xsite);
}
#endif

/* A fast entry that found it cannot go on: busy let go, the slow path takes
 * the call (global sites). */
static inline __attribute__((always_inline)) struct __mw_frame mw_enter_released(struct mw_thread *t, unsigned site,
                                                                                unsigned xsite, uintptr_t sp)
{
  mw_fence();
  t->busy = 0;
  return mw_enter_slow(t, NULL, site, xsite, sp);
}

/* The fast paths claim `busy` before they read any writer state (cur, top):
 * a signal handler that records in between then either sees busy and counts
 * LOST, or runs completely before we read the state it changed.  busy and
 * lost are read as two words, not one: the previous call's 4-byte store to
 * busy could not be forwarded to an 8-byte load, which then waits for it to
 * reach the cache (measured: 2 s more on 500 million events).  One
 * comparison covers both depth limits. */
static inline __attribute__((always_inline)) struct __mw_frame mw_enter_at(struct __mw_unit *u, unsigned entry_site,
                                                                          unsigned exit_site, uintptr_t sp)
{
  struct mw_thread *t = &mw_t;
  unsigned base = __atomic_load_n(&u->base, __ATOMIC_RELAXED);
  if (MW_UNLIKELY(!base)) return mw_enter_slow(t, u, entry_site, exit_site, sp);
  unsigned site = base + entry_site, xsite = base + exit_site;
  if (MW_UNLIKELY((t->busy | t->lost))) return mw_enter_slow(t, NULL, site, xsite, sp);
  t->busy = MW_BUSY_RECORDING;
  mw_fence();
  unsigned top = t->top;
  unsigned char *p = t->cur;
  uintptr_t d = t->stack_base - sp;
  struct mw_frame_slot *frame = t->frames + top; /* loaded before the record's byte store, which may alias anything */
  /* frames is NULL until the first entry maps it (cap 0): its top is read after the cap test */
  if (MW_UNLIKELY(top >= t->cap || top != t->written || (size_t)(t->end - p) < 16 ||
                  mw_depth_outside(d, frame[-1].depth, t->depth_cap))) {
    return mw_enter_released(t, site, xsite, sp);
  }
#if MW_RING
  if (t->ring) return mw_enter_ring(t, p, frame, site, d, top, xsite);
#endif
  unsigned history = t->history;
#if MW_PREDICT
  if (MW_UNLIKELY(*mw_predict_slot(t, history) != mw_predict_word(site, (intptr_t)(d - t->last_depth))))
    return mw_enter_unpredicted(p, site, d, top, xsite);
  *p++ = MW_REC_ENTER | MW_F_ENTER_PREDICTED;
#else
  p = mw_put_enter_miss(t, p, NULL, site, (intptr_t)(d - t->last_depth)); /* no table: the site-delta form */
#endif
  mw_entered(t, site, d, history);
  return mw_enter_done(t, p, frame, site, d, top, xsite);
}

struct __mw_frame __mw_enter(struct __mw_unit *u, unsigned entry_site, unsigned exit_site)
{
  return mw_enter_at(u, entry_site, exit_site, MW_ENTER_SP());
}

/* A pending entry (--mw-calls=heap): the frame goes on the shadow stack and
 * nothing into the trace.  Its ENTER is written when a record is made inside
 * it (a heap call, an entry through __mw_enter, a probe, a branch), or at its
 * exit when it reached deeper (its depth plus its summarised calls' bound)
 * than any call recorded since the thread's last record of another kind;
 * otherwise the call leaves no trace: it held no heap work and no deeper
 * stack than one the trace shows.  Most calls of a program that is not all
 * leaves are such calls (SQLite: 60 % of those recorded in full hold no
 * record at all), and a push costs a fraction of an encoded ENTER. */
static inline __attribute__((always_inline)) struct __mw_frame mw_enter_lazy_at(struct __mw_unit *u, unsigned entry_site,
                                                                               unsigned exit_site, uintptr_t sp, int bounded)
{
  struct mw_thread *t = &mw_t;
  unsigned base = __atomic_load_n(&u->base, __ATOMIC_RELAXED);
  if (MW_UNLIKELY(!base)) return mw_enter_slow(t, u, entry_site, exit_site, sp);
  unsigned site = base + entry_site, xsite = base + exit_site;
  if (MW_UNLIKELY((t->busy | t->lost))) return mw_enter_slow(t, NULL, site, xsite, sp);
  t->busy = MW_BUSY_RECORDING;
  mw_fence();
  unsigned top = t->top;
  uintptr_t d = t->stack_base - sp;
  struct mw_frame_slot *frame = t->frames + top;
  if (MW_UNLIKELY(top >= t->cap || mw_depth_outside(d, frame[-1].depth, t->depth_cap))) {
    return mw_enter_released(t, site, xsite, sp);
  }
  frame->depth = d;
  frame->site = site;
#if !MW_TARGET
  frame->bound = bounded ? mw_reach_of(site) : 0;
#else
  (void)bounded;
#endif
  t->top = top + 1;
  mw_fence();
  t->busy = 0;
  return mw_frame_of(xsite, top);
}

struct __mw_frame __mw_enter_lazy(struct __mw_unit *u, unsigned entry_site, unsigned exit_site)
{
  return mw_enter_lazy_at(u, entry_site, exit_site, MW_ENTER_SP(), 0);
}

/* A function that calls summarised ones: its frames reach their depth plus
 * the bound of those calls, which a host's runtime keeps from the unit's
 * table (mw_reach_of); a target's keeps no such table and writes every call. */
struct __mw_frame __mw_enter_bounded(struct __mw_unit *u, unsigned entry_site, unsigned exit_site)
{
#if MW_TARGET
  return mw_enter_at(u, entry_site, exit_site, MW_ENTER_SP());
#else
  return mw_enter_lazy_at(u, entry_site, exit_site, MW_ENTER_SP(), 1);
#endif
}

/* ---- exit ---- */

/* EXIT: exit site - entry site of the frame; format 1.4 puts 1..15 in the
 * tag's flag bits.  The delta as written (not the sites, which a reader knows
 * only through its own frames) goes into the call history. */
static inline __attribute__((always_inline)) unsigned char *mw_put_exit_delta(struct mw_thread *t, unsigned char *p, int32_t x)
{
  t->history = ((t->history << 2) ^ (uint32_t)x) & MW_HISTORY_MASK;
  if (MW_LIKELY((uint32_t)x - 1u < mw_g.exit_tag_limit)) { /* 1..15, and the compact forms are on */
    *p = (unsigned char)(MW_REC_EXIT | (x << 4));
    return p + 1;
  }
  *p = MW_REC_EXIT;
  return mw_put_u32(p + 1, ((uint32_t)x << 1) ^ (uint32_t)(x >> 31));
}

static inline __attribute__((always_inline)) unsigned char *mw_put_exit(struct mw_thread *t, unsigned char *p, unsigned exit_site, unsigned entry_site)
{
  return mw_put_exit_delta(t, p, (int32_t)(exit_site - entry_site));
}

unsigned char *mw_encode_exit(struct mw_thread *out, unsigned char *p, int32_t delta)
{
  return mw_put_exit_delta(out, p, delta);
}

/* The word an EXIT is in a ring (MW_RW_EXIT): its exit site less its frame's entry site. */
static inline uint64_t mw_exit_word(unsigned exit_site, unsigned entry_site)
{
  return MW_RW_EXIT | (uint64_t)(exit_site - entry_site) << 2;
}

/* An EXIT, encoded here or, in a ring, as a word for the encoder thread. */
static void mw_write_exit(struct mw_thread *t, unsigned exit_site, unsigned entry_site)
{
#if MW_RING
  if (t->ring) {
    mw_ring_word(t, mw_exit_word(exit_site, entry_site));
    return;
  }
#endif
  if (!mw_room(t, 8)) return;
#if MW_RING
  if (t->ring) { /* joined a ring for this room, as in mw_write_enter */
    t->cur -= 8;
    mw_ring_word(t, mw_exit_word(exit_site, entry_site));
    return;
  }
#endif
  mw_commit_call(t, mw_put_exit(t, t->cur, exit_site, entry_site));
}

/* Forgets the frames from d up, with no record (nothing can be written now). */
static void mw_drop_frames(struct mw_thread *t, unsigned d)
{
  t->top = d;
  if (t->written > d) t->written = d;
}

/* The exit of the top frame d, busy held: its EXIT if its ENTER was written;
 * if it is pending, the ENTERs of the pending frames and its EXIT when it is
 * deeper than any call recorded since the thread's last record of another
 * kind, else nothing. */
static void mw_exit_frame(struct mw_thread *t, struct __mw_frame *f, unsigned d)
{
  uintptr_t depth = t->frames[d].depth, reach = mw_slot_reach(&t->frames[d]);
  int deeper = d >= t->written && reach > t->deep;
  if (deeper) mw_flush_pending(t);
  if (d < t->written) mw_write_exit(t, f->site, t->frames[d].site);
  if (deeper && t->written > d && depth < t->depth_cap) t->deep = reach; /* now the deepest recorded */
  mw_drop_frames(t, d);
}

static void mw_leave_slow(struct mw_thread *t, struct __mw_frame *f)
{
  unsigned d = f->depth;
  if (d == MW_FRAME_NONE) return;
  if (d == MW_FRAME_LOST || t->busy) {
    t->lost++;
    if (d < t->top && t->busy != MW_BUSY_RECORDING) mw_drop_frames(t, d);
    return;
  }
  if (!t->end && !mw_thread_ready(t)) {
    if (d < t->top) mw_drop_frames(t, d);
    return;
  }
  t->busy = MW_BUSY_RECORDING;
  mw_fence();
  mw_flush_lost(t);
  if (d < t->top) {
    mw_pop_frames(t, d + 1);
    mw_exit_frame(t, f, d);
  }
  mw_fence();
  t->busy = 0;
}

/* The rare end of a fast exit: TIME is due (out of line, as for entry). */
static __attribute__((noinline)) void mw_leave_timed(struct mw_thread *t)
{
  mw_time_tick(t);
  mw_fence();
  t->busy = 0;
}

/* A fast exit's EXIT, ending at p, committed: the frame popped, `used` stored last. */
static inline __attribute__((always_inline)) void mw_leave_commit(struct mw_thread *t, unsigned d, unsigned char *p)
{
  t->top = d;
  t->written = d;
  t->cur = p;
  mw_fence();
  *t->used = (uint32_t)(p - t->payload);
}

/* The end of a fast exit: TIME when due, busy released. */
static inline __attribute__((always_inline)) void mw_leave_release(struct mw_thread *t)
{
  if (MW_UNLIKELY(--t->tick == 0)) {
    mw_leave_timed(t);
    return;
  }
  mw_fence();
  t->busy = 0;
}

/* A fast exit the tag's flag bits do not take: a delta outside 1..15, the 1.3 forms, a thread in a ring (a word for
 * the encoder), or the thread's first exit (its exit_limit still 0).  Out of line, so that __mw_leave tests for the
 * ring nowhere. */
static __attribute__((noinline)) void mw_leave_other(struct mw_thread *t, unsigned char *p, unsigned d, int32_t x)
{
#if MW_RING
  if (t->ring) {
    uint64_t *w = (uint64_t *)(void *)mw_word_align(p);
    __atomic_store_n(w, MW_RW_EXIT | (uint64_t)(uint32_t)x << 2, __ATOMIC_RELAXED);
    t->top = d;
    t->written = d;
    t->cur = (unsigned char *)(w + 1);
  } else
#endif
  {
    t->exit_limit = mw_g.exit_tag_limit;
    mw_leave_commit(t, d, mw_put_exit_delta(t, p, x));
  }
  mw_leave_release(t);
}

/* A pending frame deeper than any call recorded since the last record of another kind:
 * out of line, as the rare ends of the fast paths. */
static __attribute__((noinline)) void mw_leave_deeper(struct mw_thread *t, struct __mw_frame *f, unsigned d)
{
  mw_exit_frame(t, f, d);
  mw_fence();
  t->busy = 0;
}

void __mw_leave(struct __mw_frame *f)
{
  struct mw_thread *t = &mw_t;
  unsigned d = f->depth;
  if (MW_UNLIKELY((t->busy | t->lost))) {
    mw_leave_slow(t, f);
    return;
  }
  t->busy = MW_BUSY_RECORDING;
  mw_fence();
  if (d >= t->written && MW_LIKELY(d + 1 == t->top)) { /* a pending frame */
    if (MW_LIKELY(mw_slot_reach(&t->frames[d]) <= t->deep)) {
      t->top = d;
      mw_fence();
      t->busy = 0;
      return;
    }
    mw_leave_deeper(t, f, d);
    return;
  }
  unsigned char *p = t->cur;
  /* 16: an EXIT takes at most 6 bytes, a word at most 15 with its alignment */
  if (MW_UNLIKELY(d + 1 != t->top || (size_t)(t->end - p) < 16)) {
    mw_fence();
    t->busy = 0;
    mw_leave_slow(t, f);
    return;
  }
  int32_t x = (int32_t)(f->site - t->frames[d].site);
  if (MW_UNLIKELY((uint32_t)x - 1u >= t->exit_limit)) { /* not 1..15 in the tag, or the thread is in a ring */
    mw_leave_other(t, p, d, x);
    return;
  }
  t->history = ((t->history << 2) ^ (uint32_t)x) & MW_HISTORY_MASK;
  *p = (unsigned char)(MW_REC_EXIT | (x << 4));
  mw_leave_commit(t, d, p + 1);
  mw_leave_release(t);
}

/* ---- measured recursion ---- */

/* A probed call deeper than any recorded since the thread's last record of
 * another kind (not an ENTER or EXIT): recorded as a
 * call of its function that returns at once, at the depth __mw_enter would
 * have measured in its place.  Out of line, so that the probe keeps nothing
 * across a call.  Only a call recorded at its own depth raises the mark: one
 * not recorded (a signal handler that interrupted the recorder) or on another
 * stack (sigaltstack) would hide deeper calls on this one until the next
 * record, and the depth is taken again after the entry, whose slow path may
 * have just set a new thread's stack base up. */
static __attribute__((noinline)) void mw_probe_deeper(struct mw_thread *t, struct __mw_unit *u, unsigned entry_site,
                                                      unsigned exit_site, uintptr_t sp, uintptr_t bound)
{
  struct __mw_frame f = mw_enter_at(u, entry_site, exit_site, sp); /* the fast entry's encoding: a probe repeats */
  uintptr_t d = t->stack_base - sp;
  int recorded = f.depth != MW_FRAME_NONE && f.depth != MW_FRAME_LOST && d < t->depth_cap;
  __mw_leave(&f);
  if (recorded) t->deep = d + bound; /* after the records (a pending entry's flush may have cleared it) */
}

/* A function whose call tree does no heap work but which is recursive, or
 * called through a pointer or from other units, has no stack bound before
 * the run; recording each of its calls would show only that stack.  A call
 * no deeper than one already recorded since the thread's last record of
 * another kind adds nothing to the peak, the budgets or the timeline's height, so it costs
 * one comparison.  A thread not yet recording (stack_base 0) and a call on
 * another stack look deeper than any: mw_enter_slow sorts them out. */
int __mw_probe(struct __mw_unit *u, unsigned entry_site, unsigned exit_site)
{
  struct mw_thread *t = &mw_t;
  uintptr_t sp = MW_ENTER_SP();
  uintptr_t d = t->stack_base - sp;
  if (MW_LIKELY(d <= t->deep)) return 0;
  mw_probe_deeper(t, u, entry_site, exit_site, sp, 0);
  return 0;
}

/* __mw_probe of a function that calls summarised ones: its calls reach their
 * depth plus the bound of those, so that sum is what is compared and kept.  A
 * target keeps no bounds (mw_reach_of): there every call is recorded. */
int __mw_probe_bounded(struct __mw_unit *u, unsigned entry_site, unsigned exit_site)
{
  struct mw_thread *t = &mw_t;
  uintptr_t sp = MW_ENTER_SP();
  uintptr_t d = t->stack_base - sp;
  unsigned base = __atomic_load_n(&u->base, __ATOMIC_RELAXED);
  uintptr_t bound = base ? mw_reach_of(base + entry_site) : 0;
  if (MW_LIKELY(base != 0 && !MW_TARGET && d + bound <= t->deep)) return 0;
  mw_probe_deeper(t, u, entry_site, exit_site, sp, bound);
  return 0;
}

/* ---- longjmp ---- */

int __mw_resume(struct __mw_frame *f, int setjmp_result)
{
  struct mw_thread *t = &mw_t;
  unsigned d = f->depth;
  if (setjmp_result == 0 || d >= t->top || d + 1 == t->top) return setjmp_result;
  if (t->busy || (!t->end && !mw_thread_ready(t))) {
    mw_drop_frames(t, d + 1);
    return setjmp_result;
  }
  t->busy = MW_BUSY_RECORDING;
  mw_fence();
  mw_flush_lost(t);
  mw_pop_frames(t, d + 1);
  mw_fence();
  t->busy = 0;
  return setjmp_result;
}
