/* floor-lazy.h — entry and exit kept pending, put in front of an
 * instrumented unit's site table by bench/floor.ts: an entry only pushes its
 * site and stack address on a thread-local shadow stack.  Records reach the
 * ring (floor-runtime.c, FLOOR_LAZY) only for the frames live at a heap call,
 * written by that call oldest first, and for a call deeper than any since the
 * last heap call, written with its pending callers when it returns; a written
 * frame writes its exit.  The shape of a recorder that writes what a report
 * shows (the stack at each heap call, the deepest point between two) instead
 * of every call. */
struct floor_pending {
  unsigned site;
  unsigned sp;
};
extern __thread struct floor_pending floor_stack[];
extern __thread unsigned floor_top, floor_written, floor_deep;
extern void floor_left(unsigned frame);
static __inline__ __attribute__((always_inline)) struct __mw_frame floor_enter(struct __mw_unit *u, unsigned entry_site, unsigned exit_site)
{
  unsigned t = floor_top;
  struct __mw_frame f;
  floor_stack[t].site = entry_site;
  floor_stack[t].sp = (unsigned)(unsigned long)__builtin_frame_address(0);
  floor_top = t + 1;
  (void)u;
  f.site = exit_site;
  f.depth = t;
  return f;
}
static __inline__ __attribute__((always_inline)) void floor_leave(struct __mw_frame *f)
{
  unsigned t = f->depth;
  if (__builtin_expect(t < floor_written || floor_stack[t].sp < floor_deep, 0)) floor_left(t);
  floor_top = t;
}
