/* The live-block index, checked against a brute force: a seeded random
 * workload of allocations, frees, reallocs and pointer stores (chains,
 * cycles, blocks linked from two places, self pointers, interior pointers and
 * pointers stored at unaligned offsets, which must not count), with a
 * table of its own live blocks kept by the program itself.
 *
 * Before every free (and after every realloc) it prints what LINKED must
 * hold: the blocks reachable from the ended block through aligned
 * pointer-sized words holding a live block's start address, transitively
 * (runtime/TRACE-FORMAT.md), found by scanning the words of its own blocks
 * and looking each up in its own table, not the runtime's index.
 *
 *   index-exact OPERATIONS SEED
 *
 * prints one line per ended block: "E <ordinal> <n> <ordinals…>", where the
 * ordinal of a block is the rank of the call that made it among this
 * program's successful allocations and reallocs (0, 1, 2 …), as in the
 * trace's blocks made at instrumented sites; the linked ordinals are sorted.
 * A realloc that kept its place prints "E <ordinal> -" (no LINKED: nothing
 * moved).  The last line counts what the workload did ("S …"), so the test
 * can see it built what it claims.  Run with MEMWRAP_LINK_BLOCKS and
 * MEMWRAP_LINK_BYTES high enough that no scan hits a limit. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LIVE 512
#define TABLE 4096 /* the program's own address → slot table, a power of two */

struct blk {
  unsigned char *p;
  size_t size;
  unsigned ord;
};

static struct blk live[MAX_LIVE];
static unsigned nlive, next_ord;
static uint64_t rng_state;

static uintptr_t table_key[TABLE];
static int table_slot[TABLE];

/* xorshift64*; macros, not functions, so the trace holds the workload's
 * heap calls rather than millions of calls of helpers */
#define RND() (rng_state ^= rng_state >> 12, rng_state ^= rng_state << 25, rng_state ^= rng_state >> 27, rng_state * 0x2545F4914F6CDD1Dull)
#define below(n) ((unsigned)(RND() % (n)))

/* ---- the program's own table of live block starts (open addressing) ---- */

#define HOME(a) ((size_t)(((a) >> 3) * 0x9E3779B97F4A7C15ull >> 40) & (TABLE - 1))

/* The slot holding a, or the empty one where it would go. */
#define PROBE(i, a)                                                      \
  do {                                                                   \
    i = HOME(a);                                                         \
    while (table_key[i] && table_key[i] != (a)) i = (i + 1) & (TABLE - 1); \
  } while (0)

static void table_put(uintptr_t a, int slot)
{
  size_t i;
  PROBE(i, a);
  table_key[i] = a;
  table_slot[i] = slot;
}

static void table_del(uintptr_t a)
{
  size_t i, j, k;
  PROBE(i, a);
  if (!table_key[i]) return;
  for (j = (i + 1) & (TABLE - 1); table_key[j]; j = (j + 1) & (TABLE - 1)) {
    k = HOME(table_key[j]);
    if (i <= j ? (i < k && k <= j) : (i < k || k <= j)) continue;
    table_key[i] = table_key[j];
    table_slot[i] = table_slot[j];
    i = j;
  }
  table_key[i] = 0;
}

/* ---- the brute force ---- */

static int seen[MAX_LIVE];
static unsigned seen_gen = 1, found[MAX_LIVE], nfound;

static int cmp_unsigned(const void *a, const void *b)
{
  unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
  return x < y ? -1 : x > y;
}

/* The live blocks (all but slot `gone`, already out of the table) reachable
 * from the size bytes at p; prints the line for block `ord`. */
static void expect_linked(unsigned ord, const unsigned char *p, size_t size)
{
  static int queue[MAX_LIVE];
  unsigned head = 0, tail = 0, i, k;
  const unsigned char *from = p;
  size_t words = size / sizeof(uintptr_t);
  seen_gen++;
  nfound = 0;
  for (;;) {
    for (k = 0; k < words; k++) {
      uintptr_t w;
      size_t t;
      int s;
      memcpy(&w, from + k * sizeof w, sizeof w);
      if (!w) continue;
      PROBE(t, w);
      if (!table_key[t]) continue;
      s = table_slot[t];
      if (seen[s] == (int)seen_gen) continue;
      seen[s] = (int)seen_gen;
      queue[tail++] = s;
      found[nfound++] = live[s].ord;
    }
    if (head == tail) break;
    i = (unsigned)queue[head++];
    from = live[i].p;
    words = live[i].size / sizeof(uintptr_t);
  }
  qsort(found, nfound, sizeof found[0], cmp_unsigned);
  printf("E %u %u", ord, nfound);
  for (i = 0; i < nfound; i++) printf(" %u", found[i]);
  printf("\n");
}

/* ---- the workload ---- */

static unsigned long n_interior, n_unaligned, n_self, n_two_places, n_cycles, n_chains, n_reallocs, n_moved, n_aligned;

static void fill(unsigned char *p, size_t size)
{
  size_t i;
  uint64_t r = 0;
  /* small numbers, never a heap address */
  for (i = 0; i < size; i++) {
    if (i % 8 == 0) r = RND();
    p[i] = (unsigned char)(r >> (i % 8 * 8) & 0x3f);
  }
}

static void add(unsigned char *p, size_t size)
{
  live[nlive].p = p;
  live[nlive].size = size;
  live[nlive].ord = next_ord++;
  table_put((uintptr_t)p, (int)nlive);
  nlive++;
}

static void forget(unsigned s)
{
  table_del((uintptr_t)live[s].p);
  nlive--;
  if (s != nlive) {
    live[s] = live[nlive];
    table_put((uintptr_t)live[s].p, (int)s);
  }
}

static size_t random_size(void)
{
  unsigned r = below(16);
  if (r == 0) return 0;
  if (r < 12) return 1 + below(120);
  return 1 + below(600);
}

static void allocate(void)
{
  size_t size = random_size();
  unsigned char *p;
  unsigned how = below(8);
  if (how == 0) {
    p = calloc(1, size);
  } else if (how == 1) {
    size_t al = (size_t)32 << below(3);
    p = aligned_alloc(al, (size + al - 1) / al * al);
    size = (size + al - 1) / al * al;
    n_aligned++;
  } else if (how == 2) {
    void *q = NULL;
    if (posix_memalign(&q, 64, size) != 0) q = NULL;
    p = q;
    n_aligned++;
  } else {
    p = malloc(size);
  }
  if (!p) abort();
  fill(p, size);
  add(p, size);
}

static void free_one(void)
{
  unsigned s = below(nlive);
  unsigned char *p = live[s].p;
  size_t size = live[s].size;
  unsigned ord = live[s].ord;
  forget(s);
  expect_linked(ord, p, size);
  free(p);
}

static void reallocate(void)
{
  unsigned s = below(nlive);
  unsigned char *p = live[s].p, *r;
  size_t size = live[s].size, n = 1 + below(400);
  unsigned ord = live[s].ord;
  forget(s);
  r = realloc(p, n);
  if (!r) abort();
  n_reallocs++;
  if (r != p) {
    /* the runtime scans the moved contents in their new place, before the
     * new block joins the index */
    n_moved++;
    expect_linked(ord, r, size < n ? size : n);
  } else {
    printf("E %u -\n", ord);
  }
  if (n > size) fill(r + size, n - size);
  add(r, n);
}

/* Stores v at word k of block s. */
static void store(unsigned s, size_t k, uintptr_t v) { memcpy(live[s].p + k * sizeof v, &v, sizeof v); }

static size_t words_of(unsigned s) { return live[s].size / sizeof(uintptr_t); }

/* A random block with at least `w` words, or -1. */
static int holder(size_t w)
{
  unsigned tries;
  for (tries = 0; tries < 8; tries++) {
    unsigned s = below(nlive);
    if (words_of(s) >= w) return (int)s;
  }
  return -1;
}

static void pointer_store(void)
{
  int a = holder(1), b;
  unsigned kind = below(16);
  if (a < 0) return;
  b = (int)below(nlive);
  if (kind < 9) {
    /* a plain link: chains and, with later stores, cycles and shared targets */
    store((unsigned)a, below((unsigned)words_of((unsigned)a)), (uintptr_t)live[b].p);
  } else if (kind < 11) {
    /* an interior pointer, word- or granule-aligned, never the start */
    size_t k, off;
    if (live[b].size < 2) return;
    k = below((unsigned)words_of((unsigned)a));
    off = 8 * (1 + below((unsigned)(live[b].size - 1) / 8 + 1));
    store((unsigned)a, k, (uintptr_t)live[b].p + off);
    n_interior++;
  } else if (kind == 11) {
    /* a start address at an unaligned offset: no aligned word holds it */
    uintptr_t v = (uintptr_t)live[b].p;
    if (live[a].size < sizeof v + sizeof v / 2) return;
    memcpy(live[a].p + below((unsigned)((live[a].size - sizeof v * 3 / 2) / sizeof v + 1)) * sizeof v + sizeof v / 2, &v, sizeof v);
    n_unaligned++;
  } else if (kind == 12) {
    store((unsigned)a, below((unsigned)words_of((unsigned)a)), (uintptr_t)live[a].p);
    n_self++;
  } else if (kind == 13) {
    /* b linked from two places */
    int c = holder(1);
    if (c < 0) return;
    store((unsigned)a, below((unsigned)words_of((unsigned)a)), (uintptr_t)live[b].p);
    store((unsigned)c, below((unsigned)words_of((unsigned)c)), (uintptr_t)live[b].p);
    n_two_places++;
  } else if (kind == 14) {
    /* a cycle a → c → a */
    int c = holder(1);
    if (c < 0 || c == a) return;
    store((unsigned)a, below((unsigned)words_of((unsigned)a)), (uintptr_t)live[c].p);
    store((unsigned)c, below((unsigned)words_of((unsigned)c)), (uintptr_t)live[a].p);
    n_cycles++;
  } else {
    /* a chain of three new blocks hung from a */
    unsigned char *x, *y, *z;
    if (nlive + 3 > MAX_LIVE) return;
    x = malloc(16);
    if (!x) abort();
    memset(x, 0, 16);
    add(x, 16);
    y = malloc(24);
    if (!y) abort();
    memset(y, 0, 24);
    add(y, 24);
    z = malloc(8);
    if (!z) abort();
    memset(z, 0, 8);
    add(z, 8);
    store(nlive - 3, 0, (uintptr_t)y);
    store(nlive - 2, 2, (uintptr_t)z);
    store((unsigned)a, below((unsigned)words_of((unsigned)a)), (uintptr_t)x);
    n_chains++;
  }
}

static void clear_word(void)
{
  int a = holder(1);
  if (a >= 0) store((unsigned)a, below((unsigned)words_of((unsigned)a)), 0);
}

int main(int argc, char **argv)
{
  unsigned long ops = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000, i;
  rng_state = argc > 2 ? strtoull(argv[2], NULL, 10) * 2654435761u + 1 : 1;
  for (i = 0; i < ops; i++) {
    unsigned r = below(100);
    if (nlive < 8 || (r < 30 && nlive < MAX_LIVE - 4))
      allocate();
    else if (r < 58)
      free_one();
    else if (r < 63)
      reallocate();
    else if (r < 90)
      pointer_store();
    else
      clear_word();
  }
  while (nlive) free_one();
  printf("S blocks=%u interior=%lu unaligned=%lu self=%lu two-places=%lu cycles=%lu chains=%lu reallocs=%lu moved=%lu aligned=%lu\n", next_ord,
         n_interior, n_unaligned, n_self, n_two_places, n_cycles, n_chains, n_reallocs, n_moved, n_aligned);
  return 0;
}
