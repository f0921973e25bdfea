/* mw-writer.c — the trace through a write function of the program's own
 * (memwrap_write, declared in memwrap.h) instead of a file: for targets
 * where the trace must leave through a UART, a socket or a debug probe.
 *
 * The trace is built exactly as for a file, in an anonymous memory file
 * (memfd), so chunks, threads and trimming work unchanged; when the run ends
 * (normal exit, _exit, or a fatal signal) its bytes are handed to
 * memwrap_write in order, from the header on.  The host reads those bytes as
 * an ordinary trace file.  A run killed by SIGKILL hands over nothing.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mw-internal.h"

#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC 1u
#endif

#define MW_WRITE_PIECE (64u * 1024u) /* bytes per call: a UART driver's buffer need not hold the whole trace */

/* Weak: a program that defines no memwrap_write leaves this null and gets a
 * trace file; one that defines it wins at link time over nothing at all. */
extern long memwrap_write(const void *bytes, __SIZE_TYPE__ size) __attribute__((weak));

int mw_writer_wanted(void)
{
  return memwrap_write != 0;
}

/* The memory file the trace is built in; -1 (errno set) if the kernel has none. */
int mw_writer_open(void)
{
#ifdef SYS_memfd_create
  return (int)syscall(SYS_memfd_create, "mwtrace", MFD_CLOEXEC);
#else
  errno = ENOSYS;
  return -1;
#endif
}

/* Hands bytes [0, end) of the trace to memwrap_write, in pieces, in order.
 * A call returning 0 or less (the link is gone) ends the hand-over.  Runs
 * with the thread marked busy, so that the program's function may itself be
 * instrumented or call malloc without being recorded into the trace it is
 * sending.  Only syscalls and the program's function: fit for the fatal
 * signal handler, if memwrap_write is. */
static void mw_writer_flush(int fd, uint64_t end)
{
  if (!mw_writer_wanted() || fd < 0 || end == 0) return;
  void *map = mmap(NULL, (size_t)end, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) return;
  struct mw_thread *t = &mw_t;
  unsigned saved = t->busy;
  t->busy = MW_BUSY_INTERNAL;
  const unsigned char *p = map;
  uint64_t left = end;
  while (left > 0) {
    size_t n = left < MW_WRITE_PIECE ? (size_t)left : MW_WRITE_PIECE;
    long w = memwrap_write(p, n);
    if (w <= 0) break;
    if ((uint64_t)w > n) w = (long)n; /* a function that claims more took all of it */
    p += w;
    left -= (uint64_t)w;
  }
  t->busy = saved;
  munmap(map, (size_t)end);
}

/* ---- the sink: the trace file's, in memory, handed over at the end ---- */

static int mw_writer_sink_open(void) { return mw_file_open(1); }

/* A normal end finishes the memory file as a trace file is finished; both ends then hand it over (after a fatal
 * signal, from the handler: the run dies next). */
static void mw_writer_end(struct mw_thread *t, int how, int code)
{
  mw_file_end(t, how, code);
  mw_writer_flush(mw_g.fd, mw_g.file_end);
}

const struct mw_sink mw_writer_sink = {
  .open = mw_writer_sink_open,
  .chunk = mw_file_chunk,
  .drop = mw_chunk_drop,
  .thread_end = mw_chunk_release_tail,
  .end = mw_writer_end,
  .child = mw_file_child,
};
