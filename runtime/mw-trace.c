/* mw-trace.c — the trace file: creation, header, per-thread memory-mapped
 * chunks, and the records that are not on a hot path (TIME, LOST, UNIT,
 * STATIC, PROGRAM, END).  Layout: runtime/TRACE-FORMAT.md.
 *
 * Crash safety: a record is written into a MAP_SHARED mapping of the file and
 * then the chunk's `used` field is updated, so once a record is committed it
 * is in the page cache and survives abort, a crash or SIGKILL.
 */
#define _GNU_SOURCE 1
#define _FILE_OFFSET_BITS 64
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>

#include "mw-internal.h"

#ifdef MADV_POPULATE_WRITE
#define MW_MADV_POPULATE_WRITE MADV_POPULATE_WRITE
#else
#define MW_MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

#define MW_GROW_STEP (1024u * 1024u)


uint64_t mw_now_mono(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

unsigned char *mw_put_str(unsigned char *p, const char *s, size_t n)
{
  p = mw_put_u(p, n);
  memcpy(p, s, n);
  return p + n;
}

void mw_lock_slow(int *l)
{
  unsigned spins = 0;
  do {
    while (__atomic_load_n(l, __ATOMIC_RELAXED)) {
      if (++spins < 100) {
        mw_relax();
      } else {
        spins = 0;
        sched_yield();
      }
    }
  } while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE));
}

/* ---- stderr without stdio ---- */

/* One line on stderr: "cc-memwrap: " and up to five parts (NULL = none). */
void mw_say(const char *a, const char *b, const char *c, const char *d, const char *e)
{
  const char *parts[6] = {"cc-memwrap: ", a, b, c, d, e};
  int saved = errno;
  for (int i = 0; i < 6; i++) {
    if (!parts[i]) continue;
    size_t n = strlen(parts[i]);
    while (n > 0) {
      ssize_t w = write(2, parts[i], n);
      if (w <= 0) break;
      parts[i] += w;
      n -= (size_t)w;
    }
  }
  errno = saved;
}

/* ---- file name ---- */

/* Appends s to buf (of size cap) at *len; returns 0 if it does not fit. */
static int mw_cat(char *buf, size_t cap, size_t *len, const char *s, size_t n)
{
  if (*len + n + 1 > cap) return 0;
  memcpy(buf + *len, s, n);
  *len += n;
  buf[*len] = 0;
  return 1;
}

static size_t mw_fmt_uint(char *out, unsigned long v)
{
  char tmp[24];
  size_t n = 0, i;
  do {
    tmp[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  for (i = 0; i < n; i++) out[i] = tmp[n - 1 - i];
  return n;
}

/* The trace path before any collision suffix: MEMWRAP_TRACE with %p = pid,
 * else <basename of /proc/self/exe>.<pid>.mwtrace. */
int mw_trace_name(char *buf, size_t cap)
{
  char num[24];
  size_t len = 0, nn = mw_fmt_uint(num, (unsigned long)getpid());
  const char *env = getenv("MEMWRAP_TRACE");
  buf[0] = 0;
  if (env && *env) {
    for (const char *s = env; *s; s++) {
      if (s[0] == '%' && s[1] == 'p') {
        if (!mw_cat(buf, cap, &len, num, nn)) return 0;
        s++;
      } else if (s[0] == '%' && s[1] == '%') {
        if (!mw_cat(buf, cap, &len, "%", 1)) return 0;
        s++;
      } else if (!mw_cat(buf, cap, &len, s, 1)) {
        return 0;
      }
    }
    return 1;
  }
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  const char *base = "program";
  if (n > 0) {
    exe[n] = 0;
    const char *slash = strrchr(exe, '/');
    base = slash ? slash + 1 : exe;
    if (!*base) base = "program";
  }
  return mw_cat(buf, cap, &len, base, strlen(base)) && mw_cat(buf, cap, &len, ".", 1) &&
         mw_cat(buf, cap, &len, num, nn) && mw_cat(buf, cap, &len, ".mwtrace", 8);
}

/* Creates the file without ever replacing one: name, then name-1.mwtrace,
 * name-2.mwtrace … (or name.1, name.2 … without the .mwtrace ending). */
int mw_trace_create(const char *name, char *used, size_t cap)
{
  size_t n = strlen(name);
  int has_ext = n > 8 && strcmp(name + n - 8, ".mwtrace") == 0;
  for (unsigned k = 0; k < 1000; k++) {
    size_t len = 0;
    used[0] = 0;
    if (k == 0) {
      if (!mw_cat(used, cap, &len, name, n)) return -1;
    } else {
      char num[24];
      size_t nn = mw_fmt_uint(num, k);
      size_t stem = has_ext ? n - 8 : n;
      if (!mw_cat(used, cap, &len, name, stem) || !mw_cat(used, cap, &len, has_ext ? "-" : ".", 1) ||
          !mw_cat(used, cap, &len, num, nn) || (has_ext && !mw_cat(used, cap, &len, ".mwtrace", 8)))
        return -1;
    }
    int fd = open(used, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

/* Grows the file to hold `need` bytes; fallocate where possible, so that a
 * full disk fails here rather than as SIGBUS in a mapped write. */
static int mw_file_grow(uint64_t need)
{
  if (need <= mw_g.file_size) return 1;
  uint64_t size = (need + MW_GROW_STEP - 1) / MW_GROW_STEP * MW_GROW_STEP;
  if (fallocate(mw_g.fd, 0, (off_t)mw_g.file_size, (off_t)(size - mw_g.file_size)) != 0) {
    if (errno != EOPNOTSUPP && errno != ENOSYS && errno != EINVAL) return 0;
    if (ftruncate(mw_g.fd, (off_t)size) != 0) return 0;
  }
  mw_g.file_size = size;
  return 1;
}

/* Is mw_g.fd still our trace file (a program may close or reuse fds)? */
static int mw_fd_ok(void)
{
  struct stat st;
  return mw_g.fd >= 0 && fstat(mw_g.fd, &st) == 0 && (uint64_t)st.st_dev == mw_g.fd_dev &&
         (uint64_t)st.st_ino == mw_g.fd_ino;
}

/* Creates the file a run records into (`what` begins the message if it cannot: "cannot create the trace file "), named by mw_trace_name, or for
 * memwrap_write a memory file; its path goes to path[PATH_MAX].  Returns its descriptor, kept out of the low ones the
 * program may count on, or -1 after saying why. */
int mw_record_file_open(const char *what, int in_memory, char *path)
{
  char name[PATH_MAX];
  int fd = -1;
  if (in_memory) {
    /* the program's memwrap_write takes the trace at the end: build it in memory */
    memcpy(name, "(memory for memwrap_write)", 27);
    memcpy(path, name, 27);
    fd = mw_writer_open();
  } else if (mw_trace_name(name, sizeof name)) {
    fd = mw_trace_create(name, path, PATH_MAX);
  }
  if (fd < 0) {
    const char *why = strerror(errno);
    mw_say(what, name[0] ? name : "(name too long)", ": ", why, "; the program runs unrecorded\n");
    return -1;
  }
  int high = fcntl(fd, F_DUPFD_CLOEXEC, 512);
  if (high >= 0) {
    close(fd);
    fd = high;
  }
  return fd;
}

int mw_trace_open(void)
{
  char path[PATH_MAX];
  int to_writer = mw_writer_wanted();
  if (mw_online.on) return mw_online_open(); /* MEMWRAP_MODE=online: tables, no trace */
  int fd = mw_record_file_open("cannot create the trace file ", to_writer, path);
  if (fd < 0) return 0;
  struct stat st;
  if (fstat(fd, &st) != 0) {
    close(fd);
    return 0;
  }
  mw_g.fd = fd;
  mw_g.fd_dev = (uint64_t)st.st_dev;
  mw_g.fd_ino = (uint64_t)st.st_ino;
  mw_g.file_size = 0;
  mw_g.file_end = MW_HEADER_SIZE;
  mw_g.last_chunk = 0;
  void *h = MAP_FAILED;
  if (mw_file_grow(MW_HEADER_SIZE))
    h = mmap(NULL, mw_g.page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (h == MAP_FAILED) {
    mw_say("cannot map the trace file ", path, "; the program runs unrecorded\n", NULL, NULL);
    close(fd);
    if (!to_writer) unlink(path);
    mw_g.fd = -1;
    return 0;
  }
  mw_g.header = mw_put_header(h, "MWTRACE", MW_FORMAT_MAJOR, MW_FORMAT_MINOR, MW_HEADER_SIZE);
  return 1;
}

/* The first 40 bytes a trace and an online tables file share: magic, version, byte-order mark, pointer size, flags,
 * header size, pid, parent pid, start time (TRACE-FORMAT.md, ONLINE-FORMAT.md).  Returns hd. */
unsigned char *mw_put_header(void *h, const char magic[8], uint16_t major, uint16_t minor, uint16_t hsize)
{
  unsigned char *hd = h;
  uint32_t bom = 0x01020304u, pid = (uint32_t)getpid(), ppid = (uint32_t)getppid();
  memcpy(hd, magic, 8);
  memcpy(hd + 8, &major, 2);
  memcpy(hd + 10, &minor, 2);
  memcpy(hd + 12, &bom, 4);
  hd[16] = (unsigned char)sizeof(void *);
  /* bit 1: the allocator was not interposed (or Valgrind's replaced it) */
  hd[17] = MW_INTERPOSE && !mw_g.valgrind_heap ? 0 : 2;
  memcpy(hd + 18, &hsize, 2);
  memcpy(hd + 20, &pid, 4);
  memcpy(hd + 24, &ppid, 4);
  memcpy(hd + 32, &mw_g.start_real, 8);
  return hd;
}

/* In a fork child: forget the parent's file without writing to it. */
void mw_trace_close_child(void)
{
  if (mw_g.header) munmap(mw_g.header, mw_g.page);
  mw_g.header = NULL;
  if (mw_g.fd >= 0) close(mw_g.fd);
  mw_g.fd = -1;
  mw_g.file_end = mw_g.file_size = mw_g.last_chunk = 0;
}

/* ---- the pre-fault thread ----
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
 * 32-bit targets (address space). */

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
 * record (mw-heap.c), not from wherever a chunk happens to run out, which
 * may be a signal handler: pthread_create allocates, and a handler may have
 * interrupted the allocator; an allocation call is no such place. */
void mw_ahead_start(struct mw_thread *t)
{
  if (!__atomic_load_n(&mw_g.ahead_wanted, __ATOMIC_ACQUIRE) || mw_state() != MW_ACTIVE) return;
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
static void mw_ahead_note(uint64_t end, uint64_t ahead)
{
  if (!__atomic_load_n(&mw_g.ahead_started, __ATOMIC_RELAXED)) {
    if (mw_g.prefault && sizeof(void *) >= 8 && end >= MW_AHEAD_AFTER && !mw_writer_wanted())
      __atomic_store_n(&mw_g.ahead_wanted, 1, __ATOMIC_RELEASE);
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
static unsigned mw_prepared_find(uint64_t off, uint64_t total, unsigned char **at)
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
static void mw_prepared_leave(unsigned slot)
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
  mw_g.ahead_wanted = 0;
  mw_g.ahead_waiting = 0;
  mw_g.ahead_end = 0;
}

/* ---- chunks ---- */

void mw_chunk_drop(struct mw_thread *t)
{
  void *map = t->chunk_map;
  size_t len = t->chunk_map_len;
  unsigned prepared = t->chunk_prepared;
  t->end = NULL;
  mw_fence();
  t->cur = NULL;
  t->payload = NULL;
  t->used = NULL;
  t->chunk_map = NULL;
  t->chunk_map_len = 0;
  t->chunk_prepared = 0;
  if (map) munmap(map, len);
  mw_prepared_leave(prepared);
}

/* At thread end: give the disk blocks of the chunk's unused tail back (the
 * bytes read as zeros; the chunk keeps its capacity, later chunks follow). */
void mw_chunk_release_tail(struct mw_thread *t)
{
  if (!t->used || mw_g.fd < 0) return;
  uint64_t from = t->chunk_off + MW_CHUNK_HEAD + *t->used;
  uint64_t to = t->chunk_off + MW_CHUNK_HEAD + (uint64_t)(t->end - t->payload);
  from = (from + mw_g.page - 1) & ~(uint64_t)(mw_g.page - 1);
  to &= ~(uint64_t)(mw_g.page - 1);
  if (to > from && mw_fd_ok())
    fallocate(mw_g.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)from, (off_t)(to - from));
}

/* Reserves a new chunk for t with room for `need` bytes and switches to it.
 * Returns 0 (and t keeps its old chunk, if any) when recording is off. */
int mw_chunk_next(struct mw_thread *t, size_t need, int nonblocking)
{
  if (MW_UNLIKELY(mw_online.on)) return mw_online_scratch(t, need); /* online mode: a reused scratch buffer */
  /* a thread's first chunks are small, so short-lived threads cost little */
  size_t cap = t->chunks >= 5 ? MW_CHUNK_PAYLOAD : ((size_t)1024 << (2 * t->chunks)) - MW_CHUNK_HEAD;
  if (need > cap) cap = ((need + MW_CHUNK_HEAD + 4095) & ~(size_t)4095) - MW_CHUNK_HEAD;
  if (nonblocking) {
    if (!mw_trylock(&mw_g.file_lock)) return 0;
  } else {
    mw_lock(&mw_g.file_lock);
  }
  int st = mw_state();
  if ((st != MW_ACTIVE && st != MW_INITIALIZING) || mw_g.fd < 0) {
    mw_unlock(&mw_g.file_lock);
    return 0;
  }
  if (!mw_fd_ok()) {
    __atomic_store_n(&mw_g.state, MW_DISABLED, __ATOMIC_RELEASE);
    mw_unlock(&mw_g.file_lock);
    if (!nonblocking) mw_say("the program closed the trace file; recording stopped\n", NULL, NULL, NULL, NULL);
    return 0;
  }
  uint64_t off = mw_g.file_end, total = MW_CHUNK_HEAD + cap;
  uint64_t map_off = off & ~(uint64_t)(mw_g.page - 1);
  size_t len = (size_t)(off + total - map_off);
  void *m = MAP_FAILED;
  unsigned char *head = NULL;
  int grown = mw_file_grow(off + total);
  unsigned prepared = grown ? mw_prepared_find(off, total, &head) : 0;
  if (prepared) {
    m = NULL; /* the pre-fault thread's mapping, faulted in already */
    len = 0;
  } else {
    if (grown)
      m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, mw_g.fd, (off_t)map_off);
    if (m == MAP_FAILED) {
      mw_unlock(&mw_g.file_lock);
      return 0;
    }
    /* Fault the whole chunk in writable with one call: otherwise every 4 KiB
     * page of a shared file mapping takes its own write fault, a third of the
     * run time of call-heavy programs.  Kernels before 5.14 refuse it; then the
     * pages fault in one by one as before. */
    (void)madvise(m, len, MW_MADV_POPULATE_WRITE);
    head = (unsigned char *)m + (off - map_off);
  }
  uint32_t idx = t->index, c32 = (uint32_t)cap, zero = 0;
  memcpy(head + 4, &idx, 4);
  memcpy(head + 8, &c32, 4);
  memcpy(head + 12, &zero, 4);
  memcpy(head, "MWCK", 4);
  mw_g.file_end = off + total;
  mw_g.last_chunk = off;
  uint64_t ahead = mw_g.ahead_end;
  mw_unlock(&mw_g.file_lock);
  if (!nonblocking) mw_ahead_note(off + total, ahead);

  void *old = t->chunk_map;
  size_t old_len = t->chunk_map_len;
  unsigned old_prepared = t->chunk_prepared;
  t->end = NULL;
  mw_fence();
  t->chunk_map = m;
  t->chunk_map_len = len;
  t->chunk_prepared = prepared;
  t->chunk_off = off;
  t->chunks++;
  t->payload = head + MW_CHUNK_HEAD;
  t->used = (uint32_t *)(void *)(head + 12);
  t->cur = t->payload;
  mw_fence();
  t->end = t->payload + cap;
  if (old) munmap(old, old_len);
  mw_prepared_leave(old_prepared);
  return 1;
}

/* ---- small records ---- */

void mw_time_tick(struct mw_thread *t)
{
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

void mw_write_program(struct mw_thread *t)
{
  char exe[PATH_MAX], cwd[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  size_t ne = n > 0 ? (size_t)n : 0;
  size_t nc = getcwd(cwd, sizeof cwd) ? strlen(cwd) : 0;
  if (!mw_room(t, 24 + ne + nc)) return;
  unsigned char *p = t->cur;
  *p++ = MW_REC_PROGRAM;
  p = mw_put_str(p, exe, ne);
  p = mw_put_str(p, cwd, nc);
  if (mw_online.on) mw_online_names(t->cur, (size_t)(p - t->cur));
  mw_commit(t, p);
}

/* EXT/RANK: the MPI rank, when a launcher's variable gives one (Hydra and
 * PMI-1/2 launchers: PMI_RANK; Open MPI: OMPI_COMM_WORLD_RANK; PMIx: PMIX_RANK;
 * MVAPICH2: MV2_COMM_WORLD_RANK).  `u` rank, `str` the variable's name. */
void mw_write_rank(struct mw_thread *t)
{
  static const char *const names[] = {"PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "MV2_COMM_WORLD_RANK"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    const char *v = getenv(names[i]);
    if (!v || *v < '0' || *v > '9') continue;
    uint64_t rank = 0;
    for (; *v >= '0' && *v <= '9' && rank < (1ull << 40); v++) rank = rank * 10 + (uint64_t)(*v - '0');
    if (*v) continue; /* not a plain number */
    size_t n = strlen(names[i]);
    unsigned char body[32], *b = mw_put_u(body, rank);
    size_t plen = (size_t)(b - body) + 1 + n;
    if (!mw_room(t, plen + 24)) return;
    unsigned char *p = t->cur;
    *p++ = MW_REC_EXT;
    p = mw_put_u(p, MW_EXT_RANK);
    p = mw_put_u(p, plen);
    p = mw_put_u(p, rank);
    p = mw_put_str(p, names[i], n);
    mw_commit(t, p);
    return;
  }
}

/* ---- units and statics ---- */

static uint32_t mw_str_hash(const char *s, size_t n)
{
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

/* UNIT: the unit's sites, with a deduplicated string table. */
static void mw_write_unit(struct mw_thread *t, const struct __mw_unit *u)
{
  size_t n = u->nsites, ns = 3 * n, tsize = 16;
  while (tsize < 2 * ns) tsize <<= 1;
  size_t bytes = ns * (sizeof(uint32_t) + sizeof(const char *) + sizeof(size_t)) + tsize * sizeof(uint32_t);
  void *m = NULL;
  if (n) {
    m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
      t->lost++;
      return;
    }
  }
  const char **sp = m;
  size_t *sl = (size_t *)(void *)(sp + ns);
  uint32_t *idx = (uint32_t *)(void *)(sl + ns), *table = idx + ns;
  size_t nstr = 0, size = 40 + n * 50;
  for (size_t i = 0; i < n; i++) {
    const struct __mw_site *s = &u->sites[i];
    const char *f[3] = {s->file, s->func, s->name};
    for (int k = 0; k < 3; k++) {
      const char *str = f[k] ? f[k] : "";
      size_t len = strlen(str);
      uint32_t h = mw_str_hash(str, len) & (uint32_t)(tsize - 1);
      for (;;) {
        uint32_t e = table[h];
        if (!e) {
          sp[nstr] = str;
          sl[nstr] = len;
          table[h] = (uint32_t)++nstr;
          idx[3 * i + (size_t)k] = (uint32_t)(nstr - 1);
          size += len + 10;
          break;
        }
        if (sl[e - 1] == len && (sp[e - 1] == str || memcmp(sp[e - 1], str, len) == 0)) {
          idx[3 * i + (size_t)k] = e - 1;
          break;
        }
        h = (h + 1) & (uint32_t)(tsize - 1);
      }
    }
  }
  if (mw_room(t, size)) {
    unsigned char *p = t->cur;
    *p++ = MW_REC_UNIT;
    p = mw_put_u32(p, u->base);
    p = mw_put_u(p, n);
    p = mw_put_u(p, nstr);
    for (size_t j = 0; j < nstr; j++) p = mw_put_str(p, sp[j], sl[j]);
    for (size_t i = 0; i < n; i++) {
      p = mw_put_u32(p, u->sites[i].kind);
      p = mw_put_u32(p, idx[3 * i]);
      p = mw_put_u32(p, idx[3 * i + 1]);
      p = mw_put_u32(p, idx[3 * i + 2]);
      p = mw_put_u32(p, u->sites[i].line);
    }
    if (mw_online.on) mw_online_names(t->cur, (size_t)(p - t->cur));
    mw_commit(t, p);
  }
  if (m) munmap(m, bytes);
}

/* Is u in one of the images' mw_units sections? */
static int mw_unit_in_images(const struct __mw_unit *u)
{
  for (unsigned i = 0; i < mw_g.nimages; i++)
    for (struct __mw_unit *const *a = mw_g.images[i].ub; a < mw_g.images[i].ue; a++)
      if (*a == u) return 1;
  return 0;
}

/* Gives u its global base if it has none, writes its UNIT record, and
 * returns the base.  For a unit no image listed yet (its object's
 * constructor has not run); remembered so a fork child can repeat it. */
unsigned mw_unit_register(struct mw_thread *t, struct __mw_unit *u)
{
  unsigned base = __atomic_load_n(&u->base, __ATOMIC_ACQUIRE);
  if (base) return base;
  mw_lock(&mw_g.units_lock);
  base = u->base;
  if (!base) {
    if (!mw_g.next_base) mw_g.next_base = 1;
    base = mw_g.next_base;
    mw_g.next_base += u->nsites;
    __atomic_store_n(&u->base, base, __ATOMIC_RELEASE);
    if (mw_g.nextra < sizeof mw_g.extra / sizeof mw_g.extra[0]) mw_g.extra[mw_g.nextra++] = u;
    mw_write_unit(t, u);
  }
  mw_unlock(&mw_g.units_lock);
  return base;
}

static void mw_write_static(struct mw_thread *t, const struct __mw_static_ref *s)
{
  unsigned base = mw_unit_register(t, s->unit);
  if (!mw_room(t, 40)) return;
  unsigned char *p = t->cur;
  *p++ = MW_REC_STATIC;
  p = mw_put_u32(p, base + s->site);
  p = mw_put_u(p, (uintptr_t)s->addr);
  p = mw_put_u(p, s->size);
  mw_commit(t, p);
}

/* UNIT records for an image's units (all of them, or only those still
 * without a base), then its STATIC records. */
static void mw_write_image(struct mw_thread *t, const struct mw_image *im, int all)
{
  mw_lock(&mw_g.units_lock);
  if (!mw_g.next_base) mw_g.next_base = 1;
  for (struct __mw_unit *const *a = im->ub; a < im->ue; a++) {
    struct __mw_unit *u = *a;
    if (!u) continue;
    if (!u->base) {
      __atomic_store_n(&u->base, mw_g.next_base, __ATOMIC_RELEASE);
      mw_g.next_base += u->nsites;
    } else if (!all) {
      continue;
    }
    mw_write_unit(t, u);
  }
  mw_unlock(&mw_g.units_lock);
  for (const struct __mw_static_ref *s = im->sb; s < im->se; s++)
    if (s->unit) mw_write_static(t, s);
}

/* Notes an executable's or shared object's mw_units/mw_statics bounds;
 * returns the new image, or NULL if known already (or no room). */
static struct mw_image *mw_image_note(struct __mw_unit *const *ub, struct __mw_unit *const *ue,
                                      const struct __mw_static_ref *sb, const struct __mw_static_ref *se)
{
  struct mw_image *im = NULL;
  if (!ub || ub >= ue) ub = ue = NULL;
  if (!sb || sb >= se) sb = se = NULL;
  if (!ub && !sb) return NULL;
  mw_lock(&mw_g.units_lock);
  unsigned i = 0;
  while (i < mw_g.nimages && !(mw_g.images[i].ub == ub && mw_g.images[i].sb == sb)) i++;
  if (i == mw_g.nimages && i < sizeof mw_g.images / sizeof mw_g.images[0]) {
    im = &mw_g.images[mw_g.nimages++];
    im->ub = ub;
    im->ue = ue;
    im->sb = sb;
    im->se = se;
  }
  mw_unlock(&mw_g.units_lock);
  return im;
}

/* Each runtime copy's constructor passes its own object's sections (the
 * bounds are hidden symbols, so a copy inside a shared object sees that
 * object's), and all copies share one runtime. */
void mw_image_add(struct __mw_unit *const *ub, struct __mw_unit *const *ue, const struct __mw_static_ref *sb,
                  const struct __mw_static_ref *se)
{
  struct mw_image *im = mw_image_note(ub, ue, sb, se);
  struct mw_thread *t = &mw_t;
  if (!im || mw_state() != MW_ACTIVE || t->busy) return; /* start-up will write it */
  if (!t->end && !mw_thread_ready(t)) return;
  t->busy = MW_BUSY_RECORDING;
  mw_fence();
  mw_write_image(t, im, 0); /* an object whose constructor ran after start-up */
  mw_fence();
  t->busy = 0;
}

/* At start-up (and in a fork child's new trace): every image known so far,
 * this copy's own included, and the units registered outside them. */
void mw_write_units_and_statics(struct mw_thread *t)
{
  mw_image_note(__start_mw_units, __stop_mw_units, __start_mw_statics, __stop_mw_statics);
  for (unsigned i = 0; i < mw_g.nimages; i++) mw_write_image(t, &mw_g.images[i], 1);
  mw_lock(&mw_g.units_lock);
  for (unsigned i = 0; i < mw_g.nextra; i++)
    if (!mw_unit_in_images(mw_g.extra[i])) mw_write_unit(t, mw_g.extra[i]);
  mw_unlock(&mw_g.units_lock);
}

/* ---- the end ---- */

/* Normal exit: close open frames, END, trim, mark complete. */
void mw_finish(int status)
{
  struct mw_thread *t = &mw_t;
  if (mw_state() != MW_ACTIVE || t->busy) return;
  if (!t->end && !mw_thread_ready(t)) return;
  if (__atomic_exchange_n(&mw_g.ended, 1, __ATOMIC_ACQ_REL)) return;
  t->busy = MW_BUSY_RECORDING;
  mw_fence();
  mw_flush_lost(t);
  if (t->top) {
    mw_write_unwind(t, t->top);
    t->top = 0;
  }
  t->tick = ~0u;
  mw_write_leaks(t);
  if (mw_room(t, 24)) {
    unsigned char *p = t->cur;
    *p++ = MW_REC_END;
    *p++ = 0;
    p = mw_put_u32(p, (uint32_t)status & 0xffu); /* as the parent sees it */
    mw_commit(t, p);
  }
  mw_lock(&mw_g.file_lock);
  if (t->used && t->chunk_off == mw_g.last_chunk) {
    /* our chunk is the file's last: shrink it to what it holds */
    uint32_t used = *t->used;
    memcpy(t->payload - 8, &used, 4);
    mw_g.file_end = t->chunk_off + MW_CHUNK_HEAD + used;
  }
  if (mw_fd_ok() && ftruncate(mw_g.fd, (off_t)mw_g.file_end) == 0) mw_g.file_size = mw_g.file_end;
  if (mw_online.on) mw_online_end(0, status & 0xff);
  if (mw_g.header) mw_g.header[17] |= 1;
  __atomic_store_n(&mw_g.state, MW_CLOSED, __ATOMIC_RELEASE);
  mw_unlock(&mw_g.file_lock);
  mw_chunk_drop(t);
  t->busy = 0;
  mw_writer_flush(mw_g.fd, mw_g.file_end); /* nothing unless the program has memwrap_write */
}

/* From a fatal-signal handler: END(1, signo) if it can be done without
 * waiting for a lock.  Overwrites an uncommitted record of this thread. */
void mw_end_fatal(int signo)
{
  struct mw_thread *t = &mw_t;
  if (mw_state() != MW_ACTIVE) return;
  if (__atomic_exchange_n(&mw_g.ended, 1, __ATOMIC_ACQ_REL)) return;
  if (mw_online.on) {
    mw_online_end(1, signo);
    return;
  }
  if (t->state == MW_T_NEW) {
    t->index = __atomic_fetch_add(&mw_g.threads, 1, __ATOMIC_RELAXED);
    if (!mw_chunk_next(t, 64, 1)) return;
    t->state = MW_T_LIVE;
    unsigned char *p = t->cur, *tag = p;
    *p++ = MW_REC_THREAD_BEGIN;
    p = mw_put_seq(t, tag, p, mw_next_seq());
    p = mw_put_u32(p, (uint32_t)mw_gettid());
    t->cur = p;
  } else if (!t->end || (size_t)(t->end - t->cur) < 24) {
    if (!mw_chunk_next(t, 64, 1)) return;
  }
  unsigned char *p = t->cur;
  *p++ = MW_REC_END;
  *p++ = 1;
  p = mw_put_u32(p, (uint32_t)signo);
  t->cur = p;
  mw_fence();
  *t->used = (uint32_t)(p - t->payload);
  mw_writer_flush(mw_g.fd, mw_g.file_end); /* the run dies next: hand over what there is */
}
