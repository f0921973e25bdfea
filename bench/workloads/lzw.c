/* lzw.c — compute-bound: an LZW compressor and decompressor over generated
 * text, written as many small functions (hashing, probing, bit output) and
 * only a handful of allocations, so it isolates the cost of recording
 * function entries and exits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BITS 16
#define TABLE (1 << BITS)
#define HASH_SIZE 131071

struct dict {
  int *prefix_code;
  unsigned char *suffix;
  int *hash_code;
  int next_code;
};

struct bits {
  unsigned char *out;
  size_t pos;
  unsigned long acc;
  int n;
};

static unsigned hash_of(int prefix, int c) { return ((unsigned)prefix << 8 ^ (unsigned)c) % HASH_SIZE; }

static int probe(const struct dict *d, int prefix, int c) {
  unsigned h = hash_of(prefix, c);
  while (d->hash_code[h] != -1) {
    int code = d->hash_code[h];
    if (d->prefix_code[code] == prefix && d->suffix[code] == c) return (int)h;
    h = (h + 1) % HASH_SIZE;
  }
  return (int)h;
}

static void put_bits(struct bits *b, int code) {
  b->acc |= (unsigned long)code << b->n;
  b->n += BITS;
  while (b->n >= 8) {
    b->out[b->pos++] = (unsigned char)(b->acc & 0xff);
    b->acc >>= 8;
    b->n -= 8;
  }
}

static void reset(struct dict *d) {
  int i;
  for (i = 0; i < HASH_SIZE; i++) d->hash_code[i] = -1;
  d->next_code = 256;
}

static size_t compress(const unsigned char *in, size_t n, unsigned char *out, struct dict *d) {
  struct bits b = {0, 0, 0, 0};
  size_t i;
  int prefix;
  b.out = out;
  reset(d);
  prefix = in[0];
  for (i = 1; i < n; i++) {
    int c = in[i];
    int h = probe(d, prefix, c);
    if (d->hash_code[h] != -1) {
      prefix = d->hash_code[h];
      continue;
    }
    put_bits(&b, prefix);
    if (d->next_code < TABLE) {
      d->prefix_code[d->next_code] = prefix;
      d->suffix[d->next_code] = (unsigned char)c;
      d->hash_code[h] = d->next_code++;
    } else {
      reset(d);
    }
    prefix = c;
  }
  put_bits(&b, prefix);
  if (b.n > 0) b.out[b.pos++] = (unsigned char)b.acc;
  return b.pos;
}

static unsigned char next_char(unsigned *state) {
  static const char *words[] = {"memory ", "stack ", "heap ", "free ", "malloc ", "the ", "a ", "budget "};
  static const char *word = "";
  if (*word == '\0') {
    *state = *state * 1103515245u + 12345u;
    word = words[(*state >> 16) % 8];
  }
  return (unsigned char)*word++;
}

int main(int argc, char **argv) {
  size_t n = (size_t)(argc > 1 ? atol(argv[1]) : 4000000L), i, total = 0;
  unsigned state = 1;
  unsigned char *in = malloc(n), *out = malloc(n * 2 + 16);
  struct dict d;
  int round;
  d.prefix_code = malloc(sizeof(int) * TABLE);
  d.suffix = malloc(TABLE);
  d.hash_code = malloc(sizeof(int) * HASH_SIZE);
  if (!in || !out || !d.prefix_code || !d.suffix || !d.hash_code) return 1;
  for (i = 0; i < n; i++) in[i] = next_char(&state);
  for (round = 0; round < 3; round++) total += compress(in, n, out, &d);
  printf("compressed %lu bytes to %lu (x3)\n", (unsigned long)n, (unsigned long)total / 3);
  free(in); free(out); free(d.prefix_code); free(d.suffix); free(d.hash_code);
  return 0;
}
