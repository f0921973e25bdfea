/* sensor-log.c — lesson 8: a firmware on a board, against the budgets of its own linker script.
 *
 * A sensor task queues 24 readings on the heap (one block each) and a command interpreter evaluates a formula
 * nested 12 deep with a recursive-descent parser, whose every level keeps a token buffer on the stack.  Built for an
 * STM32F405 (QEMU's netduinoplus2) with newlib-nano and an STM32-style linker script (samples/board/), whose
 * _Min_Stack_Size reserves 1 KiB for the stack: the recursion needs more.  -DITERATIVE parses with a stack of its
 * own, in a static array, and fits.  The same source builds for the host, where its numbers differ (lesson text). */
#include <stdio.h>
#include <stdlib.h>

struct reading {
  struct reading *next;
  unsigned short channel;
  short value;
};

static struct reading *queue;
static struct reading **queue_end = &queue;

static void enqueue(unsigned short channel, short value)
{
  struct reading *r = malloc(sizeof *r);
  r->next = NULL;
  r->channel = channel;
  r->value = value;
  *queue_end = r;
  queue_end = &r->next;
}

/* Sums and frees the queue. */
static long drain(void)
{
  long sum = 0;
  while (queue) {
    struct reading *r = queue;
    queue = r->next;
    sum += r->value;
    free(r);
  }
  queue_end = &queue;
  return sum;
}

#ifndef ITERATIVE
static long sum_of(const char **s);

/* A number, or a parenthesised sum: term := digits | '(' sum ')' */
static long term(const char **s)
{
  char token[32];
  int n = 0;
  if (**s == '(') {
    (*s)++;
    long v = sum_of(s);
    (*s)++; /* ')' */
    return v;
  }
  while (**s >= '0' && **s <= '9' && n < 31) token[n++] = *(*s)++;
  token[n] = 0;
  return atol(token);
}

/* sum := term ('+' term)* */
static long sum_of(const char **s)
{
  long v = term(s);
  while (**s == '+') {
    (*s)++;
    v += term(s);
  }
  return v;
}

static long evaluate(const char *formula)
{
  return sum_of(&formula);
}
#else
/* The same grammar with a stack of its own: the sums still open, in a static array. */
static long open_sums[32];

static long evaluate(const char *s)
{
  int depth = 0;
  long v = 0;
  while (*s) {
    if (*s == '(') {
      open_sums[depth++] = v;
      v = 0;
      s++;
    } else if (*s == ')') {
      v += open_sums[--depth];
      s++;
    } else if (*s == '+') {
      s++;
    } else {
      v += strtol(s, (char **)&s, 10);
    }
  }
  return v;
}
#endif

int main(void)
{
  for (int i = 0; i < 24; i++) enqueue((unsigned short)(i % 4), (short)(i * 3));
  long readings = drain();
  long result = evaluate("1+(2+(3+(4+(5+(6+(7+(8+(9+(10+(11+(12+13)))))))))))");
  printf("readings %ld, formula %ld\n", readings, result);
  return 0;
}
