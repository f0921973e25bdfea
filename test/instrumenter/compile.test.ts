// The rewriter on real `cc -E -include runtime/memwrap.h` output of the
// fixtures in test/fixtures/rewrite/, with gcc and clang: the rewritten text
// only adds to the original (every line and linemarker in place), compiles
// without a new warning under the flags the original passes with -Werror,
// keeps diagnostics on the user's file and line, and, linked with a stub
// runtime that prints each event, records what the fixture says it should.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { knownCalls } from '../../instrumenter/known-calls.js';
import { rewriteTranslationUnit, type RewriteResult } from '../../instrumenter/rewrite.js';
import {
  CLANG_ONLY,
  compilePreprocessed,
  type Compiler,
  directiveLines,
  fixtures,
  GNU,
  header,
  preprocess,
  type Ran,
  run,
  scratch,
  scratchPath,
  STRICT,
} from './cc.js';

interface Case {
  readonly file: string;
  readonly flags: readonly string[];
  readonly functions: number;
  readonly skipped?: number;
  readonly warnings?: readonly string[];
  /** Lines of the stub runtime's transcript (the whole of it), when the fixture is run. */
  readonly transcript?: readonly string[];
  /** Rewritten with leaf call trees summarised (the default at -O1 and above). */
  readonly summarise?: boolean;
}

const CASES: readonly Case[] = [
  {
    file: 'returns.c',
    flags: STRICT,
    functions: 10,
    transcript: [
      'enter main returns.c:69',
      'enter nothing returns.c:12',
      'leave nothing FALLOFF returns.c:14',
      'enter early returns.c:16',
      'leave early RETURN returns.c:19',
      'enter early returns.c:16',
      'leave early FALLOFF returns.c:22',
      'enter pick returns.c:24',
      'leave pick RETURN returns.c:26',
      'enter classify returns.c:29',
      'leave classify RETURN returns.c:37',
      'enter kr returns.c:47',
      'leave kr RETURN returns.c:51',
      'enter nested returns.c:54',
      'leave nested RETURN returns.c:58',
      // `return value(x);`: value runs before outer's exit is recorded.
      'enter outer returns.c:64',
      'enter value returns.c:7',
      'leave value RETURN returns.c:9',
      'leave outer RETURN returns.c:66',
      'enter twice returns-helper.h:3',
      'leave twice RETURN returns-helper.h:5',
      'leave main RETURN returns.c:76',
    ],
  },
  {
    file: 'allocs.c',
    flags: STRICT,
    functions: 4,
    transcript: [
      'static  env 200 allocs.c:19',
      'static  senv 200 allocs.c:20',
      'enter main allocs.c:68',
      'enter every_kind allocs.c:27',
      'malloc every_kind allocs.c:31', // NEW(int), the line of the macro's use
      'strdup every_kind allocs.c:32', // DUP("x")
      'strndup every_kind allocs.c:33',
      'calloc every_kind allocs.c:34',
      'realloc every_kind allocs.c:40',
      'reallocarray every_kind allocs.c:41',
      'posix_memalign every_kind allocs.c:42',
      'aligned_alloc every_kind allocs.c:43',
      'memalign every_kind allocs.c:44',
      'valloc every_kind allocs.c:45',
      'pvalloc every_kind allocs.c:46',
      'malloc every_kind allocs.c:47',
      'free every_kind allocs.c:47',
      ...Array<string>(5).fill('free every_kind allocs.c:49'),
      ...Array<string>(4).fill('free every_kind allocs.c:50'),
      'leave every_kind RETURN allocs.c:51',
      'enter jumps allocs.c:54',
      'resume 0',
      'enter jump allocs.c:22',
      'resume 1', // longjmp skipped jump's exit; the runtime closes it here
      'resume 0',
      'resume 1',
      'leave jumps RETURN allocs.c:65',
      'leave main RETURN allocs.c:70',
    ],
  },
  {
    file: 'statics.c',
    flags: STRICT,
    functions: 3,
    transcript: [
      'static use_all calls 4 statics.c:33',
      'static use_all names 16 statics.c:34',
      'static use_all x1 4 statics.c:35',
      'static use_all x2 8 statics.c:35',
      'static use_all inner 4 statics.c:38',
      'static  counter 4 statics.c:13',
      'static  a 4 statics.c:14',
      'static  b 16 statics.c:14',
      'static  msg 3 statics.c:16',
      'static  origin 8 statics.c:17',
      'static  anon 16 statics.c:21',
      'static  table 12 statics.c:22',
      'static  callback 8 statics.c:23',
      'enter main statics.c:48',
      'enter use_all statics.c:31',
      'enter plus_one statics.c:26',
      'leave plus_one RETURN statics.c:28',
      'leave use_all RETURN statics.c:44',
      'leave main RETURN statics.c:50',
    ],
  },
  {
    file: 'utf8.c',
    flags: STRICT,
    functions: 2,
    transcript: [
      'static  greeting 25 utf8.c:6',
      'enter main utf8.c:18',
      'enter copy utf8.c:8',
      'malloc copy utf8.c:11',
      'leave copy RETURN utf8.c:15',
      'free main utf8.c:21',
      'leave main RETURN utf8.c:22',
    ],
  },
  {
    file: 'unparsable.c',
    flags: ['-std=gnu89', '-Wall', '-Wextra', '-Werror'],
    functions: 2,
    skipped: 1,
    warnings: ["unparsable.c:6: function 'range' left uninstrumented: tree-sitter found a syntax error at unparsable.c:11"],
    transcript: [
      'enter main unparsable.c:24',
      'enter fine unparsable.c:17',
      'malloc fine unparsable.c:19',
      'free fine unparsable.c:20',
      'leave fine RETURN unparsable.c:21',
      'leave main RETURN unparsable.c:26',
    ],
  },
  {
    file: 'measured.c',
    flags: STRICT,
    functions: 6,
    summarise: true,
    transcript: [
      'enter main measured.c:37',
      'enter grow measured.c:28',
      'malloc grow measured.c:30',
      'enter grow measured.c:28',
      'malloc grow measured.c:30',
      'leave grow RETURN measured.c:34',
      'leave grow RETURN measured.c:34',
      ...Array<string>(5).fill('probe walk measured.c:14'), // root, its left node, their three null children
      'probe even measured.c:25',
      'probe odd measured.c:26',
      'probe even measured.c:25',
      'free main measured.c:44',
      'free main measured.c:45',
      'leave main RETURN measured.c:46',
    ],
  },
  { file: 'no-functions.c', flags: STRICT, functions: 0 },
  { file: 'nothing.c', flags: STRICT, functions: 0 },
  { file: 'user-malloc.c', flags: STRICT, functions: 4 },
  { file: 'gnu.c', flags: GNU, functions: 6, skipped: 1 },
];

const COMPILERS: readonly Compiler[] = ['gcc', 'clang'];

interface Outcome {
  readonly input: Buffer;
  readonly result: RewriteResult;
  readonly original: Ran;
  readonly rewritten: Ran;
  readonly transcript?: Ran;
}

const outcomes = new Map<string, Outcome>();
const key = (cc: Compiler, file: string): string => `${cc} ${file}`;

/** Runs `jobs` with at most `limit` at a time. */
async function pool<T>(jobs: Array<() => Promise<T>>, limit: number): Promise<T[]> {
  const results: T[] = new Array<T>(jobs.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < jobs.length) {
      const k = next++;
      results[k] = await jobs[k]!();
    }
  };
  await Promise.all(Array.from({ length: limit }, worker));
  return results;
}

beforeAll(async () => {
  const stubs = new Map<Compiler, Ran>();
  await pool(
    COMPILERS.map((cc) => async () => {
      stubs.set(cc, await run(cc, ['-c', '-std=gnu11', '-I', path.dirname(header), 'stub-runtime.c', '-o', scratchPath(`${cc}-stub.o`)]));
    }),
    2,
  );
  const jobs = CASES.flatMap((c) =>
    COMPILERS.map((cc) => async () => {
      const extra = cc === 'clang' ? CLANG_ONLY : [];
      const input = await preprocess(cc, c.file, c.flags);
      const summarise = c.summarise === true ? { known: knownCalls(true), exclude: new Set<string>() } : undefined;
      const result = rewriteTranslationUnit(input, { headerPath: header, summarise });
      const out = scratch(`${cc}-${c.file}.i`, result.output);
      const object = scratchPath(`${cc}-${c.file}.o`);
      const [original, rewritten] = await Promise.all([
        run(cc, ['-c', ...c.flags, ...extra, c.file, '-o', '/dev/null']),
        compilePreprocessed(cc, out, [...c.flags, ...extra], object),
      ]);
      let transcript: Ran | undefined;
      if (c.transcript !== undefined && rewritten.code === 0 && stubs.get(cc)?.code === 0) {
        const binary = scratchPath(`${cc}-${c.file}.bin`);
        const linked = await run(cc, [object, scratchPath(`${cc}-stub.o`), '-o', binary]);
        transcript = linked.code === 0 ? await run(binary, []) : linked;
      }
      outcomes.set(key(cc, c.file), { input, result, original, rewritten, transcript });
    }),
  );
  await pool(jobs, 4);
  for (const [cc, stub] of stubs) expect(stub.stderr, `${cc} stub-runtime.c`).toBe('');
});

const get = (cc: Compiler, file: string): Outcome => {
  const outcome = outcomes.get(key(cc, file));
  if (outcome === undefined) throw new Error(`no outcome for ${cc} ${file}`);
  return outcome;
};

/**
 * A transcript as compared: static objects in name order (the order of the
 * mw_statics section is the compiler's), and `./returns-helper.h`, as clang
 * names an included file, read as `returns-helper.h`, as GCC names it.
 */
function normalize(lines: readonly string[]): string[] {
  const plain = lines.map((line) => line.replace(/ \.\//, ' '));
  return [...plain.filter((l) => l.startsWith('static ')).sort(), ...plain.filter((l) => !l.startsWith('static '))];
}

/** True when `small` can be had from `big` by deleting characters (the rewrite only inserts). */
function isSubsequence(small: string, big: string): boolean {
  let k = 0;
  for (let i = 0; i < big.length && k < small.length; i++) if (big[i] === small[k]) k++;
  return k === small.length;
}

describe.each(COMPILERS)('%s', (cc) => {
  describe.each(CASES)('$file', (c) => {
    it('only inserts: every line, newline and linemarker stays in place', () => {
      const { input, result } = get(cc, c.file);
      const before = input.toString('utf8');
      const after = result.output.toString('utf8');
      const beforeLines = before.split('\n');
      const afterLines = after.split('\n');
      expect(afterLines.length).toBe(beforeLines.length);
      expect(directiveLines(after)).toEqual(directiveLines(before));
      const changed = beforeLines.flatMap((line, i) => (isSubsequence(line, afterLines[i]!) ? [] : [i]));
      expect(changed).toEqual([]);
    });

    it(`compiles without warnings under ${c.flags.join(' ')}, as the original does`, () => {
      const { original, rewritten } = get(cc, c.file);
      expect(original.stderr, 'the original fixture').toBe('');
      expect(original.code).toBe(0);
      expect(rewritten.stderr, 'the rewritten fixture').toBe('');
      expect(rewritten.code).toBe(0);
    });

    it('instruments the functions it should and warns as it should', () => {
      const { result } = get(cc, c.file);
      expect(result.functions).toBe(c.functions);
      expect(result.skippedFunctions).toBe(c.skipped ?? 0);
      expect(result.warnings.map((w) => `${w.file}:${w.line}: ${w.message}`)).toEqual(c.warnings ?? []);
    });

    if (c.transcript !== undefined) {
      const expected = c.transcript;
      it('records the expected events when run with the stub runtime', () => {
        const { transcript } = get(cc, c.file);
        expect(transcript?.stderr).toBe('');
        expect(normalize(transcript?.stdout.trimEnd().split('\n') ?? [])).toEqual(normalize(expected));
        expect(transcript?.code).toBe(0);
      });
    }
  });

  it('leaves a unit with nothing to record byte for byte as it was', () => {
    const { input, result } = get(cc, 'nothing.c');
    expect(result.sites).toBe(0);
    expect(result.output.equals(input)).toBe(true);
  });

  it('puts table and registrations at the end of a unit without functions', () => {
    const { result } = get(cc, 'no-functions.c');
    const text = result.output.toString('utf8');
    const last = text.trimEnd().split('\n').pop()!;
    expect(last).toMatch(/^const char name\[\] = "x"; static const struct __mw_site __mw_sites\[2\] = .*&name, sizeof\(name\) \};$/);
    expect(result.sites).toBe(2);
  });

  it('keeps calls to the malloc a unit defines and to a parameter named free', () => {
    const text = get(cc, 'user-malloc.c').result.output.toString('utf8');
    expect(text).toContain('  char *p = (char *)malloc(4);\n');
    expect(text).toMatch(/ char \*s = __mw_strdup\(&__mw_u, \d+u, "x"\);\n/);
    expect(text).toMatch(/\n  free\(item\);\n/);
  });

  it('leaves inline functions with external linkage and nested functions alone (gnu.c)', () => {
    const text = get(cc, 'gnu.c').result.output.toString('utf8');
    expect(text).toContain('inline int exported(int x)\n{\n  return x + 1;\n}');
    if (cc === 'gcc') expect(text).toContain('  int inner(int y) { return y + x; }\n');
    // _Thread_local objects are not registered; va_arg and offsetof parsed.
    expect(text).not.toMatch(/&tls, sizeof/);
    expect(get(cc, 'gnu.c').result.warnings).toEqual([]);
  });
});

describe('diagnostics on the rewritten text', () => {
  it.each(COMPILERS)('%s names the same file and line as for the original', async (cc) => {
    const flags = ['-std=c89', '-Wall', '-Wextra', ...(cc === 'clang' ? ['-Wsometimes-uninitialized'] : ['-O1'])];
    const input = await preprocess(cc, 'diagnostics.c', flags);
    const out = scratch(`${cc}-diagnostics.i`, rewriteTranslationUnit(input, { headerPath: header }).output);
    const [original, rewritten] = await Promise.all([
      run(cc, ['-c', ...flags, 'diagnostics.c', '-o', '/dev/null']),
      compilePreprocessed(cc, out, flags),
    ]);
    const places = (stderr: string): string[] => [...stderr.matchAll(/^([\w.-]+:\d+):\d+: (warning|note): ([^\n[]*)/gm)].map((m) => `${m[1]} ${m[2]} ${m[3]}`);
    expect(places(original.stderr).some((p) => p.startsWith('diagnostics.c:8 warning unused variable'))).toBe(true);
    expect(places(rewritten.stderr)).toEqual(places(original.stderr));
  });
});

describe('UTF-8 comments kept by the preprocessor (-C)', () => {
  it.each(COMPILERS)('%s: edits after Japanese comments land at the right bytes', async (cc) => {
    const input = await preprocess(cc, 'utf8.c', ['-C', ...STRICT]);
    expect(input.toString('utf8')).toContain('/* 文字列をコピーする */');
    const output = rewriteTranslationUnit(input, { headerPath: header }).output.toString('utf8');
    expect(output).toMatch(/\/\* 文字列をコピーする \*\/\n {2}char \*s = \(char \*\)__mw_malloc\(&__mw_u, \d+u, sizeof greeting\);\n {2}if \(s == /);
    expect(output).toMatch(/\{__mw_f\.site = __mw_u\.base \+ \d+u; return /);
    const compiled = await compilePreprocessed(cc, scratch(`${cc}-utf8-comments.i`, output), [...STRICT, ...(cc === 'clang' ? CLANG_ONLY : [])]);
    expect(compiled.stderr).toBe('');
    expect(compiled.code).toBe(0);
  });
});

describe('fixtures', () => {
  it('say what they test in their first line', () => {
    for (const c of CASES) expect(readFileSync(`${fixtures}/${c.file}`, 'utf8')).toMatch(new RegExp(`^/\\* ${c.file.replace('.', '\\.')}`));
  });
});
