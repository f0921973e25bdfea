/* ticks.c — SysTick interrupts taken at known depths.  main recurses LEVELS deep through level(); at each level
 * wait_tick() spins until TICKS more ticks have come.  The handler calls count_tick(), so its frames are recorded on
 * the same stack as the code it interrupted: deeper than wait_tick() by wait_tick's own frame and what the processor
 * stacks on entry (32 bytes, 36 when it aligns), and one level deeper per level() frame.  A tick that comes while the
 * runtime is recording is counted as lost; a level waits for several, so each level has recorded handlers. */
#include <stdint.h>
#include <stdio.h>

#ifndef LEVELS
#define LEVELS 6
#endif
#define TICKS 3

#define SYST_CSR (*(volatile uint32_t *)0xE000E010u) /* enable, interrupt, processor clock: 7 */
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u) /* cycles between ticks, less one */
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)

#if defined(__has_include) && __has_include(<picolibc.h>)
#define SYSTICK_HANDLER arm_systick_isr /* picolibc's crt0 names its vector so */
#else
#define SYSTICK_HANDLER SysTick_Handler /* samples/board/startup.c's */
#endif

static volatile unsigned ticks;

static void count_tick(void)
{
  ticks++;
}

void SYSTICK_HANDLER(void)
{
  count_tick();
}

static void wait_tick(void)
{
  unsigned until = ticks + TICKS;
  while (ticks < until) {
  }
}

static int level(int n)
{
  volatile char pad[16];
  pad[0] = (char)n;
  wait_tick();
  return n > 0 ? level(n - 1) + pad[0] : pad[0];
}

int main(void)
{
  SYST_RVR = 50000 - 1;
  SYST_CVR = 0;
  SYST_CSR = 7;
  int sum = level(LEVELS - 1);
  SYST_CSR = 0;
  printf("levels=%d sum=%d ticks>=%d: %s\n", LEVELS, sum, LEVELS * TICKS, ticks >= LEVELS * TICKS ? "yes" : "no");
  return 0;
}
