/* mw-internal.h — state and helpers shared by the runtime's files (not for
 * instrumented code; that only sees memwrap.h).
 *
 * The runtime is linked into programs once strong and embedded into objects
 * many times weak (see instrumenter/runtime-build.ts), so every mutable
 * variable is a non-static global with an mw_ prefix: copies then resolve to
 * one definition and share state.  Static functions and static const data
 * are fine.  The runtime never calls malloc for itself (mmap instead); while
 * it runs libc code that might, the thread's `busy` guard makes the
 * interposed allocator pass calls straight through.
 */
#ifndef MW_INTERNAL_H
#define MW_INTERNAL_H 1

#include <stddef.h>
#include <stdint.h>

#include "memwrap.h"

/* MW_TARGET (set by the build for bare-metal firmware, runtime/target/): one
 * thread and its interrupts, no operating system.  Per-thread state is then a
 * plain global, and the host's threads, files and mappings are not built. */
#ifndef MW_TARGET
#define MW_TARGET 0
#endif
#if !MW_TARGET
#include <pthread.h>
#endif

#define MW_LIKELY(x) __builtin_expect(!!(x), 1)
#define MW_UNLIKELY(x) __builtin_expect(!!(x), 0)
#if MW_TARGET
#define MW_THREAD_LOCAL
#define MW_TLS
#else
#define MW_THREAD_LOCAL __thread
#define MW_TLS __attribute__((tls_model("initial-exec")))
#endif
/* Format 1.4's prediction table (1024 slots of 8 bytes per thread): on a host; a target writes every ENTER in the
 * site-delta form, which needs no table (TRACE-FORMAT.md), to keep 8 KiB of RAM. */
#define MW_PREDICT (!MW_TARGET)

/* ---- trace format (runtime/TRACE-FORMAT.md) ---- */
enum {
  MW_REC_EXT = 0, MW_REC_THREAD_BEGIN = 1, MW_REC_UNIT = 2, MW_REC_STATIC = 3, MW_REC_ENTER = 4,
  MW_REC_EXIT = 5, MW_REC_UNWIND = 6, MW_REC_ALLOC = 7, MW_REC_FREE = 8,
  MW_REC_REALLOC = 9, MW_REC_LINKED = 10, MW_REC_TIME = 11, MW_REC_END = 12,
  MW_REC_THREAD_END = 13, MW_REC_PROGRAM = 14, MW_REC_LOST = 15
};
#define MW_F_SEQ_NEXT 0x10      /* [seq] is the previous seq + 1 */
#define MW_F_INTERPOSED 0x20    /* ALLOC/FREE/REALLOC through the interposed allocator */
#define MW_F_UNTRACKED 0x40     /* FREE: not a live block; REALLOC: no new block */
#define MW_F_FAILED 0x80        /* REALLOC: failed, old block still live */
#define MW_F_PARTIAL 0x10       /* LINKED: the scan hit a limit */
#define MW_EXT_LEAKS 1          /* EXT subkind: leak classes at exit */
#define MW_EXT_LIBRARY 2        /* EXT subkind: a loaded object's index and path */
#define MW_EXT_CALLER 3         /* EXT subkind: the loaded object that called the interposed allocator */
#define MW_EXT_BRANCH 4         /* EXT subkind: a branch outcome (format 1.2) */
#define MW_EXT_RANK 5           /* EXT subkind: the MPI rank the environment gave (format 1.3) */
#define MW_EXT_CALL_PATH 6      /* EXT subkind: return addresses from an interposed call out to instrumented code (format 1.3) */
#define MW_EXT_SEAL 7           /* EXT subkind: a chunk's seal, its CRC-32C (format 1.5) */
#define MW_EXT_RAW_MARK 8       /* EXT subkind: the thread's raw words before (segment, word) are encoded above (format 1.6) */
#define MW_FORMAT_MAJOR 1
#define MW_FORMAT_MINOR 5
#define MW_FORMAT_MINOR_RAW 6   /* the minor of a trace that has raw segments; one without them stays 1.5 */
#define MW_F_ENTER_PREDICTED 0x10 /* ENTER (1.4): site and depth delta as the thread's prediction table says */
#define MW_F_ENTER_SITE_DELTA 0x20 /* ENTER (1.4): `s` site - previous ENTER site, `s` depth delta */
#define MW_PREDICT_BITS 10      /* prediction table: 2^10 slots of (site, depth delta) per thread */
#define MW_PREDICT_BYTES ((size_t)8 << MW_PREDICT_BITS)
#define MW_HISTORY_MASK 0xffffu /* call history: (history << 2) ^ site on ENTER, ^ exit delta on EXIT */

#define MW_HEADER_SIZE 64
#define MW_HDR_COMPLETE 1         /* header flag bits (byte 17): a normal exit */
#define MW_HDR_NOT_INTERPOSED 2   /* only instrumented calls recorded */
#define MW_HDR_STOPPED 4          /* recording stopped: the file could not grow */
#define MW_HDR_RAW_SEGMENTS 8     /* the trace has raw segments: a thread's records left to the encoder thread (mw-ring.c, format 1.6) */
#define MW_HDR_STOP_ERRNO 28      /* where a stopped trace's header holds the errno (u32) */
#define MW_SEAL_SIZE 11           /* a chunk's seal: EXT tag, subkind, length 8, "MWSL", CRC-32C (mw-seal.c) */
#define MW_SEALED_HEAD 12         /* the chunk header bytes its CRC covers: magic, thread, capacity */
#define MW_CHUNK_HEAD 16
#define MW_CHUNK_PAYLOAD (1024u * 1024u - 16u) /* chunks grow 1, 4, 16, 64, 256 KiB, then 1 MiB */
#define MW_SMALL_RECORD 64      /* no fixed-shape record is longer */
#define MW_TIME_EVERY 256       /* records between TIME records */

/* ---- frames ---- */
#define MW_FRAME_NONE 0xfffffffeu   /* enter not recorded (runtime off) */
#define MW_FRAME_LOST 0xfffffffdu   /* enter not recorded, counted as lost */
#define MW_FRAMES_MAX (1u << 26)

struct mw_frame_slot {
  uintptr_t depth;              /* stack bytes in use at the entry */
  unsigned site;                /* global entry site */
#if !MW_TARGET
  uint32_t bound;               /* a pending frame's: what its summarised calls add to its depth (mw_reach_of), read
                                 * at its exit; a target writes such frames at once (__mw_enter_bounded) */
#endif
};

/* How far a pending frame reaches: its depth plus its summarised calls' bound. */
static inline uintptr_t mw_slot_reach(const struct mw_frame_slot *s)
{
#if MW_TARGET
  return s->depth;
#else
  return s->depth + s->bound;
#endif
}

/* ---- busy guard values ---- */
#define MW_BUSY_RECORDING 1     /* a record is being made: re-entry = LOST */
#define MW_BUSY_INTERNAL 2      /* the runtime's own libc calls: pass through */

enum { MW_T_NEW = 0, MW_T_LIVE = 1, MW_T_ENDED = 2 };

/* Per-thread state (initial-exec TLS, zero at thread start). */
struct mw_thread {
  unsigned char *cur;           /* next byte of the current chunk's payload */
  unsigned char *end;           /* end of the payload; NULL = no chunk */
  unsigned char *payload;
  uint32_t *used;               /* the chunk header's `used` field */
  unsigned busy;
  unsigned lost;                /* records dropped by re-entry, not yet reported */
  unsigned tick;                /* records left before the next TIME */
  unsigned top;                 /* open frames */
  unsigned written;             /* frames[0 .. written) have their ENTER in the trace; the rest are pending (entered
                                 * through __mw_enter_lazy, written when a record is made inside them) */
  unsigned cap;                 /* frame slots mapped */
  struct mw_frame_slot *frames; /* frames[-1] is a sentinel of depth 0 */
  uintptr_t stack_base;
  uintptr_t deep;               /* the deepest a call recorded since the thread's last record other than an ENTER or
                                 * EXIT reached (its depth plus its summarised calls' bound; 0: none): a measured or
                                 * pending call no deeper is left out (__mw_probe, __mw_enter_lazy); mw_commit clears it */
  uintptr_t depth_cap;          /* depths at or past this are another stack */
  uintptr_t last_depth;
  uint64_t *predict;            /* prediction table (format 1.4): per slot the site and the depth delta, two 32-bit
                                 * words in memory order; in front of the shadow stack's mapping */
  unsigned history;             /* call history that picks the table's slot */
  unsigned last_enter;          /* site of the thread's previous ENTER */
  unsigned exit_limit;          /* __mw_leave's fast path takes exit deltas 1 .. this: mw_g.exit_tag_limit, set at the
                                 * thread's first other exit; 0 in a ring (mw_ring_no_compact_exit), so no test for the ring there */
  uintptr_t last_addr_inv;       /* ~address of the last block written: a sanitizer's leak checker scanning
                                 * thread-local memory must not take it for a pointer to that block */
  unsigned last_branch;         /* site of the thread's previous BRANCH */
  uint64_t seq;
  uint64_t last_time;           /* CLOCK_MONOTONIC ns of the last TIME */
  uint64_t chunk_off;           /* file offset of the current chunk */
  void *chunk_map;
  size_t chunk_map_len;
  void *frames_map;
  size_t frames_map_len;
  void *scan_map;               /* linked-scan scratch (mw-linked.c) */
  size_t scan_map_len;
  unsigned scan_gen;
  unsigned index;               /* thread index in chunk headers */
  unsigned chunks;              /* chunks this thread has had */
  unsigned char state;          /* MW_T_* */
  unsigned char dtor_rounds;
  uintptr_t lib_lo, lib_hi;     /* last loaded object a caller was found in (mw-libs.c) */
  unsigned lib_index;
  unsigned lib_gen;             /* mw_libs.gen when cached; 0 = nothing cached */
  unsigned chunk_prepared;      /* 1 + the prepared mapping the chunk is in; 0 = its own mapping */
#if MW_TARGET
  int streaming;                /* a record larger than the buffer is being written out (target/mw-out.c) */
#endif
  struct mw_ring *ring;         /* records go to this ring as words for the encoder thread (mw-ring.c): cur .. end
                                 * is its current segment; NULL = encoded here into the chunk */
};

extern MW_THREAD_LOCAL struct mw_thread mw_t MW_TLS;

/* ---- process-wide state ---- */
#if MW_TARGET
#define MW_IMAGES 1             /* the firmware */
#define MW_EXTRA_UNITS 4
#else
#define MW_IMAGES 64            /* the executable and the shared objects */
#define MW_EXTRA_UNITS 256
#endif
enum { MW_UNINIT = 0, MW_INITIALIZING, MW_ACTIVE, MW_DISABLED, MW_CLOSED };

struct mw_global {
  int state;                    /* MW_* above */
  int init_tid;
  int hooks_done;               /* on_exit, atfork, key, signals registered */
  int forked;                   /* this process is a fork child */
  int stopped;                  /* the file could not grow: recording stopped (mw-file.c) */
  int fd;
  uint64_t fd_dev, fd_ino;      /* the trace file, to notice a closed fd */
  unsigned char *header;        /* first page of the file, mapped */
  size_t page;
  uint64_t file_end;            /* bytes handed out to chunks */
  uint64_t file_size;           /* bytes the file has been grown to */
  uint64_t last_chunk;          /* offset of the last chunk in the file */
  int file_lock;
  int units_lock;
  int fork_locked;
  unsigned threads;             /* thread indices handed out */
  unsigned next_base;           /* next global site id (starts at 1) */
  int ended;                    /* END written */
  int exit_seen, exit_status, dtor_seen;
  int quick_seen, quick_status;  /* quick_exit was called, with this status */
#if !MW_TARGET
  pthread_key_t key;
#endif
  int key_ok;
  uint64_t start_mono;          /* CLOCK_MONOTONIC at start */
  uint64_t start_real;          /* CLOCK_REALTIME at start */
  int valgrind;                 /* running under Valgrind (mw-valgrind.c) */
  int valgrind_heap;            /* ... whose allocator replaced ours: the interposer never runs */
  int call_paths;               /* write EXT/CALL_PATH (MEMWRAP_CALL_PATHS=1; default off) */
  int compact_calls;            /* 1.4's one-byte ENTER and EXIT forms (MEMWRAP_COMPACT_CALLS=0: off) */
  unsigned exit_tag_limit;      /* exit deltas 1 .. this an EXIT tag holds: 15 (1.4), or 0 (the 1.3 forms only) */
  int prefault;                 /* may start the pre-fault thread (MEMWRAP_PREFAULT, default 1) */
  int alloc_call;               /* the sink asks for mw_sink.from_alloc at the next recorded allocation */
  int ahead_started;            /* the pre-fault thread was started for this trace */
  unsigned ahead_wake;          /* futex word: bumped to wake the pre-fault thread */
  int ahead_waiting;            /* the pre-fault thread sleeps on ahead_wake */
  uint64_t ahead_end;           /* end of the file span the prepared mappings cover */
#if !MW_TARGET
  struct mw_prepared {          /* file spans mapped and faulted in by the pre-fault thread (mw-prefault.c) */
    uint64_t start;             /* file offset (page-aligned) */
    unsigned char *addr;        /* NULL = free slot */
    size_t len;
    int refs;                   /* chunks in it that a thread still writes */
    int ready;                  /* faulted in: chunks may be taken from it */
  } prepared[32];
#endif
#if !MW_TARGET
  int hidden_threads;           /* a thread of the runtime's that glibc does not know of runs (mw-prefault.c) */
  void *hidden_map;             /* its stack and thread pointer's mapping, and the mapping's length */
  size_t hidden_len;
  int recorders;                /* MW_RECORDERS_*: may the heap index and sequence skip their atomics (mw-threads.c) */
  struct mw_thread *first_recorder; /* the thread recording while recorders == MW_RECORDERS_SOLO */
#endif
  unsigned link_blocks;         /* linked-scan limits, 0 = off */
  size_t link_bytes;
  unsigned nextra;              /* units registered outside any image */
  struct __mw_unit *extra[MW_EXTRA_UNITS];
#if MW_TARGET
  unsigned nblocks;             /* live blocks in the table (target/mw-blocks.c) */
  uintptr_t blocks_lo, blocks_hi; /* every block the table held lies in [lo, hi) */
#endif
  unsigned nimages;             /* executable and shared objects seen */
  struct mw_image {
    struct __mw_unit *const *ub, *const *ue;
    const struct __mw_static_ref *sb, *se;
  } images[MW_IMAGES];
};

extern struct mw_global mw_g;
extern uint64_t mw_seq_counter;

/* ---- small helpers ---- */
static inline void mw_fence(void) { __atomic_signal_fence(__ATOMIC_SEQ_CST); }

static inline void mw_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/* glibc (2.32+) clears this before a program's second thread starts and
 * never sets it again.  While it is set no other thread can race with us, so
 * the index locks and the sequence counter skip their atomic instructions —
 * most of the cost of recording a malloc/free pair in a single-threaded
 * program.  Weak: without it (another libc) we always take the safe path. */
extern char __libc_single_threaded __attribute__((weak));
static inline int mw_single_threaded(void)
{
#if MW_TARGET
  return 1; /* one thread; an interrupt that records finds `busy` set, never a lock held */
#else
  return &__libc_single_threaded != 0 && __libc_single_threaded;
#endif
}

/* No other thread can take a runtime lock: glibc knows of one thread, and
 * the runtime has started none glibc does not know of.  The pre-fault thread
 * is such a thread (started without pthread_create, so that glibc's own
 * allocator keeps its single-threaded paths: mw-prefault.c); it takes the
 * file lock, so from its start every lock is taken for real. */
static inline int mw_alone(void)
{
#if MW_TARGET
  return 1;
#else
  return mw_single_threaded() && !__atomic_load_n(&mw_g.hidden_threads, __ATOMIC_ACQUIRE);
#endif
}

/* A spin lock, taken only when another thread could want it (`alone` 0). */
void mw_backoff(unsigned *spins);
void mw_lock_slow(int *l);
static inline void mw_lock_unless(int *l, int alone)
{
  if (alone) return;
  if (MW_UNLIKELY(__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))) mw_lock_slow(l);
}
static inline int mw_trylock_unless(int *l, int alone)
{
  if (alone) return 1;
  return !__atomic_load_n(l, __ATOMIC_RELAXED) && !__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE);
}
static inline void mw_unlock_unless(int *l, int alone)
{
  if (alone) return;
  __atomic_store_n(l, 0, __ATOMIC_RELEASE);
}
static inline void mw_lock(int *l) { mw_lock_unless(l, mw_alone()); }
static inline int mw_trylock(int *l) { return mw_trylock_unless(l, mw_alone()); }
static inline void mw_unlock(int *l) { mw_unlock_unless(l, mw_alone()); }

/* The heap's own locks (the live-block index's stripes) and its sequence
 * number are touched only by threads of the program that record, never by
 * the runtime's pre-fault or encoder threads (the encoder, a pthread, clears
 * __libc_single_threaded for good).  So they ask a narrower question: has a
 * second thread of the program recorded yet?  MW_RECORDERS_SOLO: no, one
 * thread (first_recorder) does all heap work, without atomics.  A second
 * thread's first record moves the state to MANY (mw_recorder_join), first
 * making sure the first thread's heap call in progress, if any, has ended.
 * MW_RECORDERS_LIBC (zero, before start-up, or where the kernel has no
 * expedited membarrier, or under Valgrind): ask glibc, as the other locks do. */
enum { MW_RECORDERS_LIBC = 0, MW_RECORDERS_SOLO, MW_RECORDERS_JOINING, MW_RECORDERS_MANY };
static inline int mw_one_recorder(void)
{
#if MW_TARGET
  return 1;
#else
  int r = __atomic_load_n(&mw_g.recorders, __ATOMIC_RELAXED);
  return r == MW_RECORDERS_SOLO || (r == MW_RECORDERS_LIBC && mw_single_threaded());
#endif
}
static inline void mw_heap_lock(int *l) { mw_lock_unless(l, mw_one_recorder()); }
static inline int mw_heap_trylock(int *l) { return mw_trylock_unless(l, mw_one_recorder()); }
static inline void mw_heap_unlock(int *l) { mw_unlock_unless(l, mw_one_recorder()); }

static inline int mw_state(void) { return __atomic_load_n(&mw_g.state, __ATOMIC_ACQUIRE); }

/* One process-wide heap sequence number (64-bit; __sync works on 32-bit ARM
 * through libgcc's kernel helpers where there is no ldrexd). */
static inline uint64_t mw_next_seq(void)
{
  if (mw_one_recorder()) return ++mw_seq_counter;
  return __sync_add_and_fetch(&mw_seq_counter, 1);
}

/* ---- varints ---- */
static inline unsigned char *mw_put_u(unsigned char *p, uint64_t v)
{
  while (v >= 0x80) {
    *p++ = (unsigned char)(v | 0x80);
    v >>= 7;
  }
  *p++ = (unsigned char)v;
  return p;
}
static inline unsigned char *mw_put_u32(unsigned char *p, uint32_t v)
{
  while (v >= 0x80) {
    *p++ = (unsigned char)(v | 0x80);
    v >>= 7;
  }
  *p++ = (unsigned char)v;
  return p;
}
static inline unsigned char *mw_put_s(unsigned char *p, int64_t v)
{
  return mw_put_u(p, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}
static inline unsigned char *mw_put_sw(unsigned char *p, intptr_t v)
{
  /* pointer-width zig-zag; equal to mw_put_s for every value of that width */
  uintptr_t z = ((uintptr_t)v << 1) ^ (uintptr_t)(v >> (sizeof(intptr_t) * 8 - 1));
  while (z >= 0x80) {
    *p++ = (unsigned char)(z | 0x80);
    z >>= 7;
  }
  *p++ = (unsigned char)z;
  return p;
}
/* The bytes mw_put_u writes for v. */
static inline size_t mw_len_u(uint64_t v)
{
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}
unsigned char *mw_put_str(unsigned char *p, const char *s, size_t n);

/* Writes `seq` as [seq] after the tag at *tag. */
static inline unsigned char *mw_put_seq(struct mw_thread *t, unsigned char *tag, unsigned char *p,
                                        uint64_t seq)
{
  if (seq == t->seq + 1)
    *tag |= MW_F_SEQ_NEXT;
  else
    p = mw_put_u(p, seq - t->seq);
  t->seq = seq;
  return p;
}

/* ---- the rewrite's sections ----
 * Made by the linker for the executable or shared object being linked; hidden,
 * so code in a shared object sees that object's sections, never another's. */
#define MW_SECTION_BOUND __attribute__((weak, visibility("hidden")))
extern struct __mw_unit *const __start_mw_units[] MW_SECTION_BOUND;
extern struct __mw_unit *const __stop_mw_units[] MW_SECTION_BOUND;
extern const struct __mw_static_ref __start_mw_statics[] MW_SECTION_BOUND;
extern const struct __mw_static_ref __stop_mw_statics[] MW_SECTION_BOUND;

/* ---- the sink: where a thread's records go ----
 * Records are encoded into the thread's chunk, t->cur .. t->end (mw_room and
 * mw_commit below); the sink decides where a chunk lives and what becomes of
 * its bytes: a memory-mapped trace file (mw-file.c), the same in a memory
 * file handed to the program's memwrap_write at the end (mw-writer.c), or
 * online mode's tables, whose chunks are scratch (mw-online.c).  One is
 * chosen at start-up (mw-init.c) and copied into mw_sink, so that a hot path
 * reads one of its fields with one load. */
struct mw_sink {
  /* Creates the output: 1 = recording; 0 = the program runs unrecorded (the reason said). */
  int (*open)(void);
  /* A new chunk for t with room for `need` bytes (a record never spans two); 0 = none, recording is off.
   * nonblocking: called from a fatal-signal handler, so no lock may be waited for. */
  int (*chunk)(struct mw_thread *t, size_t need, int nonblocking);
  /* The thread lets go of its chunk (thread end, fork child, the end of a run). */
  void (*drop)(struct mw_thread *t);
  /* The thread ended: the unused tail of its chunk may go back. */
  void (*thread_end)(struct mw_thread *t);
  /* The run ended, its END record written: how 0 = exit (code = status & 0xff), 1 = fatal signal (code = signo;
   * from the handler: no locks).  After a normal end the state is MW_CLOSED and the thread's chunk dropped. */
  void (*end)(struct mw_thread *t, int how, int code);
  /* In a fork child: forget the parent's output without writing to it. */
  void (*child)(void);
  /* Called from the next recorded allocation once the sink set mw_g.alloc_call: a place where starting a thread is
   * safe (pthread_create allocates; a signal handler may have interrupted the allocator).  NULL: never asked. */
  void (*from_alloc)(struct mw_thread *t);
  /* A name record (UNIT, EXT/LIBRARY, PROGRAM) was just encoded at rec: the sink may keep a copy.  NULL: none. */
  void (*named)(const unsigned char *rec, size_t n);
  /* NULL: heap calls are recorded as ALLOC/FREE/REALLOC (and LINKED, LEAKS).  Else they are handed here instead,
   * unrecorded, with no linked scan or leak classes (online mode): fn = the interposed allocator (0: an
   * instrumented site), ra = its return address, kind = the allocator's site kind, `what` the MW_HEAP_* below. */
  void (*heap)(struct mw_thread *t, unsigned fn, uintptr_t ra, unsigned kind, size_t added, size_t freed,
               unsigned what);
  /* The run is about to end normally on t (mw_finish, before its last records): a sink whose own thread encodes
   * for others has it catch up with t and gives t its chunk back, so that the last records go there.  NULL: none. */
  void (*finish)(struct mw_thread *t);
  /* Called from the runtime's constructor once recording has started: a place where starting a thread is safe (no
   * lock of the program's or libc's is held), which a program that seldom allocates may never reach again.  NULL:
   * nothing to do. */
  void (*ready)(struct mw_thread *t);
};
extern struct mw_sink mw_sink;
extern const struct mw_sink mw_file_sink, mw_writer_sink, mw_online_sink, mw_target_sink, mw_ring_sink;
/* what a heap event was, for mw_sink.heap */
#define MW_HEAP_MADE 1            /* it made a block */
#define MW_HEAP_ENDED 2           /* it ended a live block */
#define MW_HEAP_UNTRACKED 4       /* a FREE of a pointer that was no live block */
#define MW_HEAP_FAILED 8          /* a failed realloc */
#define MW_HEAP_REALLOC 16        /* a realloc call (counted as one) */

/* A new chunk for t (see mw_sink.chunk). */
static inline int mw_chunk_next(struct mw_thread *t, size_t need, int nonblocking)
{
  return mw_sink.chunk(t, need, nonblocking);
}

/* ---- records (core/mw-records.c, core/mw-units.c, mw-process.c) ---- */
void mw_time_tick(struct mw_thread *t);
void mw_flush_lost(struct mw_thread *t);
void mw_write_thread_begin(struct mw_thread *t);
void mw_write_program(struct mw_thread *t);
void mw_write_rank(struct mw_thread *t);
void mw_write_units_and_statics(struct mw_thread *t);
void mw_image_add(struct __mw_unit *const *ub, struct __mw_unit *const *ue, const struct __mw_static_ref *sb,
                  const struct __mw_static_ref *se);
unsigned mw_unit_register(struct mw_thread *t, struct __mw_unit *u);
void mw_write_unwind(struct mw_thread *t, unsigned count);
/* The most stack the summarised calls of a recorded function add to the depth
 * of its frames (its CALLS_BOUND site, runtime/TRACE-FORMAT.md), by the global
 * id of its ENTRY site: a frame's reach is its depth plus this.  Kept from
 * each unit's table as it is registered; none on a target, whose rewrite
 * records such functions' calls as they happen. */
#if MW_TARGET
static inline uint32_t mw_reach_of(unsigned site)
{
  (void)site;
  return 0;
}
#else
extern uint32_t *mw_reach_table; /* [0] = entries; [site] = bytes */
static inline uint32_t mw_reach_of(unsigned site)
{
  const uint32_t *r = __atomic_load_n(&mw_reach_table, __ATOMIC_ACQUIRE);
  return r && site < r[0] ? r[site] : 0;
}
#endif
void mw_flush_pending(struct mw_thread *t);
void mw_pop_frames(struct mw_thread *t, unsigned new_top);
void mw_end_frames(struct mw_thread *t);
void mw_finish(int status);
void mw_end_fatal(int signo);

/* ---- the trace file (mw-file.c, mw-prefault.c) ---- */
#ifdef MADV_POPULATE_WRITE
#define MW_MADV_POPULATE_WRITE MADV_POPULATE_WRITE
#else
#define MW_MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif
int mw_file_open(int in_memory);
int mw_file_chunk(struct mw_thread *t, size_t need, int nonblocking);
void mw_file_end(struct mw_thread *t, int how, int code);
void mw_file_child(void);
int mw_file_grow(uint64_t need);
long mw_file_grow_quiet(uint64_t need);
int mw_fd_ok(void);

/* System calls that touch no thread-local state (not even errno): the
 * result, or -errno.  The pre-fault thread, which has no thread-local storage
 * of its own, makes its calls this way.  Where the host has no such form
 * (MW_RAW_SYSCALL 0) they go through libc, and that thread is a pthread. */
#if !MW_TARGET && defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
#define MW_RAW_SYSCALL 1
static inline long mw_sys(long n, long a, long b, long c, long d, long e, long f)
{
#if defined(__x86_64__)
  register long r10 __asm__("r10") = d, r8 __asm__("r8") = e, r9 __asm__("r9") = f;
  long ret;
  __asm__ volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9) : "rcx", "r11", "memory");
  return ret;
#else
  register long x8 __asm__("x8") = n, x0 __asm__("x0") = a, x1 __asm__("x1") = b, x2 __asm__("x2") = c,
                x3 __asm__("x3") = d, x4 __asm__("x4") = e, x5 __asm__("x5") = f;
  __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5) : "memory");
  return x0;
#endif
}
#else
#define MW_RAW_SYSCALL 0
#endif
void mw_chunk_drop(struct mw_thread *t);
void mw_chunk_release_tail(struct mw_thread *t);
void mw_trace_close_child(void);
void mw_ahead_start(struct mw_thread *t);
void mw_ahead_note(uint64_t end, uint64_t ahead);
unsigned mw_prepared_find(uint64_t off, uint64_t total, unsigned char **at);
void mw_prepared_leave(unsigned slot);
void mw_ahead_reset_child(void);
/* the trace's name and creation, shared with the online file */
int mw_trace_name(char *buf, size_t cap);
int mw_trace_create(const char *name, char *used, size_t cap);
int mw_record_file_open(const char *what, int in_memory, char *path);
unsigned char *mw_put_header(void *h, const char magic[8], uint16_t major, uint16_t minor, uint16_t hsize);

/* mw-writer.c: the trace through the program's memwrap_write */
int mw_writer_wanted(void);
int mw_writer_open(void);

/* mw-ring.c: the trace file, its records encoded by a thread of the runtime where a processor is free */
int mw_ring_wanted(void);
int mw_ring_word(struct mw_thread *t, uint64_t word);
void mw_ring_no_compact_exit(struct mw_thread *t);

/* mw-os.c */
uint64_t mw_now_mono(void);

/* ---- the encoder thread's ring (mw-ring.c) ----
 * Where a processor is free, a thread's records go into a ring of 8-byte
 * words in the trace file instead of being encoded in place: ENTER and EXIT
 * as one word each, every other record as its usual bytes behind a word
 * giving their length (a blob).  The runtime's encoder thread turns the
 * words into format 1.4's records in the thread's chunks.  x86-64 only: the
 * encoder reads words the thread may be writing, which an 8-byte store and
 * the processor's store order make safe to read there. */
#if defined(__x86_64__) && !defined(__ILP32__)
#define MW_RING 1
#else
#define MW_RING 0
#endif
#define MW_RW_ENTER 1u            /* word: 1 | site << 2 | depth << 34 (a depth is below 2^30) */
#define MW_RW_EXIT 2u             /* word: 2 | (uint32_t)(exit site - entry site) << 2 */
                                  /* a blob: low 32 bits 0, bytes of records that follow in the high 32; 0: none yet */
static inline unsigned char *mw_word_align(unsigned char *p)
{
  return (unsigned char *)(((uintptr_t)p + 7) & ~(uintptr_t)7);
}
int mw_ring_room(struct mw_thread *t, size_t n, int nonblocking);
/* Online mode's ring (mw-online.c): words and blobs into the thread's scratch chunk, which nobody reads, so the
 * thread keeps its shadow stack and encodes nothing; a full scratch chunk only starts again. */
#define MW_RING_SCRATCH ((struct mw_ring *)1)

/* Room for n more bytes in the current chunk (a new chunk if needed); in a
 * ring, a blob begun for a record of up to n bytes (mw_commit ends it). */
static inline int mw_room(struct mw_thread *t, size_t n)
{
#if MW_RING
  if (t->ring) {
    unsigned char *p = mw_word_align(t->cur);
    if (MW_UNLIKELY((size_t)(t->end - p) < 8 + n)) return mw_ring_room(t, n, 0);
    t->used = (uint32_t *)(void *)(p + 4); /* the word's high half: the blob's length, 0 until mw_commit */
    t->payload = t->cur = p + 8;
    return 1;
  }
#endif
  if (MW_LIKELY((size_t)(t->end - t->cur) >= n)) return 1;
  if (!mw_chunk_next(t, n, 0)) return 0;
#if MW_RING
  if (t->ring) return mw_ring_room(t, n, 0); /* the new chunk was a ring's segment: the thread joined it */
#endif
  return 1;
}

/* Makes the bytes up to p part of the chunk (crash-safe from here on).  In a
 * ring, `used` is the blob's length word: the record is whole once it is set. */
static inline void mw_commit_call(struct mw_thread *t, unsigned char *p)
{
  t->cur = p;
  mw_fence();
  *t->used = (uint32_t)(p - t->payload);
  if (MW_UNLIKELY(--t->tick == 0)) mw_time_tick(t);
}

/* mw_commit_call is that of an ENTER or EXIT; any other record also ends the
 * span in which a call no deeper than one recorded may be left out (`deep`). */
static inline void mw_commit(struct mw_thread *t, unsigned char *p)
{
  t->deep = 0;
  mw_commit_call(t, p);
}

/* mw_commit of a name record (UNIT, EXT/LIBRARY, PROGRAM), which the sink may keep a copy of. */
static inline void mw_commit_named(struct mw_thread *t, unsigned char *p)
{
  if (mw_sink.named) mw_sink.named(t->cur, (size_t)(p - t->cur));
  mw_commit(t, p);
}

#if MW_TARGET
/* ---- a target's runtime (runtime/target/) ----
 * What the driver sizes from its --mw- options and names from the link is
 * defined in an object it compiles at each link (instrumenter/firmware.ts);
 * the runtime's weak defaults serve a link made without it. */
#define MW_DEFAULT_BUFFER 2048u   /* --mw-buffer: record bytes held between writes */
#define MW_DEFAULT_FRAMES 128u    /* --mw-frames: open frames the shadow stack holds */
#define MW_DEFAULT_BLOCKS 64u     /* --mw-blocks: live blocks the table holds (a power of two) */
#define MW_LINK_MAX 16u           /* blocks one linked scan lists at most */
struct mw_live_slot {
  uintptr_t addr;               /* 0 = empty */
  uint32_t id;                  /* the block id's low 32 bits */
  uint32_t size;                /* requested bytes */
};
extern const char mw_program_path[], mw_program_cwd[], mw_trace_stem[];
extern unsigned char mw_buffer[];
extern const unsigned mw_buffer_bytes;
extern struct mw_frame_slot mw_frame_slots[];
extern const unsigned mw_frame_cap;
extern struct mw_live_slot mw_block_slots[];
extern const unsigned mw_block_cap;
/* target/mw-out.c: a record of exactly `size` bytes from t->cur, streamed out when it is larger than the buffer */
int mw_stream_begin(struct mw_thread *t, size_t size);
unsigned char *mw_stream_room(struct mw_thread *t, unsigned char *p, size_t n);
unsigned char *mw_stream_bytes(struct mw_thread *t, unsigned char *p, const void *s, size_t n);
void mw_stream_end(struct mw_thread *t, unsigned char *p);
#endif

/* ---- online mode (mw-online.c; file layout: ONLINE-FORMAT.md) ---- */
#define MW_ONLINE_MAJOR 1
#define MW_ONLINE_MINOR 0
#define MW_ONLINE_HEADER_SIZE 128
#define MW_ONLINE_SEG_NAMES 1       /* segment of records (UNIT, EXT/LIBRARY, PROGRAM) */
#define MW_ONLINE_SEG_ENTRIES 2     /* segment of table entries */
#define MW_ONLINE_FUNCTION 1        /* entry kinds: key = entry site of the innermost frame (0: none) */
#define MW_ONLINE_LIBRARY 2         /* key = library index, or one of the two below */
#define MW_ONLINE_THREAD 3          /* key = thread index, aux = OS thread id */
#define MW_ONLINE_LIB_INSTRUMENTED 0xfffffffeu /* a call at an instrumented site */
#define MW_ONLINE_LIB_UNKNOWN 0xffffffffu      /* an interposed call from no known object */
enum { MW_ONLINE_C_MALLOC, MW_ONLINE_C_CALLOC, MW_ONLINE_C_ALIGNED, MW_ONLINE_C_STRDUP, MW_ONLINE_C_REALLOC, MW_ONLINE_C_FREE };
#define MW_ONLINE_MAPS 64

struct mw_online_entry {        /* 112 bytes, in the file */
  uint32_t kind, reserved;
  uint64_t key, aux;
  int64_t net, min, max;
  uint64_t allocated, freed;
  uint64_t counts[6];           /* malloc, calloc, aligned, strdup, realloc, free */
};
struct mw_online_totals {       /* at byte 48 of the header */
  uint64_t allocations, frees, untracked_frees, failed_reallocs, allocated, freed;
  int64_t live, peak;
};
struct mw_online_slot {
  uint64_t key;
  struct mw_online_entry *e;
};
#define MW_ONLINE_CACHED 16
struct mw_online_cache_slot {
  uint64_t key;
  struct mw_online_entry *e;
};
struct mw_online_cache {        /* per thread: the entries it used last (entries never move) */
  unsigned gen;                 /* mw_online.gen + 1 when filled; else empty */
  struct mw_online_entry *thread, *library;
  uint64_t library_key;
  struct mw_online_cache_slot functions[MW_ONLINE_CACHED];
};
extern MW_THREAD_LOCAL struct mw_online_cache mw_online_tc MW_TLS;
struct mw_online {
  unsigned gen;                 /* bumped in a fork child: threads' caches are stale */
  int lock;                     /* orders every table update */
  int fd;
  unsigned char *header;
  struct mw_online_totals *totals;
  uint64_t file_end, file_size;
  unsigned char *names, *ents;  /* current segments' payloads */
  uint32_t names_cap, ents_cap;
  uint32_t *names_used, *ents_used;
  struct mw_online_slot *slots; /* private index: key -> entry */
  size_t nslots, nused, slots_len;
  unsigned nmaps;
  struct {
    void *addr;
    size_t len;
  } maps[MW_ONLINE_MAPS];
};
extern struct mw_online mw_online;
int mw_online_wanted(void);
/* mw-libs.c: the index of the loaded object holding ra (EXT/LIBRARY written on its first use), or MW_ONLINE_LIB_UNKNOWN */
uint64_t mw_caller_library(struct mw_thread *t, uintptr_t ra);

/* ---- threads (mw-threads.c) and calls (core/mw-calls.c) ---- */
int mw_thread_ready(struct mw_thread *t);
#if MW_TARGET
static inline void mw_recorder_join(struct mw_thread *t) { (void)t; } /* one thread */
#else
void mw_recorders_begin(struct mw_thread *t);
void mw_recorder_join(struct mw_thread *t);
void mw_recorder_leave(struct mw_thread *t);
#endif
int mw_thread_start(struct mw_thread *t);
void mw_thread_dtor(void *arg);
int mw_frames_grow(struct mw_thread *t);
void mw_frames_release(struct mw_thread *t);
int mw_write_enter(struct mw_thread *t, unsigned site, uintptr_t depth);
/* The encoder thread's records (mw-ring.c): format 1.4's ENTER and EXIT into p for the thread whose encoder state
 * `out` holds (its prediction table, previous depth and site, call history). */
unsigned char *mw_encode_enter(struct mw_thread *out, unsigned char *p, unsigned site, uintptr_t depth);
unsigned char *mw_encode_exit(struct mw_thread *out, unsigned char *p, int32_t delta);

/* ---- live-block index (mw-blocks.c) ---- */
struct mw_block {
  uint64_t id;
  size_t size;
};

/* The start-of-block bitmap's layout, here so that the hot paths (the linked
 * scan's test of each word, a free's take, an allocation's insert) find a
 * block's region, bit and entry inline; mw-blocks.c describes it. */
#define MW_G (2 * sizeof(void *))       /* granule: bytes per bit */
#define MW_G_SHIFT (sizeof(void *) == 8 ? 4 : 3)
#define MW_WORD_BITS (8 * sizeof(unsigned long))
#if UINTPTR_MAX > 0xffffffffu
#define MW_REGION_SHIFT 26
#define MW_ADDR_BITS 48
#else
#define MW_REGION_SHIFT 22
#define MW_ADDR_BITS 32
#endif
#define MW_REGION_GRANULES ((size_t)1 << (MW_REGION_SHIFT - MW_G_SHIFT))
#define MW_REGIONS ((size_t)1 << (MW_ADDR_BITS - MW_REGION_SHIFT))
struct mw_region {
  struct mw_region *next;       /* every region made, for mw_index_live */
  uintptr_t base;
  unsigned long bits[MW_REGION_GRANULES / MW_WORD_BITS] __attribute__((aligned(64)));
  uint64_t entries[MW_REGION_GRANULES]; /* id << MW_SIZE_BITS | requested size, or MW_SIZE_SIDE */
};
/* An entry packs a block's id (below 2^40) and requested size (below
 * MW_SIZE_SIDE) into 8 bytes; a block whose id or size does not fit keeps
 * MW_SIZE_SIDE in its entry and its full (id, size) in its stripe's hash
 * table, beside its bit. */
#define MW_SIZE_BITS 24
#define MW_SIZE_SIDE (((uint64_t)1 << MW_SIZE_BITS) - 1)
#define MW_ID_PACKED ((uint64_t)1 << (64 - MW_SIZE_BITS))
extern struct mw_region **mw_regions;  /* MW_REGIONS pointers (NULL until the first block) */
extern int mw_blocks_hashed;           /* some stripe has a hash table (blocks the bitmap cannot hold) */

/* The region holding addr, or NULL (none made yet, or above the bitmap's
 * addresses).  A region pointer is published after its mapping exists
 * (release/acquire). */
static inline struct mw_region *mw_region_find(uintptr_t addr)
{
#if MW_ADDR_BITS < 64 && UINTPTR_MAX > 0xffffffffu
  if (addr >> MW_ADDR_BITS) return NULL;
#endif
  struct mw_region **top = __atomic_load_n(&mw_regions, __ATOMIC_ACQUIRE);
  if (MW_UNLIKELY(!top)) return NULL;
  return __atomic_load_n(&top[addr >> MW_REGION_SHIFT], __ATOMIC_ACQUIRE);
}

static inline size_t mw_granule(const struct mw_region *r, uintptr_t addr)
{
  return (size_t)((addr - r->base) >> MW_G_SHIFT);
}

static inline int mw_bit(const struct mw_region *r, size_t g)
{
  return (int)((__atomic_load_n(&r->bits[g / MW_WORD_BITS], __ATOMIC_RELAXED) >> (g % MW_WORD_BITS)) & 1);
}
void mw_index_insert(uintptr_t addr, uint64_t id, size_t size);
int mw_index_take(uintptr_t addr, struct mw_block *out);
int mw_index_find(uintptr_t addr, struct mw_block *out);
int mw_index_maybe(uintptr_t addr);
/* Unlocked and inline, for the linked scan: 0 when addr is surely not a live
 * block's start (its bit is clear, and no stripe holds a hash table). */
static inline int mw_index_maybe_fast(uintptr_t addr)
{
  if (addr & (MW_G - 1)) return 0;
  struct mw_region *r = mw_region_find(addr);
  if (r && mw_bit(r, mw_granule(r, addr))) return 1;
  return MW_UNLIKELY(__atomic_load_n(&mw_blocks_hashed, __ATOMIC_RELAXED)) && mw_index_maybe(addr);
}
void mw_index_forget(uintptr_t addr, int may_wait);
int mw_index_drop(uintptr_t addr, uint64_t id);
int mw_index_copy(uintptr_t addr, struct mw_block *out, void *buf, size_t max, size_t *copied);
void mw_index_bounds(uintptr_t *lo, uintptr_t *hi);
void mw_index_lock_all(void);
void mw_index_unlock_all(void);
void mw_index_reset_child(void);
struct mw_live_block {
  uintptr_t addr;
  uint64_t id;
  size_t size;
};
size_t mw_index_live(struct mw_live_block *out, size_t max);
size_t mw_index_count(void);
size_t mw_index_read(uintptr_t addr, uint64_t id, size_t off, void *buf, size_t n);

/* ---- leak classification at exit (mw-leaks.c) ---- */
void mw_write_leaks(struct mw_thread *t);

/* ---- linked scan (mw-linked.c) ---- */
/* Scans `size` bytes at `block` for live blocks, transitively; returns the
 * count and leaves their ids in mw_link_ids(t). */
unsigned mw_link_scan(struct mw_thread *t, const void *block, size_t size, int *partial);
const uint64_t *mw_link_ids(struct mw_thread *t);
void mw_link_release(struct mw_thread *t);
void mw_write_linked(struct mw_thread *t, unsigned count, int partial);

/* ---- loaded objects of interposed callers (mw-libs.c) ---- */
#define MW_LIBS_MAX 256
#define MW_LIB_NAMES (32u * 1024u)
struct mw_libs {
  int lock;
  unsigned gen;                 /* bumped by every rebuild; 0 = never built */
  unsigned long long adds, subs; /* dl_iterate_phdr's counters at the last rebuild */
  unsigned nlibs;               /* objects ever seen; index = position (stable) */
  unsigned nranges;             /* objects loaded at the last rebuild */
  struct mw_lib {
    uintptr_t base;             /* dlpi_addr */
    unsigned name_off, name_len;
    int written;                /* LIBRARY record written */
    int exe;                    /* the executable (instrumented code) */
  } libs[MW_LIBS_MAX];
  struct mw_lib_range {
    uintptr_t lo, hi;           /* lowest PT_LOAD start, highest PT_LOAD end */
    unsigned index;
  } ranges[MW_LIBS_MAX];
  unsigned names_used;
  char names[MW_LIB_NAMES];
};
extern struct mw_libs mw_libs;
/* Writes EXT/CALLER (and EXT/LIBRARY on an object's first use) for the
 * interposed heap record just written; ra = the allocator's return address. */
void mw_write_caller(struct mw_thread *t, uintptr_t ra);
/* Most return addresses EXT/CALL_PATH holds: the frames from the interposed
 * allocator's caller out to the executable's code. */
#define MW_CALL_PATH_MAX 48

/* ---- under Valgrind (mw-valgrind.c) ---- */
void mw_valgrind_detect(void);
void mw_valgrind_quiet(int on);
/* Around reads of heap words the program may never have written (the linked
 * and leak scans): Valgrind's error reporting off for this thread, so it
 * reports nothing of ours.  Outside Valgrind a predictable branch. */
static inline void mw_quiet_begin(void)
{
  if (MW_UNLIKELY(mw_g.valgrind)) mw_valgrind_quiet(1);
}
static inline void mw_quiet_end(void)
{
  if (MW_UNLIKELY(mw_g.valgrind)) mw_valgrind_quiet(0);
}

/* One line on stderr: "cc-memwrap: " and up to five parts (NULL = none). */
void mw_say(const char *a, const char *b, const char *c, const char *d, const char *e);
/* Every environment variable the runtime reads goes through this: secure_getenv, so a setuid or setgid program (or
 * one with file capabilities) ignores them all (mw-os.c). */
const char *mw_getenv(const char *name);
/* The program runs with privileges its user lacks (AT_SECURE): it records nothing (mw-os.c). */
int mw_privileged(void);

/* ---- chunk seals (mw-seal.c) ---- */
void mw_crc_init(void);
uint32_t mw_crc32c(uint32_t crc, const unsigned char *p, size_t n);
void mw_chunk_seal(struct mw_thread *t);

/* ---- start-up (mw-init.c) ---- */
int mw_init(void);
int mw_gettid(void);

/* ---- the allocator underneath ----
 * MW_INTERPOSE (default 1): the runtime defines malloc & co. itself, so
 * allocations inside libc and uninstrumented code are recorded too, and calls
 * glibc's allocator (exported by libc.so.6) underneath.  Built with
 * -DMW_INTERPOSE=0 when something else must own malloc: a sanitizer whose
 * allocator has to see every block (an interposer in the program would hide
 * the heap from it), or the shared runtime of an instrumented library loaded
 * into a host that is not ours.  Then only the rewritten calls are recorded,
 * through the public names, and the trace header says so (flag bit 1). */
#ifndef MW_INTERPOSE
#define MW_INTERPOSE (!MW_TARGET)
#endif
#if MW_TARGET
/* A target's C library is linked statically: the driver links with --wrap for
 * its allocator (malloc & co., newlib's _malloc_r & co.), whose own entry
 * points are then __real_malloc … (runtime/target/mw-libc.c). */
#define MW_REAL(f) mw_real_##f
void *mw_real_malloc(size_t n);
void *mw_real_calloc(size_t nmemb, size_t size);
void *mw_real_realloc(void *p, size_t n);
void mw_real_free(void *p);
void *mw_real_memalign(size_t al, size_t n);
void *mw_real_valloc(size_t n);
void *mw_real_pvalloc(size_t n);
#elif MW_INTERPOSE
#define MW_REAL(f) __libc_##f
#else
#define MW_REAL(f) f
#endif
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);

#endif /* MW_INTERNAL_H */
