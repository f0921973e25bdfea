/* uart-writer.c — the trace through the program's own write function.
 *
 * The program defines memwrap_write (declared in runtime/memwrap.h), so the
 * runtime writes no trace file: it hands the trace's bytes to this function
 * when the program ends.  uart_putc stands for a UART's transmit register;
 * here it is standard error, one byte per write(2), the way a polled UART
 * driver sends.  test/e2e/writer.test.ts collects the bytes and reads them
 * as a trace.
 *
 * It allocates three 100-byte blocks, frees two, and exits normally with
 * status 0, or (argument "crash") aborts with the third block live.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void uart_putc(unsigned char c) {
  while (write(2, &c, 1) != 1) {
  }
}

long memwrap_write(const void *bytes, size_t size) {
  const unsigned char *p = bytes;
  size_t i;
  for (i = 0; i < size; i++) uart_putc(p[i]);
  return (long)size;
}

int main(int argc, char **argv) {
  char *a = malloc(100), *b = malloc(100), *c = malloc(100);
  if (a == NULL || b == NULL || c == NULL) return 1;
  memset(a, 1, 100);
  free(a);
  free(b);
  if (argc > 1 && strcmp(argv[1], "crash") == 0) abort();
  c[0] = 2;
  return 0;
}
