/* leaf-calls.c — leaf call trees summarised (--mw-calls=leaves): checksum,
 * scramble and mix are leaves with frames of their own (noinline), fill
 * calls the C library (memset, strlen); none of them allocates, so their
 * calls are not recorded.  through_pointer is a leaf too, but is called
 * through a function pointer, calls_out calls a function of another unit
 * (leaf-calls-other.c), sized has a frame of run-time size: all three stay
 * recorded.  count_down and walk recurse without heap work: measured, a call
 * recorded only when deeper than any before it since the last record; walk
 * goes deeper than any other call chain here, so the peak stack is in it.  The heap work (a list whose second node is freed
 * with the rest linked from it, so they leak, and one more block kept) must
 * read the same either way.  The program prints the deepest stack a
 * leaf reached (from the stack base, as the trace measures depths), which a
 * report's peak stack must not be below. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern void *__libc_stack_end;
int other_unit(int v);

#define WALK_LEVEL 14

struct node {
  struct node *next;
  int value;
};

static char *deepest = (char *)-1;

static __attribute__((noinline)) void note_depth(char *p)
{
  if (p < deepest) deepest = p;
}

static __attribute__((noinline)) int scramble(int v)
{
  volatile char pad[1000];
  pad[v % 1000] = (char)v;
  note_depth((char *)pad);
  return pad[v % 1000] + v;
}

static __attribute__((noinline)) int fill(int v)
{
  char text[48];
  memset(text, 'a' + v % 26, sizeof text - 1);
  text[sizeof text - 1] = 0;
  return scramble(v) + (int)strlen(text);
}

static int mix(int v) { return fill(v) ^ (v << 1); }
static int checksum(int v) { return mix(v) % 1000; }
static int through_pointer(int v) { return v * 3 + 1; }
static int calls_out(int v) { return other_unit(v) + 1; }

static int count_down(int n) { return n <= 0 ? 0 : 1 + count_down(n - 1); }

/* 2^(level+1) - 1 calls, level + 1 deep; two calls of itself, so no loop replaces the recursion. */
static long walk(const struct node *n, int level)
{
  volatile char pad[96];
  pad[level % 96] = (char)level;
  note_depth((char *)pad);
  if (level == 0 || !n) return pad[level % 96];
  return walk(n->next, level - 1) * 3 + walk(n, level - 1) - pad[level % 96];
}

static int sized(int n)
{
  volatile char room[n + 1];
  int i;
  for (i = 0; i <= n; i++) room[i] = (char)i;
  return room[n / 2];
}

static struct node *push(struct node *head, int value)
{
  struct node *n = malloc(sizeof *n);
  if (!n) exit(1);
  n->next = head;
  n->value = checksum(value);
  return n;
}

int main(void)
{
  int (*op)(int) = through_pointer;
  struct node *list = NULL, *n;
  long sum = 0;
  char *kept;
  int i;
  for (i = 0; i < 200; i++) list = push(list, i);
  for (n = list; n; n = n->next) sum += op(n->value) + calls_out(n->value) + sized(n->value & 15);
  sum += count_down(3);
  sum += walk(list, WALK_LEVEL) & 0xff;
  free(list->next); /* its successor is linked from it, and orphaned */
  list->next = NULL;
  while (list) {
    n = list->next;
    free(list);
    list = n;
  }
  kept = malloc(24);
  if (kept) kept[0] = 1;
  printf("sum %ld\n", sum);
  printf("deepest %ld\n", (long)((char *)__libc_stack_end - deepest));
  return 0;
}
