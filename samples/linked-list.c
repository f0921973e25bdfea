/* linked-list.c — what a free really releases.
 *
 * The example of the published design: three list nodes, each allocated in
 * turn and linked from the one before.  Freeing the middle node releases
 * its 16 bytes, but the third node is linked only from it: after that free
 * nothing points to the third node any more, and it leaks.
 *
 * Expected observations (checked by test/e2e/record.test.ts):
 *   - 3 allocations of sizeof(struct node) at lines 31, 32 and 33;
 *   - the free at line 38 releases the block from line 32, and its linked
 *     set is exactly the block from line 33;
 *   - at exit, the blocks from lines 31 and 33 are still allocated.
 */
#include <stdio.h>
#include <stdlib.h>

struct node {
  int value;
  struct node *next;
};

static struct node *make_node(int value, struct node *next) {
  struct node *n = malloc(sizeof *n);
  if (n == NULL) exit(1);
  n->value = value;
  n->next = next;
  return n;
}

int main(void) {
  struct node *data = malloc(sizeof *data);
  data->next = malloc(sizeof *data->next);
  data->next->next = malloc(sizeof *data->next->next);
  data->value = 1;
  data->next->value = 2;
  data->next->next->value = 3;
  data->next->next->next = NULL;
  free(data->next); /* the third node is orphaned here */
  data->next = make_node(4, NULL);
  printf("first=%d second=%d\n", data->value, data->next->value);
  free(data->next);
  return 0;
}

/* Report numbers, derived by hand (checked by test/e2e/report-snapshots.test.ts
 * for a gcc -O0 build run with stdout piped to a file or pipe).
 *
 * Machine-dependent inputs, marked [x86-64 glibc] below:
 *   - sizeof(struct node) = 16: int value (4) + 4 padding + a pointer (8);
 *     on a 32-bit target it would be 8.
 *   - usable size of a 16-byte malloc = 24 (glibc's smallest chunk is 32
 *     bytes, 8 of them header), of the 4096-byte block 4104: a free gives
 *     back 24 usable bytes for the 16 requested.
 *   - stdout is fully buffered when it is not a terminal, and glibc mallocs
 *     its BUFSIZ-like buffer (st_blksize, 4096 here) on the first printf.
 *     That malloc happens inside libc, so it is an interposed allocation,
 *     charged to the innermost instrumented function on the stack: main, at
 *     main's entry line 30, labelled "main (via libc/uninstrumented)".
 *     glibc never frees it (no __libc_freeres in a normal exit).
 *
 * Events, in order (every record that changes state is one event):
 *    0 thread begins            7 malloc line 23 (make_node)   +16
 *    1 enter main                8 return from make_node
 *    2 malloc line 31   +16      9 malloc in printf (stdout)  +4096
 *    3 malloc line 32   +16     10 free line 41 (make_node's)  -16
 *    4 malloc line 33   +16     11 return from main
 *    5 free line 38     -16     12 exit
 *    6 enter make_node
 *   => 13 events.  Heap requested after each: 0 0 16 32 48 32 32 48 48
 *      4144 4128 4128 4128 (the csv export, one row per event).
 *
 * report (plain):
 *   allocations 5 (lines 31, 32, 33, 23 and stdout's buffer), frees 2
 *   (lines 38 and 41); bytes requested 4 * 16 + 4096 = 4160 [x86-64 glibc],
 *   usable 4 * 24 + 4104 = 4200; Valgrind-style: 5 allocs, 2 frees,
 *   4,160 bytes allocated, in use at exit 4,128 bytes in 3 blocks.
 *   Peak heap 4144 = 3 nodes + 4096 at event 9 (the nodes from 31, 33 and
 *   make_node are live while printf allocates); usable 3 * 24 + 4104 = 4176.
 *   Peak stack at event 6 (make_node's frame on top of main's); static 0 B.
 *   Leaked (live at exit) 3 blocks: lines 31 and 33 and stdout's buffer,
 *   4128 bytes requested, 4152 usable.  5 site groups.
 *
 * --by function (innermost): 2 rows.
 *   main:      malloc 4 (31, 32, 33, stdout), free 2 (38, 41), allocated
 *              4144, freed 32, net 4112; running net 16 32 48 32 4128 4112,
 *              so min 0, max 4128.  main frees the make_node block, so it
 *              is charged to main's frees and make_node keeps its +16.
 *   make_node: malloc 1, net 16, max 16.   Sum of nets 4128 = leaked bytes.
 * --by site: 7 rows, the 5 allocation sites (+4096, +16 each) and the 2 free
 *   sites (line 38 and 41: free 1, net -16, min -16, max 0).
 * --by file: 1 row, linked-list.c: malloc 5, free 2, net 4128, max 4144.
 * --by thread: 1 row, thread 0: the same numbers as --by file.
 * --by library: 2 rows, libc.so.6 (stdout's buffer: malloc 1, net 4096) and
 *   "(instrumented code)": malloc 4, free 2, allocated 64, freed 32, net 32,
 *   max 48 (after line 33 and again after make_node).
 * --peak: heap peak 4144 at event 9, 4 blocks live: by site 4096 (stdout,
 *   share 4096/4144), 16 each for lines 23, 31 and 33; by function main 3
 *   blocks 4128, make_node 1 block 16.  Total peak (heap + stack + static) is
 *   at the same event 9: heap 4144 + main's stack frame.
 * --linked: 1 free with a linked set: the free at line 38 (event 5) of the
 *   block from line 32, whose next pointed to the block from line 33; that
 *   block is never freed, so it is orphaned: 1 orphaned block, 16 bytes.
 * --leaks: direct 2 blocks, 32 B: line 31 (data, whose only pointer was
 *   main's local, gone at exit) and line 33 (orphaned by the free at line 38);
 *   indirect 0 (the block from 31 points to make_node's node, which is
 *   freed); still reachable 1 block, 4096 B: stdout's buffer, pointed to
 *   from libc's static FILE [x86-64 glibc].
 * --temporary (within 16 events): 2 blocks of 5, 32 B: line 32 (allocated
 *   at event 3, freed at 5) and line 23 (event 7, freed at 10), each 1 of 1
 *   allocation of its site (share 100%).
 * --calls make_node: 1 call, entered at event 6, ended at event 8, allocated
 *   16, freed 0, net 16, peak 16 at event 7.
 * --interval 4: 4 intervals, events 0-3, 4-7, 8-11, 12; heap at their ends
 *   32, 48, 4128, 4128; max heap (including the value each starts with) 32,
 *   48, 4144, 4128; stack 0 at the end of 8-11 and 12 (main has returned).
 */
