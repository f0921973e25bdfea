/* Blocks whose size does not fit the live-block index's packed entry (16 MiB
 * and more: runtime/mw-blocks.c keeps them in the bitmap with a side entry
 * in the stripe's hash table), linked from and to small blocks, grown into
 * by realloc, freed in several orders, leaked (directly, and indirectly
 * through another leaked block) and kept reachable from a static.  test/e2e/index-side.test.ts checks every LINKED set,
 * the leak classes and online mode's freed bytes against what this program
 * says it did.  Run with MEMWRAP_LINK_BYTES above 100 MiB. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB ((size_t)1 << 20)

static void **kept; /* a static root: what it points to is still reachable */

/* In a function of its own, so that no register or stack slot of main still
 * holds the leaked block's address at exit. */
static __attribute__((noinline)) void make_leak(void)
{
  void **leaked = malloc(18 * MIB);          /* 7: a direct leak, points to 8 */
  void **inner = malloc(16 * MIB);           /* 8: an indirect leak */
  if (!leaked || !inner) exit(1);
  memset(leaked, 0, 18 * MIB);
  leaked[3] = inner;
}

int main(void)
{
  /* ordinals (rank among the allocations below) in comments */
  void **big1 = malloc(20 * MIB);            /* 0 */
  void **small1 = malloc(32);                /* 1 */
  void **small2 = malloc(48);                /* 2 */
  void **holder = malloc(64);                /* 3 */
  void **big2 = malloc(17 * MIB);            /* 4 */
  char *grow = malloc(16);                   /* 5, realloc'd into 6 */
  if (!big1 || !small1 || !small2 || !holder || !big2 || !grow) return 1;
  memset(big1, 0, 20 * MIB);
  memset(big2, 0, 17 * MIB);
  memset(small1, 0, 32);
  memset(small2, 0, 48);
  memset(holder, 0, 64);
  big1[0] = small1;
  big1[(20 * MIB) / sizeof(void *) - 1] = small2; /* the last word */
  holder[0] = big1;
  big2[5] = big1;
  strcpy(grow, "grow");
  void **grown = realloc(grow, 24 * MIB);   /* 6: moved (a new mapping) */
  if (!grown) return 1;
  memset((char *)grown + 16, 0, 24 * MIB - 16);
  grown[1] = big2;
  free(holder);   /* E 3: 0 1 2 */
  small1[0] = small2;
  free(small1);   /* E 1: 2 */
  free(big1);     /* E 0: 2 (small1 is gone) */
  make_leak();
  kept = malloc(17 * MIB);                   /* 9: still reachable (kept) */
  if (!kept) return 1;
  memset(kept, 0, 17 * MIB);
  kept[0] = big2;                            /* 4: still reachable (through 9) */
  kept[1] = small2;                          /* 2: still reachable (through 9) */
  free(grown);    /* E 6: 4 */
  puts("done");
  return 0;
}
