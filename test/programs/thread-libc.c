/* thread-libc.c — three threads that recurse and allocate at different depths,
 * while the main thread holds a FILE open: fopen and the first fgets allocate
 * the FILE and its buffer inside libc, and stdout's buffer is allocated by the
 * first printf.
 *
 * Expected: four threads; every block of descend() freed, the blocks live at
 * exit all allocated inside libc; libc's blocks live from the fopen across the
 * workers' whole run; 256 bytes of static data. About 60,000 events: four
 * index buckets of 16,384, fewer than the viewer's window of events.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int calls[64];

static int descend(int n, int width) {
  calls[n % 64]++;
  char pad[256];
  memset(pad, n, sizeof pad);
  if (n == 0) return pad[0];
  char *p = malloc((size_t)(16 * width + n));
  p[0] = (char)n;
  int s = descend(n - 1, width) + pad[n % 64] + p[0];
  free(p);
  return s;
}

static void *worker(void *arg) {
  int w = *(int *)arg;
  long s = 0;
  for (int i = 0; i < 800; i++) s += descend(2 + (i + w) % (4 + 4 * w), w + 1);
  return (void *)s;
}

int main(void) {
  pthread_t t[3];
  int ids[3];
  char line[256];
  FILE *f = fopen("/proc/self/status", "r");
  if (f != NULL && fgets(line, sizeof line, f) != NULL) printf("%s", line);
  for (int i = 0; i < 3; i++) {
    ids[i] = i;
    pthread_create(&t[i], NULL, worker, &ids[i]);
  }
  long total = 0;
  for (int i = 0; i < 3; i++) {
    void *r;
    pthread_join(t[i], &r);
    total += (long)r;
  }
  if (f != NULL) fclose(f);
  printf("done %ld\n", total);
  return 0;
}
