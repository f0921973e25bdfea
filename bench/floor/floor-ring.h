/* floor-ring.h — entry and exit as a recorder that encodes on another thread
 * would make them: inline, one 8-byte word into the thread's ring, a busy
 * flag around it (so that a signal handler's records cannot interleave), and
 * the unit's base loaded; put in front of an instrumented unit's site table
 * by bench/floor.ts.  Words: tag in bits 61-63, site in bits 0-31, for ENTER
 * the stack pointer / 8 in bits 32-60. */
extern __thread unsigned long *ring_cur, *ring_end;
extern __thread volatile unsigned char ring_busy;
extern unsigned long *ring_refill(void);
static __inline__ __attribute__((always_inline)) struct __mw_frame floor_enter(struct __mw_unit *u, unsigned entry_site, unsigned exit_site)
{
  unsigned long *p, sp;
  unsigned base = u->base;
  struct __mw_frame f;
  __asm__("mov %%rsp, %0" : "=r"(sp));
  ring_busy = 1;
  p = ring_cur;
  if (__builtin_expect(p >= ring_end, 0)) p = ring_refill();
  p[0] = (1ul << 61) | ((sp >> 3) & 0x1ffffffful) << 32 | (base + entry_site);
  ring_cur = p + 1;
  ring_busy = 0;
  f.site = base + exit_site;
  f.depth = 0;
  return f;
}
static __inline__ __attribute__((always_inline)) void floor_leave(struct __mw_frame *f)
{
  unsigned long *p;
  ring_busy = 1;
  p = ring_cur;
  if (__builtin_expect(p >= ring_end, 0)) p = ring_refill();
  p[0] = (2ul << 61) | f->site;
  ring_cur = p + 1;
  ring_busy = 0;
}
