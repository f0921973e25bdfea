/* heap-work.c — one program for a host and for a Cortex-M under QEMU: a list of readings built and partly freed, a
 * table grown with realloc, a calloc'ed histogram, a recursion DEPTH levels deep, two blocks left allocated (one
 * reachable from a global, one not).  Its console output is the same on both; so are its instrumented heap calls:
 * 8 readings, 4 reallocs of the table (the first from NULL), 1 calloc, 2 mallocs; 4 readings, the table and the
 * histogram freed; live at exit: 4 readings, `kept` and `lost`.  The C library's own blocks differ (glibc's stdout
 * buffer, newlib's; picolibc's stdio has none). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef DEPTH
#define DEPTH 12
#endif

struct reading {
  struct reading *next;
  int value;
};

static char *kept; /* reachable from here at exit */

/* Each level takes a frame of its own: the peak stack grows by it per level. */
static int descend(int n)
{
  volatile char pad[24];
  pad[0] = (char)n;
  if (n == 0) return pad[0];
  return descend(n - 1) + pad[0];
}

static struct reading *readings(int n)
{
  struct reading *head = NULL;
  for (int i = 0; i < n; i++) {
    struct reading *r = malloc(sizeof *r);
    r->value = i * i;
    r->next = head;
    head = r;
  }
  return head;
}

int main(void)
{
  struct reading *head = readings(8);
  int sum = 0;
  /* free every second reading */
  for (struct reading **p = &head; *p;) {
    struct reading *r = *p;
    sum += r->value;
    if (r->value % 2 == 0) {
      *p = r->next;
      free(r);
    } else {
      p = &r->next;
    }
  }
  int *table = NULL;
  for (int n = 4; n <= 32; n *= 2) table = realloc(table, (size_t)n * sizeof *table);
  for (int i = 0; i < 32; i++) table[i] = i;
  unsigned *histogram = calloc(10, sizeof *histogram);
  for (int i = 0; i < 32; i++) histogram[table[i] % 10]++;
  kept = malloc(16);
  strcpy(kept, "kept");
  char *lost = malloc(40);
  lost[0] = 'x';
  printf("sum=%d histogram[3]=%u depth=%d %s\n", sum, histogram[3], descend(DEPTH), kept);
  free(table);
  free(histogram);
  return sum % 9;
}
