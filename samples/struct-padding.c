/* struct-padding.c — sizeof is more than the sum of the fields.
 *
 * Each field sits at an offset that is a multiple of its alignment (a double
 * at a multiple of 8, an int of 4), and a struct's size is a multiple of its
 * largest alignment, so the compiler inserts padding.  In `struct sample`
 * below: a (1) + 7 padding + value (8) + flag (1) + 3 padding + count (4) =
 * 24 bytes.  Ordering the fields from largest to smallest alignment removes
 * the padding inside: value (8) + count (4) + a (1) + flag (1) + 2 at the
 * end = 16 bytes.
 *
 * Build it as it is, then with -DREORDERED.  Lesson text: struct-padding.md;
 * checked by test/e2e/lessons.test.ts (also on 32-bit ARM, where double is
 * 8-aligned too and the sizes are the same).
 */
#include <stdio.h>
#include <stdlib.h>

#define SAMPLES 100

#ifdef REORDERED
struct sample {
  double value;   /* offset 0 */
  int count;      /* offset 8 */
  char a;         /* offset 12 */
  char flag;      /* offset 13, then 2 bytes of padding: 16 */
};
#else
struct sample {
  char a;         /* offset 0, then 7 bytes of padding */
  double value;   /* offset 8 */
  char flag;      /* offset 16, then 3 bytes of padding */
  int count;      /* offset 20: 24 */
};
#endif

int main(void) {
  struct sample *s = calloc(SAMPLES, sizeof *s);
  double sum = 0;
  int i;
  if (s == NULL) return 1;
  setvbuf(stdout, NULL, _IONBF, 0); /* no stdio buffer on the heap */
  for (i = 0; i < SAMPLES; i++) {
    s[i].value = i * 0.5;
    s[i].count = i;
    sum += s[i].value;
  }
  printf("sizeof(struct sample) = %u, %d samples take %u bytes, sum %.1f\n", (unsigned)sizeof *s, SAMPLES,
         (unsigned)(SAMPLES * sizeof *s), sum);
  free(s);
  return 0;
}
