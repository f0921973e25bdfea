/* mw-os.c — what the runtime asks of the host's operating system beside its
 * output: one line on stderr without stdio, the monotonic clock, the slow
 * path of the spin locks (which yields the processor), the environment read
 * securely, and whether the program runs with privileges its user lacks.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "mw-internal.h"

uint64_t mw_now_mono(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One round of waiting for another thread: a pause, and every 100th round the processor given up.  No libc call: the
 * pre-fault thread takes locks too (mw_sys). */
void mw_backoff(unsigned *spins)
{
  if (++*spins < 100) {
    mw_relax();
    return;
  }
  *spins = 0;
#if MW_RAW_SYSCALL
  (void)mw_sys(SYS_sched_yield, 0, 0, 0, 0, 0, 0);
#else
  sched_yield();
#endif
}

void mw_lock_slow(int *l)
{
  unsigned spins = 0;
  do {
    while (__atomic_load_n(l, __ATOMIC_RELAXED)) mw_backoff(&spins);
  } while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE));
}

/* One line on stderr: "cc-memwrap: " and up to five parts (NULL = none). */
void mw_say(const char *a, const char *b, const char *c, const char *d, const char *e)
{
  const char *parts[6] = {"cc-memwrap: ", a, b, c, d, e};
  int saved = errno;
  for (int i = 0; i < 6; i++) {
    if (!parts[i]) continue;
    size_t n = strlen(parts[i]);
    while (n > 0) {
      ssize_t w = write(2, parts[i], n);
      if (w <= 0) break;
      parts[i] += w;
      n -= (size_t)w;
    }
  }
  errno = saved;
}

/* secure_getenv: NULL for every variable when the program runs with privileges its user lacks, so that no variable
 * of ours can steer a setuid program (MEMWRAP_TRACE=/etc/x would make it create a root-owned file there). */
const char *mw_getenv(const char *name)
{
  return secure_getenv(name);
}

/* Set-user-ID, set-group-ID or file capabilities (the kernel's AT_SECURE): such a program records nothing, since even
 * its default trace name lands in a working directory its unprivileged user chose. */
int mw_privileged(void)
{
  return getauxval(AT_SECURE) != 0;
}
