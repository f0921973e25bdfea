/* mw-threads.c — the threads of a process on a host: each thread's stack
 * base and the depth past which an address is another stack, its shadow
 * stack (and format 1.4's prediction table in front of it) in one growing
 * mapping, and its start (THREAD_BEGIN) and end (THREAD_END, from a pthread
 * key's destructor).  Entry and exit themselves: core/mw-calls.c.
 */
#define _GNU_SOURCE 1
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/membarrier.h>

#include "mw-internal.h"

extern void *__libc_stack_end;

#define MW_FRAMES_FIRST 4096u

void mw_frames_release(struct mw_thread *t)
{
  if (t->frames_map) munmap(t->frames_map, t->frames_map_len);
  t->frames_map = NULL;
  t->frames_map_len = 0;
  t->frames = NULL;
  t->predict = NULL;
  t->cap = 0;
  t->top = 0;
  t->written = 0;
}

/* Maps (or grows) the shadow stack; the mapping starts with the thread's
 * prediction table (zero when first mapped, kept by mremap), then slot 0,
 * the sentinel. */
int mw_frames_grow(struct mw_thread *t)
{
  const size_t slot = sizeof(struct mw_frame_slot);
  void *m;
  size_t len;
  if (!t->frames_map) {
    len = MW_PREDICT_BYTES + (MW_FRAMES_FIRST + 1) * slot;
    len = (len + mw_g.page - 1) & ~(mw_g.page - 1);
    m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  } else {
    if (t->cap >= MW_FRAMES_MAX) return 0;
    len = t->frames_map_len * 4;
    m = mremap(t->frames_map, t->frames_map_len, len, MREMAP_MAYMOVE);
  }
  if (m == MAP_FAILED) return 0;
  t->frames_map = m;
  t->frames_map_len = len;
  t->predict = (uint64_t *)m;
  t->frames = (struct mw_frame_slot *)((char *)m + MW_PREDICT_BYTES) + 1;
  t->cap = (unsigned)((len - MW_PREDICT_BYTES) / slot - 1);
  return 1;
}

/* Finds the thread's stack base and how deep a depth can sensibly be. */
static void mw_stack_setup(struct mw_thread *t)
{
  uintptr_t here = (uintptr_t)__builtin_frame_address(0), base = 0, size = 0;
  const uintptr_t max = sizeof(void *) >= 8 ? (uintptr_t)1 << 30 : (uintptr_t)96 << 20;
  if (mw_gettid() == getpid()) {
    struct rlimit rl;
    base = (uintptr_t)__libc_stack_end;
    if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) size = (uintptr_t)rl.rlim_cur;
  } else {
    pthread_attr_t a;
    if (pthread_getattr_np(pthread_self(), &a) == 0) {
      void *addr;
      size_t sz;
      if (pthread_attr_getstack(&a, &addr, &sz) == 0) {
        base = (uintptr_t)addr + sz;
        size = sz;
      }
      pthread_attr_destroy(&a);
    }
  }
  if (!base || base < here || base - here > max) base = here + 256; /* unknown: start here */
  if (!size || size > max) size = max;
  size += size / 2;
  if (size < ((uintptr_t)1 << 20)) size = (uintptr_t)1 << 20;
  t->stack_base = base;
  t->depth_cap = size > max ? max : size;
}

/* ---- one recording thread or several (mw_one_recorder) ----
 *
 * While one thread records, its heap calls take no atomic instruction: it
 * sets `busy` and then reads `recorders` with only a compiler barrier
 * between.  A second thread, at its first record, publishes JOINING and
 * then makes every running thread of the process execute a full memory
 * barrier (the kernel's expedited membarrier): afterwards either the first
 * thread's heap call sees JOINING and uses the atomics, or its `busy` is
 * visible here and we wait for that call to end.  The asymmetric fence of
 * userspace RCU; the one system call is paid once per process. */

static int mw_membarrier(int cmd)
{
#ifdef SYS_membarrier
  return syscall(SYS_membarrier, cmd, 0, 0) == 0;
#else
  (void)cmd;
  return 0;
#endif
}

/* At start-up (and in a fork child, where one thread is left): t records alone. */
void mw_recorders_begin(struct mw_thread *t)
{
  /* Valgrind runs threads one at a time but switches between any two
   * instructions, and does not carry the barrier out: the atomics stay */
  int solo = !mw_g.valgrind && mw_membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED);
  __atomic_store_n(&mw_g.first_recorder, t, __ATOMIC_RELAXED);
  __atomic_store_n(&mw_g.recorders, solo ? MW_RECORDERS_SOLO : MW_RECORDERS_LIBC, __ATOMIC_RELEASE);
}

/* From SOLO to MANY, by a thread other than `first`, or by `first` as it
 * ends (its thread-local state is about to go). */
static void mw_recorders_many(struct mw_thread *t, struct mw_thread *first)
{
  int r = MW_RECORDERS_SOLO;
  if (__atomic_compare_exchange_n(&mw_g.recorders, &r, MW_RECORDERS_JOINING, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    if (t != first) {
      unsigned spins = 0;
      mw_membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
      /* its heap call ends soon; its busy can last longer (the program's memwrap_write at the end) */
      while (__atomic_load_n(&first->busy, __ATOMIC_ACQUIRE)) mw_backoff(&spins);
    }
    __atomic_store_n(&mw_g.recorders, MW_RECORDERS_MANY, __ATOMIC_RELEASE);
    return;
  }
  for (unsigned spins = 0; r == MW_RECORDERS_JOINING; r = __atomic_load_n(&mw_g.recorders, __ATOMIC_ACQUIRE))
    mw_backoff(&spins); /* another thread is joining: its wait covers ours */
}

/* A thread's first record (before its THREAD_BEGIN draws a sequence number). */
void mw_recorder_join(struct mw_thread *t)
{
  int r = __atomic_load_n(&mw_g.recorders, __ATOMIC_ACQUIRE);
  if (r == MW_RECORDERS_LIBC || r == MW_RECORDERS_MANY) return;
  struct mw_thread *first = __atomic_load_n(&mw_g.first_recorder, __ATOMIC_ACQUIRE);
  if (first != t) mw_recorders_many(t, first);
}

/* A thread's end: the first recorder leaving takes the solo state with it,
 * so that no later thread waits on its `busy`. */
void mw_recorder_leave(struct mw_thread *t)
{
  if (__atomic_load_n(&mw_g.first_recorder, __ATOMIC_ACQUIRE) == t) mw_recorders_many(t, t);
}

/* Called with busy = MW_BUSY_INTERNAL: gives the thread a chunk, and a new
 * thread (or the survivor of a fork) its THREAD_BEGIN and TIME. */
int mw_thread_start(struct mw_thread *t)
{
  if (t->state != MW_T_NEW) return mw_chunk_next(t, 256, 0);
  if (!t->stack_base) mw_stack_setup(t);
  t->index = __atomic_fetch_add(&mw_g.threads, 1, __ATOMIC_RELAXED);
  t->seq = 0;
  t->last_addr_inv = ~(uintptr_t)0;
  t->last_depth = 0;
  t->last_branch = 0;
  t->history = 0;
  t->last_enter = 0;
  /* a fork child's new trace starts its table empty, as a reader does */
  if (t->predict) memset(t->predict, 0, MW_PREDICT_BYTES);
  t->dtor_rounds = 0;
  mw_recorder_join(t);
  if (!mw_chunk_next(t, 256, 0)) return 0;
  t->state = MW_T_LIVE;
  mw_write_thread_begin(t);
  if (mw_g.key_ok) pthread_setspecific(mw_g.key, t);
  return 1;
}

/* Makes sure the thread can record; 0 = run unrecorded. */
int mw_thread_ready(struct mw_thread *t)
{
  if (t->busy) return 0;
  int st = mw_state();
  if (st != MW_ACTIVE) {
    if (st == MW_DISABLED || st == MW_CLOSED || !mw_init()) return 0;
    if (t->end) return 1;
  }
  t->busy = MW_BUSY_INTERNAL;
  int ok = mw_thread_start(t);
  t->busy = 0;
  return ok;
}

/* pthread key destructor: runs in the last destructor round, so that frees
 * made by other keys' destructors are still recorded before THREAD_END. */
void mw_thread_dtor(void *arg)
{
  struct mw_thread *t = &mw_t;
  (void)arg;
#ifdef PTHREAD_DESTRUCTOR_ITERATIONS
  if (++t->dtor_rounds < PTHREAD_DESTRUCTOR_ITERATIONS) {
    pthread_setspecific(mw_g.key, t);
    return;
  }
#endif
  if (t->busy) return;
  if (t->end) {
    t->busy = MW_BUSY_RECORDING;
    mw_fence();
    mw_flush_lost(t);
    mw_end_frames(t);
    if (mw_room(t, 4)) {
      unsigned char *p = t->cur;
      *p++ = MW_REC_THREAD_END;
      mw_commit(t, p);
    }
    mw_fence();
    t->busy = 0;
  }
  if (t->state == MW_T_LIVE) t->state = MW_T_ENDED;
  mw_recorder_leave(t);
  mw_sink.thread_end(t);
  mw_sink.drop(t);
  mw_frames_release(t);
  mw_link_release(t);
}

