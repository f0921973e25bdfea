/* online-tables.c — heap calls spread over functions, threads and libc, for
 * comparing online mode's tables (MEMWRAP_MODE=online) with `report --by
 * function|library|thread` of a trace of the same program.
 *
 * The threads run one after the other (each joined before the next starts),
 * so two runs make the same calls in the same order.  Heap calls: malloc,
 * calloc, realloc (growing, moving, to 0), strdup at an instrumented site,
 * strdup and fopen inside libc, a function that frees what another
 * allocated (negative net), blocks made by a thread and freed by main, and
 * a leak.
 *
 * `./online-tables kill` ends with SIGKILL after the same calls.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *(*volatile dup_in_libc)(const char *) = strdup;

struct node {
  struct node *next;
  char payload[40];
};

static struct node *push(struct node *head, int i)
{
  struct node *n = malloc(sizeof *n);
  n->next = head;
  n->payload[0] = (char)i;
  return n;
}

static void release_all(struct node *head)
{
  while (head) {
    struct node *next = head->next;
    free(head);
    head = next;
  }
}

static char *grow(char *buf, size_t n)
{
  return realloc(buf, n);
}

static char *copy_name(const char *s)
{
  return strdup(s);
}

static void *table_of(size_t n)
{
  return calloc(n, sizeof(int));
}

static void *handed[4];

static void *worker(void *arg)
{
  long k = (long)arg;
  struct node *list = NULL;
  for (int i = 0; i < 20 + 10 * (int)k; i++) list = push(list, i);
  char *b = grow(NULL, 16);
  for (size_t n = 32; n <= 4096; n *= 2) b = grow(b, n);
  handed[k] = b; /* freed by main */
  char *c = dup_in_libc("made by strdup inside libc");
  free(c);
  release_all(list);
  return NULL;
}

int main(int argc, char **argv)
{
  FILE *f = fopen("/proc/self/status", "r");
  char line[128];
  if (f) {
    if (!fgets(line, sizeof line, f)) line[0] = 0;
    fclose(f);
  }
  for (long k = 0; k < 3; k++) {
    pthread_t t;
    if (pthread_create(&t, NULL, worker, (void *)k) != 0) return 1;
    pthread_join(t, NULL);
  }
  int *tab = table_of(100);
  char *name = copy_name("online");
  char *leak = malloc(77);
  leak[0] = name[0];
  for (int k = 0; k < 3; k++) free(handed[k]);
  free(name);
  free(tab);
  char *gone = malloc(10);
  gone = grow(gone, 0); /* realloc(p, 0) frees p and returns NULL */
  (void)gone;
  if (argc > 1 && strcmp(argv[1], "kill") == 0) {
    printf("killing\n");
    fflush(stdout);
    kill(getpid(), SIGKILL);
  }
  printf("done\n");
  return 0;
}
