// cc-memwrap in front of real build systems and odd command lines: make with
// dependency files, CMake's compiler launcher, separate compile and link,
// archives, response files, -x c, pass-through of what is not C, the
// compiler's own diagnostics and exit status, and C the rewriter cannot take.
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { uninstrumentedUnits } from '../../instrumenter/fallback-messages.js';
import { packageRoot } from '../../package-root.js';
import { skipWhen } from '../support/machine.js';
import { must, reportJson, run, runTraced, scratch, traceOf, wrapper } from '../support/programs.js';

const project = path.join(packageRoot, 'test', 'fixtures', 'project');

function copyProject(name: string): string {
  const dir = scratch(name);
  cpSync(project, dir, { recursive: true });
  return dir;
}

function tracedFunctions(trace: string): string[] {
  const report = reportJson(trace) as { topSites: Array<{ function: string | null }> };
  return report.topSites.map((s) => s.function ?? '');
}

describe('build systems', () => {
  it('make CC="cc-memwrap gcc" builds, records, and keeps dependency tracking', () => {
    const dir = copyProject('make');
    const make = must('make', [`CC=${wrapper} gcc`], { cwd: dir });
    expect(make.stderr).toBe('');
    expect(readFileSync(path.join(dir, 'main.d'), 'utf8')).toMatch(/^main\.o: main\.c .*shapes\.h/m);
    const ran = runTraced(path.join(dir, 'shapes'), [], path.join(dir, 'traces'));
    expect(ran.stdout).toBe('triangle has 3 sides\n');
    expect(tracedFunctions(traceOf(path.join(dir, 'traces'), ran.pid))).toEqual(expect.arrayContaining(['shape_new']));
    // Touching the header rebuilds both objects; touching shapes.c only one.
    expect(must('make', [`CC=${wrapper} gcc`, '-q'], { cwd: dir, env: process.env }).status).toBe(0);
    const later = new Date(Date.now() + 5000);
    utimesSync(path.join(dir, 'shapes.c'), later, later);
    const rebuilt = must('make', [`CC=${wrapper} gcc`], { cwd: dir });
    expect(rebuilt.stdout).toMatch(/-c shapes\.c/);
    expect(rebuilt.stdout).not.toMatch(/-c main\.c/);
  });

  it('cmake -DCMAKE_C_COMPILER_LAUNCHER=cc-memwrap builds a recording program', () => {
    const dir = copyProject('cmake');
    const build = path.join(dir, 'build');
    must('cmake', ['-S', dir, '-B', build, `-DCMAKE_C_COMPILER_LAUNCHER=${wrapper}`, '-DCMAKE_C_COMPILER=gcc']);
    must('cmake', ['--build', build]);
    const ran = runTraced(path.join(build, 'shapes'), [], path.join(dir, 'traces'));
    expect(ran.stdout).toBe('triangle has 3 sides\n');
    const trace = traceOf(path.join(dir, 'traces'), ran.pid);
    expect(tracedFunctions(trace)).toEqual(expect.arrayContaining(['shape_new']));
    expect((reportJson(trace) as { allocations: number }).allocations).toBeGreaterThanOrEqual(3);
  });

  it('--mw- flags work wherever they stand: in make\'s CFLAGS, in CMake\'s launcher list, in a response file', () => {
    const branchesIn = (trace: string): number => (must(wrapper, ['dump', trace]).stdout.match(/EXT BRANCH/g) ?? []).length;
    const dir = copyProject('flags-anywhere');
    // Without the flag the trace holds no branch; with it in CFLAGS, after the compiler's name, it does.
    must('make', [`CC=${wrapper} gcc`, 'CFLAGS=-O2'], { cwd: dir });
    const plainRun = runTraced(path.join(dir, 'shapes'), [], path.join(dir, 'traces-plain'));
    expect(branchesIn(traceOf(path.join(dir, 'traces-plain'), plainRun.pid))).toBe(0);
    const made = must('make', ['-B', `CC=${wrapper} gcc`, 'CFLAGS=-O2 --mw-branches'], { cwd: dir });
    expect(made.stderr).toBe('');
    const ran = runTraced(path.join(dir, 'shapes'), [], path.join(dir, 'traces'));
    expect(ran.stdout).toBe('triangle has 3 sides\n');
    expect(branchesIn(traceOf(path.join(dir, 'traces'), ran.pid))).toBeGreaterThan(0);

    const build = path.join(dir, 'build');
    // CMake runs the launcher only for compiles (not for its compiler check or the link), so its flags go in the
    // launcher list rather than CMAKE_C_FLAGS.
    must('cmake', ['-S', dir, '-B', build, `-DCMAKE_C_COMPILER_LAUNCHER=${wrapper};--mw-branches;--mw-strict`, '-DCMAKE_C_COMPILER=gcc']);
    must('cmake', ['--build', build]);
    const cmakeRun = runTraced(path.join(build, 'shapes'), [], path.join(dir, 'traces-cmake'));
    expect(branchesIn(traceOf(path.join(dir, 'traces-cmake'), cmakeRun.pid))).toBeGreaterThan(0);

    writeFileSync(path.join(dir, 'flags.rsp'), '--mw-branches -O1\n');
    must(wrapper, ['gcc', '@flags.rsp', 'main.c', 'shapes.c', '-o', 'rsp'], { cwd: dir });
    const rspRun = runTraced(path.join(dir, 'rsp'), [], path.join(dir, 'traces-rsp'));
    expect(branchesIn(traceOf(path.join(dir, 'traces-rsp'), rspRun.pid))).toBeGreaterThan(0);
    // Passed through untouched (-E), the flag still never reaches the compiler.
    expect(must(wrapper, ['gcc', '-E', '--mw-branches', 'main.c'], { cwd: dir }).stdout).toBe(must('gcc', ['-E', 'main.c'], { cwd: dir }).stdout);

    const unknown = run(wrapper, ['gcc', '-O2', '--mw-bogus', 'main.c'], { cwd: dir });
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toBe('cc-memwrap: unknown option --mw-bogus (see cc-memwrap --help); it is not passed to gcc\n');
    expect(must(wrapper, ['--help']).stdout).toMatch(/before or after the compiler name, e\.g\. in make's\s+CFLAGS; they are never passed to the compiler/);
  });

  it('-c objects link later through cc-memwrap, through plain gcc, and from an archive', () => {
    const dir = copyProject('separate');
    must(wrapper, ['--mw-strict', 'gcc', '-c', 'main.c', 'shapes.c'], { cwd: dir });
    expect(existsSync(path.join(dir, 'main.o')) && existsSync(path.join(dir, 'shapes.o'))).toBe(true);
    must(wrapper, ['gcc', 'main.o', 'shapes.o', '-o', 'via-wrapper'], { cwd: dir });
    must('gcc', ['main.o', 'shapes.o', '-o', 'via-gcc'], { cwd: dir });
    must('ar', ['rcs', 'libshapes.a', 'shapes.o'], { cwd: dir });
    must(wrapper, ['gcc', 'main.o', '-L.', '-lshapes', '-o', 'via-archive'], { cwd: dir });
    for (const exe of ['via-wrapper', 'via-gcc', 'via-archive']) {
      const traces = path.join(dir, `traces-${exe}`);
      const ran = runTraced(path.join(dir, exe), [], traces);
      expect(ran.stdout).toBe('triangle has 3 sides\n');
      expect(tracedFunctions(traceOf(traces, ran.pid))).toEqual(expect.arrayContaining(['shape_new']));
    }
  });

  it('-c -o /dev/null (a configure probe) keeps /dev/null a device', () => {
    const dir = copyProject('devnull');
    const nullBefore = statSync('/dev/null');
    must(wrapper, ['--mw-strict', 'gcc', '-c', 'shapes.c', '-o', '/dev/null'], { cwd: dir });
    const nullAfter = statSync('/dev/null');
    expect(nullAfter.isCharacterDevice()).toBe(true);
    expect(nullAfter.rdev).toBe(nullBefore.rdev);
  });

  it('an object written on another file system (/dev/shm) still carries the runtime', (ctx) => {
    // /dev/shm is a tmpfs: the object cannot be renamed there from the
    // temporary directory, so it is copied, and still carries the runtime.
    skipWhen(ctx, existsSync('/dev/shm') ? null : 'this machine has no /dev/shm to stand for another file system');
    const dir = copyProject('elsewhere');
    const away = mkdtempSync('/dev/shm/cc-memwrap-test-');
    try {
      must(wrapper, ['--mw-strict', 'gcc', '-c', 'shapes.c', '-o', path.join(away, 'shapes.o')], { cwd: dir });
      must(wrapper, ['gcc', 'main.c', path.join(away, 'shapes.o'), '-o', 'prog'], { cwd: dir });
      const ran = runTraced(path.join(dir, 'prog'), [], path.join(dir, 'traces'));
      expect(ran.stdout).toBe('triangle has 3 sides\n');
      expect(tracedFunctions(traceOf(path.join(dir, 'traces'), ran.pid))).toEqual(expect.arrayContaining(['shape_new']));
    } finally {
      rmSync(away, { recursive: true, force: true });
    }
  });

  it('reads @response files and -x c', () => {
    const dir = copyProject('rsp');
    cpSync(path.join(dir, 'main.c'), path.join(dir, 'main.txt'));
    writeFileSync(path.join(dir, 'args.rsp'), '-O2 "-DGREETING=\\"hi there\\"" -x c main.txt -x none shapes.c -o prog\n');
    must(wrapper, ['--mw-strict', 'gcc', '@args.rsp'], { cwd: dir });
    const ran = runTraced(path.join(dir, 'prog'), [], path.join(dir, 'traces'));
    expect(ran.stdout).toBe('triangle has 3 sides\n');
    expect(tracedFunctions(traceOf(path.join(dir, 'traces'), ran.pid))).toEqual(expect.arrayContaining(['main', 'shape_new']));
  });
});

describe('preprocessor options reach the preprocessor', () => {
  it('-include, -D and -U apply as they would without cc-memwrap', () => {
    const dir = scratch('cpp-options');
    writeFileSync(path.join(dir, 'cfg.h'), '#define GREETING "hello from cfg.h"\n');
    writeFileSync(
      path.join(dir, 'p.c'),
      '#include <stdio.h>\n#ifdef DROPPED\n#error DROPPED should be undefined\n#endif\nint main(void) { puts(GREETING); return LEVEL; }\n',
    );
    const flags = ['-std=c99', '-O1', '-include', 'cfg.h', '-DDROPPED', '-UDROPPED', '-D', 'LEVEL=4', 'p.c', '-o'];
    must('gcc', [...flags, 'plain'], { cwd: dir });
    must(wrapper, ['--mw-strict', 'gcc', ...flags, 'inst'], { cwd: dir });
    const a = run(path.join(dir, 'plain'), []);
    const b = runTraced(path.join(dir, 'inst'), [], path.join(dir, 'traces'));
    expect(a).toMatchObject({ stdout: 'hello from cfg.h\n', status: 4 });
    expect(b).toMatchObject({ stdout: a.stdout, status: a.status });
  });
});

describe('the runtime follows the ABI', () => {
  const dir = scratch('m32');
  const linkedList = path.join(packageRoot, 'samples', 'linked-list.c');
  const exeOf = (bits: number): string => path.join(dir, `ll${bits}`);

  /** The ELF class byte of a file: 1 for 32-bit, 2 for 64-bit objects. */
  const elfClass = (file: string): number => readFileSync(file)[4]!;

  /** Why this machine cannot run a plain -m32 program, or null if it can. */
  function whyNo32BitRun(): string | null {
    writeFileSync(path.join(dir, 'hello32.c'), 'int main(void) { return 7; }\n');
    const built = run('gcc', ['-m32', path.join(dir, 'hello32.c'), '-o', path.join(dir, 'hello32')]);
    if (built.status !== 0) return `gcc -m32 cannot build a plain program here: ${built.stderr.trim().split('\n').pop()}`;
    // A kernel without 32-bit x86 support refuses the file (ENOEXEC); spawn then hands it to /bin/sh, which fails on it.
    const ran = run(path.join(dir, 'hello32'), []);
    if (ran.status === 7) return null;
    const said = ran.stderr.trim().split('\n')[0] ?? '';
    return `this machine cannot run 32-bit x86 programs: a plain gcc -m32 program exited ${ran.status ?? ran.signal} (${said})`;
  }

  it('-m32 builds get a 32-bit runtime of their own (ELF class 32), 64-bit builds a 64-bit one', () => {
    for (const [flags, bits] of [[['-m32'], 32], [[], 64]] as const) {
      must(wrapper, ['--mw-strict', 'gcc', ...flags, '-O2', linkedList, '-o', exeOf(bits)]);
      expect(elfClass(exeOf(bits))).toBe(bits === 32 ? 1 : 2);
      expect(must('nm', [exeOf(bits)]).stdout).toMatch(/ T malloc$/m);
    }
  });

  for (const bits of [32, 64]) {
    it(`the ${bits}-bit program runs unchanged and writes ${bits / 8}-byte pointers in its trace`, (ctx) => {
      if (bits === 32) {
        const why = whyNo32BitRun();
        ctx.skip(why !== null, `${why}; the 32-bit build is still checked above`);
      }
      const ran = runTraced(exeOf(bits), [], path.join(dir, `traces${bits}`));
      expect(ran.stdout).toBe('first=1 second=4\n');
      const report = reportJson(traceOf(path.join(dir, `traces${bits}`), ran.pid)) as { format: { pointerSize: number }; allocations: number };
      expect(report.format.pointerSize).toBe(bits / 8);
      expect(report.allocations).toBe(5);
    });
  }
});

describe('what is not a C compile passes through untouched', () => {
  const dir = copyProject('passthrough');

  it('-E, -M and -MM print exactly what the compiler prints', () => {
    for (const mode of [['-E'], ['-M'], ['-MM'], ['-E', '-P', '-DX=1']]) {
      const ours = must(wrapper, ['gcc', ...mode, 'main.c'], { cwd: dir });
      const theirs = must('gcc', [...mode, 'main.c'], { cwd: dir });
      expect(ours.stdout).toBe(theirs.stdout);
    }
  });

  it('--version, -v and -dumpmachine are the compiler answering', () => {
    for (const args of [['--version'], ['-dumpmachine'], ['-dumpversion']]) {
      expect(must(wrapper, ['gcc', ...args]).stdout).toBe(must('gcc', args).stdout);
    }
  });

  it('C++ and assembly sources are compiled as they are', () => {
    writeFileSync(path.join(dir, 'k.cpp'), 'int twice(int x) { return 2 * x; }\n');
    writeFileSync(path.join(dir, 'a.s'), '.globl answer\nanswer:\n  movl $42, %eax\n  ret\n');
    must(wrapper, ['g++', '-c', 'k.cpp', '-o', 'k.o'], { cwd: dir });
    must(wrapper, ['gcc', '-c', 'a.s', '-o', 'a.o'], { cwd: dir });
    for (const obj of ['k.o', 'a.o']) expect(must('nm', [obj], { cwd: dir }).stdout).not.toMatch(/__mw_/);
    expect(must('nm', ['k.o'], { cwd: dir }).stdout).toMatch(/twice/);
  });

  it('a source read from stdin is compiled uninstrumented', () => {
    must(wrapper, ['gcc', '-x', 'c', '-', '-o', 'from-stdin'], { cwd: dir, input: 'int main(void) { return 7; }\n' });
    expect(run(path.join(dir, 'from-stdin'), []).status).toBe(7);
  });

  it('-S writes instrumented assembly', () => {
    must(wrapper, ['gcc', '-S', 'shapes.c'], { cwd: dir });
    expect(readFileSync(path.join(dir, 'shapes.s'), 'utf8')).toMatch(/__mw_enter/);
  });

  it('-o with several -c inputs gets the compiler’s own error', () => {
    const ours = run(wrapper, ['gcc', '-c', 'main.c', 'shapes.c', '-o', 'x.o'], { cwd: dir });
    const theirs = run('gcc', ['-c', 'main.c', 'shapes.c', '-o', 'x.o'], { cwd: dir });
    expect(ours.status).toBe(theirs.status);
    expect(ours.stderr).toBe(theirs.stderr);
  });
});

describe('diagnostics and failures', () => {
  it('errors and warnings name the user’s file and line, with the compiler’s exit status', () => {
    const dir = scratch('diagnostics');
    writeFileSync(path.join(dir, 'bad.c'), 'int main(void) {\n  int unused;\n  return nope;\n}\n');
    const theirs = run('gcc', ['-Wall', '-c', 'bad.c'], { cwd: dir });
    const ours = run(wrapper, ['gcc', '-Wall', '-c', 'bad.c'], { cwd: dir });
    expect(ours.status).toBe(theirs.status);
    expect(ours.status).not.toBe(0);
    expect(ours.stderr).toMatch(/bad\.c:3:\d+: error: .nope. undeclared/);
    expect(ours.stderr).toMatch(/bad\.c:2:\d+: warning: unused variable .unused./);
    const missingHeader = run(wrapper, ['gcc', '-c', 'nothere.c'], { cwd: dir });
    expect(missingHeader.status).toBe(run('gcc', ['-c', 'nothere.c'], { cwd: dir }).status);
  });

  it('adds no warning to C89 code built with -pedantic -Wconversion -Werror', () => {
    const dir = scratch('c89');
    writeFileSync(
      path.join(dir, 'old.c'),
      [
        '#include <stdlib.h>',
        'static int counter;',
        'int tally(int n);',
        'int tally(int n) {',
        '  static char seen[16];',
        '  char *p;',
        '  if (n < 0) return -1;',
        '  p = (char *)malloc((size_t)n + 1u);',
        '  if (p == NULL) return 0;',
        '  seen[n % 16] = 1;',
        '  free(p);',
        '  counter += n;',
        '  return counter;',
        '}',
        'int main(void) { return tally(3) == 3 ? 0 : 1; }',
        '',
      ].join('\n'),
    );
    const flags = ['-std=c89', '-pedantic', '-Wall', '-Wextra', '-Wmissing-prototypes', '-Wconversion', '-Werror'];
    for (const cc of ['gcc', 'clang']) {
      const built = must(wrapper, ['--mw-strict', cc, ...flags, 'old.c', '-o', `old-${cc}`], { cwd: dir });
      expect(built.stderr).toBe('');
      expect(run(path.join(dir, `old-${cc}`), [], { env: { ...process.env, MEMWRAP_TRACE: path.join(dir, `%p.mwtrace`) } }).status).toBe(0);
    }
  });

  it('keeps the comments GCC reads, such as /* FALLTHROUGH */, so -Werror builds still build', () => {
    const dir = scratch('fallthrough');
    writeFileSync(
      path.join(dir, 'sw.c'),
      [
        'int pick(int n);',
        'int pick(int n) {',
        '  int r = 0;',
        '  switch (n) {',
        '  case 1: r += 1; /* FALLTHROUGH */',
        '  case 2: r += 2; break;',
        '  default: break;',
        '  }',
        '  return r;',
        '}',
        'int main(void) { return pick(1) == 3 ? 0 : 1; }',
        '',
      ].join('\n'),
    );
    const flags = ['-Wall', '-Wextra', '-Werror', '-c', 'sw.c'];
    must('gcc', flags, { cwd: dir });
    expect(must(wrapper, ['--mw-strict', 'gcc', ...flags], { cwd: dir }).stderr).toBe('');
  });

  it('a function tree-sitter cannot parse is left alone with a warning; the rest is instrumented', () => {
    const dir = scratch('unparsable');
    // GNU case ranges are beyond tree-sitter-c's grammar.
    writeFileSync(
      path.join(dir, 'va.c'),
      [
        '#include <stdio.h>',
        '',
        'static int sum(int n) {',
        '  switch (n) {',
        '  case 1 ... 3: return n * 2;',
        '  default: return 0;',
        '  }',
        '}',
        'int main(void) { printf("%d\\n", sum(3)); return 0; }',
        '',
      ].join('\n'),
    );
    const built = must(wrapper, ['--mw-strict', 'gcc', 'va.c', '-o', 'va'], { cwd: dir });
    expect(built.stderr).toMatch(/va\.c:3: warning: .*sum.*\[cc-memwrap\]/);
    const ran = runTraced(path.join(dir, 'va'), [], path.join(dir, 'traces'));
    expect(ran.stdout).toBe('6\n');
    const dump = must(process.execPath, [wrapper, 'dump', traceOf(path.join(dir, 'traces'), ran.pid)]).stdout;
    expect(dump).toMatch(/site \d+ entry .*name="main"/);
    expect(dump).not.toMatch(/site \d+ entry .*name="sum"/);
    expect(dump).toMatch(/ ENTER site=/);
  });

  it('an instrumented unit that does not compile falls back to the original, or fails with --mw-strict', () => {
    const dir = scratch('fallback');
    // A program that owns a name the inserted code needs.
    writeFileSync(path.join(dir, 'clash.c'), 'static int __mw_sites = 5;\nint main(void) { return __mw_sites - 5; }\n');
    const lenient = run(wrapper, ['gcc', 'clash.c', '-o', 'clash'], { cwd: dir });
    expect(lenient.status).toBe(0);
    expect(lenient.stderr).toMatch(/instrumented clash\.c does not compile, although the original does; built it uninstrumented/);
    expect(uninstrumentedUnits(lenient.stderr)).toEqual([{ unit: 'clash.c', reason: 'does-not-compile' }]);
    expect(run(path.join(dir, 'clash'), [], { env: { ...process.env, MEMWRAP_TRACE: path.join(dir, '%p.mwtrace') } }).status).toBe(0);
    const strict = run(wrapper, ['--mw-strict', 'gcc', 'clash.c', '-o', 'clash2'], { cwd: dir });
    expect(strict.status).not.toBe(0);
    expect(strict.stderr).toMatch(/--mw-strict/);
    expect(readdirSync(dir)).not.toContain('clash2');
  });

  it('the fallback keeps the dependency file of -MD -MT -MF (as CMake asks for it)', () => {
    const dir = scratch('fallback-deps');
    // A program that owns a name the inserted code needs: only the original compiles.
    writeFileSync(path.join(dir, 'macro.h'), '#define FIVE 5\n');
    writeFileSync(path.join(dir, 'macro.c'), '#include "macro.h"\nstatic int __mw_sites = FIVE;\nint main(void) { return __mw_sites - 5; }\n');
    const args = ['gcc', '-Wall', '-Werror', '-MD', '-MT', 'out/macro.o', '-MF', 'macro.o.d', '-c', 'macro.c', '-o', 'macro.o'];
    expect(run('gcc', args.slice(1), { cwd: dir }).status).toBe(0);
    const ours = run(wrapper, args, { cwd: dir });
    expect(ours.stderr).toMatch(/built it uninstrumented/);
    expect(ours.status).toBe(0);
    expect(readFileSync(path.join(dir, 'macro.o.d'), 'utf8')).toMatch(/^out\/macro\.o: macro\.c [^]*macro\.h/);
  });

  it('warnings that only preprocessed text gets (hidden in macros) do not cost -Werror builds their instrumentation', () => {
    const dir = scratch('macro-warning');
    // GCC hides -Waddress inside a macro expansion, but the rewritten unit is
    // preprocessed text with no macros left, so it warns (cJSON's tests).
    writeFileSync(path.join(dir, 'macro.h'), '#define SET(o, v) ((o != 0) ? (o)->n = (v) : (v))\n');
    writeFileSync(
      path.join(dir, 'macro.c'),
      '#include <stdlib.h>\n#include "macro.h"\nstruct s { int n; };\nint main(void) { struct s a[1]; int *p = malloc(4); SET(a, 3); free(p); return a->n - 3; }\n',
    );
    const args = ['gcc', '-Wall', '-Werror', 'macro.c', '-o', 'macro'];
    const plain = run('gcc', args.slice(1), { cwd: dir });
    expect(plain).toMatchObject({ status: 0, stderr: '' });
    // The user's diagnostics are the original's (none), and the unit is instrumented.
    expect(run(wrapper, args, { cwd: dir })).toMatchObject({ status: 0, stderr: '' });
    const ran = runTraced(path.join(dir, 'macro'), [], path.join(dir, 'traces'));
    expect(ran.status).toBe(0);
    expect(tracedFunctions(traceOf(path.join(dir, 'traces'), ran.pid))).toEqual(expect.arrayContaining(['main']));
    // --mw-strict, which checks the inserted code itself, still refuses it.
    const strict = run(wrapper, ['--mw-strict', ...args.slice(0, -1), 'strict'], { cwd: dir });
    expect(strict.status).not.toBe(0);
    expect(strict.stderr).toMatch(/-Werror=address[^]*--mw-strict/);
  });

  it('a fallback object that #includes a library source links before that library, as it does plainly', () => {
    const dir = scratch('fallback-archive');
    writeFileSync(path.join(dir, 'lib.c'), '#include <stdlib.h>\nint *make(void) { return malloc(sizeof(int)); }\n');
    // The test program carries its own copy of the library (cJSON's tests
    // #include cJSON.c) and still names the archive on its link line; a
    // name the inserted code needs makes its instrumented unit fall back.
    writeFileSync(
      path.join(dir, 'test.c'),
      '#include "lib.c"\nstatic int __mw_sites = 3;\nstruct s { int n; };\n' +
        'int main(void) { struct s a[1]; int *p = make(); a->n = __mw_sites; free(p); return a->n - 3; }\n',
    );
    must(wrapper, ['gcc', '-c', 'lib.c', '-o', 'lib.o'], { cwd: dir });
    must('ar', ['rcs', 'liblib.a', 'lib.o'], { cwd: dir });
    expect(must(wrapper, ['gcc', '-Wall', '-Werror', '-c', 'test.c', '-o', 'test.o'], { cwd: dir }).stderr).toMatch(/built it uninstrumented/);
    // CMake's launcher: the link is the plain compiler's.
    must('gcc', ['test.o', 'liblib.a', '-o', 'test'], { cwd: dir });
    const ran = runTraced(path.join(dir, 'test'), [], path.join(dir, 'traces'));
    expect(ran.status).toBe(0);
    // The interposed allocator still counts the uninstrumented unit's block.
    expect((reportJson(traceOf(path.join(dir, 'traces'), ran.pid)) as { valgrind: { allocs: number } }).valgrind.allocs).toBeGreaterThanOrEqual(1);
  });

  it('explains itself: --help, --version, no compiler, unknown option', () => {
    expect(must(wrapper, ['--help']).stdout).toMatch(/cc-memwrap \[--mw-…\] <compiler> <args…>/);
    expect(must(wrapper, ['--version']).stdout).toMatch(/^cc-memwrap \d+\.\d+\.\d+\nruntime .*\ncache .*\n/);
    expect(run(wrapper, ['--mw-strict']).stderr).toMatch(/no compiler given/);
    expect(run(wrapper, ['--mw-bogus', 'gcc']).status).toBe(2);
    expect(run(wrapper, ['no-such-compiler-xyz', 'a.c']).status).toBe(127);
  });
});
