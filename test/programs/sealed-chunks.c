/* sealed-chunks.c — four threads, each calling and allocating enough to fill
 * several chunks of the trace (1, 4, 16, 64 KiB …), so that the trace has
 * chunks of every early size, each sealed when its thread moves on, and each
 * thread's last chunk sealed when it ends: what the fuzz campaign
 * (test/fuzz/campaign.ts) damages.
 *
 * Expected: 4 × 3,000 allocations, all freed but every 500th (24 leaks). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node {
  struct node *next;
  int value;
};

static struct node *push(struct node *head, int value)
{
  struct node *n = malloc(sizeof *n);
  n->next = head;
  n->value = value;
  return n;
}

static void *worker(void *arg)
{
  int id = *(int *)arg;
  struct node *head = NULL;
  for (int i = 0; i < 3000; i++) {
    head = push(head, id * 10000 + i);
    if (i % 3 == 2) {
      struct node *next = head->next;
      if (head->value % 500 != 0) free(head);
      head = next;
    }
  }
  while (head) {
    struct node *next = head->next;
    if (head->value % 500 != 0) free(head);
    head = next;
  }
  return NULL;
}

int main(void)
{
  pthread_t t[4];
  int ids[4] = {1, 2, 3, 4};
  for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, worker, &ids[i]);
  for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
  char *msg = strdup("done");
  puts(msg);
  free(msg);
  return 0;
}
