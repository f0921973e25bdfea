/* mw-branch.c — __mw_branch: the outcome of an if, switch case, ?:, && or ||
 * in code built with `cc-memwrap --mw-branches` (EXT/BRANCH, format 1.2).
 *
 * Thread-local like ENTER/EXIT: no lock, no atomic but the unit base load,
 * no syscall on the fast path.  The record is 4 bytes when the site is near
 * the thread's previous branch site (a loop, the same function): tag,
 * subkind, payload length, and one varint holding the site delta and the
 * outcome.  The outcome is always returned unchanged, recorded or not.
 */
#include "../mw-internal.h"

/* EXT tag, subkind, 1-byte length, a varint of at most 5 bytes (33 bits of
 * zig-zag delta and outcome fit in 5 × 7). */
#define MW_BRANCH_MAX 8

static unsigned char *mw_put_branch(struct mw_thread *t, unsigned char *p, unsigned site, int taken)
{
  int32_t d = (int32_t)(site - t->last_branch);
  uint64_t zz = (uint64_t)(((uint32_t)d << 1) ^ (uint32_t)(d >> 31));
  unsigned char *len;
  *p++ = MW_REC_EXT;
  *p++ = MW_EXT_BRANCH;
  len = p++;
  p = mw_put_u(len + 1, (zz << 1) | (taken ? 1u : 0u));
  *len = (unsigned char)(p - len - 1);
  t->last_branch = site;
  return p;
}

/* Everything the fast path leaves out: re-entry (LOST), a thread or unit not
 * started yet, a full chunk, a LOST count to flush first. */
static void mw_branch_slow(struct mw_thread *t, struct __mw_unit *u, unsigned site, int taken)
{
  if (t->busy) {
    if (t->busy == MW_BUSY_RECORDING) t->lost++;
    return;
  }
  if (!t->end && !mw_thread_ready(t)) return;
  t->busy = MW_BUSY_RECORDING;
  mw_fence();
  mw_flush_lost(t);
  unsigned base = __atomic_load_n(&u->base, __ATOMIC_ACQUIRE);
  if (!base) base = mw_unit_register(t, u);
  mw_flush_pending(t);
  if (mw_room(t, MW_BRANCH_MAX)) mw_commit(t, mw_put_branch(t, t->cur, base + site, taken));
  mw_fence();
  t->busy = 0;
}

/* `busy` is claimed before any writer state is read, as in __mw_enter. */
int __mw_branch(struct __mw_unit *u, unsigned site, int taken)
{
  struct mw_thread *t = &mw_t;
  unsigned base = __atomic_load_n(&u->base, __ATOMIC_RELAXED);
  if (MW_UNLIKELY((t->busy | t->lost) || !base)) {
    mw_branch_slow(t, u, site, taken);
    return taken;
  }
  t->busy = MW_BUSY_RECORDING;
  mw_fence();
  /* (in a ring, a record other than ENTER and EXIT is a blob, which mw_room begins: the slow path) */
  if (MW_UNLIKELY((size_t)(t->end - t->cur) < MW_BRANCH_MAX || (MW_RING && t->ring) || t->written != t->top)) {
    mw_fence();
    t->busy = 0;
    mw_branch_slow(t, u, site, taken);
    return taken;
  }
  mw_commit(t, mw_put_branch(t, t->cur, base + site, taken));
  mw_fence();
  t->busy = 0;
  return taken;
}
