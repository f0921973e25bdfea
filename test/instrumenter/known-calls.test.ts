// The C library functions a summarised call tree may call (instrumenter/known-calls.ts) take no more stack than
// their listed bound: each is called from a program that paints the stack below the call and finds the deepest byte
// it changed (the call's return address and the caller's own frame included, so the figure can only be high). Run
// with every symbol bound at start-up: lazy binding's first call runs the dynamic linker, which no bound counts.
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { KNOWN_LIBRARY } from '../../instrumenter/known-calls.js';
import { must, scratch } from '../support/programs.js';

/** A call of each listed function, as a C expression of integer type; slow paths where a function has them. */
const CALLS: Record<string, string> = {
  memcpy: 'memcpy(s1, s2, 3000)', memmove: 'memmove(s1 + 1, s1, 3000)', memset: 'memset(s1, 1, 3000)',
  memcmp: 'memcmp(s1, s2, 4000)', memchr: "memchr(s2, 'b', 4000)", memrchr: "memrchr(s2, 'a', 4000)",
  mempcpy: 'mempcpy(s1, s2, 3000)', bcmp: 'bcmp(s1, s2, 4000)', bzero: '(bzero(s1, 3000), 0)',
  strlen: 'strlen(s2)', strnlen: 'strnlen(s2, 4096)', strcmp: 'strcmp(s1, s2)', strncmp: 'strncmp(s1, s2, 4000)',
  strchr: "strchr(s2, 'b')", strrchr: "strrchr(s2, 'a')", strchrnul: "strchrnul(s2, 'z')", strcpy: 'strcpy(s1, s2)',
  strncpy: 'strncpy(s1, s2, 3000)', stpcpy: 'stpcpy(s1, s2)', strcat: '(s1[10] = 0, strcat(s1, s2 + 3000))',
  strncat: '(s1[10] = 0, strncat(s1, s2, 900))', strspn: 'strspn(s2, "a")', strcspn: 'strcspn(s2, "bc")',
  strpbrk: 'strpbrk(s2, "bc")', strstr: 'strstr(s2, "aab")',
  __ctype_b_loc: '__ctype_b_loc()', __ctype_tolower_loc: '__ctype_tolower_loc()', __ctype_toupper_loc: '__ctype_toupper_loc()',
  tolower: '(tolower)(c)', toupper: '(toupper)(c)', __errno_location: '__errno_location()',
  isalnum: '(isalnum)(c)', isalpha: '(isalpha)(c)', isblank: '(isblank)(c)', iscntrl: '(iscntrl)(c)', isdigit: '(isdigit)(c)',
  isgraph: '(isgraph)(c)', islower: '(islower)(c)', isprint: '(isprint)(c)', ispunct: '(ispunct)(c)', isspace: '(isspace)(c)',
  isupper: '(isupper)(c)', isxdigit: '(isxdigit)(c)', abs: 'abs(c)', labs: 'labs(c)', llabs: 'llabs(c)',
  strtol: 'strtol("-123456789", 0, 0)', strtoul: 'strtoul("0x7fffffff", 0, 0)', strtoll: 'strtoll("123456789012", 0, 10)',
  strtoull: 'strtoull("18446744073709551615", 0, 10)', atoi: 'atoi("12345")', atol: 'atol("-1234567")', atoll: 'atoll("1234567890123")',
  sqrt: 'sqrt(d)', sqrtf: 'sqrtf(f)', fabs: 'fabs(-d)', fabsf: 'fabsf(-f)', floor: 'floor(d)', floorf: 'floorf(f)',
  ceil: 'ceil(d)', ceilf: 'ceilf(f)', round: 'round(d)', roundf: 'roundf(f)', trunc: 'trunc(d)', truncf: 'truncf(f)',
  fmod: 'fmod(d * 1e300, 0.3)', fmin: 'fmin(d, 2.0)', fmax: 'fmax(d, 2.0)', sin: 'sin(d * 1e22)', sinf: 'sinf(f * 1e30f)',
  cos: 'cos(d * 1e22)', cosf: 'cosf(f * 1e30f)', tan: 'tan(d * 1e100)', tanf: 'tanf(f * 1e30f)', exp: 'exp(d * 500)',
  expf: 'expf(f * 80)', log: 'log(d * 1e-300)', logf: 'logf(f)', log2: 'log2(d)', log10: 'log10(d)', pow: 'pow(d, 17.3)',
  powf: 'powf(f, 3.7f)', atan: 'atan(d)', atan2: 'atan2(d, -2.0)', hypot: 'hypot(d * 1e300, 3e300)',
};

function program(names: readonly string[]): string {
  const cases = names.map((name, i) => `  case ${i}: return (long)(${CALLS[name]});`).join('\n');
  return `#define _GNU_SOURCE 1
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#define PAINT 16384
char s1[4096], s2[4096];
static volatile double vd = 1.2345;
static volatile float vf = 1.2345f;
static volatile int vc = 'Q';
static volatile long sink;
static __attribute__((noinline)) long call(int which)
{
  double d = vd;
  float f = vf;
  int c = vc;
  (void)d; (void)f; (void)c;
  switch (which) {
${cases}
  }
  return 0;
}
/* Paints the stack below this frame, calls, and gives the bytes below it that changed. */
static __attribute__((noinline)) long used_by(int which)
{
  volatile char *sp = __builtin_alloca(16);
  volatile char *p;
  for (p = sp - PAINT; p < sp; p++) *p = 0x5a;
  sink = call(which);
  for (p = sp - PAINT; p < sp && *p == 0x5a; p++) {
  }
  return (long)(sp - p);
}
int main(void)
{
  int i;
  memset(s2, 'a', 4000);
  s2[3990] = 'b';
  for (i = 0; i < ${names.length}; i++) printf("%d %ld\\n", i, used_by(i));
  return 0;
}
`;
}

describe.runIf(os.arch() === 'x64' && os.platform() === 'linux')('the C library calls a summarised tree may make', () => {
  const names = [...KNOWN_LIBRARY.keys()];

  it('has a measured call for every listed function', () => {
    expect(names.filter((n) => CALLS[n] === undefined)).toEqual([]);
  });

  it('takes no more stack than each bound, measured on this machine', () => {
    const dir = scratch('known-calls');
    const source = path.join(dir, 'calls.c');
    writeFileSync(source, program(names));
    must('gcc', ['-O2', '-fno-builtin', source, '-o', path.join(dir, 'calls'), '-lm']);
    const out = must(path.join(dir, 'calls'), [], { env: { ...process.env, LD_BIND_NOW: '1' } }).stdout;
    const used = new Map(out.trim().split('\n').map((l) => l.split(' ').map(Number) as [number, number]));
    const over = names.filter((n, i) => !(used.get(i)! <= KNOWN_LIBRARY.get(n)!)).map((n) => `${n}: ${used.get(names.indexOf(n))} B`);
    expect(over).toEqual([]);
    // The painting sees the call's own return address: a measurement of nothing would pass anything.
    expect(Math.min(...used.values())).toBeGreaterThanOrEqual(8);
  });
});
