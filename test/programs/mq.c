/* A student's message queue, as a class would write it: messages pushed
 * onto a linked queue, popped and printed; the first build never frees a
 * popped message, the fixed one (-DFIX) frees each after printing it.
 * The viewer's browser tests read its trace with a 1 KiB heap budget.
 *
 * Counted by hand (struct msg is a pointer, an int and 12 chars: 24 bytes on
 * x86-64), in the order they happen:
 *   1-48 48 messages, malloc(24) at line 25, pushed 8 at a time;
 *        each round pops and prints its 8 before the next round
 *   the first printf (line 47, in drain at line 44) makes libc's stdout
 *        buffer, never freed: 4096 B to a pipe or file, 1024 on a terminal
 *   without FIX: the 48 messages leak, 1152 B of them live at the end;
 *        with FIX: at most 8 live at once (192 B), all freed at line 49
 * The tests check these line numbers: keep the lines where they are. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct msg { struct msg *next; int id; char text[12]; };
struct queue { struct msg *head, *tail; int count; };

static void push(struct queue *q, int id, const char *text) {
  struct msg *m;
  if (q->count > 64) return;
  m = malloc(sizeof *m);
  m->next = NULL;
  m->id = id;
  strncpy(m->text, text, sizeof m->text - 1);
  m->text[sizeof m->text - 1] = '\0';
  if (q->tail != NULL) q->tail->next = m; else q->head = m;
  q->tail = m;
  q->count++;
}

static struct msg *pop(struct queue *q) {
  struct msg *m = q->head;
  if (m == NULL) return NULL;
  q->head = m->next;
  if (q->head == NULL) q->tail = NULL;
  q->count--;
  return m;
}

static void drain(struct queue *q) {
  struct msg *m;
  while ((m = pop(q)) != NULL) {
    printf("message %d: %s\n", m->id, m->text);
#ifdef FIX
    free(m);
#endif
  }
}

int main(void) {
  struct queue q = { NULL, NULL, 0 };
  int round, i;
  for (round = 0; round < 6; round++) {
    for (i = 0; i < 8; i++) push(&q, round * 8 + i, "hello");
    drain(&q);
  }
  return 0;
}
