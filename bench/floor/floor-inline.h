/* floor-inline.h — the floor's entry and exit stores as inline code, put in
 * front of an instrumented unit's site table by bench/floor.ts. */
extern __thread unsigned *floor_cur, *floor_end;
extern unsigned *floor_refill(void);
static __inline__ __attribute__((always_inline)) struct __mw_frame floor_enter(struct __mw_unit *u, unsigned entry_site, unsigned exit_site)
{
  unsigned *p = floor_cur;
  struct __mw_frame f;
  if (__builtin_expect(p >= floor_end, 0)) p = floor_refill();
  p[0] = entry_site;
  p[1] = (unsigned)(unsigned long)__builtin_frame_address(0);
  floor_cur = p + 2;
  (void)u;
  f.site = exit_site;
  f.depth = entry_site;
  return f;
}
static __inline__ __attribute__((always_inline)) void floor_leave(struct __mw_frame *f)
{
  unsigned *p = floor_cur;
  if (__builtin_expect(p >= floor_end, 0)) p = floor_refill();
  p[0] = f->site;
  floor_cur = p + 1;
}
