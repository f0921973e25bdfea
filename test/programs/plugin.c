/* A module loaded by a host (e2e: test/e2e/shared-objects.test.ts), built
 * through cc-memwrap with -shared.  Line numbers of the allocations are
 * checked by the test: keep them where they are. */
#include <stdlib.h>
#include <string.h>

static char *kept; /* one 8-byte static object */

char *plugin_make(int n)
{
  char *p = malloc((size_t)n);                  /* line 11 */
  memset(p, 'x', (size_t)n - 1);
  p[n - 1] = 0;
  return p;
}

void plugin_keep(int n)
{
  kept = calloc(1, (size_t)n);                  /* line 19 */
}

void plugin_drop(char *p)
{
  free(p);                                      /* line 24 */
}
