/* stops.c — a firmware that works for a while and then, as STOP says, ends normally (0), locks up (1: a fault with
 * faults masked, which the processor cannot take: QEMU stops there, as a board would until it is reset), or faults
 * (2: its C library's fault handler reports it and exits).  Built with a small buffer, its trace has been written out
 * many times before the end; what the buffer held at a lockup is lost, and the report says the run stopped. */
#include <stdio.h>
#include <stdlib.h>

#ifndef STOP
#define STOP 0
#endif
#define ROUNDS 40

static int *work(int i)
{
  int *block = malloc(sizeof(int) * (size_t)(1 + i % 5));
  block[0] = i;
  return block;
}

int main(void)
{
  int *kept[ROUNDS];
  int sum = 0;
  for (int i = 0; i < ROUNDS; i++) {
    kept[i] = work(i);
    sum += kept[i][0];
    if (i % 2) free(kept[i]);
  }
  printf("sum=%d\n", sum);
  if (STOP == 1) __asm__ volatile("cpsid f"); /* faults masked: the next one locks the processor up */
  if (STOP != 0) *(volatile int *)0xfffffff0u = sum; /* no memory there: a bus fault */
  return 0;
}
