// Linemarkers to files, lines and kinds; the blanked copy tree-sitter parses;
// the site table's C text and its agreement with runtime/memwrap.h.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { blankDirectives, readLinemarkers } from '../../instrumenter/linemarkers.js';
import { makeParseCopy } from '../../instrumenter/parse-copy.js';
import { cStringLiteral, renderStaticRef, SiteKind, SiteTable } from '../../instrumenter/sites.js';
import { header } from './cc.js';

const UNIT = [
  '# 0 "a.c"', //                                   0
  '# 1 "/work/runtime/memwrap.h" 1', //             1
  'struct __mw_frame;', //                          2  header line 1
  '# 1 "<command-line>" 2', //                      3
  '# 1 "a.c"', //                                   4
  '# 1 "/usr/include/stdlib.h" 1 3 4', //           5
  'extern void *malloc (unsigned long);', //        6  stdlib.h 1
  '# 3 "a.c" 2', //                                 7
  'int main(void) {', //                            8  a.c 3
  '  if (', //                                      9  a.c 4
  '# 4 "a.c" 3 4', //                              10
  '     _setjmp (', //                             11  a.c 4, a macro from a system header
  '# 4 "a.c"', //                                  12
  '     env)) return 1;', //                       13  a.c 4
  '#pragma GCC poison x', //                       14  a.c 5
  '  return 0;', //                                15  a.c 6
  '# 1 "dir\\\\we\\"ird\\303\\251.h" 1', //        16
  'int y;', //                                     17
  '}',
].join('\n');

describe('readLinemarkers', () => {
  const lines = readLinemarkers(UNIT, '/work/runtime/memwrap.h', 'utf8');

  it('gives each row its file and line', () => {
    expect([8, 9, 11, 13, 15].map((r) => `${lines.file(r).name}:${lines.line(r)}`)).toEqual([
      'a.c:3',
      'a.c:4',
      'a.c:4',
      'a.c:4',
      'a.c:6',
    ]);
    expect(lines.file(6).name).toBe('/usr/include/stdlib.h');
    expect(lines.line(6)).toBe(1);
  });

  it('tells user files, system headers, the runtime header and built-ins apart', () => {
    expect(lines.kind(2)).toBe('header');
    expect(lines.kind(6)).toBe('system');
    expect(lines.kind(8)).toBe('user');
    // `# 4 "a.c" 3 4`: a system macro expanded in the user's file stays the user's.
    expect(lines.kind(11)).toBe('user');
    expect(lines.files.find((f) => f.name === '<command-line>')?.kind).toBe('builtin');
  });

  it('unescapes file names and writes them back as printable C literals', () => {
    const file = lines.file(17);
    expect(file.name).toBe('dir\\we"irdé.h');
    expect(file.literal).toBe('"dir\\\\we\\"ird\\303\\251.h"');
  });

  it('counts rows before any marker as user lines of an unnamed file', () => {
    const plain = readLinemarkers('int x;\nint y;\n', '', 'utf8');
    expect(plain.kind(1)).toBe('user');
    expect(plain.line(1)).toBe(2);
  });

  it('matches the runtime header by resolved path', () => {
    const relative = readLinemarkers('# 1 "runtime/../runtime/memwrap.h" 1\nint x;\n', 'runtime/memwrap.h', 'utf8');
    expect(relative.kind(1)).toBe('header');
  });
});

describe('blankDirectives and makeParseCopy', () => {
  it('blank every directive line to spaces of the same length', () => {
    const blanked = blankDirectives(UNIT);
    expect(blanked.length).toBe(UNIT.length);
    expect(blanked.split('\n').map((l) => l.length)).toEqual(UNIT.split('\n').map((l) => l.length));
    expect(blanked).not.toMatch(/#/);
    expect(blanked.split('\n')[13]).toBe('     env)) return 1;');
  });

  it('keeps the CR of CRLF lines', () => {
    expect(blankDirectives('# 1 "a.c"\r\nint x;\r\n')).toBe('         \r\nint x;\r\n');
  });

  it('overwrites GNU constructs tree-sitter-c cannot parse, keeping offsets and newlines', () => {
    const text = [
      'x = __builtin_va_arg(ap, char *);',
      '__attribute__((fallthrough));',
      'n = __builtin_offsetof (struct s,',
      '  b[2]);',
      '_Thread_local int t; __signed__ char c;',
      'int y __attribute__((unused)) = 1;',
    ].join('\n');
    const copy = makeParseCopy(text);
    expect(copy.length).toBe(text.length);
    expect(copy.split('\n')).toEqual([
      'x = __builtin_va_arg(ap,0      );',
      '                            ;',
      'n = 0                            ',
      '       ;',
      '__thread      int t; signed     char c;',
      'int y __attribute__((unused)) = 1;',
    ]);
  });
});

describe('site table text', () => {
  it('uses the MW_SITE_* numbers of runtime/memwrap.h', () => {
    const defined = new Map<string, number>();
    for (const m of readFileSync(header, 'utf8').matchAll(/#define MW_SITE_(\w+) (\d+)/g)) defined.set(m[1]!, Number(m[2]));
    expect(Object.fromEntries(defined)).toEqual({ ...SiteKind });
  });

  it('renders the table, the unit and its mw_units entry on one line', () => {
    const sites = new SiteTable();
    sites.add({ kind: SiteKind.ENTRY, line: 3, file: '"t.c"', func: '"main"', name: '"main"' });
    sites.add({ kind: SiteKind.FALLOFF, line: 9, file: '"t.c"', func: '"main"', name: '"main"' });
    expect(sites.renderUnit()).toBe(
      'static const struct __mw_site __mw_sites[2] = { {1u, 3u, "t.c", "main", "main"}, {2u, 9u, "t.c", "main", "main"} }; ' +
        'static struct __mw_unit __mw_u = { 0u, 2u, __mw_sites }; ' +
        'static struct __mw_unit *const __mw_unit_ref __attribute__((used, section("mw_units"))) = &__mw_u; ',
    );
    expect(new SiteTable().renderUnit()).toBe('');
    expect(renderStaticRef(0, 5, 'msg')).toBe(
      'static const struct __mw_static_ref __mw_s0 __attribute__((used, section("mw_statics"))) = { &__mw_u, 5u, &msg, sizeof(msg) };',
    );
  });

  it('writes C string literals in printable ASCII', () => {
    expect(cStringLiteral(Buffer.from('a"b\\c??=\n日', 'utf8'))).toBe('"a\\"b\\\\c\\?\\?=\\012\\346\\227\\245"');
  });
});

describe('site file names', () => {
  it('are made absolute against the compile directory, built-ins and absolute names kept', () => {
    const text = '# 1 "src/a.c"\nint x;\n# 1 "<built-in>"\nint y;\n# 1 "/usr/include/stdio.h" 1 3 4\nint z;\n';
    const lines = readLinemarkers(text, '', 'utf8', '/home/me/proj');
    expect(lines.file(1).literal).toBe('"/home/me/proj/src/a.c"');
    expect(lines.file(1).name).toBe('src/a.c');
    expect(lines.file(3).literal).toBe('"<built-in>"');
    expect(lines.file(5).literal).toBe('"/usr/include/stdio.h"');
  });
});
