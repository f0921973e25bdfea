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
#define MW_SITE_UNCALLED 20     /* a function whose calls are not recorded
                                   (--mw-no-calls); func = name = the
                                   function; never recorded */
#define MW_SITE_SUMMARISED 21   /* a function whose calls are not recorded
                                   because its whole call tree is known
                                   (--mw-calls=leaves); func = the function,
                                   name = the most stack its tree takes, in
                                   decimal bytes; never recorded */
#define MW_SITE_CALLS_BOUND 22  /* a recorded function that calls summarised
                                   ones; func = the function, name = the most
                                   stack those calls add to its entry depth,
                                   in decimal bytes; never recorded */
#define MW_SITE_SOURCE 23       /* a source file the unit's sites name, as
                                   it was at build time: name =
                                   "sha256:<hex>" of its bytes, func = "",
                                   line 0; never recorded */
#define MW_SITE_LIBCALL 24      /* a call of a function declared outside the
                                   user's files (libc's printf …); func =
                                   caller, name = callee; never recorded */
#define MW_SITE_PENDING_CALLS 25 /* a recorded function whose calls are
                                   written only when a record is made inside
                                   one or it reached deeper than any call
                                   recorded since the thread's last record
                                   that is not a call's
                                   (--mw-calls=leaves); func = name = the
                                   function; never recorded */

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

struct __mw_frame __mw_enter(struct __mw_unit *u, unsigned entry_site,
                             unsigned exit_site);
/* As __mw_enter, but the ENTER is written only when a record is made inside
 * the call, or at its exit when it reached deeper than any call recorded
 * since the thread's last record that is not a call's (a heap event, say;
 * --mw-calls=heap); other calls leave nothing in the trace.
 * __mw_enter_bounded: the same for a function that calls summarised ones,
 * whose frames reach their depth plus those calls' bound. */
struct __mw_frame __mw_enter_lazy(struct __mw_unit *u, unsigned entry_site,
                                  unsigned exit_site);
struct __mw_frame __mw_enter_bounded(struct __mw_unit *u, unsigned entry_site,
                                     unsigned exit_site);
void __mw_leave(struct __mw_frame *f);
/* At the start of a function whose call tree does no heap work but which no
 * caller can bound (recursive, called through a pointer or from other units;
 * measured, --mw-calls=leaves): records a call of it that returns at once, only when
 * it is deeper than any call recorded since the thread's last record that is
 * not a call's.  Returns 0. */
int __mw_probe(struct __mw_unit *u, unsigned entry_site, unsigned exit_site);
/* __mw_probe of a function that calls summarised ones (compares its depth
 * plus their bound). */
int __mw_probe_bounded(struct __mw_unit *u, unsigned entry_site,
                       unsigned exit_site);
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

/* Writes out what is recorded so far.  On a bare-metal target the records
 * wait in a buffer until it fills or the firmware ends; a firmware that never
 * returns from main calls this where the trace must be complete (before a
 * reset it asks for, in its idle loop).  On a host every record is in the
 * trace file already, and this does nothing. */
void memwrap_flush(void);

#endif /* CC_MEMWRAP_H */
