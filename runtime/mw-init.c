/* mw-init.c — the runtime's life cycle: the shared state's definitions,
 * start-up (a priority-101 constructor, and lazily from whichever entry point
 * runs first), environment variables, normal exit (on_exit for the status,
 * a last destructor for END), fatal signals, and fork.
 */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "mw-internal.h"

/* ---- the shared state (non-static: weak copies must resolve to one) ---- */

__thread struct mw_thread mw_t MW_TLS;
struct mw_global mw_g = {.fd = -1};
struct mw_sink mw_sink; /* chosen at start-up (mw_sink_choose) */
uint64_t mw_seq_counter __attribute__((aligned(64)));

int mw_gettid(void) { return (int)syscall(SYS_gettid); }

/* A size from the environment: decimal with an optional k/K or m/M. */
static size_t mw_env_size(const char *name, size_t dflt, size_t max)
{
  const char *s = mw_getenv(name);
  if (!s || !*s) return dflt;
  size_t v = 0;
  for (; *s >= '0' && *s <= '9'; s++) {
    v = v * 10 + (size_t)(*s - '0');
    if (v > max) v = max;
  }
  if (*s == 'k' || *s == 'K') v = v > max / 1024 ? max : v * 1024;
  if (*s == 'm' || *s == 'M') v = v > max / (1024 * 1024) ? max : v * 1024 * 1024;
  return v > max ? max : v;
}

/* ---- exit ---- */

static void mw_on_exit(int status, void *arg)
{
  (void)arg;
  mw_g.exit_status = status;
  mw_g.exit_seen = 1;
  if (mw_g.dtor_seen) mw_finish(status);
}

/* _exit and _Exit skip on_exit handlers and destructors (a forked child
 * that _exits is the common case), so the trace is ended here, and then the
 * process leaves exactly as libc's _exit would.  A vfork child shares our
 * memory and our trace: it is told apart by the header's pid and leaves
 * both alone.  (exit() reaches libc's internal _exit, not this one.) */
void _exit(int status)
{
  uint32_t pid = 0;
  if (mw_g.header) memcpy(&pid, mw_g.header + 20, 4);
  if (pid == (uint32_t)getpid()) mw_finish(status);
  for (;;) syscall(SYS_exit_group, status);
}

void _Exit(int status)
{
  _exit(status);
}

/* quick_exit runs the at_quick_exit handlers and then libc's internal _exit,
 * not ours.  So the status is kept here and libc's quick_exit called; the
 * handler registered at start-up, run last, ends the trace after the
 * program's own handlers have been recorded. */
void quick_exit(int status)
{
  void *sym = dlsym(RTLD_NEXT, "quick_exit");
  void (*real)(int);
  mw_g.quick_status = status;
  mw_g.quick_seen = 1;
  if (sym) {
    memcpy(&real, &sym, sizeof real); /* ISO C has no object-to-function cast */
    real(status);
  }
  _exit(status); /* no libc quick_exit to find (a static link) */
}

static void mw_on_quick_exit(void *arg)
{
  (void)arg;
  if (mw_g.quick_seen) mw_finish(mw_g.quick_status);
}

/* at_quick_exit itself lives in libc_nonshared.a, which the weak references
 * of an embedded runtime copy (-c objects) would not pull in; what it calls
 * is in libc.so. */
int __cxa_at_quick_exit(void (*fn)(void *), void *dso);
extern void *__dso_handle __attribute__((visibility("hidden")));

/* Runs last among the program's destructors; exit() ran our on_exit
 * handler before, so the status is known (else on_exit finishes). */
__attribute__((destructor(101))) static void mw_dtor(void)
{
  mw_g.dtor_seen = 1;
  if (mw_g.exit_seen) mw_finish(mw_g.exit_status);
}

/* Static, so every embedded copy runs its own: in a shared object it passes
 * that object's sections (units, statics) to the one shared runtime. */
__attribute__((constructor(101))) static void mw_ctor(void)
{
  mw_image_add(__start_mw_units, __stop_mw_units, __start_mw_statics, __stop_mw_statics);
  if (mw_init() && mw_sink.ready) mw_sink.ready(&mw_t);
}

/* ---- fatal signals ---- */

static const int mw_fatal_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

static void mw_on_fatal(int sig, siginfo_t *si, void *ctx)
{
  int saved = errno;
  (void)ctx;
  mw_end_fatal(sig);
  errno = saved;
  /* SA_RESETHAND made the action the default again.  A fault re-executes
   * the faulting instruction on return; a sent signal is sent again. */
  if (sig == SIGABRT || !si || si->si_code <= 0) raise(sig);
}

static void mw_install_signals(void)
{
  for (size_t i = 0; i < sizeof mw_fatal_signals / sizeof mw_fatal_signals[0]; i++) {
    struct sigaction old, sa;
    if (sigaction(mw_fatal_signals[i], NULL, &old) != 0) continue;
    if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) continue; /* the program's own */
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = mw_on_fatal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_ONSTACK;
    sigaction(mw_fatal_signals[i], &sa, NULL);
  }
}

/* ---- fork ---- */

static void mw_fork_prepare(void)
{
  mw_g.fork_locked = mw_state() == MW_ACTIVE;
  if (!mw_g.fork_locked) return;
  mw_lock(&mw_g.units_lock);
  mw_lock(&mw_g.file_lock);
  mw_lock(&mw_online.lock);
  mw_index_lock_all();
}

static void mw_fork_parent(void)
{
  if (!mw_g.fork_locked) return;
  mw_index_unlock_all();
  mw_unlock(&mw_online.lock);
  mw_unlock(&mw_g.file_lock);
  mw_unlock(&mw_g.units_lock);
  mw_g.fork_locked = 0;
}

/* The child gets its own trace, made on its first record (a child that
 * only execs leaves none).  The parent's chunk is unmapped unwritten. */
static void mw_fork_child(void)
{
  struct mw_thread *t = &mw_t;
  if (!mw_g.fork_locked) return;
  mw_index_reset_child();
  mw_g.file_lock = 0;
  mw_g.units_lock = 0;
  mw_g.fork_locked = 0;
  mw_sink.drop(t);
  mw_sink.child();
  t->state = MW_T_NEW;
  t->lost = 0;
  t->chunks = 0;
  mw_g.threads = 0;
  mw_g.ended = 0;
  mw_g.exit_seen = mw_g.dtor_seen = mw_g.quick_seen = 0;
  mw_g.forked = 1;
  __atomic_store_n(&mw_g.state, MW_UNINIT, __ATOMIC_RELEASE);
}

/* ---- start-up ---- */

/* Where records go: online mode's tables (MEMWRAP_MODE=online), the program's memwrap_write, or a trace file,
 * encoded by the program's threads or, where MEMWRAP_ENCODER asks for it, by a thread of the runtime (mw-ring.c). */
static void mw_sink_choose(void)
{
  int online = mw_online_wanted();
  if (online && mw_writer_wanted()) {
    mw_say("MEMWRAP_MODE=online needs a file: the program defines memwrap_write, so a trace is recorded\n", NULL, NULL,
           NULL, NULL);
    online = 0;
  }
  mw_sink = online ? mw_online_sink : mw_writer_wanted() ? mw_writer_sink : mw_ring_wanted() ? mw_ring_sink : mw_file_sink;
}

static void mw_hooks(void)
{
  on_exit(mw_on_exit, NULL);
  __cxa_at_quick_exit(mw_on_quick_exit, __dso_handle);
  mw_g.key_ok = pthread_key_create(&mw_g.key, mw_thread_dtor) == 0;
  pthread_atfork(mw_fork_prepare, mw_fork_parent, mw_fork_child);
  mw_install_signals();
  mw_g.hooks_done = 1;
}

static int mw_setup(struct mw_thread *t)
{
  struct timespec ts;
  long page = sysconf(_SC_PAGESIZE);
  const char *off = mw_getenv("MEMWRAP_DISABLE");
  mw_g.page = page > 0 ? (size_t)page : 4096;
  if (off && *off && strcmp(off, "0") != 0) return 0;
  if (mw_privileged()) {
    /* Its trace would be created with privileges its user lacks, in a place that user chose (even the default
     * name lands in the working directory): a setuid or setgid program records nothing. */
    if (!mw_g.forked)
      mw_say("a setuid or setgid program is not recorded (its trace would be written with privileges its user lacks); ",
             "the program runs unrecorded\n", NULL, NULL, NULL);
    return 0;
  }
  mw_g.link_blocks = (unsigned)mw_env_size("MEMWRAP_LINK_BLOCKS", 16, 1u << 20);
  mw_g.link_bytes = mw_env_size("MEMWRAP_LINK_BYTES", 16 * 1024, (size_t)1 << 28);
  mw_g.call_paths = mw_env_size("MEMWRAP_CALL_PATHS", 0, 1) != 0;
  mw_g.compact_calls = mw_env_size("MEMWRAP_COMPACT_CALLS", 1, 1) != 0;
  mw_g.exit_tag_limit = mw_g.compact_calls ? 15 : 0;
  mw_g.prefault = mw_env_size("MEMWRAP_PREFAULT", 1, 1) != 0;
  mw_sink_choose();
  clock_gettime(CLOCK_REALTIME, &ts);
  mw_g.start_real = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  mw_g.start_mono = mw_now_mono();
  mw_valgrind_detect();
  mw_recorders_begin(t);
  if (!mw_sink.open()) return 0;
  if (mw_g.valgrind_heap && !mw_g.forked)
    mw_say("running under Valgrind, whose allocator replaces malloc: the trace holds the allocations made by ",
           "instrumented code, not those made inside libc or uninstrumented code\n", NULL, NULL, NULL);
  if (!mw_g.hooks_done) mw_hooks();
  if (!mw_thread_start(t)) return 0;
  mw_write_program(t);
  mw_write_rank(t);
  mw_write_units_and_statics(t);
  /* a fork child reopens the frames it inherited */
  for (unsigned i = 0; i < t->written; i++)
    mw_write_enter(t, t->frames[i].site, t->frames[i].depth);
  return 1;
}

/* Starts the recorder once; 1 = recording.  Other threads wait for the one
 * doing it; the same thread re-entering (through libc) gets 0. */
int mw_init(void)
{
  struct mw_thread *t = &mw_t;
  for (;;) {
    int st = mw_state();
    if (st == MW_ACTIVE) return 1;
    if (st == MW_DISABLED || st == MW_CLOSED) return 0;
    if (st == MW_UNINIT) {
      if (__atomic_compare_exchange_n(&mw_g.state, &st, MW_INITIALIZING, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        break;
      continue;
    }
    if (__atomic_load_n(&mw_g.init_tid, __ATOMIC_RELAXED) == mw_gettid()) return 0;
    sched_yield();
  }
  __atomic_store_n(&mw_g.init_tid, mw_gettid(), __ATOMIC_RELAXED);
  unsigned saved = t->busy;
  t->busy = MW_BUSY_INTERNAL;
  int ok = mw_setup(t);
  if (!ok && mw_sink.drop) mw_sink.drop(t); /* no sink yet when recording was turned off */
  __atomic_store_n(&mw_g.state, ok ? MW_ACTIVE : MW_DISABLED, __ATOMIC_RELEASE);
  t->busy = saved;
  return ok;
}
