/* mw-ring.c — the trace file with its records encoded by a thread of the
 * runtime's own (the encoder), where a processor is free for it.
 *
 * Encoding ENTER and EXIT into format 1.4's shortest forms (a prediction
 * table, depth deltas) and writing them into the file's pages is most of
 * what recording costs a call-heavy program.  With this sink a thread
 * instead stores each ENTER and EXIT as one 8-byte word into a small ring of
 * its own (MW_RING_SEGS segments of MW_RING_SEG bytes, mapped from the trace
 * file, so a crash or SIGKILL keeps them), and every other record as its
 * usual bytes behind a word giving their length (a blob; mw_room begins one,
 * mw_commit's `used` store ends it).  The encoder turns the words into
 * format 1.4's records in the thread's chunks, with the thread's encoder
 * state (prediction table, previous depth and site, call history), which it
 * took over when the thread joined the ring; after each batch it writes
 * EXT/RAW_MARK, the (segment, word) up to which the ring is encoded, in the
 * same commit as the records, so a reader finds the words after the last
 * mark in the ring's segments (chunks with the magic MWRW, flagged in the
 * header, runtime/TRACE-FORMAT.md) and no record twice or never.
 *
 * A thread hands a full segment over (a futex wake when the encoder sleeps)
 * and goes on in the next, waiting only when the encoder is a whole ring
 * behind.  A record too large for a segment (the leak classes at exit, a
 * late unit's table) makes the thread leave the ring: the encoder catches
 * up, the thread gets its chunk and encoder state back and writes it there,
 * and joins a ring again at its next chunk.  A normal exit does the same
 * before its last records; a thread's end hands its ring back, and the
 * encoder frees it for the next thread once encoded.  A fatal signal writes
 * END into the ring without waiting: the words stay for a reader.  A fork
 * child forgets the parent's rings and encoder unwritten and starts its own.
 *
 * Asked for by MEMWRAP_ENCODER=thread, or by =auto only where a processor is free: two or more
 * in the process's CPU affinity and its cgroup's quota, and not under
 * Valgrind; otherwise the trace file's own sink encodes in the program's
 * threads as before.  x86-64 only (MW_RING in mw-internal.h).
 */
#define _GNU_SOURCE 1
#define _FILE_OFFSET_BITS 64
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>

#include "mw-internal.h"

#if MW_RING

#define MW_RING_SEGS 4u
#define MW_RING_SEG (32u * 1024u)                           /* bytes per segment, its header included */
#define MW_RING_WORDS ((MW_RING_SEG - MW_CHUNK_HEAD) / 8u) /* words per segment */
#define MW_RING_NO_THREAD 0xffffffffu                       /* a free ring's segments belong to no thread */
#define MW_RING_AFTER (256u * 1024u)                        /* the encoder starts once the trace is this large */
#define MW_RING_AFTER_ASKED (4u * 1024u)                    /* ... or this, with MEMWRAP_ENCODER=thread */
#define MW_RING_MARK_MAX 32                                 /* EXT/RAW_MARK's most bytes */

/* ATTACHING: a thread is setting the ring up, the encoder leaves it alone. */
enum { MW_RING_FREE, MW_RING_ATTACHING, MW_RING_LIVE, MW_RING_DETACH, MW_RING_DETACHED, MW_RING_ENDED };

/* One thread's ring.  The thread writes segment number `filled` and moves
 * `filled` on; the encoder encodes segment `consumed` (its first `pos` words
 * are done), empties it, renumbers it `consumed + MW_RING_SEGS` and moves
 * `consumed` on.  Never unmapped: a free ring waits for the next thread. */
struct mw_ring {
  uint32_t filled;              /* the thread's; its own cache line */
  int handed;                   /* the thread handed segment filled - 1 over and has not got segment filled yet */
  int state;                    /* MW_RING_*: ATTACHING, LIVE, DETACH, ENDED by the thread; DETACHED, FREE by the encoder */
  unsigned char pad[52];
  uint32_t consumed;            /* the encoder's */
  unsigned freed;               /* futex word: bumped when a segment is emptied or the ring left */
  int waiting;                  /* the thread sleeps on `freed` */
  unsigned pos;                 /* words of segment `consumed` encoded */
  unsigned char *map;           /* the mapping holding the segments */
  size_t map_len;
  unsigned char *segs;          /* the first segment's header */
  struct mw_ring *next;         /* every ring made, newest first */
  uint32_t dummy;               /* `used` of a thread in the ring before its first blob */
  struct mw_thread out;         /* the thread's chunk and encoder state while it is in the ring */
  uint64_t predict[1u << MW_PREDICT_BITS];
};

/* The encoder's shared state (non-static: the runtime's weak copies must resolve to one). */
struct mw_ring_global {
  struct mw_ring *list;         /* every ring, newest first (pushed, never removed) */
  int disabled;                 /* no encoder for this trace (Valgrind, or it could not start) */
  int asked;                    /* MEMWRAP_ENCODER=thread: wherever it can run, from early on */
  int started;                  /* the encoder was started for this trace */
  int running;                  /* ... and has not stopped */
  int broken;                   /* it could not get a chunk: threads stop waiting for it */
  int stop;                     /* the run ended: stop after the next round */
  unsigned wake;                /* futex word: bumped to wake the encoder */
  int sleeping;                 /* the encoder sleeps on `wake` */
  unsigned drain;               /* rounds asked for that encode every ring's words so far */
  unsigned drained;             /* futex word: the last such round done */
  int raw_flag;                 /* the header says the trace has raw segments */
};
struct mw_ring_global mw_ring_g;

static long mw_ring_futex(unsigned *word, int op, unsigned val, long ns)
{
  struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
  return syscall(SYS_futex, word, op, val, ns ? &ts : NULL, NULL, 0);
}

static void mw_ring_wake(void)
{
  __atomic_add_fetch(&mw_ring_g.wake, 1, __ATOMIC_RELEASE);
  if (__atomic_load_n(&mw_ring_g.sleeping, __ATOMIC_ACQUIRE)) {
    int saved = errno;
    mw_ring_futex(&mw_ring_g.wake, FUTEX_WAKE_PRIVATE, 1, 0);
    errno = saved;
  }
}

static unsigned char *mw_ring_head(const struct mw_ring *r, uint32_t seg)
{
  return r->segs + (size_t)(seg % MW_RING_SEGS) * MW_RING_SEG;
}

static uint64_t *mw_ring_words(const struct mw_ring *r, uint32_t seg)
{
  return (uint64_t *)(void *)(mw_ring_head(r, seg) + MW_CHUNK_HEAD);
}

/* ---- how many processors the process may use ---- */

/* Reads a small file into buf (NUL-terminated); 0 = not there. */
static int mw_read_small(const char *path, char *buf, size_t cap)
{
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, cap - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  return 1;
}

static long mw_parse_long(const char *s, const char **end)
{
  long v = 0;
  int neg = *s == '-';
  if (neg) s++;
  while (*s >= '0' && *s <= '9') v = v * 10 + (*s++ - '0');
  if (end) *end = s;
  return neg ? -v : v;
}

/* The quota of the group whose folder is path[0..len) (cgroup v2's cpu.max, v1's cfs quota and period), in
 * processors rounded down (at least 1); 0 = none there. */
static long mw_cgroup_quota(char *path, size_t len, int v2)
{
  char buf[128];
  long quota = 0, period = 0;
  if (v2) {
    memcpy(path + len, "/cpu.max", 9);
    if (mw_read_small(path, buf, sizeof buf) && buf[0] >= '0' && buf[0] <= '9') {
      const char *e;
      quota = mw_parse_long(buf, &e);
      period = mw_parse_long(e + 1, NULL);
    }
  } else {
    memcpy(path + len, "/cpu.cfs_quota_us", 18);
    if (mw_read_small(path, buf, sizeof buf)) quota = mw_parse_long(buf, NULL);
    memcpy(path + len, "/cpu.cfs_period_us", 19);
    if (quota > 0 && mw_read_small(path, buf, sizeof buf)) period = mw_parse_long(buf, NULL);
  }
  if (quota <= 0 || period <= 0) return 0;
  return quota / period > 0 ? quota / period : 1;
}

/* A line of /proc/self/cgroup: the hierarchy's folder (v2's /sys/fs/cgroup, or v1's /sys/fs/cgroup/ and the
 * controllers as mounted: "cpu", "cpu,cpuacct") into root, and the group's path in it; NULL = not the CPU's. */
static const char *mw_cgroup_line(const char *line, char *root, size_t cap, int *v2)
{
  const char *c = strchr(line, ':'), *e = c ? strchr(c + 1, ':') : NULL;
  if (!e) return NULL;
  *v2 = e == c + 1 && line[0] == '0';
  if (*v2) {
    memcpy(root, "/sys/fs/cgroup", 15);
    return e + 1;
  }
  size_t n = (size_t)(e - c - 1);
  int cpu = 0;
  for (const char *w = c + 1; w < e;) { /* is "cpu" one of the comma-separated controllers? */
    const char *comma = memchr(w, ',', (size_t)(e - w));
    const char *end = comma ? comma : e;
    cpu |= end - w == 3 && memcmp(w, "cpu", 3) == 0;
    w = end + 1;
  }
  if (!cpu || 15 + n + 1 > cap) return NULL;
  memcpy(root, "/sys/fs/cgroup/", 15);
  memcpy(root + 15, c + 1, n);
  root[15 + n] = 0;
  return e + 1;
}

/* The processors the cgroup's CPU quota gives, the least on the way from the process's group to the root of each
 * hierarchy that has the CPU controller; 0 = no quota. */
static long mw_cgroup_cpus(void)
{
  char groups[1024], root[128], path[1200];
  long best = 0;
  if (!mw_read_small("/proc/self/cgroup", groups, sizeof groups)) return 0;
  for (char *line = groups; *line;) {
    char *nl = strchr(line, '\n');
    if (nl) *nl = 0;
    int v2;
    const char *rel = mw_cgroup_line(line, root, sizeof root, &v2);
    size_t rl = rel ? strlen(root) : 0, len = rel ? strlen(rel) : 0;
    while (rel && rl + len + 20 < sizeof path) {
      memcpy(path, root, rl);
      memcpy(path + rl, rel, len);
      long q = mw_cgroup_quota(path, rl + len, v2);
      if (q > 0 && (best == 0 || q < best)) best = q;
      while (len > 0 && rel[len - 1] != '/') len--; /* the parent group */
      if (len == 0) break;
      len--;
    }
    if (!nl) break;
    line = nl + 1;
  }
  return best;
}

/* Processors the process may run on: its affinity, less what a cgroup's quota allows. */
static long mw_processors(void)
{
  cpu_set_t set;
  long n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : sysconf(_SC_NPROCESSORS_ONLN);
  long quota = mw_cgroup_cpus();
  return quota > 0 && quota < n ? quota : n;
}

/* MEMWRAP_ENCODER: inline (the default: the program's threads encode), thread (the encoder, wherever it can run), or
 * auto (the encoder where a processor is free for it).  Not the default: on a machine of two processors the encoder
 * thread cost more than it saved (docs/benchmarks.md: binary-trees 10.95× against 6.75× inline, SQLite 4.05× against
 * 3.07×), the program's threads waiting on it where they would have encoded their records themselves. */
int mw_ring_wanted(void)
{
  const char *v = mw_getenv("MEMWRAP_ENCODER");
  if (v && strcmp(v, "thread") == 0) return 1;
  if (v && strcmp(v, "auto") == 0) return mw_processors() >= 2;
  if (v && *v && strcmp(v, "inline") != 0)
    mw_say("MEMWRAP_ENCODER=", v, ": use inline, thread or auto; inline is used\n", NULL, NULL);
  return 0;
}

/* ---- a thread joins and leaves a ring ---- */

/* EXT/RAW_MARK: the raw words before (segment, word) are encoded before this record. */
static unsigned char *mw_put_mark(unsigned char *p, uint32_t seg, uint32_t word)
{
  unsigned char payload[10];
  unsigned char *e = mw_put_u32(mw_put_u32(payload, seg), word);
  *p++ = MW_REC_EXT;
  p = mw_put_u32(p, MW_EXT_RAW_MARK);
  p = mw_put_u32(p, (uint32_t)(e - payload));
  memcpy(p, payload, (size_t)(e - payload));
  return p + (e - payload);
}

/* Gives every segment of r to thread `index` (MW_RING_NO_THREAD: to none), numbered from 0. */
static void mw_ring_label(struct mw_ring *r, uint32_t index)
{
  for (uint32_t k = 0; k < MW_RING_SEGS; k++) {
    unsigned char *h = mw_ring_head(r, k);
    uint32_t cap = MW_RING_SEG - MW_CHUNK_HEAD;
    memcpy(h + 4, &index, 4);
    memcpy(h + 8, &cap, 4);
    memcpy(h + 12, &k, 4);
  }
}

/* A new ring: its segments reserved in the file (chunks of their own, so the chunk list stays whole) and mapped. */
static struct mw_ring *mw_ring_make(void)
{
  struct mw_ring *r = mmap(NULL, sizeof *r, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (r == MAP_FAILED) return NULL;
  const uint64_t total = (uint64_t)MW_RING_SEGS * MW_RING_SEG;
  mw_lock(&mw_g.file_lock);
  uint64_t off = mw_g.file_end, map_off = off & ~(uint64_t)(mw_g.page - 1);
  size_t len = (size_t)(off + total - map_off);
  void *m = MAP_FAILED;
  if (mw_state() == MW_ACTIVE && mw_g.fd >= 0 && mw_file_grow(off + total))
    m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, mw_g.fd, (off_t)map_off);
  if (m == MAP_FAILED) {
    mw_unlock(&mw_g.file_lock);
    munmap(r, sizeof *r);
    return NULL;
  }
  (void)madvise(m, len, MW_MADV_POPULATE_WRITE);
  r->map = m;
  r->map_len = len;
  r->segs = (unsigned char *)m + (off - map_off);
  mw_ring_label(r, MW_RING_NO_THREAD);
  for (uint32_t k = 0; k < MW_RING_SEGS; k++) memcpy(mw_ring_head(r, k), "MWRW", 4);
  mw_g.file_end = off + total;
  mw_g.last_chunk = off + total - MW_RING_SEG; /* a thread's chunk is no longer the file's last */
  mw_unlock(&mw_g.file_lock);
  r->state = MW_RING_ATTACHING;
  r->next = __atomic_load_n(&mw_ring_g.list, __ATOMIC_ACQUIRE);
  while (!__atomic_compare_exchange_n(&mw_ring_g.list, &r->next, r, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
  }
  return r;
}

/* A free ring, or a new one; its state ATTACHING. */
static struct mw_ring *mw_ring_take(void)
{
  for (struct mw_ring *r = __atomic_load_n(&mw_ring_g.list, __ATOMIC_ACQUIRE); r; r = r->next) {
    int st = MW_RING_FREE;
    if (__atomic_compare_exchange_n(&r->state, &st, MW_RING_ATTACHING, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) return r;
  }
  return mw_ring_make();
}

/* Moves a chunk and the encoder state from one thread's state to another's (a thread and its ring's `out`). */
static void mw_ring_hand(struct mw_thread *to, const struct mw_thread *from)
{
  to->cur = from->cur;
  to->end = from->end;
  to->payload = from->payload;
  to->used = from->used;
  to->chunk_off = from->chunk_off;
  to->chunk_map = from->chunk_map;
  to->chunk_map_len = from->chunk_map_len;
  to->chunk_prepared = from->chunk_prepared;
  to->chunks = from->chunks;
  to->index = from->index;
  to->last_depth = from->last_depth;
  to->last_enter = from->last_enter;
  to->history = from->history;
  if (to->predict && from->predict) memcpy(to->predict, from->predict, MW_PREDICT_BYTES);
  else if (to->predict) memset(to->predict, 0, MW_PREDICT_BYTES);
}

/* The header says the trace has raw segments: minor 6 (a 1.5 reader warns that the trace is newer instead of taking
 * the first raw segment for damage unannounced), then flag bit 3.  A trace without them stays 1.5. */
static void mw_ring_mark_header(void)
{
  uint16_t minor = MW_FORMAT_MINOR_RAW;
  memcpy(mw_g.header + 10, &minor, 2);
  __atomic_fetch_or(&mw_g.header[17], MW_HDR_RAW_SEGMENTS, __ATOMIC_RELAXED);
}

/* A thread in a ring writes no compact EXIT: its exit limit 0, so every exit takes mw_leave_other, which tests for
 * the ring (core/mw-calls.c), and __mw_leave's path for the program's threads encoding inline has no such test.
 * (__mw_enter tests for the ring on its fast path: moved behind the prediction, the test cost a ring's entries more
 * than it saved inline ones, measured under callgrind.) */
void mw_ring_no_compact_exit(struct mw_thread *t)
{
  t->exit_limit = 0;
}

/* The thread's records go into a ring from here on: its chunk ends with a mark of the ring's start (segment 0,
 * word 0), and the encoder takes the chunk over with the thread's encoder state.  0 = it stays as it was. */
static int mw_ring_attach(struct mw_thread *t)
{
  if ((!t->end || (size_t)(t->end - t->cur) < MW_RING_MARK_MAX) && !mw_file_chunk(t, MW_RING_MARK_MAX, 0)) return 0;
  struct mw_ring *r = mw_ring_take();
  if (!r) return 0;
  if (!__atomic_exchange_n(&mw_ring_g.raw_flag, 1, __ATOMIC_ACQ_REL) && mw_g.header) mw_ring_mark_header();
  mw_ring_label(r, t->index);
  r->filled = r->consumed = r->pos = 0;
  r->handed = r->waiting = 0;
  unsigned char *p = mw_put_mark(t->cur, 0, 0);
  t->cur = p;
  mw_fence();
  *t->used = (uint32_t)(p - t->payload);
  r->out.predict = r->predict;
  mw_ring_hand(&r->out, t);
  mw_ring_no_compact_exit(t);
  t->chunk_map = NULL; /* the encoder's now */
  t->chunk_map_len = 0;
  t->chunk_prepared = 0;
  t->payload = NULL;
  t->used = &r->dummy;
  t->cur = mw_ring_head(r, 0) + MW_CHUNK_HEAD;
  t->end = t->cur + (size_t)MW_RING_WORDS * 8;
  t->ring = r;
  __atomic_store_n(&r->state, MW_RING_LIVE, __ATOMIC_RELEASE);
  return 1;
}

/* Waits (a futex, a bounded sleep) until cond holds on r; 0 when the encoder has stopped or broken. */
static int mw_ring_wait(struct mw_ring *r, int (*cond)(const struct mw_ring *))
{
  while (!cond(r)) {
    if (!__atomic_load_n(&mw_ring_g.running, __ATOMIC_ACQUIRE) || __atomic_load_n(&mw_ring_g.broken, __ATOMIC_ACQUIRE))
      return 0;
    unsigned seen = __atomic_load_n(&r->freed, __ATOMIC_ACQUIRE);
    __atomic_store_n(&r->waiting, 1, __ATOMIC_RELEASE);
    mw_ring_wake();
    if (!cond(r)) {
      int saved = errno;
      mw_ring_futex(&r->freed, FUTEX_WAIT_PRIVATE, seen, 10 * 1000 * 1000);
      errno = saved;
    }
    __atomic_store_n(&r->waiting, 0, __ATOMIC_RELEASE);
  }
  return 1;
}

static int mw_ring_detached(const struct mw_ring *r)
{
  return __atomic_load_n(&r->state, __ATOMIC_ACQUIRE) == MW_RING_DETACHED;
}

/* The thread leaves its ring: the encoder encodes every word, and the thread gets its chunk and encoder state
 * back.  0 = the encoder is gone (the words stay in the ring for a reader; the thread records no more). */
static int mw_ring_detach(struct mw_thread *t)
{
  struct mw_ring *r = t->ring;
  __atomic_store_n(&r->state, MW_RING_DETACH, __ATOMIC_RELEASE);
  mw_ring_wake();
  if (!mw_ring_wait(r, mw_ring_detached)) return 0;
  __atomic_store_n(&t->ring, NULL, __ATOMIC_RELAXED);
  mw_ring_hand(t, &r->out);
  r->out.chunk_map = NULL;
  __atomic_store_n(&r->state, MW_RING_FREE, __ATOMIC_RELEASE);
  return 1;
}

static int mw_ring_has_room(const struct mw_ring *r)
{
  return r->filled - __atomic_load_n(&r->consumed, __ATOMIC_ACQUIRE) < MW_RING_SEGS;
}

/* The thread's segment is full: handed to the encoder, and the next one taken once the encoder emptied it.  0 =
 * none yet (nonblocking), or the encoder is gone: records are dropped until a segment is free. */
static int mw_ring_next(struct mw_thread *t, int nonblocking)
{
  struct mw_ring *r = t->ring;
  if (r == MW_RING_SCRATCH) return mw_sink.chunk(t, 8, nonblocking); /* online mode: the scratch starts again */
  if (!r->handed) {
    if (nonblocking && r->filled + 1 - __atomic_load_n(&r->consumed, __ATOMIC_ACQUIRE) >= MW_RING_SEGS) return 0;
    r->handed = 1;
    __atomic_store_n(&r->filled, r->filled + 1, __ATOMIC_RELEASE);
    mw_ring_wake();
  }
  if (!mw_ring_has_room(r) && (nonblocking || !mw_ring_wait(r, mw_ring_has_room))) {
    t->cur = t->end;
    return 0;
  }
  r->handed = 0;
  t->cur = (unsigned char *)mw_ring_words(r, r->filled);
  t->end = t->cur + (size_t)MW_RING_WORDS * 8;
  return 1;
}

/* A blob begun for a record of up to n bytes: its length word reserved (zero until mw_commit sets it).  A record
 * larger than a segment leaves the ring and goes into the thread's chunk. */
int mw_ring_room(struct mw_thread *t, size_t n, int nonblocking)
{
  unsigned char *p = mw_word_align(t->cur);
  size_t need = 8 + n;
  if ((size_t)(t->end - p) < need && t->ring == MW_RING_SCRATCH) {
    if (!mw_sink.chunk(t, need, nonblocking)) return 0; /* online mode: a scratch chunk large enough */
    p = t->cur;
  } else if ((size_t)(t->end - p) < need) {
    if (need > (size_t)MW_RING_WORDS * 8) {
      if (nonblocking || !mw_ring_detach(t)) return 0;
      return mw_room(t, n);
    }
    if (!mw_ring_next(t, nonblocking)) return 0;
    p = t->cur;
  }
  t->used = (uint32_t *)(void *)(p + 4); /* the word's high half: the blob's length */
  t->payload = t->cur = p + 8;
  return 1;
}

/* One word (an ENTER or EXIT outside the fast paths), counted like a record. */
int mw_ring_word(struct mw_thread *t, uint64_t word)
{
  unsigned char *p = mw_word_align(t->cur);
  if ((size_t)(t->end - p) < 8) {
    if (!mw_ring_next(t, 0)) return 0;
    p = t->cur;
  }
  __atomic_store_n((uint64_t *)(void *)p, word, __ATOMIC_RELAXED);
  t->cur = p + 8;
  if (MW_UNLIKELY(--t->tick == 0)) mw_time_tick(t);
  return 1;
}

/* ---- the encoder ---- */

/* Makes the records up to p part of out's chunk. */
static void mw_out_commit(struct mw_thread *o, unsigned char *p)
{
  o->cur = p;
  mw_fence();
  __atomic_store_n(o->used, (uint32_t)(p - o->payload), __ATOMIC_RELEASE);
}

/* Encodes segment `seg`'s words from r->pos: to its end when the thread has moved on (`whole`), else as far as
 * they are written.  Each commit ends with a mark of how far the words are encoded.  0 = no chunk could be had. */
static int mw_ring_encode(struct mw_ring *r, uint32_t seg, int whole)
{
  struct mw_thread *o = &r->out;
  const uint64_t *w = mw_ring_words(r, seg);
  unsigned i = r->pos, start = i;
  unsigned char *p = o->cur;
  while (i < MW_RING_WORDS) {
    uint64_t v = __atomic_load_n(&w[i], __ATOMIC_ACQUIRE);
    if (v == 0) break;
    unsigned low = (unsigned)v & 3u;
    size_t len = low == 0 ? (size_t)(v >> 32) : 0, need = low == 0 ? len : 16;
    if (low == 3 || (low == 0 && i + 1 + (len + 7) / 8 > MW_RING_WORDS)) break; /* not a word the thread writes */
    if (!o->end || (size_t)(o->end - p) < need + MW_RING_MARK_MAX) {
      if (o->end) mw_out_commit(o, mw_put_mark(p, seg, i));
      if (!mw_file_chunk(o, need + MW_RING_MARK_MAX, 0)) {
        r->pos = i;
        return 0;
      }
      p = o->cur;
    }
    if (low == MW_RW_ENTER) {
      p = mw_encode_enter(o, p, (unsigned)(v >> 2), (uintptr_t)(v >> 34));
      i++;
    } else if (low == MW_RW_EXIT) {
      p = mw_encode_exit(o, p, (int32_t)(uint32_t)(v >> 2));
      i++;
    } else {
      memcpy(p, &w[i + 1], len);
      p += len;
      i += 1 + (unsigned)((len + 7) / 8);
    }
  }
  if (!whole && i == start) return 1;
  if ((size_t)(o->end - p) < MW_RING_MARK_MAX) { /* cannot happen: room for a mark was kept */
    r->pos = i;
    return 0;
  }
  mw_out_commit(o, whole ? mw_put_mark(p, seg + 1, 0) : mw_put_mark(p, seg, i));
  r->pos = whole ? 0 : i;
  return 1;
}

/* Segment `consumed` is encoded: emptied, renumbered for its next turn, and given back to the thread. */
static void mw_ring_free_segment(struct mw_ring *r)
{
  uint32_t seg = r->consumed, next = seg + MW_RING_SEGS;
  unsigned char *h = mw_ring_head(r, seg);
  memset(h + MW_CHUNK_HEAD, 0, (size_t)MW_RING_WORDS * 8);
  memcpy(h + 12, &next, 4);
  __atomic_store_n(&r->consumed, seg + 1, __ATOMIC_RELEASE);
  __atomic_add_fetch(&r->freed, 1, __ATOMIC_RELEASE);
  if (__atomic_load_n(&r->waiting, __ATOMIC_ACQUIRE)) mw_ring_futex(&r->freed, FUTEX_WAKE_PRIVATE, 1, 0);
}

/* A ring the thread left: emptied and given to no thread, so that a reader takes nothing in it for anyone's. */
static void mw_ring_clean(struct mw_ring *r)
{
  memset(mw_ring_words(r, r->consumed), 0, (size_t)MW_RING_WORDS * 8);
  mw_ring_label(r, MW_RING_NO_THREAD);
  r->pos = 0;
}

/* One round for one ring: the full segments, then (leaving, ended, or a drain asked for) what is written of the
 * current one.  Returns whether there was anything to do. */
static int mw_ring_work(struct mw_ring *r, int drain)
{
  int st = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE);
  if (st == MW_RING_FREE || st == MW_RING_ATTACHING || st == MW_RING_DETACHED) return 0;
  int worked = 0;
  while (r->consumed != __atomic_load_n(&r->filled, __ATOMIC_ACQUIRE)) {
    if (!mw_ring_encode(r, r->consumed, 1)) return -1;
    mw_ring_free_segment(r);
    worked = 1;
  }
  if (st == MW_RING_LIVE && !drain) return worked;
  unsigned before = r->pos;
  if (!mw_ring_encode(r, r->consumed, 0)) return -1;
  worked |= r->pos != before;
  if (st == MW_RING_DETACH) {
    mw_ring_clean(r);
    __atomic_store_n(&r->state, MW_RING_DETACHED, __ATOMIC_RELEASE);
    __atomic_add_fetch(&r->freed, 1, __ATOMIC_RELEASE);
    mw_ring_futex(&r->freed, FUTEX_WAKE_PRIVATE, 1, 0);
  } else if (st == MW_RING_ENDED) {
    mw_chunk_release_tail(&r->out);
    mw_chunk_drop(&r->out);
    mw_ring_clean(r);
    __atomic_store_n(&r->state, MW_RING_FREE, __ATOMIC_RELEASE);
  }
  return 1;
}

static void *mw_ring_main(void *arg)
{
  struct mw_thread *self = &mw_t;
  int fd = (int)(intptr_t)arg;
  self->busy = MW_BUSY_INTERNAL; /* anything libc allocates for it passes through unrecorded */
  for (;;) {
    unsigned seen = __atomic_load_n(&mw_ring_g.wake, __ATOMIC_ACQUIRE);
    unsigned drain = __atomic_load_n(&mw_ring_g.drain, __ATOMIC_ACQUIRE);
    int stop = __atomic_load_n(&mw_ring_g.stop, __ATOMIC_ACQUIRE), worked = 0;
    int st = mw_state();
    if ((st != MW_ACTIVE && !stop) || mw_g.fd != fd) break;
    for (struct mw_ring *r = __atomic_load_n(&mw_ring_g.list, __ATOMIC_ACQUIRE); r; r = r->next) {
      int w = mw_ring_work(r, drain != mw_ring_g.drained);
      if (w < 0) {
        __atomic_store_n(&mw_ring_g.broken, 1, __ATOMIC_RELEASE);
        break;
      }
      worked |= w;
    }
    if (drain != mw_ring_g.drained) {
      __atomic_store_n(&mw_ring_g.drained, drain, __ATOMIC_RELEASE);
      mw_ring_futex(&mw_ring_g.drained, FUTEX_WAKE_PRIVATE, 0x7fffffff, 0);
    }
    if (stop || __atomic_load_n(&mw_ring_g.broken, __ATOMIC_ACQUIRE)) break;
    if (!worked) {
      __atomic_store_n(&mw_ring_g.sleeping, 1, __ATOMIC_RELEASE);
      mw_ring_futex(&mw_ring_g.wake, FUTEX_WAIT_PRIVATE, seen, 100 * 1000 * 1000);
      __atomic_store_n(&mw_ring_g.sleeping, 0, __ATOMIC_RELEASE);
    }
  }
  __atomic_store_n(&mw_ring_g.running, 0, __ATOMIC_RELEASE);
  mw_ring_futex(&mw_ring_g.drained, FUTEX_WAKE_PRIVATE, 0x7fffffff, 0);
  for (struct mw_ring *r = __atomic_load_n(&mw_ring_g.list, __ATOMIC_ACQUIRE); r; r = r->next) {
    __atomic_add_fetch(&r->freed, 1, __ATOMIC_RELEASE);
    mw_ring_futex(&r->freed, FUTEX_WAKE_PRIVATE, 1, 0); /* a thread waiting for it stops waiting */
  }
  return NULL;
}

/* The size a trace grows to before its threads join rings: a short run keeps a trace of format 1.4 and no segments. */
static uint64_t mw_ring_after(void)
{
  return mw_ring_g.asked ? MW_RING_AFTER_ASKED : MW_RING_AFTER;
}

/* Starts the encoder once per trace, from a place where pthread_create may run: the runtime's constructor (the
 * sink's ready) or, in a fork child, which has no constructor to run again, an allocation (its from_alloc, asked
 * for once the trace has grown past mw_ring_after).  A thread past that size joins a ring at once. */
static void mw_ring_launch(struct mw_thread *t)
{
  if (mw_ring_g.disabled || mw_state() != MW_ACTIVE || __atomic_exchange_n(&mw_ring_g.started, 1, __ATOMIC_ACQ_REL)) return;
  pthread_t th;
  pthread_attr_t a;
  sigset_t all, old;
  unsigned busy = t->busy;
  int ok = 0;
  t->busy = MW_BUSY_INTERNAL; /* pthread_create's own allocations pass through */
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  __atomic_store_n(&mw_ring_g.running, 1, __ATOMIC_RELEASE);
  if (pthread_attr_init(&a) == 0) {
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&a, 64 * 1024);
    ok = pthread_create(&th, &a, mw_ring_main, (void *)(intptr_t)mw_g.fd) == 0;
    if (ok) pthread_setname_np(th, "mw-encoder");
    pthread_attr_destroy(&a);
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (!ok) {
    __atomic_store_n(&mw_ring_g.running, 0, __ATOMIC_RELEASE);
    mw_ring_g.disabled = 1;
  } else if (t->state == MW_T_LIVE && !t->ring && mw_g.file_end >= mw_ring_after()) {
    mw_ring_attach(t);
  }
  t->busy = busy;
}

static void mw_ring_start(struct mw_thread *t)
{
  if (!__atomic_load_n(&mw_g.alloc_call, __ATOMIC_ACQUIRE)) return;
  __atomic_store_n(&mw_g.alloc_call, 0, __ATOMIC_RELAXED);
  mw_ring_launch(t);
}

/* ---- the sink ---- */

static int mw_ring_open(void)
{
  const char *v = mw_getenv("MEMWRAP_ENCODER");
  memset(&mw_ring_g, 0, sizeof mw_ring_g);
  /* under Valgrind every thread runs on one processor: none is free, unless asked for by name */
  mw_ring_g.asked = v && strcmp(v, "thread") == 0;
  mw_ring_g.disabled = mw_g.valgrind && !mw_ring_g.asked;
  mw_g.prefault = 0;                  /* the encoder faults the file's pages in itself */
  return mw_file_open(0);
}

static int mw_ring_chunk(struct mw_thread *t, size_t need, int nonblocking)
{
  if (t->ring) return mw_ring_next(t, nonblocking);
  int past = mw_g.file_end >= mw_ring_after();
  if (past && !nonblocking && t->state == MW_T_LIVE && __atomic_load_n(&mw_ring_g.running, __ATOMIC_ACQUIRE) &&
      !__atomic_load_n(&mw_ring_g.broken, __ATOMIC_ACQUIRE) && need <= (size_t)MW_RING_WORDS * 8 - 8 && mw_ring_attach(t))
    return 1;
  int ok = mw_file_chunk(t, need, nonblocking);
  if (ok && past && !mw_ring_g.started && !mw_ring_g.disabled)
    __atomic_store_n(&mw_g.alloc_call, 1, __ATOMIC_RELEASE); /* mw_ring_start, from the next allocation (a fork child) */
  return ok;
}

/* The thread lets go of its ring without handing it over (a fork child, recording off). */
static void mw_ring_drop(struct mw_thread *t)
{
  if (t->ring) {
    t->ring = NULL;
    t->chunk_map = NULL;
  }
  mw_chunk_drop(t);
}

/* The thread ended: its ring goes to the encoder to finish and free. */
static void mw_ring_thread_end(struct mw_thread *t)
{
  struct mw_ring *r = t->ring;
  if (!r) {
    mw_chunk_release_tail(t);
    return;
  }
  t->ring = NULL;
  t->cur = t->end = NULL;
  t->payload = NULL;
  t->used = NULL;
  __atomic_store_n(&r->state, MW_RING_ENDED, __ATOMIC_RELEASE);
  mw_ring_wake();
}

static void mw_ring_finish(struct mw_thread *t)
{
  if (t->ring) mw_ring_detach(t);
}

/* A normal end: the encoder encodes what the other threads have written (for at most a second) and stops; the
 * file is cut and marked complete.  After a fatal signal nothing waits: the words stay in the rings. */
static void mw_ring_end(struct mw_thread *t, int how, int code)
{
  if (!how && __atomic_load_n(&mw_ring_g.running, __ATOMIC_ACQUIRE)) {
    unsigned want = __atomic_add_fetch(&mw_ring_g.drain, 1, __ATOMIC_ACQ_REL);
    mw_ring_wake();
    for (int k = 0; k < 100; k++) {
      unsigned done = __atomic_load_n(&mw_ring_g.drained, __ATOMIC_ACQUIRE);
      if (done == want || !__atomic_load_n(&mw_ring_g.running, __ATOMIC_ACQUIRE)) break;
      mw_ring_futex(&mw_ring_g.drained, FUTEX_WAIT_PRIVATE, done, 10 * 1000 * 1000);
    }
    __atomic_store_n(&mw_ring_g.stop, 1, __ATOMIC_RELEASE);
    mw_ring_wake();
  }
  if (how && t->ring) return; /* a fatal signal in a ring: END stays a blob among its words (a seal is a chunk's) */
  mw_file_end(t, how, code);
}

/* In a fork child: the parent's rings and encoder, let go unwritten (mappings of the parent's file). */
static void mw_ring_child(void)
{
  for (struct mw_ring *r = mw_ring_g.list, *next; r; r = next) {
    next = r->next;
    munmap(r->map, r->map_len);
    if (r->out.chunk_map) munmap(r->out.chunk_map, r->out.chunk_map_len);
    munmap(r, sizeof *r);
  }
  memset(&mw_ring_g, 0, sizeof mw_ring_g);
  mw_file_child();
}

const struct mw_sink mw_ring_sink = {
  .open = mw_ring_open,
  .chunk = mw_ring_chunk,
  .drop = mw_ring_drop,
  .thread_end = mw_ring_thread_end,
  .end = mw_ring_end,
  .child = mw_ring_child,
  .from_alloc = mw_ring_start,
  .finish = mw_ring_finish,
  .ready = mw_ring_launch,
};

#else /* no ring on this platform: the trace file's own sink encodes in the program's threads */

int mw_ring_wanted(void) { return 0; }
int mw_ring_room(struct mw_thread *t, size_t n, int nonblocking)
{
  (void)t;
  (void)n;
  (void)nonblocking;
  return 0;
}
int mw_ring_word(struct mw_thread *t, uint64_t word)
{
  (void)t;
  (void)word;
  return 0;
}
const struct mw_sink mw_ring_sink = {0};

#endif
