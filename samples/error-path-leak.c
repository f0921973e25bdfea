/* error-path-leak.c — a leak that only happens when something goes wrong.
 *
 * load_record() allocates a 64-byte buffer, fills it, and checks the input.
 * On bad input it returns early, and the early return forgets the buffer:
 * the happy path frees it, the error path leaks it.  main loads three
 * records; the second one is bad.
 *
 * Build it as it is, then with -DFIXED (the error path goes through the
 * same cleanup as the happy path).  Lesson text: error-path-leak.md; checked
 * by test/e2e/lessons.test.ts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RECORD_BYTES 64

/* Returns the record's checksum, or -1 when the text is not a record. */
static int load_record(const char *text) {
  char *buf = malloc(RECORD_BYTES);
  int sum = 0;
  size_t i;
  if (buf == NULL) return -1;
  strncpy(buf, text, RECORD_BYTES - 1);
  buf[RECORD_BYTES - 1] = '\0';
  if (buf[0] != '#') {
#ifdef FIXED
    free(buf); /* the fix: the error path releases what it took */
#endif
    return -1; /* without FIXED: buf is lost here */
  }
  for (i = 0; buf[i] != '\0'; i++) sum += (unsigned char)buf[i];
  free(buf);
  return sum;
}

int main(void) {
  const char *inputs[3] = {"#alpha", "oops", "#gamma"};
  int i;
  /* No stdio buffer: every heap byte in the report is this program's own. */
  setvbuf(stdout, NULL, _IONBF, 0);
  for (i = 0; i < 3; i++) printf("record %d: %d\n", i, load_record(inputs[i]));
  return 0;
}
