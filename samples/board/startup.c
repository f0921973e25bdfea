/* startup.c — the start-up code of an STM32-style firmware under newlib-nano with semihosting (rdimon): the vector
 * table (the initial stack pointer _estack, then the handlers) and the reset handler, which copies .data from flash,
 * clears .bss, opens the debugger's console, runs the constructors, then main, and exits with its status. */
extern unsigned long _estack, _sidata, _sdata, _edata, _sbss, _ebss;
extern void __libc_init_array(void);
extern void initialise_monitor_handles(void);
extern int main(void);
extern void exit(int) __attribute__((noreturn));

void Reset_Handler(void);
void Default_Handler(void);
void HardFault_Handler(void) __attribute__((weak, alias("Default_Handler")));
void SVC_Handler(void) __attribute__((weak, alias("Default_Handler")));
void PendSV_Handler(void) __attribute__((weak, alias("Default_Handler")));
void SysTick_Handler(void) __attribute__((weak, alias("Default_Handler")));

__attribute__((section(".isr_vector"), used)) void (*const g_pfnVectors[16])(void) = {
  (void (*)(void))&_estack, Reset_Handler, Default_Handler, HardFault_Handler,
  Default_Handler, Default_Handler, Default_Handler, 0, 0, 0, 0,
  SVC_Handler, Default_Handler, 0, PendSV_Handler, SysTick_Handler,
};

/* An unexpected interrupt or a fault stops here, as a vendor's does. */
void Default_Handler(void)
{
  for (;;) {
  }
}

void Reset_Handler(void)
{
  unsigned long *from = &_sidata, *to = &_sdata;
  while (to < &_edata) *to++ = *from++;
  for (to = &_sbss; to < &_ebss; to++) *to = 0;
  initialise_monitor_handles();
  __libc_init_array();
  exit(main());
}
