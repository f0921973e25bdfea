/* recursion.c — every call costs stack.
 *
 * depth(n) keeps a 256-byte buffer in its frame and calls itself n times, so
 * the stack in use grows by at least 256 bytes per level and falls back to
 * where it started when the recursion returns.
 *
 * Expected observations (checked by test/e2e/record.test.ts): for DEPTH = 50,
 * the deepest depth() frame is at least 50 * 256 bytes below the first one,
 * and after the last return the stack is back at the first frame's depth.
 */
#include <stdio.h>
#include <string.h>

#define DEPTH 50

static unsigned depth(unsigned n, const char *tag) {
  char buf[256];
  unsigned sum;
  memset(buf, (int)n, sizeof buf);
  if (n == 0) return (unsigned char)buf[0];
  sum = depth(n - 1, tag) + (unsigned char)buf[n % sizeof buf];
  return sum;
}

int main(void) {
  printf("sum=%u\n", depth(DEPTH, "r"));
  printf("again=%u\n", depth(DEPTH / 2, "r"));
  return 0;
}

/* Report numbers, derived by hand (checked by test/e2e/report-snapshots.test.ts
 * for a gcc -O0 build run with stdout piped to a file or pipe).
 *
 * Calls: depth(50) recurses down to depth(0): 51 frames; depth(25): 26
 * frames.  77 calls of depth in all, none of which touches the heap.
 * The only heap block is stdout's buffer: glibc mallocs 4096 bytes
 * (st_blksize of a pipe/file) [x86-64 glibc] inside the first printf, which
 * runs after depth(50) has returned (the argument is evaluated first).  It
 * is charged to main ("main (via libc/uninstrumented)", at main's line 25),
 * never freed, and still reachable from libc's static FILE at exit.
 *
 * Events: 0 thread begins, 1 enter main, 2..52 enter depth(50..0),
 * 53..103 the 51 returns, 104 malloc of stdout's buffer, 105..130 enter
 * depth(25..0), 131..156 the 26 returns, 157 return from main, 158 exit:
 * 159 events.
 *
 * report (plain): 1 allocation, 0 frees, 4096 bytes requested (4104 usable);
 *   peak heap 4096 at event 104; leaked (live at exit) 1 block, 4096 B.
 *   Peak stack at event 52, the entry of depth(0): main's frame plus 51
 *   depth() frames.  Each depth() frame holds buf (256), the spilled n, tag
 *   and sum (4 + 8 + 4), the saved frame pointer and the return address
 *   (8 + 8): at least 288 bytes per level at -O0 on x86-64, the same at
 *   every level; the exact size (gcc version, instrumentation) is only in
 *   the snapshot.  After each recursion returns, the stack is back at main's
 *   depth.
 * --by function / site / file / thread: 1 row each: main / the interposed
 *   site / recursion.c / thread 0: malloc 1, free 0, net 4096, max 4096.
 * --by library: 1 row, libc.so.6: malloc 1, net 4096.
 * --peak: heap peak 4096 at event 104, 1 block (stdout's buffer, share 1),
 *   stack then main's frame only; total peak at event 52 (the deepest
 *   frame), with no heap block live: heap 0, 0 blocks.
 * --linked: no frees, so 0 rows.
 * --leaks: direct 0, indirect 0, still reachable 1 block, 4096 B.
 * --temporary: 0 blocks of 1 allocation.
 * --calls depth: 77 calls; the n-th call of the first recursion (n = 1..51)
 *   is entered at event n + 1 and nests n - 1 deep; the first call ends at
 *   event 103; the first call of the second recursion is entered at event
 *   105 and ends at 156.  Every call: allocated 0, freed 0, net 0, peak 0.
 * --interval 4: ceil(159 / 4) = 40 intervals; heap 0 at the end of the
 *   first 26 (events 0..103), 4096 from the interval 104-107 on.
 */
