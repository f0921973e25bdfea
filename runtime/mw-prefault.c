/* mw-prefault.c — the pre-fault thread of the trace file (mw-file.c).
 *
 * The first write to each page of a MAP_SHARED file mapping costs the kernel
 * a page-cache page to allocate and zero and ext4 its block bookkeeping, and
 * every chunk costs an mmap and an munmap: most of the system time of a
 * call-heavy recording, all of it on the recording thread.  Once a trace has
 * grown past MW_AHEAD_AFTER, the next allocation recorded starts a thread of
 * the runtime's own (mw_ahead_start), which keeps the next
 * MW_AHEAD_WINDOW bytes of the file past the last chunk handed out reserved
 * (fallocate), mapped MAP_SHARED and faulted in (MADV_POPULATE_WRITE), in
 * spans of MW_AHEAD_SPAN bytes.  A thread that takes a chunk lying wholly in
 * such a span writes through that mapping: no system call at all.  A span
 * is unmapped by the same thread once no chunk can start in it any more and
 * no thread writes a chunk in it.  Chunks are still MAP_SHARED mappings of
 * the file, written by the recording threads alone (faulting pages in
 * changes no byte), so what a crash or SIGKILL leaves is what it left
 * before; a chunk not in a span (the thread came first, a large record) is
 * mapped by its thread as before.  The pre-fault thread records nothing,
 * blocks every signal, and stops when the trace is ended or is no longer
 * ours.  The recording threads only bump a futex word when the window runs
 * low.  A fork child unmaps its copies of the spans unwritten and gets a
 * pre-fault thread of its own once its trace grows past the threshold.  None
 * with memwrap_write (a memfd: no disk) or MEMWRAP_PREFAULT=0, and none on
 * 32-bit targets (address space).
 */
#define _GNU_SOURCE 1
#define _FILE_OFFSET_BITS 64
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>

#include "mw-internal.h"

#define MW_AHEAD_AFTER (4u * 1024u * 1024u)
#define MW_AHEAD_REGION (4u * 1024u * 1024u)
#define MW_AHEAD_SPAN (MW_AHEAD_REGION + MW_CHUNK_HEAD + MW_CHUNK_PAYLOAD)
#define MW_AHEAD_WINDOW (8u * 1024u * 1024u)
#define MW_AHEAD_SLOTS (sizeof mw_g.prepared / sizeof mw_g.prepared[0])

static long mw_futex(unsigned *word, int op, unsigned val, const struct timespec *timeout)
{
  return syscall(SYS_futex, word, op, val, timeout, NULL, 0);
}

static void *mw_ahead_main(void *arg)
{
  struct mw_thread *t = &mw_t;
  int fd = (int)(intptr_t)arg;
  t->busy = MW_BUSY_INTERNAL; /* anything libc allocates for it passes through unrecorded */
  for (;;) {
    unsigned seen = __atomic_load_n(&mw_g.ahead_wake, __ATOMIC_ACQUIRE);
    void *retired[MW_AHEAD_SLOTS];
    size_t retired_len[MW_AHEAD_SLOTS];
    unsigned nretired = 0, slot = ~0u;
    void *m = MAP_FAILED;
    uint64_t from = 0;
    mw_lock(&mw_g.file_lock);
    int st = mw_state();
    if ((st != MW_ACTIVE && st != MW_INITIALIZING) || mw_g.fd != fd || !mw_fd_ok()) {
      mw_unlock(&mw_g.file_lock);
      return NULL;
    }
    for (unsigned k = 0; k < MW_AHEAD_SLOTS; k++) {
      struct mw_prepared *p = &mw_g.prepared[k];
      if (!p->addr) {
        if (slot == ~0u) slot = k;
      } else if (p->ready && p->start + MW_AHEAD_REGION <= mw_g.file_end &&
                 __atomic_load_n(&p->refs, __ATOMIC_ACQUIRE) == 0) {
        retired[nretired] = p->addr;
        retired_len[nretired++] = p->len;
        p->addr = NULL;
        p->ready = 0;
        if (slot == ~0u) slot = k;
      }
    }
    if (mw_g.ahead_end < mw_g.file_end) mw_g.ahead_end = mw_g.file_end & ~(uint64_t)(mw_g.page - 1);
    from = mw_g.ahead_end;
    if (slot != ~0u && from < mw_g.file_end + MW_AHEAD_WINDOW && mw_file_grow(from + MW_AHEAD_SPAN)) {
      m = mmap(NULL, MW_AHEAD_SPAN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)from);
      if (m != MAP_FAILED) {
        mw_g.prepared[slot].start = from;
        mw_g.prepared[slot].addr = m;
        mw_g.prepared[slot].len = MW_AHEAD_SPAN;
        mw_g.prepared[slot].refs = 0;
        mw_g.prepared[slot].ready = 0;
        mw_g.ahead_end = from + MW_AHEAD_REGION;
      }
    }
    if (m == MAP_FAILED) __atomic_store_n(&mw_g.ahead_waiting, 1, __ATOMIC_RELEASE);
    /* Unmapped before the lock is let go: fork takes it (mw_fork_prepare),
     * so a child never inherits a span that prepared[] no longer lists and
     * its mw_ahead_reset_child could not unmap.  Once per 4 MiB of trace. */
    for (unsigned i = 0; i < nretired; i++) munmap(retired[i], retired_len[i]);
    mw_unlock(&mw_g.file_lock);
    if (m == MAP_FAILED) {
      struct timespec ts = {0, 100 * 1000 * 1000};
      mw_futex(&mw_g.ahead_wake, FUTEX_WAIT_PRIVATE, seen, &ts);
      __atomic_store_n(&mw_g.ahead_waiting, 0, __ATOMIC_RELEASE);
      continue;
    }
    (void)madvise(m, MW_AHEAD_SPAN, MW_MADV_POPULATE_WRITE);
    mw_lock(&mw_g.file_lock);
    __atomic_store_n(&mw_g.prepared[slot].ready, 1, __ATOMIC_RELEASE);
    mw_unlock(&mw_g.file_lock);
  }
}

/* Starts the pre-fault thread once the trace has grown past MW_AHEAD_AFTER
 * (mw_ahead_note asks for it).  Called from the allocation path after its
 * record (core/mw-heap.c), not from wherever a chunk happens to run out, which
 * may be a signal handler: pthread_create allocates, and a handler may have
 * interrupted the allocator; an allocation call is no such place. */
void mw_ahead_start(struct mw_thread *t)
{
  if (!__atomic_load_n(&mw_g.alloc_call, __ATOMIC_ACQUIRE) || mw_state() != MW_ACTIVE) return;
  /* started (now or by another thread): allocations need not call again */
  __atomic_store_n(&mw_g.alloc_call, 0, __ATOMIC_RELAXED);
  if (__atomic_exchange_n(&mw_g.ahead_started, 1, __ATOMIC_ACQ_REL)) return;
  {
    pthread_t th;
    pthread_attr_t a;
    sigset_t all, old;
    unsigned busy = t->busy;
    t->busy = MW_BUSY_INTERNAL; /* pthread_create's own allocations pass through */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    if (pthread_attr_init(&a) == 0) {
      pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
      pthread_attr_setstacksize(&a, 64 * 1024);
      if (pthread_create(&th, &a, mw_ahead_main, (void *)(intptr_t)mw_g.fd) == 0) pthread_setname_np(th, "mw-prefault");
      pthread_attr_destroy(&a);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    t->busy = busy;
  }
}

/* Called by a thread that just took a chunk, after the file lock (which a
 * single-threaded process does not take: the new thread must not find it
 * held), with file_end and ahead_end as they were under it. */
void mw_ahead_note(uint64_t end, uint64_t ahead)
{
  if (!__atomic_load_n(&mw_g.ahead_started, __ATOMIC_RELAXED)) {
    if (mw_g.prefault && sizeof(void *) >= 8 && end >= MW_AHEAD_AFTER && !mw_writer_wanted())
      __atomic_store_n(&mw_g.alloc_call, 1, __ATOMIC_RELEASE); /* mw_ahead_start, from the next allocation */
    return;
  }
  if (ahead < end + MW_AHEAD_WINDOW / 2 && __atomic_load_n(&mw_g.ahead_waiting, __ATOMIC_ACQUIRE)) {
    int saved = errno;
    __atomic_add_fetch(&mw_g.ahead_wake, 1, __ATOMIC_RELEASE);
    mw_futex(&mw_g.ahead_wake, FUTEX_WAKE_PRIVATE, 1, NULL);
    errno = saved;
  }
}

/* With the file lock held: the prepared mapping that holds the file span
 * [off, off + total), as 1 + its slot, and its address; 0 = none. */
unsigned mw_prepared_find(uint64_t off, uint64_t total, unsigned char **at)
{
  /* An atomic load: mw_ahead_start sets the flag by an exchange outside the
   * file lock, so a plain read here would race with it.  Relaxed is enough:
   * the spans themselves are read under the file lock, which orders them. */
  if (!__atomic_load_n(&mw_g.ahead_started, __ATOMIC_RELAXED)) return 0;
  for (unsigned k = 0; k < MW_AHEAD_SLOTS; k++) {
    struct mw_prepared *p = &mw_g.prepared[k];
    if (p->addr && __atomic_load_n(&p->ready, __ATOMIC_ACQUIRE) && off >= p->start && off + total <= p->start + p->len) {
      __atomic_add_fetch(&p->refs, 1, __ATOMIC_ACQ_REL);
      *at = p->addr + (off - p->start);
      return k + 1;
    }
  }
  return 0;
}

/* The thread no longer writes the chunk it had in a prepared mapping. */
void mw_prepared_leave(unsigned slot)
{
  if (slot) __atomic_sub_fetch(&mw_g.prepared[slot - 1].refs, 1, __ATOMIC_ACQ_REL);
}

/* In a fork child: the pre-fault thread and its mappings were the
 * parent's (mappings of the parent's file: unmapped unwritten). */
void mw_ahead_reset_child(void)
{
  for (unsigned k = 0; k < MW_AHEAD_SLOTS; k++) {
    struct mw_prepared *p = &mw_g.prepared[k];
    if (p->addr) munmap(p->addr, p->len);
    p->addr = NULL;
    p->ready = 0;
    p->refs = 0;
  }
  mw_g.ahead_started = 0;
  mw_g.alloc_call = 0;
  mw_g.ahead_waiting = 0;
  mw_g.ahead_end = 0;
}
