/* mw-out.c — a target's sink (mw_target_sink): the records go into one
 * static buffer, which is written out as a chunk of the trace whenever it
 * fills, at the end of the run and when the firmware calls memwrap_flush.
 * The output is the program's memwrap_write when it defines one (a UART, the
 * ITM, a RAM ring: no debugger needed), else a file on the debugger's host
 * through semihosting (QEMU, OpenOCD, J-Link), named like a host's trace.
 *
 * The bytes are the trace format a host writes (runtime/TRACE-FORMAT.md):
 * the 64-byte header, then chunks of thread 0 whose capacity is what they
 * hold.  The buffer is the chunk: its first 16 bytes are the chunk header,
 * so a flush is one write.  A record larger than the buffer (a big unit's
 * site table) is streamed: its chunk header goes out first, then its bytes
 * a buffer at a time.  What is written is never taken back, so a run that
 * ends in a reset, a fault or a lockup leaves a trace readable up to the
 * last flush.
 */
#include <string.h>

#include "../mw-internal.h"

/* Weak: a firmware that defines memwrap_write gets its trace through it. */
extern long memwrap_write(const void *bytes, __SIZE_TYPE__ size) __attribute__((weak));

/* ---- semihosting (ARM's debug-host calls: bkpt 0xab, r0 = operation, r1 = arguments) ---- */

enum { MW_SYS_OPEN = 0x01, MW_SYS_CLOSE = 0x02, MW_SYS_WRITE0 = 0x04, MW_SYS_WRITE = 0x05, MW_SYS_SEEK = 0x0a };

static int mw_semihost(int op, const void *args)
{
#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
  register int r0 __asm__("r0") = op;
  register const void *r1 __asm__("r1") = args;
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
#else
  (void)op;
  (void)args;
  return -1;
#endif
}

/* Opens a file on the debugger's host: mode 0 = "r", 5 = "wb"; the handle, or -1. */
static int mw_host_open(const char *name, int mode)
{
  uintptr_t args[3] = {(uintptr_t)name, (uintptr_t)mode, (uintptr_t)strlen(name)};
  return mw_semihost(MW_SYS_OPEN, args);
}

static void mw_host_close(int fd)
{
  uintptr_t args[1] = {(uintptr_t)fd};
  mw_semihost(MW_SYS_CLOSE, args);
}

/* The trace's name: mw_trace_stem (the firmware's name) + ".mwtrace", or with
 * -1, -2 … before ".mwtrace" when that file exists: one is never replaced. */
static int mw_host_create(void)
{
  char name[128];
  size_t n = strlen(mw_trace_stem);
  if (n > sizeof name - 24) n = sizeof name - 24;
  memcpy(name, mw_trace_stem, n);
  for (unsigned k = 0; k < 1000; k++) {
    size_t len = n;
    if (k) {
      char num[8];
      size_t d = 0;
      for (unsigned v = k; v; v /= 10) num[d++] = (char)('0' + v % 10);
      name[len++] = '-';
      while (d) name[len++] = num[--d];
    }
    memcpy(name + len, ".mwtrace", 9);
    int old = mw_host_open(name, 0);
    if (old >= 0) {
      mw_host_close(old);
      continue;
    }
    return mw_host_open(name, 5);
  }
  return -1;
}

/* Writes n bytes to the output; 0 when the output is gone. */
static int mw_emit(const void *bytes, size_t n)
{
  if (!n) return 1;
  if (memwrap_write) {
    const unsigned char *p = bytes;
    unsigned busy = mw_t.busy;
    mw_t.busy = MW_BUSY_INTERNAL; /* the program's function may be instrumented: not recorded */
    while (n) {
      long w = memwrap_write(p, n);
      if (w <= 0) break;
      if ((size_t)w > n) w = (long)n;
      p += w;
      n -= (size_t)w;
    }
    mw_t.busy = busy;
    return n == 0;
  }
  if (mw_g.fd < 0) return 0;
  uintptr_t args[3] = {(uintptr_t)mw_g.fd, (uintptr_t)bytes, (uintptr_t)n};
  return mw_semihost(MW_SYS_WRITE, args) == 0; /* the bytes not written */
}

void mw_say(const char *a, const char *b, const char *c, const char *d, const char *e)
{
  const char *parts[6] = {"cc-memwrap: ", a, b, c, d, e};
  if (memwrap_write) return; /* no debugger to print on */
  for (int i = 0; i < 6; i++)
    if (parts[i]) mw_semihost(MW_SYS_WRITE0, parts[i]);
}

/* ---- the buffer ---- */

static unsigned char *mw_payload(void) { return mw_buffer + MW_CHUNK_HEAD; }

/* The chunk header of n bytes of thread 0 (TRACE-FORMAT.md, Chunks). */
static void mw_chunk_header(unsigned char *h, uint32_t n)
{
  uint32_t zero = 0;
  memcpy(h, "MWCK", 4);
  memcpy(h + 4, &zero, 4);
  memcpy(h + 8, &n, 4);
  memcpy(h + 12, &n, 4);
}

/* Writes the records in the buffer as one chunk and empties it. */
static void mw_flush(struct mw_thread *t)
{
  uint32_t used = (uint32_t)(t->cur - mw_payload());
  if (used) {
    mw_chunk_header(mw_buffer, used);
    if (mw_emit(mw_buffer, MW_CHUNK_HEAD + used)) mw_g.file_end += MW_CHUNK_HEAD + used;
    mw_g.last_chunk++;
  }
  t->cur = mw_payload();
  *t->used = 0;
}

/* The minor version a target writes: format 1.4.  Format 1.5 seals every
 * finished chunk with a CRC (TRACE-FORMAT.md, Chunk seals), which a target's
 * flushes do not write yet: its traces say 1.4, under whose rules unsealed
 * chunks are whole, whatever minor a host's runtime writes. */
#define MW_TARGET_FORMAT_MINOR 4

/* The header, written first: pid, parent and start time unknown (0). */
static int mw_target_open(void)
{
  unsigned char h[MW_HEADER_SIZE];
  uint16_t major = MW_FORMAT_MAJOR, minor = MW_TARGET_FORMAT_MINOR, hsize = MW_HEADER_SIZE;
  uint32_t bom = 0x01020304u;
  if (!memwrap_write && (mw_g.fd = mw_host_create()) < 0) {
    mw_say("cannot create the trace file on the debugger's host; the firmware runs unrecorded\n", NULL, NULL, NULL,
           NULL);
    return 0;
  }
  memset(h, 0, sizeof h);
  memcpy(h, "MWTRACE", 8);
  memcpy(h + 8, &major, 2);
  memcpy(h + 10, &minor, 2);
  memcpy(h + 12, &bom, 4);
  h[16] = (unsigned char)sizeof(void *);
  memcpy(h + 18, &hsize, 2);
  if (!mw_emit(h, sizeof h)) return 0;
  mw_g.file_end = MW_HEADER_SIZE;
  return 1;
}

/* The buffer is the thread's one chunk: a new chunk is the buffer written out and emptied. */
static int mw_target_chunk(struct mw_thread *t, size_t need, int nonblocking)
{
  (void)nonblocking;
  int st = mw_state();
  if ((st != MW_ACTIVE && st != MW_INITIALIZING) || need > mw_buffer_bytes) return 0;
  if (t->end) {
    mw_flush(t);
    return 1;
  }
  t->payload = mw_payload();
  t->used = (uint32_t *)(void *)(mw_buffer + 12);
  t->cur = t->payload;
  *t->used = 0;
  t->end = t->payload + mw_buffer_bytes;
  return 1;
}

static void mw_target_drop(struct mw_thread *t)
{
  t->end = NULL;
  t->cur = t->payload = NULL;
  t->used = NULL;
}

static void mw_target_thread_end(struct mw_thread *t) { (void)t; }

/* A normal end, END in the buffer: written out; on the host's file the
 * header's complete flag set (a stream cannot be gone back over: a firmware
 * writing through memwrap_write leaves it clear, and END alone says the run
 * ended). */
static void mw_target_end(struct mw_thread *t, int how, int code)
{
  (void)how;
  (void)code;
  mw_flush(t);
  if (!memwrap_write && mw_g.fd >= 0) {
    uintptr_t seek[2] = {(uintptr_t)mw_g.fd, 17};
    unsigned char complete = 1;
    if (mw_semihost(MW_SYS_SEEK, seek) == 0) mw_emit(&complete, 1);
    mw_host_close(mw_g.fd);
    mw_g.fd = -1;
  }
  __atomic_store_n(&mw_g.state, MW_CLOSED, __ATOMIC_RELEASE);
  mw_target_drop(t);
}

const struct mw_sink mw_target_sink = {
  .open = mw_target_open,
  .chunk = mw_target_chunk,
  .drop = mw_target_drop,
  .thread_end = mw_target_thread_end,
  .end = mw_target_end,
};

/* Writes out what is recorded so far (memwrap.h): a firmware that never
 * returns from main calls it where losing the buffer would hurt. */
void memwrap_flush(void)
{
  struct mw_thread *t = &mw_t;
  if (mw_state() != MW_ACTIVE || t->busy || !t->end) return;
  t->busy = MW_BUSY_INTERNAL;
  mw_flush(t);
  t->busy = 0;
}

/* ---- records larger than the buffer ---- */

/* Room for a record of exactly `size` bytes, from t->cur: in the buffer when
 * it fits (written out first if it is too full), else streamed: the buffer
 * is written out, then a chunk header for the record alone, and
 * mw_stream_room writes the record's bytes out a buffer at a time.  0: no
 * room (recording is off). */
int mw_stream_begin(struct mw_thread *t, size_t size)
{
  if (!t->end) return 0;
  if (size <= (size_t)(t->end - t->cur)) return 1;
  mw_flush(t);
  if (size <= mw_buffer_bytes) return 1;
  unsigned char h[MW_CHUNK_HEAD];
  mw_chunk_header(h, (uint32_t)size);
  if (!mw_emit(h, sizeof h)) return 0;
  mw_g.file_end += MW_CHUNK_HEAD;
  t->streaming = 1;
  return 1;
}

/* Room for n more bytes (n <= 16) at p; when streaming, the bytes before p go out first.  Returns where to write. */
unsigned char *mw_stream_room(struct mw_thread *t, unsigned char *p, size_t n)
{
  if (!t->streaming || (size_t)(t->end - p) >= n) return p;
  mw_emit(mw_payload(), (size_t)(p - mw_payload()));
  mw_g.file_end += (uint64_t)(p - mw_payload());
  return mw_payload();
}

/* n bytes of s at p, a buffer at a time when streaming. */
unsigned char *mw_stream_bytes(struct mw_thread *t, unsigned char *p, const void *s, size_t n)
{
  const unsigned char *b = s;
  while (n) {
    p = mw_stream_room(t, p, 1);
    size_t k = (size_t)(t->end - p) < n ? (size_t)(t->end - p) : n;
    memcpy(p, b, k);
    p += k;
    b += k;
    n -= k;
  }
  return p;
}

/* The record ends at p: committed to the buffer, or (streamed) its last bytes written out. */
void mw_stream_end(struct mw_thread *t, unsigned char *p)
{
  if (!t->streaming) {
    mw_commit(t, p);
    return;
  }
  mw_emit(mw_payload(), (size_t)(p - mw_payload()));
  mw_g.file_end += (uint64_t)(p - mw_payload());
  t->streaming = 0;
  t->cur = mw_payload();
  *t->used = 0;
}
