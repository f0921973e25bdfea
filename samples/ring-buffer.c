/* ring-buffer.c — the same ring buffer on the heap, or in static memory.
 *
 * A logger keeps the last SLOTS messages of MESSAGE_BYTES bytes each in a
 * ring.  The first version mallocs the ring at start-up; the static version
 * declares it as a static array, so its size is known when the program is
 * linked and a budget can be checked before the program ever runs.
 *
 * Build it as it is, then with -DSTATIC_RING.  Lesson text: ring-buffer.md
 * (with the memwrap.json budget it is checked against); checked by
 * test/e2e/lessons.test.ts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 64
#define MESSAGE_BYTES 32

struct ring {
  char (*slot)[MESSAGE_BYTES];
  unsigned next;
};

#ifdef STATIC_RING
static char storage[SLOTS][MESSAGE_BYTES]; /* 2048 bytes of static memory */
#endif

static void ring_init(struct ring *r) {
#ifdef STATIC_RING
  r->slot = storage;
#else
  r->slot = malloc(SLOTS * MESSAGE_BYTES); /* 2048 bytes of heap */
  if (r->slot == NULL) exit(1);
#endif
  r->next = 0;
}

static void ring_put(struct ring *r, const char *message) {
  strncpy(r->slot[r->next % SLOTS], message, MESSAGE_BYTES - 1);
  r->slot[r->next % SLOTS][MESSAGE_BYTES - 1] = '\0';
  r->next++;
}

static void ring_done(struct ring *r) {
#ifndef STATIC_RING
  free(r->slot);
#endif
  r->slot = NULL;
}

int main(void) {
  struct ring r;
  char line[MESSAGE_BYTES];
  unsigned i;
  setvbuf(stdout, NULL, _IONBF, 0); /* no stdio buffer on the heap */
  ring_init(&r);
  for (i = 0; i < 100; i++) {
    sprintf(line, "event %u", i);
    ring_put(&r, line);
  }
  printf("last: %s\n", r.slot[(r.next - 1) % SLOTS]);
  ring_done(&r);
  return 0;
}
