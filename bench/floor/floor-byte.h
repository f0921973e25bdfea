/* floor-byte.h — the least an inline entry or exit record can be: one byte
 * stored at a thread-local cursor, put in front of an instrumented unit's
 * site table by bench/floor.ts.  What is left is the cursor's own cost. */
extern __thread unsigned char *floor_byte_cur, *floor_byte_end;
extern unsigned char *floor_byte_refill(void);
static __inline__ __attribute__((always_inline)) struct __mw_frame floor_enter(struct __mw_unit *u, unsigned entry_site, unsigned exit_site)
{
  unsigned char *p = floor_byte_cur;
  struct __mw_frame f;
  if (__builtin_expect(p >= floor_byte_end, 0)) p = floor_byte_refill();
  *p = (unsigned char)entry_site;
  floor_byte_cur = p + 1;
  (void)u;
  f.site = exit_site;
  f.depth = entry_site;
  return f;
}
static __inline__ __attribute__((always_inline)) void floor_leave(struct __mw_frame *f)
{
  unsigned char *p = floor_byte_cur;
  if (__builtin_expect(p >= floor_byte_end, 0)) p = floor_byte_refill();
  *p = (unsigned char)f->site;
  floor_byte_cur = p + 1;
}
