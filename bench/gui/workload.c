/* The viewer benchmark's program: a given number of events (default five
 * million: calls, returns, allocations, frees) in waves, so that the chart has
 * a shape at every zoom level. Usage: workload [events].
 * Each round records 6 events: ENTER and EXIT of keep and of make_item, one
 * malloc, and (sooner or later) one free. Blocks live in a static ring, so the
 * frees link nothing and the trace stays as compact as a typical program's. */
#include <stdio.h>
#include <stdlib.h>

#define RING 65536

static char *ring[RING];
static long kept;
static long released;

static char *make_item(long n) {
    char *p = malloc(32 + (size_t)(n % 7) * 16);
    p[0] = (char)n;
    return p;
}

static void keep(long n) {
    ring[kept++ % RING] = make_item(n);
}

static void release(long count) {
    while (released < kept && count-- > 0) free(ring[released++ % RING]);
}

static long depth(int n) {
    volatile char frame[64];
    frame[0] = (char)n;
    if (n == 0) return frame[0];
    return depth(n - 1) + frame[0];
}

int main(int argc, char **argv) {
    long target = argc > 1 ? atol(argv[1]) : 5000000;
    long rounds = target / 6;
    long sum = 0;
    for (long i = 0; i < rounds; i++) {
        keep(i);
        /* waves: keep up to ~60,000 blocks, then let most of them go */
        if (kept - released > 20000 + (i / 100000 % 4) * 13000) release(18000);
        if (i % 5000 == 0) sum += depth((int)(i / 5000 % 40));
    }
    release(kept);
    printf("%ld\n", sum);
    return 0;
}
