/* mw-start.c — the runtime's life cycle on a bare-metal target (a Cortex-M
 * under its vendor's C library): the shared state, start-up (a priority-101
 * constructor, or lazily from the first entry point), the one thread's
 * stack base and shadow stack, PROGRAM, and the end of the run (the C
 * library's _exit, wrapped by the driver's --wrap=_exit).
 *
 * No operating system: one thread and its interrupt handlers, which run on
 * the same stack and are recorded at their real depth.  An interrupt that
 * arrives while the runtime is recording finds `busy` set and is counted as
 * LOST, as a signal handler is on a host.  Everything sized by the driver's
 * --mw- options lives in the object it compiles at each link
 * (instrumenter/firmware.ts); mw-sizes.c's weak defaults serve a link
 * made without it.
 */
#include <string.h>

#include "../mw-internal.h"

/* ---- the shared state ---- */

struct mw_thread mw_t;
struct mw_global mw_g; /* in .bss: an initialiser would cost its bytes in flash too */
uint64_t mw_seq_counter;
struct mw_sink mw_sink;

int mw_gettid(void) { return 0; }
uint64_t mw_now_mono(void) { return 0; }

void mw_lock_slow(int *l)
{
  while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE)) {
  }
}

/* ---- the thread ---- */

/* The stack's top: the initial stack pointer, the vector table's first word
 * (the table is at VTOR, or at 0 on a core without one, which reads as 0).
 * A start-up code that moved the stack elsewhere (newlib's rdimon crt0 asks
 * the debugger where to put it) leaves the current stack pointer above it, or
 * far below: the depth then counts from here, as a host does for a thread of
 * unknown base. */
static void mw_stack_setup(struct mw_thread *t)
{
  uintptr_t here = (uintptr_t)__builtin_frame_address(0);
  const volatile uint32_t *vtor = (const volatile uint32_t *)0xE000ED08u;
  uintptr_t table = (uintptr_t)*vtor;
  uintptr_t top = (uintptr_t) * (const volatile uint32_t *)table;
  const uintptr_t most = (uintptr_t)1 << 20;
  if (top <= here || top - here > 64u * 1024u) top = here + 256;
  t->stack_base = top;
  t->depth_cap = most;
}

int mw_frames_grow(struct mw_thread *t)
{
  if (t->frames) return 0; /* a fixed array: full is full (the frame is LOST) */
  memset(mw_frame_slots, 0, sizeof mw_frame_slots[0]);
  t->frames = mw_frame_slots + 1; /* frames[-1] is the sentinel of depth 0 */
  t->cap = mw_frame_cap;
  return 1;
}

void mw_frames_release(struct mw_thread *t) { (void)t; }

/* The one thread's chunk (the buffer) and THREAD_BEGIN, the first time. */
int mw_thread_start(struct mw_thread *t)
{
  if (t->state != MW_T_NEW) return mw_chunk_next(t, 256, 0);
  if (!t->stack_base) mw_stack_setup(t);
  t->index = 0;
  t->seq = 0;
  t->last_addr_inv = ~(uintptr_t)0;
  if (!mw_chunk_next(t, 256, 0)) return 0;
  t->state = MW_T_LIVE;
  mw_write_thread_begin(t);
  return 1;
}

/* Makes sure the thread can record; 0 = run unrecorded.  Unlike a host's,
 * a target's recorder starts only in its constructor: code that runs before
 * the constructors (a reset handler copying .data and clearing .bss) runs
 * before the runtime's own state is set up, and is not recorded. */
int mw_thread_ready(struct mw_thread *t)
{
  if (t->busy || mw_state() != MW_ACTIVE) return 0;
  if (t->end) return 1;
  t->busy = MW_BUSY_INTERNAL;
  int ok = mw_thread_start(t);
  t->busy = 0;
  return ok;
}

/* ---- start-up ---- */

/* PROGRAM: the firmware's ELF file and the directory it was linked in, as
 * the driver wrote them into the link's object: the report reads the
 * firmware's memory regions and symbols from that file. */
void mw_write_program(struct mw_thread *t)
{
  size_t ne = strlen(mw_program_path), nc = strlen(mw_program_cwd);
  if (!mw_stream_begin(t, 1 + mw_len_u(ne) + ne + mw_len_u(nc) + nc)) return;
  unsigned char *p = t->cur;
  *p++ = MW_REC_PROGRAM;
  p = mw_put_u(mw_stream_room(t, p, 10), ne);
  p = mw_stream_bytes(t, p, mw_program_path, ne);
  p = mw_put_u(mw_stream_room(t, p, 10), nc);
  mw_stream_end(t, mw_stream_bytes(t, p, mw_program_cwd, nc));
}

static int mw_setup(struct mw_thread *t)
{
  mw_g.fd = -1;
  mw_g.page = 4096;
  mw_g.link_blocks = 16;
  mw_g.link_bytes = 16 * 1024;
  mw_g.compact_calls = 1;
  mw_g.exit_tag_limit = 15;
  mw_sink = mw_target_sink;
  if (!mw_sink.open()) return 0;
  if (!mw_thread_start(t)) return 0;
  mw_write_program(t);
  mw_write_units_and_statics(t);
  return 1;
}

/* Starts the recorder once, from the constructor; 1 = recording.  An
 * interrupt during start-up gets 0. */
int mw_init(void)
{
  struct mw_thread *t = &mw_t;
  int st = mw_state();
  if (st == MW_ACTIVE) return 1;
  if (st != MW_UNINIT) return 0;
  __atomic_store_n(&mw_g.state, MW_INITIALIZING, __ATOMIC_RELEASE);
  unsigned saved = t->busy;
  t->busy = MW_BUSY_INTERNAL;
  int ok = mw_setup(t);
  __atomic_store_n(&mw_g.state, ok ? MW_ACTIVE : MW_DISABLED, __ATOMIC_RELEASE);
  t->busy = saved;
  return ok;
}

__attribute__((constructor(101))) static void mw_ctor(void)
{
  mw_image_add(__start_mw_units, __stop_mw_units, __start_mw_statics, __stop_mw_statics);
  mw_init();
}

/* ---- the end ---- */

/* Is the processor in an exception handler (IPSR != 0)? */
static int mw_in_handler(void)
{
#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
  uint32_t ipsr;
  __asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
  return (ipsr & 0x1ffu) != 0;
#else
  return 0;
#endif
}

extern void __real__exit(int status) __attribute__((noreturn));

/* Every way out of a firmware that ends (main returning, exit, _exit) comes
 * here last, after the atexit handlers and destructors.  From an exception
 * handler (picolibc's fault handlers print the registers and call _exit) the
 * run did not end as the program meant: what was recorded is written out, with
 * no END, so the report says the firmware stopped (TRACE-FORMAT.md, How a run
 * ended). */
void __wrap__exit(int status)
{
  if (mw_in_handler())
    memwrap_flush();
  else
    mw_finish(status);
  __real__exit(status);
}
