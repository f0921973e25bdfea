/* mw-records.c — the records that are not on a hot path, written into the
 * thread's chunk whatever the sink: TIME, LOST, UNWIND, THREAD_BEGIN, and
 * the END of a run (normal exit or fatal signal), after which the sink
 * finishes its output.  Layout: runtime/TRACE-FORMAT.md.
 */
#define _GNU_SOURCE 1
#include <string.h>

#include "../mw-internal.h"

unsigned char *mw_put_str(unsigned char *p, const char *s, size_t n)
{
  p = mw_put_u(p, n);
  memcpy(p, s, n);
  return p + n;
}

void mw_time_tick(struct mw_thread *t)
{
#if MW_TARGET
  t->tick = ~0u; /* no clock: a target's trace orders events, it does not time them */
#else
  t->tick = MW_TIME_EVERY;
  if (!mw_room(t, 12)) return;
  uint64_t now = mw_now_mono();
  unsigned char *p = t->cur;
  *p++ = MW_REC_TIME;
  p = mw_put_u(p, now > t->last_time ? now - t->last_time : 0);
  t->last_time = now;
  t->cur = p;
  mw_fence();
  *t->used = (uint32_t)(p - t->payload);
#endif
}

void mw_flush_lost(struct mw_thread *t)
{
  unsigned n = t->lost;
  if (!n || !mw_room(t, 12)) return;
  unsigned char *p = t->cur;
  *p++ = MW_REC_LOST;
  p = mw_put_u32(p, n);
  t->lost -= n; /* a handler may have counted more meanwhile */
  mw_commit(t, p);
}

void mw_write_unwind(struct mw_thread *t, unsigned count)
{
  if (!count || !mw_room(t, 12)) return;
  unsigned char *p = t->cur;
  *p++ = MW_REC_UNWIND;
  p = mw_put_u32(p, count);
  mw_commit(t, p);
}

void mw_write_thread_begin(struct mw_thread *t)
{
  if (!mw_room(t, 32)) return;
  unsigned char *p = t->cur, *tag = p;
  *p++ = MW_REC_THREAD_BEGIN;
  p = mw_put_seq(t, tag, p, mw_next_seq());
  p = mw_put_u32(p, (uint32_t)mw_gettid());
  mw_commit(t, p);
  t->last_time = mw_g.start_mono;
  mw_time_tick(t);
}

/* ---- the end ---- */

static int mw_write_end_fatal(struct mw_thread *t, int signo);

/* Normal exit: close open frames, leak classes, END; then the sink finishes
 * its output (the file cut and marked complete, handed over, …). */
void mw_finish(int status)
{
  struct mw_thread *t = &mw_t;
  if (mw_state() != MW_ACTIVE || t->busy) return;
  if (!t->end && !mw_thread_ready(t)) return;
  if (__atomic_exchange_n(&mw_g.ended, 1, __ATOMIC_ACQ_REL)) return;
  t->busy = MW_BUSY_RECORDING;
  mw_fence();
  if (mw_sink.finish) mw_sink.finish(t); /* the last records go into the thread's own chunk */
  mw_flush_lost(t);
  mw_end_frames(t);
  t->tick = ~0u;
  mw_write_leaks(t);
  if (mw_room(t, 24)) {
    unsigned char *p = t->cur;
    *p++ = MW_REC_END;
    *p++ = 0;
    p = mw_put_u32(p, (uint32_t)status & 0xffu); /* as the parent sees it */
    mw_commit(t, p);
  }
  mw_sink.end(t, 0, status & 0xff);
  t->busy = 0;
}

/* The calls open at a crash whose ENTERs are still pending (__mw_enter_lazy)
 * are written before END, so the trace names the frames the program died in;
 * only when the chunk has room for them now, since no lock may be waited for
 * here, and not when the crash hit the recorder itself. */
static void mw_flush_pending_fatal(struct mw_thread *t)
{
  if (t->busy || t->state != MW_T_LIVE || t->ring || !t->end || t->written >= t->top) return;
  if ((size_t)(t->end - t->cur) < 16u * (size_t)(t->top - t->written) + 32u) return;
  t->busy = MW_BUSY_RECORDING;
  mw_fence();
  mw_flush_pending(t);
  mw_fence();
  t->busy = 0;
}

/* From a fatal-signal handler: END(1, signo) if it can be done without
 * waiting for a lock.  Overwrites an uncommitted record of this thread.
 * A sink of heap tables (online mode) keeps no records: only it is told. */
void mw_end_fatal(int signo)
{
  struct mw_thread *t = &mw_t;
  if (mw_state() != MW_ACTIVE) return;
  if (__atomic_exchange_n(&mw_g.ended, 1, __ATOMIC_ACQ_REL)) return;
  if (!mw_sink.heap) mw_flush_pending_fatal(t);
  if (!mw_sink.heap && !mw_write_end_fatal(t, signo)) return;
  mw_sink.end(t, 1, signo); /* the run dies next: a sink that hands its bytes over does it now */
}

/* END(1, signo) in the thread's chunk, taken without waiting (a new thread's
 * THREAD_BEGIN first); 0 when no chunk could be had. */
static int mw_write_end_fatal(struct mw_thread *t, int signo)
{
  if (t->state == MW_T_NEW) {
    t->index = __atomic_fetch_add(&mw_g.threads, 1, __ATOMIC_RELAXED);
    mw_recorder_join(t);
    if (!mw_chunk_next(t, 64, 1)) return 0;
    t->state = MW_T_LIVE;
    unsigned char *p = t->cur, *tag = p;
    *p++ = MW_REC_THREAD_BEGIN;
    p = mw_put_seq(t, tag, p, mw_next_seq());
    p = mw_put_u32(p, (uint32_t)mw_gettid());
    t->cur = p;
#if MW_RING
  } else if (t->ring) {
    if (!mw_ring_room(t, 24, 1)) return 0; /* a blob in the ring, left for a reader to find */
#endif
  } else if (!t->end || (size_t)(t->end - t->cur) < 24) {
    if (!mw_chunk_next(t, 64, 1)) return 0;
  }
  unsigned char *p = t->cur;
  *p++ = MW_REC_END;
  *p++ = 1;
  p = mw_put_u32(p, (uint32_t)signo);
  t->cur = p;
  mw_fence();
  *t->used = (uint32_t)(p - t->payload);
  return 1;
}
