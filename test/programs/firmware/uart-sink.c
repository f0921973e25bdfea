/* uart-sink.c — a firmware's own output for its trace, needing no debugger: memwrap_write (memwrap.h) sends the
 * bytes out of the MPS2 board's first UART (Arm's CMSDK APB UART at 0x40004000), which QEMU's `-serial file:NAME`
 * writes to a file on the host.  The runtime calls it from its start (the constructors, before main), so it sets the
 * UART up on its first call. */
#include <stddef.h>
#include <stdint.h>

#define UART0_DATA (*(volatile uint32_t *)0x40004000u)
#define UART0_STATE (*(volatile uint32_t *)0x40004004u) /* bit 0: the transmit buffer is full */
#define UART0_CTRL (*(volatile uint32_t *)0x40004008u)  /* bit 0: transmit enabled */
#define UART0_BAUDDIV (*(volatile uint32_t *)0x40004010u)

long memwrap_write(const void *bytes, size_t size)
{
  const unsigned char *p = bytes;
  if (!(UART0_CTRL & 1u)) {
    UART0_BAUDDIV = 16;
    UART0_CTRL = 1u;
  }
  for (size_t i = 0; i < size; i++) {
    while (UART0_STATE & 1u) {
    }
    UART0_DATA = p[i];
  }
  return (long)size;
}
