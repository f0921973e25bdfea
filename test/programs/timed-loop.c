/* Enough records for the runtime to read the clock several times (once every 256 records of a thread): 1,000
 * malloc/free pairs with a short busy wait between them, so the wall-time axis has many distinct timestamps. */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
  volatile unsigned long spin = 0;
  for (int i = 0; i < 1000; i++) {
    char *p = malloc(32);
    p[0] = (char)i;
    for (int k = 0; k < 2000; k++) spin += (unsigned long)k;
    free(p);
  }
  printf("done\n");
  return 0;
}
