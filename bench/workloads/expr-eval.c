/* expr-eval.c — call-heavy: a recursive-descent evaluator of generated
 * arithmetic expressions, written as many tiny functions (peek, advance,
 * digit tests, one function per grammar rule and per operator), most of
 * which a plain -O2 build inlines.  One small allocation per expression, so
 * nearly every recorded event is a call or a return.
 *
 *   expr-eval [count]   evaluates `count` expressions (default 500000) and
 *                       prints a checksum of their values. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MOD 1000003L

/* ---- a seeded generator (xorshift), so every run is the same ---- */

static unsigned long rng_state = 88172645463325252UL;

static unsigned next_random(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (unsigned)(rng_state >> 11);
}

static unsigned below(unsigned n) { return next_random() % n; }

/* ---- generating an expression into a buffer ---- */

struct out {
  char *buf;
  size_t len, cap;
};

static void put_char(struct out *o, char c) {
  if (o->len + 1 < o->cap) o->buf[o->len++] = c;
}

static void put_number(struct out *o, unsigned v) {
  char tmp[12];
  int n = 0;
  do {
    tmp[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  while (n > 0) put_char(o, tmp[--n]);
}

static char pick_operator(void) {
  static const char ops[] = "+-*/%+-*";
  return ops[below(8)];
}

static void gen_expr(struct out *o, int depth);

static void gen_primary(struct out *o, int depth) {
  unsigned r = below(10);
  if (depth > 0 && r < 3) {
    put_char(o, '(');
    gen_expr(o, depth - 1);
    put_char(o, ')');
  } else if (r == 3) {
    put_char(o, '-');
    gen_primary(o, depth);
  } else {
    put_number(o, below(1000));
  }
}

static void gen_expr(struct out *o, int depth) {
  unsigned terms = 1 + below(4);
  gen_primary(o, depth);
  while (--terms > 0) {
    put_char(o, ' ');
    put_char(o, pick_operator());
    put_char(o, ' ');
    gen_primary(o, depth);
  }
}

/* ---- the evaluator ---- */

struct parser {
  const char *s;
  size_t pos;
};

static char peek(const struct parser *p) { return p->s[p->pos]; }
static void advance(struct parser *p) { p->pos++; }
static int is_space(char c) { return c == ' ' || c == '\t'; }
static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int digit_value(char c) { return c - '0'; }
static int is_additive(char c) { return c == '+' || c == '-'; }
static int is_multiplicative(char c) { return c == '*' || c == '/' || c == '%'; }

static void skip_spaces(struct parser *p) {
  while (is_space(peek(p))) advance(p);
}

static int accept(struct parser *p, char c) {
  skip_spaces(p);
  if (peek(p) != c) return 0;
  advance(p);
  return 1;
}

static long reduce(long v) {
  v %= MOD;
  return v < 0 ? v + MOD : v;
}

static long add(long a, long b) { return reduce(a + b); }
static long subtract(long a, long b) { return reduce(a - b); }
static long multiply(long a, long b) { return reduce(a * b); }
static long divide(long a, long b) { return b == 0 ? a : reduce(a / b); }
static long remainder_of(long a, long b) { return b == 0 ? a : reduce(a % b); }
static long negate(long a) { return reduce(-a); }

static long apply(char op, long a, long b) {
  switch (op) {
  case '+': return add(a, b);
  case '-': return subtract(a, b);
  case '*': return multiply(a, b);
  case '/': return divide(a, b);
  default: return remainder_of(a, b);
  }
}

static long parse_expr(struct parser *p);

static long parse_number(struct parser *p) {
  long v = 0;
  skip_spaces(p);
  while (is_digit(peek(p))) {
    v = v * 10 + digit_value(peek(p));
    advance(p);
  }
  return v;
}

static long parse_primary(struct parser *p) {
  if (accept(p, '(')) {
    long v = parse_expr(p);
    accept(p, ')');
    return v;
  }
  if (accept(p, '-')) return negate(parse_primary(p));
  return parse_number(p);
}

static long parse_term(struct parser *p) {
  long v = parse_primary(p);
  for (;;) {
    char op;
    skip_spaces(p);
    op = peek(p);
    if (!is_multiplicative(op)) return v;
    advance(p);
    v = apply(op, v, parse_primary(p));
  }
}

static long parse_expr(struct parser *p) {
  long v = parse_term(p);
  for (;;) {
    char op;
    skip_spaces(p);
    op = peek(p);
    if (!is_additive(op)) return v;
    advance(p);
    v = apply(op, v, parse_term(p));
  }
}

static long evaluate(const char *s) {
  struct parser p;
  p.s = s;
  p.pos = 0;
  return parse_expr(&p);
}

int main(int argc, char **argv) {
  long count = argc > 1 ? atol(argv[1]) : 500000;
  unsigned long checksum = 0;
  size_t chars = 0;
  long i;
  for (i = 0; i < count; i++) {
    struct out o;
    o.cap = 4096;
    o.len = 0;
    o.buf = malloc(o.cap);
    if (!o.buf) return 1;
    gen_expr(&o, 4);
    o.buf[o.len] = 0;
    chars += o.len;
    checksum = checksum * 31 + (unsigned long)evaluate(o.buf);
    free(o.buf);
  }
  printf("%ld expressions, %lu characters, checksum %lu\n", count, (unsigned long)chars, checksum);
  return 0;
}
