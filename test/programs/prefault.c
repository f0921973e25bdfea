/* prefault.c — records tens of megabytes of calls (and some allocations),
 * enough for the runtime's pre-fault thread to start and hand out chunks
 * from its mappings, then says whether that thread was running.
 *
 *   prefault plain    one thread
 *   prefault threads  three threads at once, the same work each
 *   prefault fork     the work, then a child does it again (its own trace)
 *   prefault kill     the work, then SIGKILL: the trace has no END
 *
 * Prints "prefault thread: yes|no" per process, and whether glibc still
 * takes the process for single-threaded (the pre-fault thread is none of
 * its threads: its allocator keeps its fast paths); the work is deterministic,
 * so every trace's events are the same with the pre-fault thread and
 * without it (MEMWRAP_PREFAULT=0). */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/single_threaded.h>
#include <sys/wait.h>
#include <unistd.h>

static unsigned leaf(unsigned x) { return x * 2654435761u; }

static unsigned walk(unsigned depth, unsigned x) {
  if (depth == 0) return leaf(x);
  return walk(depth - 1, x + 1) ^ walk(depth - 1, x + 2);
}

static unsigned work(void) {
  unsigned sum = 0;
  int i;
  for (i = 0; i < 200; i++) {
    char *p = malloc(64 + (size_t)i);
    if (!p) return 0;
    memset(p, i, 64);
    sum += walk(13, (unsigned)i) + (unsigned char)p[3];
    free(p);
  }
  return sum;
}

static void *thread_main(void *arg) {
  unsigned *out = arg;
  *out = work();
  return NULL;
}

/* Whether this process has a thread named mw-prefault. */
static int prefault_running(void) {
  DIR *d = opendir("/proc/self/task");
  struct dirent *e;
  int found = 0;
  if (!d) return 0;
  while ((e = readdir(d)) != NULL) {
    char path[300], name[64];
    ssize_t n;
    int fd;
    if (e->d_name[0] == '.') continue;
    /* open/read, not stdio: the same allocations however many threads there are */
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
    fd = open(path, O_RDONLY);
    if (fd < 0) continue;
    n = read(fd, name, sizeof name - 1);
    if (n >= 11 && strncmp(name, "mw-prefault", 11) == 0) found = 1;
    close(fd);
  }
  closedir(d);
  return found;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "plain";
  unsigned sum = work();
  if (strcmp(mode, "threads") == 0) {
    pthread_t t[3];
    unsigned s[3];
    int i;
    for (i = 0; i < 3; i++) pthread_create(&t[i], NULL, thread_main, &s[i]);
    for (i = 0; i < 3; i++) {
      pthread_join(t[i], NULL);
      sum += s[i];
    }
  } else if (strcmp(mode, "fork") == 0) {
    pid_t child;
    fflush(stdout);
    child = fork();
    if (child == 0) {
      sum = work();
      printf("child sum %u, prefault thread: %s\n", sum, prefault_running() ? "yes" : "no");
      return 0;
    }
    waitpid(child, NULL, 0);
  }
  printf("sum %u, prefault thread: %s, glibc single-threaded: %s\n", sum, prefault_running() ? "yes" : "no",
         __libc_single_threaded ? "yes" : "no");
  fflush(stdout);
  if (strcmp(mode, "kill") == 0) raise(SIGKILL);
  return 0;
}
