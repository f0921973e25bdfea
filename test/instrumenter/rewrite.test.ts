// rewriteTranslationUnit on small hand-written preprocessed units: the exact
// inserted code, what is left alone, static objects, warnings, big inputs.
// compile.test.ts does the same with real gcc and clang output.
import { describe, expect, it } from 'vitest';
import { knownCalls } from '../../instrumenter/known-calls.js';
import { rewriteTranslationUnit, type RewriteResult } from '../../instrumenter/rewrite.js';

const HEADER = '/opt/mw/memwrap.h';

function rewrite(text: string, branches?: boolean): RewriteResult & { text: string } {
  const result = rewriteTranslationUnit(Buffer.from(text, 'utf8'), { headerPath: HEADER, branches });
  return { ...result, text: result.output.toString('utf8') };
}

/** The site table entries of a rewritten unit, as written. */
function sitesOf(text: string): string[] {
  const table = /__mw_sites\[\d+\] = \{ (.*?) \}; static struct __mw_unit/.exec(text);
  return table === null ? [] : [...table[1]!.matchAll(/\{(\d+u, \d+u, "[^"]*", "[^"]*", "[^"]*")\}/g)].map((m) => m[1]!);
}

/** Registered static objects: `name size-expression` per __mw_s<k>. */
function refsOf(text: string): string[] {
  return [...text.matchAll(/__mw_s\d+ __attribute__\(\(used, section\("mw_statics"\)\)\) = \{ &__mw_u, (\d+)u, &(\w+), sizeof\((\w+)\) \};/g)].map(
    (m) => `${m[2]}@${m[1]}`,
  );
}

const TABLE_TAIL =
  'static struct __mw_unit *const __mw_unit_ref __attribute__((used, section("mw_units"))) = &__mw_u; ';
const frame = (entry: number, falloff: number): string =>
  `struct __mw_frame __mw_f __attribute__((cleanup(__mw_leave), unused)) = __mw_enter(&__mw_u, ${entry}u, ${falloff}u);`;
const ret = (site: number, statement: string): string => `{__mw_f.site = __mw_u.base + ${site}u; ${statement}}`;

describe('inserted code', () => {
  it('puts the table before the first function, the frame after `{`, and wraps returns', () => {
    const r = rewrite('# 1 "t.c"\nint main(void) {\n  return 0;\n}\n');
    expect(r.text).toBe(
      '# 1 "t.c"\n' +
        'static const struct __mw_site __mw_sites[3] = { {1u, 1u, "t.c", "main", "main"}, {2u, 3u, "t.c", "main", "main"}, {3u, 2u, "t.c", "main", "main"} }; ' +
        'static struct __mw_unit __mw_u = { 0u, 3u, __mw_sites }; ' +
        TABLE_TAIL +
        `int main(void) {${frame(0, 1)}\n` +
        `  ${ret(2, 'return 0;')}\n` +
        '}\n',
    );
    expect(r).toMatchObject({ functions: 1, sites: 3, skippedFunctions: 0, warnings: [] });
  });

  it('ends the table with the call lines and automatic objects of each function, which no code records', () => {
    const r = rewrite(
      [
        '# 1 "/usr/include/stdio.h" 1 3 4',
        'int snprintf(char *s, unsigned long n, const char *f, ...);',
        '# 2 "t.c" 2',
        'static unsigned sum(const char *text, int level)',
        '{',
        '  char scratch[128];',
        '  unsigned s = 0, k[2] = { 1, 2 }, *q;',
        '  static int calls; extern int seen;',
        '  snprintf(scratch, sizeof scratch, "%s", text);',
        '  for (const char *p = scratch; *p; p++) s += *p;',
        '  if (level < 6) s ^= sum(text, level + 1);',
        '  if (level == 1) s ^= sum(text, 7) + sum(text,',
        '                                      level + 2);',
        '  return s;',
        '}',
      ].join('\n'),
    );
    const sites = sitesOf(r.text);
    // ENTRY, FALLOFF, the static `calls`, the return; then CALL (18), LIBCALL (24) and LOCAL (19) sites, numbered after them.
    expect(sites.slice(0, 4).map((s) => s.split(',')[0])).toEqual(['1u', '2u', '16u', '3u']);
    expect(sites.slice(4)).toEqual([
      '18u, 9u, "t.c", "sum", "sum"',
      '18u, 10u, "t.c", "sum", "sum"', // two calls starting on line 10: one site
      '24u, 7u, "t.c", "sum", "snprintf"', // snprintf is libc's
      '19u, 4u, "t.c", "sum", "char scratch[128]"',
      '19u, 5u, "t.c", "sum", "unsigned s"',
      '19u, 5u, "t.c", "sum", "unsigned k[2]"',
      '19u, 5u, "t.c", "sum", "unsigned *q"',
      '19u, 8u, "t.c", "sum", "const char *p"',
    ]);
    // Nothing records them: the body's code names only the sites before them.
    const body = r.text.slice(r.text.indexOf(TABLE_TAIL) + TABLE_TAIL.length);
    expect(Math.max(...[...body.matchAll(/\b(\d+)u\b/g)].map((m) => Number(m[1])))).toBe(3);
  });

  it('orders each function ENTRY, FALLOFF, then returns and calls in source order', () => {
    const r = rewrite(
      [
        '# 1 "t.c"',
        'void *f(int n)',
        '{',
        '  void *p = malloc(n);',
        '  if (!p) return 0;',
        '  free(p);',
        '  return malloc(1);',
        '}',
        'void g(void) { }',
      ].join('\n'),
    );
    expect(sitesOf(r.text)).toEqual([
      '1u, 1u, "t.c", "f", "f"',
      '2u, 7u, "t.c", "f", "f"',
      '4u, 3u, "t.c", "f", "malloc"',
      '3u, 4u, "t.c", "f", "f"',
      '8u, 5u, "t.c", "f", "free"',
      '3u, 6u, "t.c", "f", "f"',
      '4u, 6u, "t.c", "f", "malloc"',
      '1u, 8u, "t.c", "g", "g"',
      '2u, 8u, "t.c", "g", "g"',
      '19u, 3u, "t.c", "f", "void *p"',
    ]);
    expect(r.text).toContain(`  ${ret(5, 'return __mw_malloc(&__mw_u, 6u, 1);')}\n`);
    expect(r.text).toContain(`void g(void) {${frame(7, 8)} }`);
  });

  it('wraps `if (a) return 1; else return 2;` and returns between mid-line linemarkers', () => {
    const r = rewrite(
      ['# 1 "t.c"', 'int f(int a) {', '  if (a) return 1; else return', '# 3 "t.c" 3 4', '  2', '# 3 "t.c"', '  ;', '}'].join('\n'),
    );
    expect(r.text).toContain(`  if (a) ${ret(2, 'return 1;')} else {__mw_f.site = __mw_u.base + 3u; return\n# 3 "t.c" 3 4\n  2\n# 3 "t.c"\n  ;}\n}`);
  });

  it('redirects allocator calls, also nested and without arguments, and leaves other uses alone', () => {
    const r = rewrite(
      [
        '# 1 "t.c"',
        'struct a { void *(*malloc)(unsigned long); };',
        'void f(struct a *p) {',
        '  void *(*fn)(unsigned long) = malloc;',
        '  free(malloc(3)); p->malloc(4); (malloc)(5); valloc(); fn(1);',
        '  malloc_usable_size(0); my_free(0); xmalloc(1);',
        '}',
      ].join('\n'),
    );
    expect(r.text).toContain('  void *(*fn)(unsigned long) = malloc;\n');
    expect(r.text).toContain(
      '  __mw_free(&__mw_u, 2u, __mw_malloc(&__mw_u, 3u, 3)); p->malloc(4); (malloc)(5); __mw_valloc(&__mw_u, 4u); fn(1);\n' +
        '  malloc_usable_size(0); my_free(0); xmalloc(1);\n',
    );
  });

  it('wraps setjmp-family calls in __mw_resume inside instrumented functions only', () => {
    const r = rewrite(
      [
        '# 1 "/usr/include/setjmp.h" 1 3 4',
        'static int sys(void) { return _setjmp(b); }',
        '# 2 "t.c" 2',
        'int f(void) { if (_setjmp(b)) return 1; return sigsetjmp(s, 1) + __sigsetjmp(s, 0) + setjmp(b); }',
      ].join('\n'),
    );
    expect(r.text).toContain('static int sys(void) { return _setjmp(b); }');
    expect(r.text).toContain(
      `if (__mw_resume(&__mw_f, _setjmp(b))) ${ret(2, 'return 1;')} ` +
        ret(3, 'return __mw_resume(&__mw_f, sigsetjmp(s, 1)) + __mw_resume(&__mw_f, __sigsetjmp(s, 0)) + __mw_resume(&__mw_f, setjmp(b));'),
    );
  });

  it('names the user header a function comes from, and skips system and runtime headers', () => {
    const r = rewrite(
      [
        '# 1 "t.c"',
        '# 1 "/opt/mw/memwrap.h" 1',
        'static int mw(void) { return 0; }',
        '# 2 "t.c" 2',
        '# 1 "/usr/include/x.h" 1 3 4',
        'static int sys(void) { return malloc(1) != 0; }',
        '# 3 "t.c" 2',
        '# 1 "util.h" 1',
        'static int util(void) { return 1; }',
        '# 4 "t.c" 2',
        'int main(void) { return util(); }',
      ].join('\n'),
    );
    expect(r.functions).toBe(2);
    expect(r.text).toContain('static int mw(void) { return 0; }');
    expect(r.text).toContain('static int sys(void) { return malloc(1) != 0; }');
    expect(sitesOf(r.text)[0]).toBe('1u, 1u, "util.h", "util", "util"');
    expect(sitesOf(r.text)[3]).toBe('1u, 4u, "t.c", "main", "main"');
  });

  it('leaves inline functions with external linkage and naked functions alone, counting them', () => {
    const r = rewrite(
      [
        '# 1 "t.c"',
        'inline int a(void) { return 1; }',
        'extern __inline__ int b(void) { return 2; }',
        'static inline int c(void) { return 3; }',
        '__attribute__((naked)) void d(void) { __asm__("ret"); }',
        'int __mw_e(void) { return 4; }',
      ].join('\n'),
    );
    expect(r).toMatchObject({ functions: 1, skippedFunctions: 4, warnings: [] });
    expect(r.text).toContain(`static inline int c(void) {${frame(0, 1)} ${ret(2, 'return 3;')} }`);
  });

  it('leaves the returns, calls and statics of a GNU nested function to it', () => {
    const r = rewrite(
      ['# 1 "t.c"', 'int f(int x) {', '  int g(int y) { static int s; free(0); return y; }', '  return g(x);', '}'].join('\n'),
    );
    expect(r.text).toContain('  int g(int y) { static int s; free(0); return y; }\n');
    expect(r.text).toContain(`  ${ret(2, 'return g(x);')}\n`);
  });

  it('puts the frame after GNU __label__ declarations', () => {
    const r = rewrite('# 1 "t.c"\nint f(void) { __label__ out; goto out; out: return 0; }\n');
    expect(r.text).toContain(`int f(void) { __label__ out;${frame(0, 1)} goto out; out: ${ret(2, 'return 0;')} }`);
  });

  it('accepts the branches option', () => {
    expect(rewrite('# 1 "t.c"\nint f(void) { return 0; }\n', true).functions).toBe(1);
  });
});

describe('allocator names the unit defines', () => {
  it('keeps calls to a malloc the unit defines, and to a parameter named free', () => {
    const r = rewrite(
      [
        '# 1 "t.c"',
        'void *malloc(unsigned long n) { return 0; }',
        'void release(void *p, void (*free)(void *)) { free(p); }',
        'void other(void *p) { free(p); malloc(1); strdup("x"); }',
      ].join('\n'),
    );
    expect(r.text).toContain(`{${frame(3, 4)} free(p); }`);
    expect(r.text).toContain(`{${frame(5, 6)} __mw_free(&__mw_u, 7u, p); malloc(1); __mw_strdup(&__mw_u, 8u, "x"); }`);
  });

  it('keeps calls to a file-scope object named like an allocator', () => {
    const r = rewrite('# 1 "t.c"\nstatic void (*free)(void *);\nvoid f(void *p) { free(p); }\n');
    expect(r.text).toContain(`{${frame(0, 1)} free(p); }`);
  });
});

describe('static objects', () => {
  it('registers file-scope definitions once per name at the end, with their sizeof', () => {
    const r = rewrite(
      [
        '# 1 "t.c"',
        'typedef int fn_t(int);',
        'typedef fn_t fn2_t;',
        'typedef int open_t[];',
        'extern int ext;',
        'extern int later[];',
        'int later[3];',
        'int a, b[4], *c, (*d)(int), e(int);',
        'int tentative; int tentative = 2;',
        'static int sizeless[];',
        'static int sizeless[5];',
        'static const char msg[] = "hi";',
        'struct p { int x; } pt, *pp;',
        'struct q { int y; };',
        'enum { A, B };',
        '__thread int t1; static _Thread_local int t2; thread_local int t3;',
        'fn_t f1; fn2_t f2; static open_t o1; open_t o2 = { 1 };',
        'int __mw_reserved;',
        'int main(void) { return 0; }',
      ].join('\n'),
    );
    expect(refsOf(r.text)).toEqual(['later@3', 'a@4', 'b@5', 'c@6', 'd@7', 'tentative@8', 'sizeless@9', 'msg@10', 'pt@11', 'pp@12', 'o2@13']);
    const sites = sitesOf(r.text);
    expect(sites[3]).toBe('16u, 6u, "t.c", "", "later"');
    expect(sites[9]).toBe('16u, 10u, "t.c", "", "sizeless"');
    // Everything is registered after the last function, inline.
    expect(r.text.endsWith('sizeof(o2) };')).toBe(true);
    expect(r.text.split('\n').length).toBe(19);
  });

  it('registers static locals right after their declaration, with the function as func', () => {
    const r = rewrite(
      [
        '# 1 "t.c"',
        'int f(void) {',
        '  static int calls, *p, arr[2], g(void);',
        '  static __thread int tl;',
        '  int plain;',
        '  { static const char s[] = "x"; }',
        '  return calls;',
        '}',
      ].join('\n'),
    );
    const lines = r.text.split('\n');
    expect(lines[2]).toMatch(/^  static int calls, \*p, arr\[2\], g\(void\); static const struct __mw_static_ref __mw_s0 .*&calls, sizeof\(calls\) \}; .*__mw_s1 .*&p, .*__mw_s2 .*&arr, sizeof\(arr\) \};$/);
    expect(lines[3]).toBe('  static __thread int tl;');
    expect(lines[5]).toMatch(/^  \{ static const char s\[\] = "x"; static const struct __mw_static_ref __mw_s3 .*&s, sizeof\(s\) \}; \}$/);
    expect(sitesOf(r.text).slice(2, 6)).toEqual([
      '16u, 2u, "t.c", "f", "calls"',
      '16u, 2u, "t.c", "f", "p"',
      '16u, 2u, "t.c", "f", "arr"',
      '16u, 5u, "t.c", "f", "s"',
    ]);
  });

  it('puts the table at the end when there are objects but no function', () => {
    const r = rewrite('# 1 "t.c"\nint table[3] = { 1, 2, 3 };\n# 1 "/usr/include/x.h" 1 3 4\nint sys;\n');
    expect(r.functions).toBe(0);
    expect(r.text).toBe(
      '# 1 "t.c"\nint table[3] = { 1, 2, 3 };\n# 1 "/usr/include/x.h" 1 3 4\nint sys; ' +
        'static const struct __mw_site __mw_sites[1] = { {16u, 1u, "t.c", "", "table"} }; ' +
        'static struct __mw_unit __mw_u = { 0u, 1u, __mw_sites }; ' +
        TABLE_TAIL.trimEnd() +
        ' static const struct __mw_static_ref __mw_s0 __attribute__((used, section("mw_statics"))) = { &__mw_u, 0u, &table, sizeof(table) };\n',
    );
  });

  it('returns the input unchanged when there is nothing to record', () => {
    const input = '# 1 "t.c"\ntypedef int t;\nextern int x;\nint f(int);\n';
    const r = rewriteTranslationUnit(Buffer.from(input), { headerPath: HEADER });
    expect(r.output.equals(Buffer.from(input))).toBe(true);
    expect(r.sites).toBe(0);
  });
});

describe('code tree-sitter cannot parse', () => {
  it('leaves the function alone with a warning naming the user file and line; the others are instrumented', () => {
    const r = rewrite(
      [
        '# 1 "t.c"',
        'int ok1(void) { return 1; }',
        '# 10 "t.c"',
        'int bad(int c) {',
        '  void *p = malloc(1);',
        '  switch (c) { case 1 ... 3: return 1; }',
        '  return 0;',
        '}',
        'int ok2(void) { return 2; }',
      ].join('\n'),
    );
    expect(r).toMatchObject({ functions: 2, skippedFunctions: 1 });
    expect(r.warnings).toEqual([
      { file: 't.c', line: 10, message: "function 'bad' left uninstrumented: tree-sitter found a syntax error at t.c:12" },
    ]);
    expect(r.text).toContain('  void *p = malloc(1);\n  switch (c) { case 1 ... 3: return 1; }\n  return 0;\n');
    expect(sitesOf(r.text).map((s) => s.split(', ')[3])).toEqual(['"ok1"', '"ok1"', '"ok1"', '"ok2"', '"ok2"', '"ok2"']);
  });

  it('reads structs with unnamed bit-fields, whose objects and functions are then recorded', () => {
    const r = rewrite(
      ['# 1 "b.c"', 'struct S0 {', '   volatile unsigned f0 : 25;', '   signed : 0;', '   unsigned int : 4;', '   signed f1 : 10;', '};', 'static struct S0 g_s = {1, 2};', 'int f(void) { return g_s.f1; }'].join('\n'),
    );
    expect(r.warnings).toEqual([]);
    expect(r.functions).toBe(1);
    expect(r.text).toMatch(/sizeof\(g_s\)/);
    // The text compiled is the original: the members are only hidden from the parser.
    expect(r.text).toContain('   signed : 0;\n   unsigned int : 4;\n');
  });

  it('registers no object for the parameter declarations of an old-style definition it misreads', () => {
    // tree-sitter-c reads `int *errnum;` of this K&R definition as a file-scope
    // declaration followed by a loose block; `errnum` is no object.
    const r = rewrite(['# 1 "z.c"', 'static int kept;', 'const char *gzerror(file, errnum)', '    void *file;', '    int *errnum;', '{', '    return file ? "x" : (char *)errnum;', '}', 'int f(void) { return kept; }'].join('\n'));
    expect(r.warnings.map((w) => `${w.file}:${w.line}`)).toEqual(['z.c:2']);
    expect(r.text).not.toMatch(/__mw_s\w* .*errnum|&errnum|sizeof\(errnum\)/);
    expect(r.text).toMatch(/sizeof\(kept\)/);
  });

  it('warns about unparsable code at file scope in the user file only', () => {
    const r = rewrite('# 1 "/usr/include/x.h" 1 3 4\nint @@ sys;\n# 2 "t.c" 2\nint f(void) { return 0; }\nmain() { return 0; }\n');
    expect(r.warnings.map((w) => `${w.file}:${w.line}`)).toEqual(['t.c:3']);
    expect(r.functions).toBe(1);
  });
});

describe('big units', () => {
  it('rewrites a multi-megabyte unit with multibyte text', () => {
    const N = 5000;
    const parts = ['# 1 "big.c"\n'];
    for (let i = 0; i < N; i++) {
      parts.push(
        `static const char *s${i} = "日本語 ${i}";\n` +
          `static int f${i}(int x)\n{\n  char *p = (char *)malloc(16);\n  if (x > ${i}) {\n    free(p);\n    return x;\n  }\n  free(p);\n  return x + ${i} + (int)s${i}[0];\n}\n`,
      );
    }
    const input = parts.join('');
    expect(Buffer.byteLength(input)).toBeGreaterThan(900_000); // many 64 Ki-unit chunks for the parser
    // Its speed is measured by `npm run bench -- --only readers`, as a ratio to parsing the unit alone.
    const r = rewrite(input);
    expect(r).toMatchObject({ functions: N, sites: N * 9, skippedFunctions: 0 });
    expect(r.text.split('\n').length).toBe(input.split('\n').length);
    // 7 sites per function (ENTRY, FALLOFF, malloc, free, return, free, return), then the N statics, then one
    // LOCAL site per function (`char *p`).
    const last = `static int f${N - 1}(int x)\n{${frame(7 * N - 7, 7 * N - 6)}\n  char *p = (char *)__mw_malloc(&__mw_u, ${7 * N - 5}u, 16);`;
    expect(r.text.includes(last)).toBe(true);
    expect(r.text.endsWith(`{ &__mw_u, ${8 * N - 1}u, &s${N - 1}, sizeof(s${N - 1}) };\n`)).toBe(true);
  });
});

describe('leaf call trees: a cast to a typedef name is not a call', () => {
  // tree-sitter knows no typedefs, so `(u32)(x)` reads as a call of `(u32)`; a leaf that casts that way is still a leaf
  const summarised = (text: string): string[] => {
    const result = rewriteTranslationUnit(Buffer.from(text, 'utf8'), { headerPath: HEADER, summarise: { known: knownCalls(true), exclude: new Set() } });
    return [...(result.leafTrees?.summarised ?? [])].sort();
  };
  const unit = [
    'typedef unsigned int u32;',
    'typedef int (*callback)(int);',
    'static u32 cast(const unsigned char *p) { return (u32)(p[0] & 0x7f) << 7 | (u32)(p[1]); }',
    'static int shadowed(int (*u32)(int), int v) { return (u32)(v); }',
    'static int through(callback f, int v) { return (f)(v); }',
    'static int (*table[1])(int);',
    'static int from_table(int v) { return (table[0])(v); }',
    'int main(void) { unsigned char b[2] = {1, 2}; return (int)cast(b) + shadowed(0, 1) + through(0, 2) + from_table(3); }',
    '',
  ].join('\n');

  it('summarises the function that casts, and none that calls through a pointer (a parameter hiding the typedef too)', () => {
    expect(summarised(unit)).toEqual(['cast']);
  });
});

describe('leaf call trees: names in strings', () => {
  const summarised = (text: string): string[] => {
    const result = rewriteTranslationUnit(Buffer.from(text, 'utf8'), { headerPath: HEADER, summarise: { known: knownCalls(true), exclude: new Set() } });
    return [...(result.leafTrees?.summarised ?? [])].sort();
  };
  it('takes a word of a format string for no use of a function, but a string that is its name or an asm\'s text for one', () => {
    const unit = [
      'int printf(const char *, ...);',
      'static int check(int v) { return v + 1; }',
      'static int aliased(int v) { return v + 2; }',
      'static int jumped(int v) { return v + 3; }',
      'int alias_of(int) __attribute__((alias("aliased")));',
      'int main(void) { __asm__ volatile("call jumped" ::: "memory"); printf("%d check %d\\n", check(1), jumped(2)); return aliased(3); }',
      '',
    ].join('\n');
    expect(summarised(unit)).toEqual(['check']);
  });
});

describe('leaf call trees: recursion without heap work is measured', () => {
  const trees = (text: string, pending = false) => {
    const result = rewriteTranslationUnit(Buffer.from(text, 'utf8'), { headerPath: HEADER, summarise: { known: knownCalls(true), exclude: new Set(), pending } });
    return { summarised: [...(result.leafTrees?.summarised ?? [])].sort(), measured: [...(result.leafTrees?.measured ?? [])].sort(), text: result.output.toString('utf8') };
  };
  const unit = [
    'void *malloc(unsigned long);',
    'struct t { struct t *l, *r; };',
    'static int leaf(int v) { return v * 2; }',
    'static long walk(const struct t *t) { return t ? 1 + walk(t->l) + walk(t->r) + leaf(1) : 0; }',
    'static int even(int n);',
    'static int odd(int n) { return n == 0 ? 0 : even(n - 1); }',
    'static int even(int n) { return n == 0 ? 1 : odd(n - 1); }',
    'static long outer(const struct t *t) { return walk(t) + even(4); }',
    'static struct t *grow(int d) { struct t *t = malloc(sizeof *t); t->l = d ? grow(d - 1) : 0; t->r = 0; return t; }',
    'static int (*fp)(int);',
    'static int pointed(int n) { return n ? fp(n - 1) : 0; }',
    'long exported(const struct t *t) { return t ? exported(t->l) : 0; }',
    'void qsort(void *, unsigned long, unsigned long, int (*)(const void *, const void *));',
    'static int compare(const void *a, const void *b) { return leaf(*(const int *)a) - *(const int *)b; }',
    'int api(int v) { return leaf(v) + 1; }',
    'static int user(int v) { return api(v) * 2; }',
    'static int mixed(int v) { return leaf(v) + api(v); }',
    'static void *maybe(int n) { void *p = 0; if (n > 3) p = malloc(n); return p; }',
    'static void *late(int n) { if (n < 0) return 0; return malloc(n); }',
    'int main(void) { int v[4] = { 3, 1, 2, 0 }; fp = pointed; qsort(v, 4, sizeof *v, compare); return (int)outer(grow(3)) + pointed(2) + (int)exported(0) + user(v[0]) + mixed(1) + !maybe(1) + !late(2); }',
    '',
  ].join('\n');

  it('probes call trees without heap work that no caller bounds (recursion, a pointer\'s or another unit\'s callee), and records the rest as before', () => {
    const r = trees(unit);
    expect(r.summarised).toEqual(['leaf']);
    // compare is called through a pointer, api from other units: measured, never summarised. user calls api, which a
    // shared object may interpose with a body that allocates, and exported calls itself so: both recorded.
    expect(r.measured).toEqual(['api', 'compare', 'even', 'odd', 'outer', 'walk']);
    expect(r.text).toMatch(/static int user\(int v\) \{struct __mw_frame __mw_f/);
    // walk calls the summarised leaf: its probe compares its depth plus their bound; even's, its depth.
    expect(r.text).toMatch(/static long walk\(const struct t \*t\) \{int __mw_p __attribute__\(\(unused\)\) = __mw_probe_bounded\(&__mw_u, \d+u, \d+u\);/);
    expect(r.text).toMatch(/static int even\(int n\) \{int __mw_p __attribute__\(\(unused\)\) = __mw_probe\(&__mw_u, \d+u, \d+u\);/);
    expect(r.text).toMatch(/static struct t \*grow\(int d\) \{struct __mw_frame __mw_f/);
    expect(r.text).toMatch(/static int pointed\(int n\) \{struct __mw_frame __mw_f/);
    expect(r.text).toMatch(/long exported\(const struct t \*t\) \{struct __mw_frame __mw_f/);
    // Without pending entries every recorded call is written, and no PENDING_CALLS site says otherwise.
    expect(r.text.match(/= __mw_enter_(lazy|bounded)\(/g)).toBeNull();
    expect(r.text).not.toMatch(/\{25u, /);
  });

  it('with pending entries (--mw-calls=heap), a recorded function enters pending, bounded where it calls summarised ones, each named by a PENDING_CALLS site, but one whose every call allocates', () => {
    const r = trees(unit, true);
    expect(r.measured).toEqual(['api', 'compare', 'even', 'odd', 'outer', 'walk']);
    const entry = (fn: string) => new RegExp(`\\b${fn}\\([^)]*\\) \\{struct __mw_frame __mw_f __attribute__\\(\\(cleanup\\(__mw_leave\\), unused\\)\\) = (__mw_enter\\w*)\\(`).exec(r.text)?.[1];
    // maybe allocates in a branch, late after a return: pending; grow allocates on every way through: entered as before.
    expect(['user', 'pointed', 'exported', 'main', 'maybe', 'late'].map(entry)).toEqual(Array(6).fill('__mw_enter_lazy'));
    expect(entry('mixed')).toBe('__mw_enter_bounded');
    expect(entry('grow')).toBe('__mw_enter');
    expect(r.text).toMatch(/static long walk\(const struct t \*t\) \{int __mw_p __attribute__\(\(unused\)\) = __mw_probe_bounded\(/);
    const pending = [...r.text.matchAll(/\{25u, \d+u, "[^"]*", "(\w+)", "\1"\}/g)].map((m) => m[1]).sort();
    expect(pending).toEqual(['exported', 'late', 'main', 'maybe', 'mixed', 'pointed', 'user']);
  });
});

describe('leaf call trees: names of struct members', () => {
  const found = (text: string) => {
    const result = rewriteTranslationUnit(Buffer.from(text, 'utf8'), { headerPath: HEADER, summarise: { known: knownCalls(true), exclude: new Set() } });
    return { summarised: [...(result.leafTrees?.summarised ?? [])].sort(), measured: [...(result.leafTrees?.measured ?? [])].sort() };
  };
  it('takes a member named like a function for no use of it, but an initializer or a compound literal naming it for one', () => {
    const unit = [
      'struct frame { unsigned depth; struct { int size; } inner; int (*kind)(int); };',
      'struct node { struct node *l, *r; };',
      'static int depth(const struct node *n) { return n ? 1 + (depth(n->l) > depth(n->r) ? depth(n->l) : depth(n->r)) : 0; }',
      'static int size(int v) { return v + 1; }',
      'static int kind(int v) { return v * 2; }',
      'static int stored(int v) { return v - 1; }',
      'static int literal(int v) { return v - 2; }',
      'struct ops { int (*op)(int); };',
      'static struct ops table = { stored };',
      'int main(void) { struct frame f = { 0 }; struct ops o = (struct ops){ literal }; f.depth = 1u; return depth(0) + size(1) + kind(2) + table.op(3) + o.op(4) + (int)f.depth; }',
      '',
    ].join('\n');
    // stored and literal are used as values: never summarised, measured (their own probes need no caller's bound).
    expect(found(unit)).toEqual({ summarised: ['kind', 'size'], measured: ['depth', 'literal', 'stored'] });
  });
});
