// Sanitizers and cc-memwrap in one build (test/programs/sanitized.c). ASan, TSan and LSan bring their own malloc:
// the program is then built with a runtime that does not interpose it, so the sanitizer still sees every block, and
// the trace holds the allocations made by instrumented code and says so. UBSan leaves malloc alone: all is recorded.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Model } from '../../analysis/model.js';
import { siteInfo } from '../../analysis/sites.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { skipAllWhen } from '../support/machine.js';
import { must, programsDir, run, runTraced, scratch, traceOf, wrapper } from '../support/programs.js';

const source = path.join(programsDir, 'sanitized.c');

/** Why this machine cannot run a plain program built with `-fsanitize=<name>`, or null when it can. */
function cannotSanitize(name: string): string | null {
  const dir = scratch(`probe-${name}`);
  const exe = path.join(dir, 'probe');
  const built = run('gcc', [`-fsanitize=${name}`, '-x', 'c', '-', '-o', exe], { input: 'int main(void) { return 0; }\n' });
  if (built.status !== 0) return `gcc cannot build with -fsanitize=${name} here: ${built.stderr.trim().split('\n')[0]}`;
  const ran = run(exe, []);
  return ran.status === 0 ? null : `a plain -fsanitize=${name} program does not run here (${ran.stderr.trim().split('\n')[0] ?? ran.signal})`;
}

/** Allocations made at sanitized.c's lines, as line → count, and how many came through the interposed allocator. */
function allocations(model: Model): { byLine: Record<number, number>; interposed: number } {
  const byLine: Record<number, number> = {};
  let interposed = 0;
  for (let b = 0; b < model.blocks.count; b++) {
    if (model.blocks.interposed[b]) interposed++;
    const info = siteInfo(model, model.blocks.site[b]!);
    if (info?.file?.endsWith('sanitized.c')) byLine[info.line] = (byLine[info.line] ?? 0) + 1;
  }
  return { byLine, interposed };
}

function build(flags: string[], name: string): { dir: string; exe: string } {
  const dir = scratch(name);
  const exe = path.join(dir, name);
  must(wrapper, ['--mw-strict', 'gcc', ...flags, source, '-o', exe]);
  return { dir, exe };
}

/** Runs with the trace in `dir`/traces. LeakSanitizer, when on, ends a leaking run with _exit from its exit hook,
 *  before stdio flushes stdout into the pipe: runs that compare stdout turn it off. */
function traced(exe: string, dir: string, args: string[], leakCheck = false): { ran: ReturnType<typeof run>; model: Model; trace: string } {
  const traces = path.join(dir, 'traces');
  const ran = runTraced(exe, args, traces, { env: { ASAN_OPTIONS: `detect_leaks=${leakCheck ? 1 : 0}` } });
  const trace = traceOf(traces, ran.pid);
  return { ran, model: decodeTrace(readFileSync(trace)), trace };
}

describe('-fsanitize=address with cc-memwrap', () => {
  skipAllWhen(cannotSanitize('address'));

  it('runs, records every allocation of the instrumented code, and says malloc was not interposed', () => {
    const { dir, exe } = build(['-O1', '-g', '-fsanitize=address'], 'asan');
    const { ran, model, trace } = traced(exe, dir, []);
    expect(ran.stdout).toBe('sum 3\n');
    expect(model.problems).toEqual([]);
    expect(model.header.interposed).toBe(false);
    expect(allocations(model)).toEqual({ byLine: { 20: 3, 49: 1 }, interposed: 0 });
    const report = must(process.execPath, [wrapper, 'report', trace]).stdout;
    expect(report).toMatch(/^Recorded +allocations by instrumented code only: malloc was not interposed$/m);
  });

  it('leaves the heap to AddressSanitizer: its overflow and leak reports still come, with our lines', () => {
    const { dir, exe } = build(['-O1', '-g', '-fsanitize=address'], 'asan-errors');
    const overflow = traced(exe, dir, ['overflow']).ran;
    expect(overflow.status).not.toBe(0);
    expect(overflow.stderr).toMatch(/ERROR: AddressSanitizer: heap-buffer-overflow/);
    expect(overflow.stderr).toMatch(/in main .*sanitized\.c:33/);
    // LeakSanitizer finds the 40-byte block of line 49: the runtime keeps no pointer to it where LSan looks.
    const leak = traced(exe, dir, [], true).ran;
    expect(leak.stderr).toMatch(/Direct leak of 40 byte\(s\) in 1 object\(s\)/);
    expect(leak.stderr).toMatch(/in main .*sanitized\.c:49/);
  });

  it('records when the objects are compiled through cc-memwrap and linked by plain gcc (as with CMake)', () => {
    const dir = scratch('asan-objects');
    const object = path.join(dir, 'sanitized.o');
    const exe = path.join(dir, 'prog');
    must(wrapper, ['--mw-strict', 'gcc', '-O1', '-g', '-fsanitize=address', '-c', source, '-o', object]);
    must('gcc', ['-fsanitize=address', object, '-o', exe]);
    const { ran, model } = traced(exe, dir, []);
    expect(ran.stdout).toBe('sum 3\n');
    expect(model.header.interposed).toBe(false);
    expect(allocations(model)).toEqual({ byLine: { 20: 3, 49: 1 }, interposed: 0 });
  });
});

describe('-fsanitize=undefined with cc-memwrap', () => {
  skipAllWhen(cannotSanitize('undefined'));

  it('runs with the interposed allocator, and UBSan still reports at our line', () => {
    const { dir, exe } = build(['-O0', '-g', '-fsanitize=undefined'], 'ubsan');
    const { ran, model } = traced(exe, dir, ['overflow-int']);
    expect(ran.status).toBe(0);
    expect(ran.stderr).toMatch(/sanitized\.c:37:\d+: runtime error: signed integer overflow/);
    expect(ran.stdout).toBe('-2147483647\nsum 3\n');
    expect(model.problems).toEqual([]);
    expect(model.header.interposed).toBe(true);
    const seen = allocations(model);
    expect(seen.byLine).toEqual({ 20: 3, 49: 1 });
    // stdout's buffer, allocated inside libc by the first printf, is seen through the interposed malloc.
    expect(seen.interposed).toBeGreaterThanOrEqual(1);
  });
});
