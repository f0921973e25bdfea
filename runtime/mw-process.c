/* mw-process.c — the records that describe the process, written once at
 * start-up: PROGRAM (the executable, from /proc/self/exe, and the working
 * directory) and EXT/RANK (the MPI rank a launcher's variable gives).
 * Layout: runtime/TRACE-FORMAT.md.
 */
#define _GNU_SOURCE 1
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mw-internal.h"

void mw_write_program(struct mw_thread *t)
{
  char exe[PATH_MAX], cwd[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  size_t ne = n > 0 ? (size_t)n : 0;
  size_t nc = getcwd(cwd, sizeof cwd) ? strlen(cwd) : 0;
  if (!mw_room(t, 24 + ne + nc)) return;
  unsigned char *p = t->cur;
  *p++ = MW_REC_PROGRAM;
  p = mw_put_str(p, exe, ne);
  p = mw_put_str(p, cwd, nc);
  mw_commit_named(t, p);
}

/* EXT/RANK: the MPI rank, when a launcher's variable gives one (Hydra and
 * PMI-1/2 launchers: PMI_RANK; Open MPI: OMPI_COMM_WORLD_RANK; PMIx: PMIX_RANK;
 * MVAPICH2: MV2_COMM_WORLD_RANK).  `u` rank, `str` the variable's name. */
void mw_write_rank(struct mw_thread *t)
{
  static const char *const names[] = {"PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "MV2_COMM_WORLD_RANK"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    const char *v = mw_getenv(names[i]);
    if (!v || *v < '0' || *v > '9') continue;
    uint64_t rank = 0;
    for (; *v >= '0' && *v <= '9' && rank < (1ull << 40); v++) rank = rank * 10 + (uint64_t)(*v - '0');
    if (*v) continue; /* not a plain number */
    size_t n = strlen(names[i]);
    unsigned char body[32], *b = mw_put_u(body, rank);
    size_t plen = (size_t)(b - body) + 1 + n;
    if (!mw_room(t, plen + 24)) return;
    unsigned char *p = t->cur;
    *p++ = MW_REC_EXT;
    p = mw_put_u(p, MW_EXT_RANK);
    p = mw_put_u(p, plen);
    p = mw_put_u(p, rank);
    p = mw_put_str(p, names[i], n);
    mw_commit(t, p);
    return;
  }
}
