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
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
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

/* The thread's system calls: none of them may touch errno (mw_sys). */
#if MW_RAW_SYSCALL
#define MW_SYS(n, a, b, c, d, e, f) mw_sys(n, (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))
#else
#define MW_SYS(n, a, b, c, d, e, f) syscall(n, a, b, c, d, e, f)
#endif

static long mw_futex(unsigned *word, int op, unsigned val, const struct timespec *timeout)
{
  return MW_SYS(SYS_futex, word, op, val, timeout, NULL, 0);
}

static void *mw_span_map(uint64_t from, int fd)
{
#if MW_RAW_SYSCALL
  long r = mw_sys(SYS_mmap, 0, MW_AHEAD_SPAN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (long)from);
  return r < 0 && r > -4096 ? MAP_FAILED : (void *)r;
#else
  return mmap(NULL, MW_AHEAD_SPAN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)from); /* 32-bit hosts have no SYS_mmap */
#endif
}

/* The thread's loop: runs until the trace ends or is no longer ours. */
static void mw_ahead_loop(int fd)
{
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
      return;
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
    if (slot != ~0u && from < mw_g.file_end + MW_AHEAD_WINDOW && mw_file_grow_quiet(from + MW_AHEAD_SPAN) == 0) {
      m = mw_span_map(from, fd);
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
    for (unsigned i = 0; i < nretired; i++) MW_SYS(SYS_munmap, retired[i], retired_len[i], 0, 0, 0, 0);
    mw_unlock(&mw_g.file_lock);
    if (m == MAP_FAILED) {
      struct timespec ts = {0, 100 * 1000 * 1000};
      mw_futex(&mw_g.ahead_wake, FUTEX_WAIT_PRIVATE, seen, &ts);
      __atomic_store_n(&mw_g.ahead_waiting, 0, __ATOMIC_RELEASE);
      continue;
    }
    (void)MW_SYS(SYS_madvise, m, MW_AHEAD_SPAN, MW_MADV_POPULATE_WRITE, 0, 0, 0);
    mw_lock(&mw_g.file_lock);
    __atomic_store_n(&mw_g.prepared[slot].ready, 1, __ATOMIC_RELEASE);
    mw_unlock(&mw_g.file_lock);
  }
}

/* As a pthread (under Valgrind or a sanitizer, or where mw_sys is not):
 * glibc then takes its multi-threaded paths, its allocator's locks too. */
static void *mw_ahead_pthread(void *arg)
{
  mw_t.busy = MW_BUSY_INTERNAL; /* anything libc allocates for it passes through unrecorded */
  mw_ahead_loop((int)(intptr_t)arg);
  return NULL;
}

static int mw_ahead_pthread_start(int fd)
{
  pthread_t th;
  pthread_attr_t a;
  int ok = 0;
  if (pthread_attr_init(&a) != 0) return 0;
  pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&a, 64 * 1024);
  if (pthread_create(&th, &a, mw_ahead_pthread, (void *)(intptr_t)fd) == 0) {
    pthread_setname_np(th, "mw-prefault");
    ok = 1;
  }
  pthread_attr_destroy(&a);
  return ok;
}

/* As a thread glibc does not know of: an idle pthread alone doubles the
 * time glibc's malloc and free take (binary-trees, plain: 0.17 s, 0.34 s
 * with one idle thread), since glibc then locks its arenas.  clone(2) with
 * a stack of our own and a thread pointer into a zeroed page of our own: the
 * loop reads no thread-local variable and makes its system calls through
 * mw_sys, which leaves errno alone, so nothing of the program's threads is
 * touched (a stack protector's canary reads the zeros).  Started with every
 * signal blocked, it never runs a handler.  Its mapping stays until the
 * process ends (a fork child unmaps its copy: mw_ahead_reset_child). */
#if MW_RAW_SYSCALL && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define MW_HIDDEN_STACK (64u * 1024u)
#define MW_HIDDEN_TLS (4u * 1024u) /* zeros on each side of the thread pointer */

static int mw_ahead_hidden(void *arg)
{
  static const char name[16] = "mw-prefault";
  (void)mw_sys(SYS_prctl, PR_SET_NAME, (long)name, 0, 0, 0, 0);
  mw_ahead_loop((int)(intptr_t)arg);
  return 0; /* clone's own code makes the exit system call */
}

static int mw_ahead_hidden_start(int fd)
{
  size_t page = mw_g.page, len = page + MW_HIDDEN_STACK + 2 * MW_HIDDEN_TLS;
  unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return 0;
  (void)mprotect(m, page, PROT_NONE); /* a guard below the stack */
  unsigned char *top = m + page + MW_HIDDEN_STACK;
  void *tp = top + MW_HIDDEN_TLS;
#if defined(__x86_64__)
  *(void **)tp = tp; /* the TCB's pointer to itself, as %fs:0 holds it */
#endif
  __atomic_store_n(&mw_g.hidden_threads, 1, __ATOMIC_RELEASE); /* every lock is taken from here on */
  int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM | CLONE_SETTLS;
  if (clone(mw_ahead_hidden, top, flags, (void *)(intptr_t)fd, NULL, tp, NULL) == -1) {
    munmap(m, len);
    return 0; /* hidden_threads stays set: harmless, the locks are taken */
  }
  mw_g.hidden_map = m;
  mw_g.hidden_len = len;
  return 1;
}
#else
static int mw_ahead_hidden_start(int fd)
{
  (void)fd;
  return 0;
}
#endif

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
    sigset_t all, old;
    unsigned busy = t->busy;
    int saved = errno;
    t->busy = MW_BUSY_INTERNAL; /* pthread_create's own allocations pass through */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    if (mw_g.valgrind || !mw_ahead_hidden_start(mw_g.fd)) mw_ahead_pthread_start(mw_g.fd);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    t->busy = busy;
    errno = saved;
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
  if (mw_g.hidden_map) munmap(mw_g.hidden_map, mw_g.hidden_len); /* the parent's thread's: none runs here */
  mw_g.hidden_map = NULL;
  mw_g.hidden_len = 0;
  __atomic_store_n(&mw_g.hidden_threads, 0, __ATOMIC_RELEASE);
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
