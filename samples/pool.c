/* pool.c — many small blocks, or one pool.
 *
 * A particle system keeps COUNT particles of 20 bytes.  The first version
 * mallocs each particle on its own; the pool version takes one block for all
 * of them and hands out slices.  The bytes asked for are the same; what the
 * allocator hands back is not: every malloc'd block is rounded up and carries
 * a header, so many small blocks cost more than they hold.
 *
 * Build it as it is, then with -DPOOL.  Lesson text: pool.md; checked by
 * test/e2e/lessons.test.ts.
 */
#include <stdio.h>
#include <stdlib.h>

#define COUNT 100

struct particle {           /* 5 floats: 20 bytes, no padding */
  float x, y, dx, dy, life;
};

int main(void) {
  struct particle *p[COUNT];
  float total = 0;
  int i;
#ifdef POOL
  struct particle *pool = malloc(COUNT * sizeof *pool); /* one block for all */
  if (pool == NULL) return 1;
  for (i = 0; i < COUNT; i++) p[i] = &pool[i];
#else
  for (i = 0; i < COUNT; i++) {
    p[i] = malloc(sizeof *p[i]); /* one block each */
    if (p[i] == NULL) return 1;
  }
#endif
  setvbuf(stdout, NULL, _IONBF, 0); /* no stdio buffer on the heap */
  for (i = 0; i < COUNT; i++) {
    p[i]->x = p[i]->y = 0;
    p[i]->dx = (float)i;
    p[i]->dy = 1;
    p[i]->life = 1;
    total += p[i]->dx;
  }
  printf("%d particles, total dx %.0f\n", COUNT, total);
#ifdef POOL
  free(pool);
#else
  for (i = 0; i < COUNT; i++) free(p[i]);
#endif
  return 0;
}
