/* mw-valgrind.c — running under Valgrind (the only file that includes its
 * client-request headers, vendored in runtime/valgrind/).
 *
 * Two things differ there.  Valgrind's heap-replacing tools (memcheck,
 * helgrind, drd, massif, dhat) redirect every function named malloc, free …
 * to their own allocator, ours included: the interposed allocator never
 * runs, so only the rewritten calls (__mw_*, whose __libc_* calls Valgrind
 * also redirects) reach the trace.  Start-up says so once and marks the
 * header "not interposed".  And the linked scan and the leak scan read heap
 * words the program never wrote, on purpose; those reads are done with
 * Valgrind's error reporting off for the thread, so its reports are about
 * the program only.
 *
 * A client request is a few no-op instructions outside Valgrind, but it is
 * inline assembly: the hot paths test mw_g.valgrind (set once at start-up)
 * and only call in here when it is set.
 */
#define _GNU_SOURCE 1
#include <link.h>

#include "mw-internal.h"
#include "valgrind/valgrind.h"

#if MW_INTERPOSE
/* Whether `s` begins with `prefix` (by hand: memcheck replaces libc's string
 * functions, and start-up keeps to calls nothing intercepts). */
static int mw_starts(const char *s, const char *prefix)
{
  while (*prefix)
    if (*s++ != *prefix++) return 0;
  return 1;
}

/* A heap-replacing tool preloads vgpreload_<tool>-<platform>.so beside
 * vgpreload_core-<platform>.so; the other tools (callgrind, cachegrind …)
 * preload only the core, and leave malloc alone. */
static int mw_vg_tool_preload(struct dl_phdr_info *info, size_t size, void *arg)
{
  const char *name = info->dlpi_name ? info->dlpi_name : "", *base = name;
  (void)size;
  for (const char *c = name; *c; c++)
    if (*c == '/') base = c + 1;
  if (mw_starts(base, "vgpreload_") && !mw_starts(base, "vgpreload_core-")) {
    *(int *)arg = 1;
    return 1;
  }
  return 0;
}
#endif

void mw_valgrind_detect(void)
{
  mw_g.valgrind = RUNNING_ON_VALGRIND != 0;
  mw_g.valgrind_heap = 0;
#if MW_INTERPOSE
  /* without the interposer (a sanitizer build) there is nothing to hide */
  if (mw_g.valgrind) dl_iterate_phdr(mw_vg_tool_preload, &mw_g.valgrind_heap);
#endif
}

void mw_valgrind_quiet(int on)
{
  if (on)
    VALGRIND_DISABLE_ERROR_REPORTING;
  else
    VALGRIND_ENABLE_ERROR_REPORTING;
}
