// Link-time optimisation through cc-memwrap (test/programs/lto-main.c and lto-make.c). A `-c` object carries a
// weak copy of the runtime; under -flto it must stay IR (gcc's `.gnu.lto_*` sections, clang's bitcode) so the
// final link still optimises the whole program: there, make() of one unit is inlined into main() of the other,
// so the program has no symbol `make`. Every program must still run and record both allocations at their lines.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { siteInfo } from '../../analysis/sites.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { haveCommand, skipAllWhen, skipWhen } from '../support/machine.js';
import { must, programsDir, run, runTraced, scratch, traceOf, wrapper } from '../support/programs.js';

const sources = [path.join(programsDir, 'lto-main.c'), path.join(programsDir, 'lto-make.c')];
/** What a whole-program link must record: one block at each source line that allocates. */
const expectedAllocations = { 'lto-main.c:12': 1, 'lto-make.c:6': 1 };
/** What ld says when an LTO object is joined with a native one and its IR compiled away. */
const bypassWarning = /bypass whole program optimization|incremental linking of LTO and non-LTO/;

/** Section names of an object file, as readelf lists them. */
function sectionNames(file: string): string[] {
  const listed = must('readelf', ['-S', '-W', file]).stdout;
  return [...listed.matchAll(/^\s*\[\s*\d+\]\s+(\S+)/gm)].map((m) => m[1]!);
}

/** The size of the object's `.text`: machine code, which a slim LTO object lacks and a fat one has. */
function textSize(file: string): number {
  const m = /^\s*\[\s*\d+\]\s+\.text\s+PROGBITS\s+[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)/m.exec(must('readelf', ['-S', '-W', file]).stdout);
  return m ? parseInt(m[1]!, 16) : 0;
}

function isBitcodeFile(file: string): boolean {
  return readFileSync(file).subarray(0, 4).equals(Buffer.from([0x42, 0x43, 0xc0, 0xde]));
}

/** Compiles both units through cc-memwrap with -c; returns the objects and what the compiles printed. */
function compileObjects(cc: string, flags: string[], dir: string): { objects: string[]; stderr: string } {
  let stderr = '';
  const objects = sources.map((source) => {
    const object = path.join(dir, path.basename(source, '.c') + '.o');
    stderr += must(wrapper, ['--mw-strict', cc, '-O2', ...flags, '-c', source, '-o', object]).stderr;
    return object;
  });
  return { objects, stderr };
}

/** Runs the program with its trace in `dir`/traces; returns the allocations recorded at the test's sources,
 *  as `file:line` → blocks. */
function runAndCount(exe: string, dir: string, under?: { command: string; env: NodeJS.ProcessEnv }): Record<string, number> {
  const traces = path.join(dir, 'traces');
  const env = { ASAN_OPTIONS: 'detect_leaks=0', ...under?.env };
  // Under qemu the program runs in qemu's own process, so the trace carries that pid.
  const ran = under ? runTraced(under.command, [exe], traces, { env }) : runTraced(exe, [], traces, { env });
  expect(ran.stderr).toBe('');
  expect(ran).toMatchObject({ stdout: 'third=3\n', status: 0 });
  const model = decodeTrace(readFileSync(traceOf(traces, ran.pid)));
  expect(model.problems).toEqual([]);
  const byLine: Record<string, number> = {};
  for (let b = 0; b < model.blocks.count; b++) {
    const info = siteInfo(model, model.blocks.site[b]!);
    if (!info?.file || !/lto-(main|make)\.c$/.test(info.file)) continue;
    const key = `${path.basename(info.file)}:${info.line}`;
    byLine[key] = (byLine[key] ?? 0) + 1;
  }
  return byLine;
}

/** Whether the program still has a function `make`: not when the link inlined it across the units. */
function hasMake(exe: string): boolean {
  return /^\S+ [Tt] make$/m.test(must('nm', [exe]).stdout);
}

describe('gcc -flto through cc-memwrap', () => {
  skipAllWhen(haveCommand('gcc') && haveCommand('readelf') ? null : 'gcc or readelf is not installed');

  it('-c objects keep their .gnu.lto_ sections; linked by plain gcc -flto the program is optimised whole and records both allocations', () => {
    const dir = scratch('lto-gcc');
    const { objects, stderr } = compileObjects('gcc', ['-flto'], dir);
    expect(stderr).not.toMatch(bypassWarning);
    for (const object of objects) expect(sectionNames(object).filter((s) => s.startsWith('.gnu.lto_')).length).toBeGreaterThan(0);
    const exe = path.join(dir, 'prog');
    must('gcc', ['-O2', '-flto', ...objects, '-o', exe]);
    expect(hasMake(exe)).toBe(false);
    expect(runAndCount(exe, dir)).toEqual(expectedAllocations);
  });

  it('-flto=auto -ffat-lto-objects: the object stays fat (IR and machine code); a link with -fno-lto uses the code', () => {
    const dir = scratch('lto-gcc-fat');
    const { objects, stderr } = compileObjects('gcc', ['-flto=auto', '-ffat-lto-objects'], dir);
    expect(stderr).not.toMatch(bypassWarning);
    for (const object of objects) {
      expect(sectionNames(object).some((s) => s.startsWith('.gnu.lto_'))).toBe(true);
      expect(textSize(object)).toBeGreaterThan(0);
    }
    const whole = path.join(dir, 'whole');
    must('gcc', ['-O2', '-flto=auto', ...objects, '-o', whole]);
    expect(hasMake(whole)).toBe(false);
    expect(runAndCount(whole, dir)).toEqual(expectedAllocations);
    const native = path.join(dir, 'native');
    must('gcc', ['-fno-lto', ...objects, '-o', native]);
    expect(hasMake(native)).toBe(true);
    expect(runAndCount(native, dir)).toEqual(expectedAllocations);
  });

  it('cc-memwrap gcc -flto a.c b.c -o prog: no warning, optimised whole, both allocations recorded', () => {
    const dir = scratch('lto-gcc-link');
    const exe = path.join(dir, 'prog');
    const built = must(wrapper, ['--mw-strict', 'gcc', '-O2', '-flto', ...sources, '-o', exe]);
    expect(built.stderr).not.toMatch(bypassWarning);
    expect(hasMake(exe)).toBe(false);
    expect(runAndCount(exe, dir)).toEqual(expectedAllocations);
  });

  it('-c objects linked through cc-memwrap with -flto (the strong runtime beside their weak IR copies)', () => {
    const dir = scratch('lto-gcc-objects');
    const { objects } = compileObjects('gcc', ['-flto'], dir);
    const exe = path.join(dir, 'prog');
    const linked = must(wrapper, ['--mw-strict', 'gcc', '-O2', '-flto', ...objects, '-o', exe]);
    expect(linked.stderr).not.toMatch(bypassWarning);
    expect(hasMake(exe)).toBe(false);
    expect(runAndCount(exe, dir)).toEqual(expectedAllocations);
  });

  it('-fsanitize=address -flto: the runtime variant without the interposer is IR too, and records the instrumented code', (ctx) => {
    const dir = scratch('lto-gcc-asan');
    const probe = run('gcc', ['-fsanitize=address', '-x', 'c', '-', '-o', path.join(dir, 'probe')], { input: 'int main(void) { return 0; }\n' });
    skipWhen(ctx, probe.status === 0 && run(path.join(dir, 'probe'), []).status === 0 ? null : 'a plain -fsanitize=address program does not build or run here');
    const { objects, stderr } = compileObjects('gcc', ['-g', '-fsanitize=address', '-flto'], dir);
    expect(stderr).not.toMatch(bypassWarning);
    for (const object of objects) expect(sectionNames(object).some((s) => s.startsWith('.gnu.lto_'))).toBe(true);
    const exe = path.join(dir, 'prog');
    must('gcc', ['-O2', '-fsanitize=address', '-flto', ...objects, '-o', exe]);
    expect(runAndCount(exe, dir)).toEqual(expectedAllocations);
  });

  it('-m32 -flto: the 32-bit object keeps its IR and links (run where the machine runs 32-bit programs)', (ctx) => {
    const dir = scratch('lto-gcc-m32');
    const hello = path.join(dir, 'hello32');
    const plain = run('gcc', ['-m32', '-x', 'c', '-', '-o', hello], { input: 'int main(void) { return 7; }\n' });
    skipWhen(ctx, plain.status === 0 ? null : `gcc -m32 cannot build a plain program here: ${plain.stderr.trim().split('\n').pop()}`);
    const { objects } = compileObjects('gcc', ['-m32', '-flto'], dir);
    for (const object of objects) {
      expect(readFileSync(object)[4]).toBe(1); // ELF class 32
      expect(sectionNames(object).some((s) => s.startsWith('.gnu.lto_'))).toBe(true);
    }
    const exe = path.join(dir, 'prog');
    must('gcc', ['-m32', '-O2', '-flto', ...objects, '-o', exe]);
    expect(hasMake(exe)).toBe(false);
    skipWhen(ctx, run(hello, []).status === 7 ? null : 'this machine cannot run 32-bit x86 programs; the build is checked above');
    expect(runAndCount(exe, dir)).toEqual(expectedAllocations);
  });
});

const CROSS = 'arm-linux-gnueabihf-gcc';

describe('a cross gcc -flto through cc-memwrap (32-bit ARM, run under qemu-arm)', () => {
  skipAllWhen(haveCommand(CROSS) && haveCommand('qemu-arm') ? null : `${CROSS} or qemu-arm is missing (test/run-all.sh installs gcc-arm-linux-gnueabihf and qemu-user)`);

  it('-c objects keep their .gnu.lto_ sections (the ARM runtime in IR, its symbols listed by the cross nm); the program runs and records both allocations', () => {
    const dir = scratch('lto-arm');
    const { objects, stderr } = compileObjects(CROSS, ['-flto'], dir);
    expect(stderr).not.toMatch(bypassWarning);
    for (const object of objects) expect(sectionNames(object).some((s) => s.startsWith('.gnu.lto_'))).toBe(true);
    const exe = path.join(dir, 'prog');
    must(CROSS, ['-O2', '-flto', ...objects, '-o', exe]);
    expect(hasMake(exe)).toBe(false);
    expect(runAndCount(exe, dir, { command: 'qemu-arm', env: { QEMU_LD_PREFIX: '/usr/arm-linux-gnueabihf' } })).toEqual(expectedAllocations);
  });
});

/** Why clang's LTO cannot be tested here, or null. */
function whyNoClangLto(): string | null {
  if (!haveCommand('clang')) return 'clang is not installed';
  const linker = spawnSync('clang', ['-print-prog-name=llvm-link'], { encoding: 'utf8' }).stdout.trim() || 'llvm-link';
  if (spawnSync(linker, ['--version']).status !== 0) return `clang's llvm-link (${linker}) is not installed; cc-memwrap joins bitcode with it`;
  const dir = scratch('lto-clang-probe');
  const probe = run('clang', ['-flto', '-x', 'c', '-', '-o', path.join(dir, 'probe')], { input: 'int main(void) { return 0; }\n' });
  return probe.status === 0 ? null : `plain clang -flto cannot link a program here: ${probe.stderr.trim().split('\n')[0]}`;
}

describe('clang -flto through cc-memwrap', () => {
  skipAllWhen(whyNoClangLto());

  it('-c objects stay LLVM bitcode; linked by plain clang -flto the program is optimised whole and records both allocations', () => {
    const dir = scratch('lto-clang');
    const { objects, stderr } = compileObjects('clang', ['-flto'], dir);
    expect(stderr).toBe('');
    for (const object of objects) expect(isBitcodeFile(object)).toBe(true);
    const exe = path.join(dir, 'prog');
    must('clang', ['-O2', '-flto', ...objects, '-o', exe]);
    expect(hasMake(exe)).toBe(false);
    expect(runAndCount(exe, dir)).toEqual(expectedAllocations);
  });

  it('-flto=thin: the objects stay bitcode; the program links and records both allocations', () => {
    const dir = scratch('lto-clang-thin');
    const { objects } = compileObjects('clang', ['-flto=thin'], dir);
    for (const object of objects) expect(isBitcodeFile(object)).toBe(true);
    const exe = path.join(dir, 'prog');
    must('clang', ['-O2', '-flto=thin', ...objects, '-o', exe]);
    expect(runAndCount(exe, dir)).toEqual(expectedAllocations);
  });

  it('-flto=thin: the objects keep their ThinLTO summary (llvm-link drops it; it must be written again)', (ctx) => {
    const analyzer = spawnSync('clang', ['-print-prog-name=llvm-bcanalyzer'], { encoding: 'utf8' }).stdout.trim() || 'llvm-bcanalyzer';
    skipWhen(ctx, spawnSync(analyzer, ['--version']).status === 0 ? null : `${analyzer} is not installed: cannot read the bitcode's blocks`);
    const dir = scratch('lto-clang-summary');
    for (const object of compileObjects('clang', ['-flto=thin'], dir).objects) {
      expect(must(analyzer, ['--dump', object]).stdout).toMatch(/<GLOBALVAL_SUMMARY_BLOCK/);
    }
  });

  it('cc-memwrap clang -flto a.c b.c -o prog', () => {
    const dir = scratch('lto-clang-link');
    const exe = path.join(dir, 'prog');
    must(wrapper, ['--mw-strict', 'clang', '-O2', '-flto', ...sources, '-o', exe]);
    expect(hasMake(exe)).toBe(false);
    expect(runAndCount(exe, dir)).toEqual(expectedAllocations);
  });
});
