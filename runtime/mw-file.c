/* mw-file.c — the trace file, the runtime's usual sink: its name and
 * creation, the header, per-thread chunks mapped from the file, and the file
 * cut to what it holds at a normal exit.  Layout: runtime/TRACE-FORMAT.md.
 *
 * Crash safety: a record is written into a MAP_SHARED mapping of the file and
 * then the chunk's `used` field is updated, so once a record is committed it
 * is in the page cache and survives abort, a crash or SIGKILL.  The pre-fault
 * thread (mw-prefault.c) maps and faults in spans of the file ahead of the
 * threads that take chunks from them.
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
#include <sys/syscall.h>
#include <unistd.h>

#include "mw-internal.h"

#define MW_GROW_STEP (1024u * 1024u)

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
  const char *env = mw_getenv("MEMWRAP_TRACE");
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
    /* The owner's alone, whatever the umask: a trace holds what the program did with its data. */
    int fd = open(used, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) (void)fchmod(fd, 0600);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

/* What stopped a recording, in words that are safe to build in a signal
 * handler (strerror is not). */
static const char *mw_stop_words(int err)
{
  switch (err) {
  case ENOSPC: return "the disk is full (ENOSPC)";
  case EDQUOT: return "the disk quota is used up (EDQUOT)";
  case EFBIG: return "the trace file is as large as it may be (EFBIG)";
  case EIO: return "an I/O error (EIO)";
  case ENOMEM: return "no memory to map the trace file (ENOMEM)";
  default: return "the trace file could not grow";
  }
}

/* The file cannot grow (a full disk): recording stops.  Said once on stderr,
 * and in the header (flag bit 2, the errno at offset 28) so that the trace
 * says where and why it ends; the chunks already taken keep what they hold.
 * Called with the file lock held, also from a fatal-signal handler. */
static void mw_file_stop(struct mw_thread *t, int err)
{
  mw_chunk_seal(t);
  if (__atomic_exchange_n(&mw_g.stopped, 1, __ATOMIC_ACQ_REL)) return;
  if (mw_g.header) {
    uint32_t e = (uint32_t)err;
    memcpy(mw_g.header + MW_HDR_STOP_ERRNO, &e, 4);
    mw_fence();
    mw_g.header[17] |= MW_HDR_STOPPED;
  }
  __atomic_store_n(&mw_g.state, MW_DISABLED, __ATOMIC_RELEASE);
  mw_say("recording stopped: ", mw_stop_words(err),
         "; the trace ends here and says why (cc-memwrap report tells at which event), and the program runs on unrecorded\n",
         NULL, NULL);
}

/* Grows the file to hold `need` bytes; fallocate where possible, so that a
 * full disk fails here rather than as SIGBUS in a mapped write.  0, or
 * -errno without touching errno where the host allows (mw_sys): the
 * pre-fault thread calls it too. */
long mw_file_grow_quiet(uint64_t need)
{
  if (need <= mw_g.file_size) return 0;
  uint64_t size = (need + MW_GROW_STEP - 1) / MW_GROW_STEP * MW_GROW_STEP;
#if MW_RAW_SYSCALL
  long r = mw_sys(SYS_fallocate, mw_g.fd, 0, (long)mw_g.file_size, (long)(size - mw_g.file_size), 0, 0);
  if (r == -EOPNOTSUPP || r == -ENOSYS || r == -EINVAL) r = mw_sys(SYS_ftruncate, mw_g.fd, (long)size, 0, 0, 0, 0);
  if (r != 0) return r;
#else
  if (fallocate(mw_g.fd, 0, (off_t)mw_g.file_size, (off_t)(size - mw_g.file_size)) != 0) {
    if (errno != EOPNOTSUPP && errno != ENOSYS && errno != EINVAL) return -errno;
    if (ftruncate(mw_g.fd, (off_t)size) != 0) return -errno;
  }
#endif
  mw_g.file_size = size;
  return 0;
}

/* The same for the program's threads: 1, or 0 with errno saying why. */
int mw_file_grow(uint64_t need)
{
  long r = mw_file_grow_quiet(need);
  if (r == 0) return 1;
  errno = (int)-r;
  return 0;
}

/* Is mw_g.fd still our trace file (a program may close or reuse fds)?  The
 * pre-fault thread asks too: no errno where the host allows (mw_sys). */
int mw_fd_ok(void)
{
  struct stat st;
  if (mw_g.fd < 0) return 0;
#if MW_RAW_SYSCALL
  if (mw_sys(SYS_fstat, mw_g.fd, (long)&st, 0, 0, 0, 0) != 0) return 0;
#else
  if (fstat(mw_g.fd, &st) != 0) return 0;
#endif
  return (uint64_t)st.st_dev == mw_g.fd_dev && (uint64_t)st.st_ino == mw_g.fd_ino;
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

/* Creates the trace (a file, or for memwrap_write a memory file) and maps its header; 0 = run unrecorded. */
int mw_file_open(int in_memory)
{
  char path[PATH_MAX];
  int fd = mw_record_file_open("cannot create the trace file ", in_memory, path);
  if (fd < 0) return 0;
  struct stat st;
  if (fstat(fd, &st) != 0) {
    close(fd);
    return 0;
  }
  mw_crc_init();
  mw_g.fd = fd;
  mw_g.fd_dev = (uint64_t)st.st_dev;
  mw_g.fd_ino = (uint64_t)st.st_ino;
  mw_g.file_size = 0;
  mw_g.file_end = MW_HEADER_SIZE;
  mw_g.last_chunk = 0;
  void *h = MAP_FAILED;
  int grown = mw_file_grow(MW_HEADER_SIZE);
  if (grown)
    h = mmap(NULL, mw_g.page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (h == MAP_FAILED) {
    /* With 0 bytes free the file is created but cannot hold its header: say that, not "cannot map". */
    if (!grown) mw_say("cannot write the trace file ", path, ": ", mw_stop_words(errno), "; the program runs unrecorded\n");
    else mw_say("cannot map the trace file ", path, "; the program runs unrecorded\n", NULL, NULL);
    close(fd);
    if (!in_memory) unlink(path);
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
  mw_g.stopped = 0;
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
  mw_chunk_seal(t);
  uint64_t from = t->chunk_off + MW_CHUNK_HEAD + *t->used;
  uint64_t to = t->chunk_off + MW_CHUNK_HEAD + (uint64_t)(t->end - t->payload);
  from = (from + mw_g.page - 1) & ~(uint64_t)(mw_g.page - 1);
  to &= ~(uint64_t)(mw_g.page - 1);
  if (to > from && mw_fd_ok())
    fallocate(mw_g.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)from, (off_t)(to - from));
}

/* Reserves a new chunk of the file for t with room for `need` bytes and switches to it.
 * Returns 0 (and t keeps its old chunk, if any) when recording is off. */
int mw_file_chunk(struct mw_thread *t, size_t need, int nonblocking)
{
  /* a thread's first chunks are small, so short-lived threads cost little */
  size_t cap = t->chunks >= 5 ? MW_CHUNK_PAYLOAD : ((size_t)1024 << (2 * t->chunks)) - MW_CHUNK_HEAD;
  /* every chunk keeps room for its seal at the end */
  need += MW_SEAL_SIZE;
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
  int err = errno;
  unsigned prepared = grown ? mw_prepared_find(off, total, &head) : 0;
  if (prepared) {
    m = NULL; /* the pre-fault thread's mapping, faulted in already */
    len = 0;
  } else {
    if (grown) {
      m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, mw_g.fd, (off_t)map_off);
      err = errno;
    }
    if (m == MAP_FAILED) {
      mw_file_stop(t, err);
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
  mw_chunk_seal(t); /* the chunk it leaves (none for its first) */
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
  t->end = t->payload + cap - MW_SEAL_SIZE;
  if (old) munmap(old, old_len);
  mw_prepared_leave(old_prepared);
  return 1;
}

/* A normal end, END written: the file cut after the last chunk's records (when it is ours), the header's complete
 * flag set, recording closed, the thread's chunk let go. */
void mw_file_end(struct mw_thread *t, int how, int code)
{
  (void)code;
  if (how) {
    mw_chunk_seal(t); /* a fatal signal: END is committed, the pages are the kernel's already */
    return;
  }
  mw_lock(&mw_g.file_lock);
  if (t->used && t->chunk_off == mw_g.last_chunk) {
    /* our chunk is the file's last: shrink it to what it holds and its seal (which covers the new capacity) */
    uint32_t cap = *t->used + MW_SEAL_SIZE;
    memcpy(t->payload - 8, &cap, 4);
    mw_g.file_end = t->chunk_off + MW_CHUNK_HEAD + cap;
  }
  mw_chunk_seal(t);
  if (mw_fd_ok() && ftruncate(mw_g.fd, (off_t)mw_g.file_end) == 0) mw_g.file_size = mw_g.file_end;
  if (mw_g.header) mw_g.header[17] |= MW_HDR_COMPLETE;
  __atomic_store_n(&mw_g.state, MW_CLOSED, __ATOMIC_RELEASE);
  mw_unlock(&mw_g.file_lock);
  mw_chunk_drop(t);
}

/* In a fork child: the parent's file and the pre-fault thread's spans of it, let go unwritten. */
void mw_file_child(void)
{
  mw_trace_close_child();
  mw_ahead_reset_child();
}

static int mw_file_open_disk(void) { return mw_file_open(0); }

const struct mw_sink mw_file_sink = {
  .open = mw_file_open_disk,
  .chunk = mw_file_chunk,
  .drop = mw_chunk_drop,
  .thread_end = mw_chunk_release_tail,
  .end = mw_file_end,
  .child = mw_file_child,
  .from_alloc = mw_ahead_start,
};

/* memwrap.h: every record is in the file (or the memory file) once committed, so there is nothing to write out. */
void memwrap_flush(void) {}
