/* leak-causes.c — which branch makes a site leak.
 *
 * The example of the published leak-cause method: funcA allocates a buffer
 * for a request.  On error condition 1 it returns without freeing it (the
 * bug); on error condition 2 it frees it and returns; otherwise it hands
 * the buffer to funcB, which frees it at its end.  main runs all three paths
 * many times.  So funcA's malloc is *suspect*: some of its blocks are freed,
 * some are not.  Two other sites are not suspect: a scratch buffer main
 * always frees, and a cache main allocates once and keeps to the end.
 *
 * Build with `cc-memwrap --mw-branches gcc leak-causes.c -o leak-causes`,
 * run it, then `cc-memwrap report <trace> --leak-causes`.  The expected
 * observations are derived at the end of this file (checked by
 * test/e2e/leak-causes.test.ts).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REQUESTS 90

static int handled;

/* Uses the buffer, then frees it: the freeing path of normal requests. */
static void funcB(char *buf, int id) {
  buf[0] = (char)(id & 0x7f);
  handled += buf[0] >= 0;
  free(buf);
}

/* One request: 0 = normal, 1 = error condition 1, 2 = error condition 2. */
static int funcA(int id, int error) {
  char *buf = malloc(64);
  if (buf == NULL) return -1;
  memset(buf, 0, 64);
  if (error == 1) {
    return 1; /* error condition 1: buf is lost */
  }
  if (error == 2) {
    free(buf); /* error condition 2: cleaned up */
    return 2;
  }
  funcB(buf, id);
  return 0;
}

int main(void) {
  char *cache = malloc(128); /* kept to the end: never freed, not suspect */
  int i, errors = 0;
  for (i = 0; i < REQUESTS; i++) {
    char *scratch = malloc(32); /* always freed: not suspect */
    if (scratch == NULL) return 1;
    scratch[0] = (char)i;
    if (funcA(i, i % 3) != 0) errors++;
    free(scratch);
  }
  if (cache != NULL) cache[0] = (char)errors;
  printf("handled %d requests, %d errors\n", handled, errors);
  return 0;
}

/* Expected observations, derived by hand.
 *
 * Output: "handled 30 requests, 60 errors" (i % 3 cycles 0, 1, 2 over 90
 * requests: 30 of each; funcA returns 0 only on the normal path).
 *
 * Sites (allocation lines): 33 funcA → malloc, 48 main → malloc (cache),
 * 51 main → malloc (scratch).
 *   - line 33: 90 blocks; freed 60 (30 by funcB's free at line 28, 30 by
 *     the free at line 40), leaked 30 (error condition 1): SUSPECT.
 *   - line 51: 90 blocks, all freed at line 55: not suspect, not listed.
 *   - line 48: 1 block, never freed: listed under "never freed", not
 *     suspect.  (stdout's buffer is allocated inside libc, site 0: left out.)
 *
 * Lowest common function of line 33's allocation (in funcA) and its frees
 * (in funcB called from funcA, or in funcA): funcA.  Paths from the
 * allocation to funcA's exit, with --mw-branches:
 *   leaking (i % 3 == 1):  buf == NULL false (34), error == 1 true (36),
 *                          exit funcA
 *   freeing (i % 3 == 2):  buf == NULL false, error == 1 false,
 *                          error == 2 true (39), exit funcA
 *   freeing (i % 3 == 0):  buf == NULL false, error == 1 false,
 *                          error == 2 false, enter funcB, exit funcB,
 *                          exit funcA
 * Walking back from the exit, the leaking path's step before the end is
 * "error == 1 true" at line 36; the freeing paths have "error == 2 true" and
 * "exit funcB" there: so the cause is line 36, `if (error == 1)`, taken, in
 * all 30 leaking paths (all 30 are compared: at most 64 per side), and no
 * other branch.  Only freeing paths call funcB.
 *
 * Without --mw-branches the paths are just the function steps: leaking
 * "exit funcA", freeing "exit funcA" or "enter funcB, exit funcB, exit
 * funcA": no step separates them, the report says so, and names funcB as
 * called only on freeing paths; the divergence lies inside funcA.
 */
