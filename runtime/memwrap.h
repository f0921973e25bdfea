/* memwrap.h — the recording API that instrumented C code calls.
 *
 * cc-memwrap force-includes this header (-include) when it preprocesses a C
 * source, and the rewriter (instrumenter/) inserts calls to the functions
 * below.  Everything here must stay valid C89 and warning-free under
 * -Wall -Wextra -pedantic -Wmissing-prototypes -Wconversion, because real
 * projects build with -Werror: no <stddef.h> (we use __SIZE_TYPE__), no
 * long long, no // comments, only GNU attributes that -pedantic accepts.
 *
 * Sites.  The rewriter knows every file, line and function at compile time,
 * so each translation unit carries a table of its sites (function entries,
 * exits, returns, allocation calls, static objects) and calls pass a small
 * local index.  The rewriter defines the table as `static struct __mw_unit
 * __mw_u` just before the unit's first instrumented function (inline, so no
 * line moves) and puts a pointer to it in the `mw_units` section, so the
 * runtime finds every unit at start-up, gives it a global base id and writes
 * the table into the trace.  A unit the rewriter left alone defines nothing.
 * Global site id = unit base + local index; id 0 means "no instrumented
 * site" (allocations seen only through the interposed allocator).
 */
#ifndef CC_MEMWRAP_H
#define CC_MEMWRAP_H 1

/* Site kinds.  The allocation kinds double as the "function" code of
 * allocations recorded through the interposed allocator. */
#define MW_SITE_ENTRY 1         /* function body entry; name = function */
#define MW_SITE_FALLOFF 2       /* closing brace of a function body */
#define MW_SITE_RETURN 3        /* a return statement */
#define MW_SITE_MALLOC 4
#define MW_SITE_CALLOC 5
#define MW_SITE_REALLOC 6
#define MW_SITE_REALLOCARRAY 7
#define MW_SITE_FREE 8
#define MW_SITE_ALIGNED_ALLOC 9
#define MW_SITE_POSIX_MEMALIGN 10
#define MW_SITE_MEMALIGN 11
#define MW_SITE_VALLOC 12
#define MW_SITE_STRDUP 13
#define MW_SITE_STRNDUP 14
#define MW_SITE_PVALLOC 15
#define MW_SITE_STATIC 16       /* a file-scope or static local object */
#define MW_SITE_BRANCH 17       /* an if, switch case, ?:, && or || (with
                                   --mw-branches); name = its source text */
#define MW_SITE_CALL 18         /* a call of a named function; func = caller,
                                   name = callee; never recorded */
#define MW_SITE_LOCAL 19        /* an automatic object of a function body;
                                   name = its declaration ("char buf[128]");
                                   never recorded */

struct __mw_site {
  unsigned kind;
  unsigned line;
  const char *file;             /* the user's file, from the linemarkers */
  const char *func;             /* enclosing function, "" at file scope */
  const char *name;             /* function / object / allocator name */
};

struct __mw_unit {
  unsigned base;                /* first global site id, set by the runtime */
  unsigned nsites;
  const struct __mw_site *sites;
};

/* One per instrumented function call; lives in the caller's frame and is
 * closed by the cleanup attribute on every way out of the body. */
struct __mw_frame {
  unsigned site;                /* global id of the exit site taken */
  unsigned depth;               /* shadow-stack depth of this frame */
};

/* A static object: address and sizeof, placed in section `mw_statics`. */
struct __mw_static_ref {
  struct __mw_unit *unit;
  unsigned site;                /* local index of its MW_SITE_STATIC site */
  const volatile void *addr;    /* volatile: takes any object's address */
  __SIZE_TYPE__ size;
};

/* Out of line: the entry and exit of programs rewritten before entry and
 * exit were inline (kept so that their objects still link), and the slow
 * paths of the inline ones below.  __mw_enter_at takes the stack address the
 * caller's depth is measured at. */
struct __mw_frame __mw_enter(struct __mw_unit *u, unsigned entry_site,
                             unsigned exit_site);
struct __mw_frame __mw_enter_at(struct __mw_unit *u, unsigned entry_site,
                                unsigned exit_site, __UINTPTR_TYPE__ sp);
void __mw_leave(struct __mw_frame *f);
void __mw_time_tick(void);

/* The recorder's per-thread state, one initial-exec TLS object shared by the
 * runtime and the inline entry and exit below.  The runtime owns every
 * field; instrumented code only runs the common path of __mw_enter_fast and
 * __mw_leave_fast on the first ones.  Its layout is part of the runtime's
 * interface with objects built by the same cc-memwrap (runtime/README.md). */
struct __mw_frame_slot {
  __UINTPTR_TYPE__ depth;       /* stack bytes in use at the entry */
  unsigned site;                /* global entry site */
};

struct __mw_thread {
  unsigned char *cur;           /* next byte of the current chunk's payload */
  unsigned char *end;           /* end of the payload; NULL = no chunk */
  unsigned char *payload;
  unsigned *used;               /* the chunk header's `used` field */
  unsigned busy;                /* 1: a record is being made (see below) */
  unsigned lost;                /* records dropped by re-entry, not yet reported */
  unsigned tick;                /* records left before the next TIME */
  unsigned top;                 /* open frames */
  unsigned cap;                 /* frame slots mapped */
  struct __mw_frame_slot *frames; /* frames[-1] is a sentinel of depth 0 */
  __UINTPTR_TYPE__ stack_base;
  __UINTPTR_TYPE__ depth_cap;   /* depths at or past this are another stack */
  __UINTPTR_TYPE__ last_depth;
  /* the runtime's alone from here on */
  __UINTPTR_TYPE__ last_addr_inv; /* ~address of the last block written: a sanitizer's leak checker scanning
                                 * thread-local memory must not take it for a pointer to that block */
  unsigned last_branch;         /* site of the thread's previous BRANCH */
  __extension__ __UINT64_TYPE__ seq;
  __extension__ __UINT64_TYPE__ last_time; /* CLOCK_MONOTONIC ns of the last TIME */
  __extension__ __UINT64_TYPE__ chunk_off; /* file offset of the current chunk */
  void *chunk_map;
  __SIZE_TYPE__ chunk_map_len;
  void *frames_map;
  __SIZE_TYPE__ frames_map_len;
  void *scan_map;               /* linked-scan scratch (mw-linked.c) */
  __SIZE_TYPE__ scan_map_len;
  unsigned scan_gen;
  unsigned index;               /* thread index in chunk headers */
  unsigned chunks;              /* chunks this thread has had */
  unsigned char state;          /* MW_T_* */
  unsigned char dtor_rounds;
  __UINTPTR_TYPE__ lib_lo, lib_hi; /* last loaded object a caller was found in (mw-libs.c) */
  unsigned lib_index;
  unsigned lib_gen;             /* mw_libs.gen when cached; 0 = nothing cached */
  unsigned chunk_prepared;      /* 1 + the prepared mapping the chunk is in; 0 = its own mapping */
};

extern __thread struct __mw_thread __mw_t __attribute__((tls_model("initial-exec")));

/* Entry and exit inline (what the rewriter emits): the common path claims
 * `busy`, writes ENTER or EXIT into the thread's chunk, pushes or pops the
 * shadow stack and commits the chunk's `used` count: stores to the
 * thread's own memory, no call, no atomic instruction.  Everything else —
 * the thread's first record, a unit without its base yet, a chunk too full,
 * a shadow stack to grow, an entry shallower than the top frame (a longjmp
 * the rewrite did not see) or on another stack (sigaltstack), a signal
 * handler that re-entered the recorder (LOST), a frame left out of order —
 * goes to __mw_enter_at / __mw_leave, which do what they always did.  The
 * depth is measured as __mw_enter measures it: from the instrumented
 * function's stack pointer, less what a call would push (return address and
 * saved frame pointer), so that depth differences are the compiler's frame
 * sizes (`report --stack`). */
#if defined(__x86_64__)
#define __MW_SP "rsp"
#elif defined(__i386__)
#define __MW_SP "esp"
#elif defined(__arm__) || defined(__aarch64__)
#define __MW_SP "sp"
#endif

#ifdef __MW_SP
/* The stack pointer, as a global register variable (the form gcc and clang
 * both read the stack pointer in; a local one would be named by gcc's
 * -Wclobbered in functions that call setjmp). */
__extension__ register __UINTPTR_TYPE__ __mw_sp __asm__(__MW_SP);

static __inline__ __attribute__((__always_inline__, __unused__)) struct __mw_frame
__mw_enter_fast(struct __mw_unit *u, unsigned entry_site, unsigned exit_site)
{
  struct __mw_thread *t = &__mw_t;
  struct __mw_frame f;
  __UINTPTR_TYPE__ sp, d, z;
  unsigned base = __atomic_load_n(&u->base, __ATOMIC_RELAXED), top, site, v;
  unsigned char *p;
  sp = __mw_sp - 2 * sizeof(void *);
  if (__builtin_expect((t->busy | t->lost) != 0u || base == 0u, 0))
    return __mw_enter_at(u, entry_site, exit_site, sp);
  t->busy = 1u;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  top = t->top;
  p = t->cur;
  d = t->stack_base - sp;
  if (__builtin_expect(top >= t->cap || t->end - p < 16 ||
                       d < t->frames[(__PTRDIFF_TYPE__)top - 1].depth || d >= t->depth_cap, 0)) {
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->busy = 0u;
    return __mw_enter_at(u, entry_site, exit_site, sp);
  }
  site = base + entry_site;
  *p++ = 4u; /* ENTER, u site, s depth - previous depth */
  for (v = site; v >= 0x80u; v >>= 7) *p++ = (unsigned char)(v | 0x80u);
  *p++ = (unsigned char)v;
  z = (d - t->last_depth) << 1;
  if ((__INTPTR_TYPE__)(d - t->last_depth) < 0) z = ~z;
  for (; z >= 0x80u; z >>= 7) *p++ = (unsigned char)(z | 0x80u);
  *p++ = (unsigned char)z;
  t->last_depth = d;
  t->frames[top].depth = d;
  t->frames[top].site = site;
  t->top = top + 1u;
  t->cur = p;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  *t->used = (unsigned)(p - t->payload);
  if (__builtin_expect(--t->tick == 0u, 0)) __mw_time_tick();
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  t->busy = 0u;
  f.site = base + exit_site;
  f.depth = top;
  return f;
}

static __inline__ __attribute__((__always_inline__, __unused__)) void __mw_leave_fast(struct __mw_frame *f)
{
  struct __mw_thread *t = &__mw_t;
  unsigned d = f->depth, z;
  unsigned char *p;
  if (__builtin_expect((t->busy | t->lost) != 0u, 0)) {
    __mw_leave(f);
    return;
  }
  t->busy = 1u;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  p = t->cur;
  if (__builtin_expect(d + 1u != t->top || t->end - p < 8, 0)) {
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->busy = 0u;
    __mw_leave(f);
    return;
  }
  z = (f->site - t->frames[d].site) << 1;
  if ((f->site - t->frames[d].site) & 0x80000000u) z = ~z;
  *p++ = 5u; /* EXIT, s exit site - entry site */
  for (; z >= 0x80u; z >>= 7) *p++ = (unsigned char)(z | 0x80u);
  *p++ = (unsigned char)z;
  t->top = d;
  t->cur = p;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  *t->used = (unsigned)(p - t->payload);
  if (__builtin_expect(--t->tick == 0u, 0)) __mw_time_tick();
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  t->busy = 0u;
}
#else
/* A target whose stack pointer the header does not know: the calls. */
#define __mw_enter_fast __mw_enter
#define __mw_leave_fast __mw_leave
#endif
/* Wraps every setjmp-family call: `__mw_resume(&__mw_f, setjmp(env))`.
 * When setjmp returns through a longjmp, the frames the jump skipped are
 * closed (UNWIND) before the function goes on; returns its argument. */
int __mw_resume(struct __mw_frame *f, int setjmp_result);

void *__mw_malloc(struct __mw_unit *u, unsigned site, __SIZE_TYPE__ size);
void *__mw_calloc(struct __mw_unit *u, unsigned site, __SIZE_TYPE__ nmemb,
                  __SIZE_TYPE__ size);
void *__mw_realloc(struct __mw_unit *u, unsigned site, void *ptr,
                   __SIZE_TYPE__ size);
void *__mw_reallocarray(struct __mw_unit *u, unsigned site, void *ptr,
                        __SIZE_TYPE__ nmemb, __SIZE_TYPE__ size);
void __mw_free(struct __mw_unit *u, unsigned site, void *ptr);
void *__mw_aligned_alloc(struct __mw_unit *u, unsigned site,
                         __SIZE_TYPE__ alignment, __SIZE_TYPE__ size);
int __mw_posix_memalign(struct __mw_unit *u, unsigned site, void **memptr,
                        __SIZE_TYPE__ alignment, __SIZE_TYPE__ size);
void *__mw_memalign(struct __mw_unit *u, unsigned site,
                    __SIZE_TYPE__ alignment, __SIZE_TYPE__ size);
void *__mw_valloc(struct __mw_unit *u, unsigned site, __SIZE_TYPE__ size);
void *__mw_pvalloc(struct __mw_unit *u, unsigned site, __SIZE_TYPE__ size);
char *__mw_strdup(struct __mw_unit *u, unsigned site, const char *s);
char *__mw_strndup(struct __mw_unit *u, unsigned site, const char *s,
                   __SIZE_TYPE__ n);

/* Branch recording (cc-memwrap --mw-branches).  The rewriter wraps the
 * condition of an if, of a ?: and the left operand of && and || as
 * `__mw_branch(&__mw_u, <site>u, !!(cond))`: the runtime records the site
 * and the truth value (BRANCH) and returns it unchanged, so the condition is
 * still evaluated exactly once and the program takes the same path.  A
 * switch records the case label that control jumped to: the controlling
 * expression becomes `(__mw_sw = <switch site>u, x)` (a local of the
 * function), and each label of the switch is followed by
 * `if (__mw_sw == <switch site>u) { __mw_sw = 0u; (void)__mw_branch(&__mw_u,
 * <label site>u, 1); }`, so falling through from the previous case records
 * nothing. */
int __mw_branch(struct __mw_unit *u, unsigned site, int taken);

/* Your own trace output (optional).  Define this function in your program
 * and the trace goes through it instead of into a file: the runtime builds
 * the trace in memory and, when the program ends (exit, _exit, a fatal
 * signal), calls memwrap_write with its bytes in order, in pieces of at
 * most 64 KiB, until all are taken or a call returns 0 or less.  Return the
 * number of bytes taken.  Write them to a UART, a socket, a file; the host
 * reads the bytes as a .mwtrace file.  See runtime/README.md. */
long memwrap_write(const void *bytes, __SIZE_TYPE__ size);

#endif /* CC_MEMWRAP_H */
