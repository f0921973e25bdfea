// `cc-memwrap report A --compare B` on two lessons built before and after their change, as their texts tell a student
// to (in a directory of their own, from the directory above samples/): the numbers each text promises, and the compare
// output each text shows, which must be what the command prints today (trace names' process ids aside).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { parseReportArgs } from '../../cli/report-args.js';
import { notX86_64Glibc, skipAllWhen } from '../support/machine.js';
import { must, run, samplesDir, scratch, wrapper } from '../support/programs.js';
import { basicTrace } from '../fixtures/scenarios.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The environment of a student's shell: traces go beside the program as <name>.<pid>.mwtrace. */
function plainEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.MEMWRAP_TRACE;
  return env;
}

/**
 * Builds samples/<source> (through `edit`, the change a lesson asks for) as `exe` in `dir` with `defines` and runs it
 * there; returns the trace's name.
 */
function buildAndRun(dir: string, source: string, exe: string, defines: string[], edit: (text: string) => string = (t) => t): string {
  mkdirSync(path.join(dir, 'samples'), { recursive: true });
  writeFileSync(path.join(dir, 'samples', source), edit(readFileSync(path.join(samplesDir, source), 'utf8')));
  must(wrapper, ['--mw-strict', 'gcc', '-O0', ...defines, `samples/${source}`, '-o', exe], { cwd: dir });
  const ran = must(path.join(dir, exe), [], { cwd: dir, env: plainEnv() });
  return `${exe}.${ran.pid}.mwtrace`;
}

/** `report A --compare B` in `dir`, as text and as JSON. */
function compare(dir: string, a: string, b: string): { text: string; json: Json } {
  const text = must(process.execPath, [wrapper, 'report', a, '--compare', b], { cwd: dir }).stdout;
  const json = JSON.parse(must(process.execPath, [wrapper, 'report', a, '--compare', b, '--json'], { cwd: dir }).stdout) as Json;
  return { text, json };
}

/** Process ids in trace names vary from run to run. */
function withoutPids(text: string): string {
  return text.replace(/\.\d+\.mwtrace/g, '.PID.mwtrace');
}

/**
 * A lesson's two builds (`[source, program, defines]` each) compared in a fresh directory (after `setup` there), as its
 * text tells a student to; the text must show what the command printed.
 */
type Build = [source: string, program: string, defines: string[], edit?: (text: string) => string];

function lessonCompare(md: string, a: Build, b: Build, setup: (dir: string) => void = () => {}): { text: string; json: Json } {
  const dir = scratch(`compare-${md}`);
  setup(dir);
  const result = compare(dir, buildAndRun(dir, ...a), buildAndRun(dir, ...b));
  expect(withoutPids(readFileSync(path.join(samplesDir, `${md}.md`), 'utf8'))).toContain(withoutPids(result.text));
  return result;
}

function total(json: Json, name: string): Json {
  return json.totals.find((t: Json) => t.name === name);
}

describe('report --compare on the lessons (gcc -O0, x86-64 glibc)', () => {
  skipAllWhen(notX86_64Glibc);

  test('4. realloc-growth: 1000 reallocs become 11 with -DDOUBLING, the peak 4000 bytes becomes 4096', () => {
    const { text, json } = lessonCompare('realloc-growth', ['realloc-growth.c', 'grow', []], ['realloc-growth.c', 'grow2', ['-DDOUBLING']]);
    expect(json.sites).toHaveLength(1);
    expect(json.sites[0]).toMatchObject({
      label: 'samples/realloc-growth.c:31 append → realloc',
      a: { allocs: 1000 },
      b: { allocs: 11 },
      change: { allocs: -989 },
    });
    expect(total(json, 'peak heap')).toEqual({ name: 'peak heap', unit: 'bytes', a: 4000, b: 4096, change: 96 });
    expect(text).toMatch(/^ {2}peak heap +4,000 B +4,096 B +\+96 B$/m);
    expect(text).toMatch(/^ {2}samples\/realloc-growth\.c:31 append → realloc\n +1,000 → 11 +-989 /m);
  });

  test('6. ring-buffer: heap 2048 breaks the 1 KiB heap budget; with -DSTATIC_RING static 2048 fits', () => {
    const budgets = (dir: string): void => writeFileSync(path.join(dir, 'memwrap.json'), '{ "budgets": { "heap": "1K", "static": "4K" } }\n');
    const { text, json } = lessonCompare('ring-buffer', ['ring-buffer.c', 'ring', []], ['ring-buffer.c', 'ring2', ['-DSTATIC_RING']], budgets);
    expect(total(json, 'peak heap')).toMatchObject({ a: 2048, b: 0 });
    expect(total(json, 'static')).toMatchObject({ a: 0, b: 2048, change: 2048 });
    expect(json.sites).toEqual([expect.objectContaining({ label: 'samples/ring-buffer.c:32 ring_init → malloc', a: expect.objectContaining({ allocs: 1, requestedBytes: 2048 }), b: null })]);
    expect(json.budgets.checks).toEqual([
      { kind: 'heap', a: { limitBytes: 1024, maxBytes: 2048, exceeded: true }, b: { limitBytes: 1024, maxBytes: 0, exceeded: false } },
      { kind: 'static', a: { limitBytes: 4096, maxBytes: 0, exceeded: false }, b: { limitBytes: 4096, maxBytes: 2048, exceeded: false } },
    ]);
    expect(text).toContain('samples/ring-buffer.c:32 ring_init → malloc (only in A)');
    expect(text).toContain('heap ≤ 1,024 B: max 2,048 B → 0 B (-2,048 B), EXCEEDED → ok');
  });

  test('1. linked-list: freeing the third node before the middle one leaves 16 bytes leaked instead of 32', () => {
    const line38 = '  free(data->next); /* the third node is orphaned here */';
    const edit = (text: string): string => {
      expect(text.split('\n')[37]).toBe(line38);
      return text.replace(line38, '  free(data->next->next); free(data->next);');
    };
    const { json } = lessonCompare('linked-list', ['linked-list.c', 'linked-list', []], ['linked-list.c', 'linked-list2', [], edit]);
    // Live at the end at the lesson's own sites (stdout's 4096-byte buffer, allocated in libc, stays in both).
    const live = (side: 'a' | 'b'): number => json.sites.filter((r: Json) => r.label.startsWith('samples/')).reduce((n: number, r: Json) => n + r[side].liveRequestedBytes, 0);
    expect([live('a'), live('b')]).toEqual([32, 16]);
    expect(json.sites[0]).toMatchObject({ label: 'samples/linked-list.c:33 main → malloc', change: { liveRequestedBytes: -16 } });
    expect(total(json, 'frees')).toMatchObject({ change: 1 });
  });

  test('3. error-path-leak: 1 leak of 64 bytes and a peak of 128 become no leak and a peak of 64 with -DFIXED', () => {
    const { json } = lessonCompare('error-path-leak', ['error-path-leak.c', 'leak', []], ['error-path-leak.c', 'leak2', ['-DFIXED']]);
    expect(total(json, 'leaked blocks')).toMatchObject({ a: 1, b: 0 });
    expect(total(json, 'leaked')).toMatchObject({ a: 64, b: 0 });
    expect(total(json, 'peak heap')).toMatchObject({ a: 128, b: 64 });
  });

  test('5. pool: 100 blocks of 2400 usable bytes become 1 block of 2008 with -DPOOL', () => {
    const { json } = lessonCompare('pool', ['pool.c', 'pool', []], ['pool.c', 'pool2', ['-DPOOL']]);
    expect(total(json, 'allocations')).toMatchObject({ a: 100, b: 1 });
    expect(total(json, 'heap usable')).toMatchObject({ a: 2400, b: 2008 });
  });

  test('7. struct-padding: 2400 bytes of 24-byte structs become 1600 with -DREORDERED', () => {
    const { json } = lessonCompare('struct-padding', ['struct-padding.c', 'pad', []], ['struct-padding.c', 'pad2', ['-DREORDERED']]);
    expect(json.sites).toEqual([expect.objectContaining({ label: 'samples/struct-padding.c:37 main → calloc', a: expect.objectContaining({ requestedBytes: 2400 }), b: expect.objectContaining({ requestedBytes: 1600 }) })]);
  });

  test('2. recursion: the loop version reaches 16,368 - 432 bytes less stack', () => {
    const { json } = lessonCompare('recursion', ['recursion.c', 'recursion', []], ['recursion-iterative.c', 'iterative', []]);
    // Both measured from the stack base, the same C start-up code below main in both.
    expect(total(json, 'peak stack').change).toBe(432 - 16368);
  });
});

describe('report --compare matches sites across builds', () => {
  skipAllWhen(notX86_64Glibc);

  test('a site whose line moved is one row (with its line in A); a site of one build only stands alone', () => {
    const dir = scratch('compare-moved');
    const program = (extra: string): string =>
      ['#include <stdlib.h>', 'static void *keep;', 'int main(void) {', extra, '  void *p = malloc(16);', '  free(p);', '  keep = malloc(8);', '  return 0;', '}', ''].join('\n');
    writeFileSync(path.join(dir, 'a.c'), program(''));
    // B: two lines more above every call, and one allocation more.
    writeFileSync(path.join(dir, 'b.c'), program('  /* two lines\n     more */\n  free(calloc(4, 8));'));
    const traces = ['a', 'b'].map((name) => {
      must(wrapper, ['--mw-strict', 'gcc', '-O0', `${name}.c`, '-o', name], { cwd: dir });
      return `${name}.${must(path.join(dir, name), [], { cwd: dir, env: plainEnv() }).pid}.mwtrace`;
    });
    const { text, json } = compare(dir, traces[0]!, traces[1]!);
    const sites = json.sites.map((s: Json) => [s.function, s.lineA, s.lineB, s.a?.allocs ?? null, s.b?.allocs ?? null]);
    // The files differ (a.c, b.c): matched by the line-free identity they do not share, nothing pairs up.
    expect(sites).toHaveLength(5);
    // Same file, lines moved: built from one file name.
    writeFileSync(path.join(dir, 'a.c'), program('  /* two lines\n     more */\n  free(calloc(4, 8));'));
    must(wrapper, ['--mw-strict', 'gcc', '-O0', 'a.c', '-o', 'a2'], { cwd: dir });
    const moved = `a2.${must(path.join(dir, 'a2'), [], { cwd: dir, env: plainEnv() }).pid}.mwtrace`;
    const again = compare(dir, traces[0]!, moved);
    expect(again.json.sites.map((s: Json) => [s.label, s.lineA, s.lineB, s.a?.allocs ?? null, s.b?.allocs ?? null])).toEqual([
      ['a.c:6 main → calloc', null, 6, null, 1],
      ['a.c:7 main → malloc', 5, 7, 1, 1],
      ['a.c:9 main → malloc', 7, 9, 1, 1],
    ]);
    expect(again.text).toContain('a.c:7 main → malloc (line 5 in A)');
    expect(again.text).toContain('a.c:6 main → calloc (only in B)');
    expect(text).toContain('(only in A)');
  });
});

describe('report --compare arguments', () => {
  test('go with --top, --json and budgets', () => {
    const p = parseReportArgs(['a.mwtrace', '--compare', 'b.mwtrace', '--top', '3', '--json', '--budget-heap', '1K']);
    expect(p).toMatchObject({ kind: 'report', file: 'a.mwtrace', compare: 'b.mwtrace', json: true, budgets: { heap: 1024 } });
  });

  test.each([
    [['a', '--compare', 'b', '--peak'], '--compare cannot be combined with --peak'],
    [['a', '--compare', 'b', '--fail-on', 'leaks'], '--compare cannot be combined with --fail-on'],
    [['a', '--compare', ''], '--compare wants a second trace file'],
  ])('%j is refused', (args, message) => {
    const p = parseReportArgs(args);
    expect(p.kind).toBe('error');
    expect(p.kind === 'error' && p.message).toContain(message);
  });

  test('a missing or unreadable B is named, exit 2', () => {
    const dir = scratch('compare-missing');
    const a = path.join(dir, 'a.mwtrace');
    writeFileSync(a, basicTrace().build());
    writeFileSync(path.join(dir, 'notes.txt'), 'not a trace');
    const missing = run(process.execPath, [wrapper, 'report', a, '--compare', path.join(dir, 'b.mwtrace')]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/^cc-memwrap report: .*b\.mwtrace: no such file/m);
    const notATrace = run(process.execPath, [wrapper, 'report', a, '--compare', path.join(dir, 'notes.txt')]);
    expect(notATrace.status).toBe(2);
    expect(notATrace.stderr).toMatch(/^cc-memwrap report: .*notes\.txt: /m);
    expect(must(process.execPath, [wrapper, 'report', a, '--compare', a]).stdout).toContain('Every change is B - A.');
  });

  test('--top 0 lists no rows, without saying there were none', () => {
    const a = path.join(scratch('compare-top'), 'a.mwtrace');
    writeFileSync(a, basicTrace().build());
    const full = must(process.execPath, [wrapper, 'report', a, '--compare', a]).stdout;
    const none = must(process.execPath, [wrapper, 'report', a, '--compare', a, '--top', '0']).stdout;
    const sites = /Allocation sites, largest change first \((\d+) of (\d+), \d+ unchanged\)/.exec(full)!;
    expect(sites[1]).toBe(sites[2]);
    expect(Number(sites[2])).toBeGreaterThan(0);
    expect(none).toContain(`Allocation sites, largest change first (0 of ${sites[2]}, ${sites[2]} unchanged)`);
    expect(none).not.toContain('no allocations');
  });
});
