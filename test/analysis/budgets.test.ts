// Budgets: parsing (spec and memwrap.json), the ranges above each, the blocks live when each began; `report --budget`, memwrap.json, `--fail-on`, `--interval`.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { BudgetError, checkBudgets, parseBudgetConfig, parseBudgets, parseSize } from '../../analysis/budgets.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { runReport } from '../../cli/report.js';
import { capture } from '../fixtures/cli-capture.js';
import { basicTrace, DEMO_SITES } from '../fixtures/scenarios.js';
import { S, TraceBuilder, type SiteDef } from '../fixtures/trace-builder.js';

function tmp(): string {
  return mkdtempSync(path.join(tmpdir(), 'mw-budget-'));
}

function writeTrace(dir: string, bytes: Uint8Array): string {
  const file = path.join(dir, 'prog.1.mwtrace');
  writeFileSync(file, bytes);
  return file;
}

/** basicTrace, with its program in `dir`. */
function basicIn(dir: string): Uint8Array {
  const b = new TraceBuilder({ complete: true });
  const t = b.thread(0);
  t.threadBegin(1);
  t.program(path.join(dir, 'prog'), dir);
  t.unit(1, DEMO_SITES);
  t.enter(1, 128);
  const a = t.alloc({ site: 9, size: 3000, addr: 0x1000 });
  t.free({ site: 6, block: a });
  t.alloc({ site: 9, size: 10, addr: 0x2000 });
  t.exit(2);
  t.end(0, 0);
  return b.build();
}

describe('parsing', () => {
  test('sizes', () => {
    expect(parseSize('64K')).toBe(65536);
    expect(parseSize('64KiB')).toBe(65536);
    expect(parseSize('1.5k')).toBe(1536);
    expect(parseSize('2M')).toBe(2 * 1024 * 1024);
    expect(parseSize('3MiB')).toBe(3 * 1024 * 1024);
    expect(parseSize('100B')).toBe(100);
    expect(parseSize('100')).toBe(100);
    expect(() => parseSize('64X')).toThrow(BudgetError);
    expect(() => parseSize('')).toThrow(/not a size/);
    expect(() => parseSize('-1K')).toThrow(/not a size/);
  });

  test('a spec', () => {
    expect(parseBudgets('heap=64K,stack=8K,static=1K,total=80K')).toEqual({ heap: 65536, stack: 8192, static: 1024, total: 81920 });
    expect(parseBudgets('stack=100')).toEqual({ stack: 100 });
    expect(() => parseBudgets('heap')).toThrow(/not KIND=SIZE/);
    expect(() => parseBudgets('heep=1K')).toThrow(/unknown budget 'heep': use heap, stack, static, total/);
    expect(() => parseBudgets('heap=1K,heap=2K')).toThrow(/given twice/);
    expect(() => parseBudgets('heap=lots')).toThrow(/'lots' is not a size/);
    expect(() => parseBudgets('')).toThrow(/empty/);
  });

  test('memwrap.json', () => {
    expect(parseBudgetConfig('{ "budgets": { "heap": "64K", "stack": 8192 } }')).toEqual({ heap: 65536, stack: 8192 });
    expect(parseBudgetConfig('{ "other": 1 }')).toEqual({});
    expect(() => parseBudgetConfig('{ "budgets": ')).toThrow(/memwrap\.json: not valid JSON/);
    expect(() => parseBudgetConfig('[]')).toThrow(/expected a JSON object/);
    expect(() => parseBudgetConfig('{ "budgets": 5 }')).toThrow(/"budgets" must be an object/);
    expect(() => parseBudgetConfig('{ "budgets": { "heap": -1 } }', 'x.json')).toThrow(/^x\.json: budget "heap" must be a whole number/);
    expect(() => parseBudgetConfig('{ "budgets": { "heap": "1Q" } }')).toThrow(/budget "heap": '1Q' is not a size/);
    expect(() => parseBudgetConfig('{ "budgets": { "heap": true } }')).toThrow(/a number of bytes or a string/);
    // Whether the heap and total budgets count the blocks libraries made (they do unless told).
    expect(parseBudgetConfig('{ "budgets": { "heap": "1K", "libraryBlocks": false } }')).toEqual({ heap: 1024, libraryBlocks: false });
    expect(() => parseBudgetConfig('{ "budgets": { "libraryBlocks": "no" } }')).toThrow(/^memwrap\.json: "libraryBlocks" must be true or false/);
    expect(parseBudgets('heap=1K,library=no')).toEqual({ heap: 1024, libraryBlocks: false });
    expect(parseBudgets('library=yes,heap=1K')).toEqual({ heap: 1024, libraryBlocks: true });
    expect(() => parseBudgets('heap=1K,library=maybe')).toThrow(/^'library=maybe': library= wants yes or no/);
    expect(() => parseBudgets('library=no,library=yes')).toThrow(/'library' given twice/);
    expect(() => parseBudgetConfig('{ "budgets": { "disk": 1 } }')).toThrow(/unknown budget 'disk'/);
  });
});

describe('checkBudgets', () => {
  test('heap: one range from the interposed 1 KiB allocation to the end; the blocks live at its start by function and site', () => {
    const model = decodeTrace(basicTrace().build());
    const [heap, ...rest] = checkBudgets(model, { heap: 1024 });
    expect(rest).toEqual([]);
    expect(heap).toMatchObject({ kind: 'heap', limitBytes: 1024, exceeded: true, maxBytes: 1322, maxEvent: 13 });
    expect(heap!.ranges).toHaveLength(1);
    const r = heap!.ranges[0]!;
    expect(r).toMatchObject({ startEvent: 13, endEvent: 19, startBytes: 1322, maxBytes: 1322, maxEvent: 13, liveBlocks: 5, liveBytes: 1322 });
    expect(r.startTimeNs).toBe(model.events.time[13]);
    expect(r.functions.map((f) => [f.label, f.blocks, f.bytes, f.sites.map((s) => [s.label, s.blocks, s.bytes])])).toEqual([
      [
        'demo.c:10 main',
        3,
        1274,
        [
          ['main (via libc/uninstrumented)', 1, 1024],
          ['demo.c:16 main → realloc', 2, 250],
        ],
      ],
      ['demo.c:3 make_node', 2, 48, [['demo.c:4 make_node → malloc', 2, 48]]],
    ]);
  });

  test('several ranges; stack, static and total; a budget never exceeded', () => {
    const model = decodeTrace(basicTrace().build());
    // heap 200: above from event 11 (248) to the end; 100: from 10 (148).
    const checks = checkBudgets(model, { heap: 1300, stack: 128, static: 404, total: 1800 });
    expect(checks.map((c) => c.kind)).toEqual(['heap', 'stack', 'static', 'total']);
    const [heap, stack, stat, total] = checks;
    expect(heap!.ranges.map((r) => [r.startEvent, r.endEvent])).toEqual([[13, 13]]);
    // make_node's two calls at depth 192: two ranges.
    expect(stack!.ranges.map((r) => [r.startEvent, r.endEvent, r.maxBytes])).toEqual([
      [4, 5, 192],
      [7, 8, 192],
    ]);
    expect(stack!.ranges[1]!.functions.map((f) => [f.function, f.bytes])).toEqual([['make_node', 24]]);
    expect(stat).toMatchObject({ exceeded: false, maxBytes: 404, ranges: [] });
    // total = heap + stack (128 in main) + 404 static: 1854 at 13, 1804 at 14 and 15, 1780 after.
    expect(total!.ranges.map((r) => [r.startEvent, r.endEvent, r.maxBytes])).toEqual([[13, 15, 1854]]);
  });

  test('maxRanges leaves later ranges ungrouped', () => {
    const model = decodeTrace(basicTrace().build());
    const [stack] = checkBudgets(model, { stack: 128 }, { maxRanges: 1 });
    expect(stack!.ranges[0]!.liveBlocks).toBe(0);
    expect(stack!.ranges[1]).toMatchObject({ liveBlocks: null, liveBytes: null, functions: [] });
  });

  test('keepRanges keeps the first ranges and counts the rest', () => {
    const model = decodeTrace(basicTrace().build());
    const [all] = checkBudgets(model, { stack: 128 });
    const [kept] = checkBudgets(model, { stack: 128 }, { keepRanges: 1 });
    expect(all!.rangeCount).toBe(2);
    expect(kept).toEqual({ ...all, ranges: all!.ranges.slice(0, 1) });
  });
});

/** sum.c: main calls checksum, which recurses; a worker thread. Global site ids from 1. */
const SUM_SITES: SiteDef[] = [
  { kind: S.ENTRY, file: 'sum.c', func: 'main', name: 'main', line: 20 }, // 1
  { kind: S.RETURN, file: 'sum.c', func: 'main', name: 'main', line: 30 }, // 2
  { kind: S.ENTRY, file: 'sum.c', func: 'checksum', name: 'checksum', line: 5 }, // 3
  { kind: S.RETURN, file: 'sum.c', func: 'checksum', name: 'checksum', line: 9 }, // 4
  { kind: S.MALLOC, file: 'sum.c', func: 'checksum', name: 'malloc', line: 7 }, // 5
  { kind: S.FREE, file: 'sum.c', func: 'main', name: 'free', line: 28 }, // 6
  { kind: S.ENTRY, file: 'sum.c', func: 'worker', name: 'worker', line: 40 }, // 7
  { kind: S.RETURN, file: 'sum.c', func: 'worker', name: 'worker', line: 45 }, // 8
  { kind: S.MALLOC, file: 'sum.c', func: 'worker', name: 'malloc', line: 42 }, // 9
];

/**
 * Thread 0: main entered at 368 B, checksum recursing six deep at 208 B a frame (to 1,616 B), a 40 B block allocated
 * at the third level and freed by main at the end; thread 1: worker entered at 160 B while checksum is deep. The
 * global order (heap records order the threads):
 *   0 t0 begin, 1 main 368, 2-4 checksum 576 784 992, 5 t1 begin, 6 worker 160, 7 t0 alloc 40 B,
 *   8-10 checksum 1200 1408 1616, 11-16 six exits, 17 t1 alloc 24 B, 18 worker exits, 19 t1 ends,
 *   20 t0 free 40 B, 21 main exits, 22 end.
 * Stack summed over threads: 1,568 B at 9, 1,776 B at 10, 1,568 B at 11, 1,360 B at 12.
 */
function recursionTrace(): Uint8Array {
  const b = new TraceBuilder({ complete: true });
  const t0 = b.thread(0);
  const t1 = b.thread(1);
  t0.threadBegin(100);
  t0.program('/home/student/sum', '/home/student');
  t0.unit(1, SUM_SITES);
  t0.enter(1, 368);
  for (const depth of [576, 784, 992]) t0.enter(3, depth);
  t1.threadBegin(101);
  t1.enter(7, 160);
  const block = t0.alloc({ site: 5, size: 40, addr: 0x1000 });
  for (const depth of [1200, 1408, 1616]) t0.enter(3, depth);
  for (let i = 0; i < 6; i++) t0.exit(4);
  t1.alloc({ site: 9, size: 24, addr: 0x2000 });
  t1.exit(8);
  t1.threadEnd();
  t0.free({ site: 6, block });
  t0.exit(2);
  t0.end(0, 0);
  return b.build();
}

describe('the stack of a stack or total budget range', () => {
  const frames = (fs: Array<{ function: string; depthBytes: number; frameBytes: number | null; event: number }>) => fs.map((f) => [f.function, f.depthBytes, f.frameBytes, f.event]);

  test('a stack budget names the frames open on each thread when its range began, each with its bytes', () => {
    const model = decodeTrace(recursionTrace());
    expect(Array.from(model.events.stackTotal.slice(8, 13))).toEqual([1360, 1568, 1776, 1568, 1360]);
    const [stack] = checkBudgets(model, { stack: 1500 });
    expect(stack).toMatchObject({ kind: 'stack', exceeded: true, maxBytes: 1776, maxEvent: 10 });
    expect(stack!.ranges.map((r) => [r.startEvent, r.endEvent, r.maxEvent, r.startBytes])).toEqual([[9, 11, 10, 1568]]);
    const [t0, t1, ...none] = stack!.ranges[0]!.stacks!;
    expect(none).toEqual([]);
    expect(t0!.thread).toBe(0);
    expect(t0!.depthBytes).toBe(1408);
    expect(frames(t0!.frames)).toEqual([
      ['main', 368, null, 1],
      ['checksum', 576, 208, 2],
      ['checksum', 784, 208, 3],
      ['checksum', 992, 208, 4],
      ['checksum', 1200, 208, 8],
      ['checksum', 1408, 208, 9],
    ]);
    expect(t0!.frames[1]).toMatchObject({ file: 'sum.c', line: 5 });
    expect(t1!.thread).toBe(1);
    expect(frames(t1!.frames)).toEqual([['worker', 160, null, 6]]);
    expect(t0!.depthBytes + t1!.depthBytes).toBe(1568); // what the budget counted
  });

  test('a total budget has both the stack and the heap; a heap budget only the heap; beyond maxRanges neither', () => {
    const model = decodeTrace(recursionTrace());
    const [heap, total] = checkBudgets(model, { heap: 32, total: 1600 });
    expect(heap!.ranges.map((r) => [r.startEvent, r.endEvent, r.stacks])).toEqual([[7, 19, null]]);
    expect(heap!.ranges[0]!.functions.map((f) => [f.function, f.bytes])).toEqual([['checksum', 40]]);
    // total = 40 B of heap + the stack: 1,608 B at 9, 1,816 B at 10, 1,608 B at 11.
    expect(total!.ranges.map((r) => [r.startEvent, r.endEvent, r.maxBytes])).toEqual([[9, 11, 1816]]);
    const r = total!.ranges[0]!;
    expect(r.stacks!.map((s) => [s.thread, s.depthBytes, s.frames.length])).toEqual([
      [0, 1408, 6],
      [1, 160, 1],
    ]);
    expect(r).toMatchObject({ liveBlocks: 1, liveBytes: 40 });
    const [stack] = checkBudgets(model, { stack: 1000 }, { maxRanges: 0 });
    expect(stack!.ranges[0]!.stacks).toBeNull();
  });

  test('report --budget prints the frames for a stack budget, not the heap; --json carries them', async () => {
    const file = writeTrace(tmp(), recursionTrace());
    const text = await capture(runReport, [file, '--budget', 'stack=1500,total=1600']);
    expect(text.code).toBe(0);
    const lines = text.out.split('\n');
    const from = lines.findIndex((l) => l.startsWith('  stack ≤ '));
    expect(lines.slice(from, from + 8)).toEqual([
      '  stack ≤ 1.5 KiB: max 1.7 KiB at event 10, EXCEEDED in 1 range',
      expect.stringMatching(/^    events 9-11 \(.*\): max 1.7 KiB at event 10$/),
      '      stack at its start on thread 0: 1,408 B in 6 frames',
      '        main (368 B from the stack base)',
      '        checksum 208 B × 5 = 1,040 B',
      '      stack at its start on thread 1: 160 B in 1 frame',
      '        worker (160 B from the stack base)',
      expect.stringMatching(/^  total ≤ /),
    ]);
    // The total budget shows the heap live as well.
    expect(lines.slice(from + 8).join('\n')).toMatch(/stack at its start on thread 0: 1,408 B in 6 frames[^]*heap live at its start: 40 B in 1 block/);
    const j = JSON.parse((await capture(runReport, [file, '--budget', 'stack=1500', '--json'])).out);
    const stacks = j.budgets.checks[0].ranges[0].stacks;
    expect(stacks.map((s: { thread: number; depthBytes: number }) => [s.thread, s.depthBytes])).toEqual([
      [0, 1408],
      [1, 160],
    ]);
    expect(stacks[0].frames[5]).toEqual({ function: 'checksum', file: 'sum.c', line: 5, frame: 6, event: 9, depthBytes: 1408, frameBytes: 208 });
  });
});

describe('report --budget, memwrap.json, --fail-on, --interval', () => {
  test('--budget text and JSON; --fail-on budget exits 1', async () => {
    const file = writeTrace(tmp(), basicTrace().build());
    const text = await capture(runReport, [file, '--budget', 'heap=1K,static=1K']);
    expect(text.code).toBe(0);
    expect(text.out).toContain('Budgets (--budget)');
    expect(text.out).toMatch(/heap ≤ 1\.0 KiB: max 1\.3 KiB at event 13, EXCEEDED in 1 range/);
    expect(text.out).toMatch(/static ≤ 1\.0 KiB: max 404 B at event 2, ok/);
    expect(text.out).toMatch(/^\s+1\.2 KiB\s+3\s+demo\.c:10 main$/m);
    for (const line of text.out.split('\n')) expect(line.length).toBeLessThanOrEqual(80);

    const failing = await capture(runReport, [file, '--budget', 'heap=1K', '--fail-on', 'budget', '--json']);
    expect(failing.code).toBe(1);
    const j = JSON.parse(failing.out);
    expect(j.budgets.source).toBe('--budget');
    expect(j.budgets.exceeded).toBe(true);
    expect(j.budgets.checks[0]).toMatchObject({ kind: 'heap', limitBytes: 1024, exceeded: true, rangeCount: 1 });
    expect(j.budgets.checks[0].ranges[0].functions[0].sites[0].key).toBe('interposed:1');
    expect(j.failOn).toEqual({ conditions: ['budget'], failed: ['budget'] });

    expect((await capture(runReport, [file, '--budget', 'heap=2K', '--fail-on', 'budget'])).code).toBe(0);
  });

  test('--fail-on leaks, bad --fail-on and --budget', async () => {
    const file = writeTrace(tmp(), basicTrace().build());
    expect((await capture(runReport, [file, '--fail-on', 'leaks'])).code).toBe(1);
    const r = await capture(runReport, [file, '--fail-on', 'budget,leaks', '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out).failOn).toEqual({ conditions: ['budget', 'leaks'], failed: ['leaks'] });
    expect(r.err).toMatch(/no budgets/);
    const bad = await capture(runReport, [file, '--fail-on', 'warnings']);
    expect(bad).toMatchObject({ code: 2, out: '' });
    expect(bad.err).toMatch(/--fail-on wants budget or leaks, got 'warnings'/);
    const badBudget = await capture(runReport, [file, '--budget', 'heap=1X']);
    expect(badBudget.code).toBe(2);
    expect(badBudget.err.trim().split('\n')).toHaveLength(1);
  });

  test('a memwrap.json beside the program; --budget wins over it; a bad one is a one-line error, exit 2', async () => {
    const dir = tmp();
    const file = writeTrace(dir, basicIn(dir));
    // No memwrap.json: no budgets section.
    expect((await capture(runReport, [file])).out).not.toContain('Budgets');
    writeFileSync(path.join(dir, 'memwrap.json'), JSON.stringify({ budgets: { heap: '2K' } }));
    const r = await capture(runReport, [file, '--json', '--fail-on', 'budget']);
    expect(r.code).toBe(1);
    const j = JSON.parse(r.out);
    expect(j.budgets.source).toBe(path.join(dir, 'memwrap.json'));
    expect(j.budgets.checks[0]).toMatchObject({ kind: 'heap', limitBytes: 2048, maxBytes: 3000, rangeCount: 1 });
    expect(j.budgets.checks[0].ranges[0].functions[0]).toMatchObject({ function: 'main', bytes: 3000 });
    const option = JSON.parse((await capture(runReport, [file, '--json', '--budget', 'stack=1K'])).out);
    expect(option.budgets.source).toBe('--budget');
    expect(option.budgets.checks.map((c: { kind: string }) => c.kind)).toEqual(['stack']);

    writeFileSync(path.join(dir, 'memwrap.json'), '{ "budgets": {\n "heap": "lots" }\n}');
    const bad = await capture(runReport, [file]);
    expect(bad.code).toBe(2);
    expect(bad.out).toBe('');
    expect(bad.err).toMatch(/memwrap\.json: budget "heap": 'lots' is not a size/);
    expect(bad.err.trim().split('\n')).toHaveLength(1);
    writeFileSync(path.join(dir, 'memwrap.json'), '{ nope');
    const broken = await capture(runReport, [file]);
    expect(broken.code).toBe(2);
    expect(broken.err.trim().split('\n')).toHaveLength(1);
  });

  test('--interval: text table and JSON rows', async () => {
    const file = writeTrace(tmp(), basicTrace().build());
    const text = await capture(runReport, [file, '--interval', '10']);
    expect(text.code).toBe(0);
    expect(text.out).toContain('Memory per interval of 10 events (2 intervals');
    expect(text.out).toMatch(/start event\s+start time\s+heap\s+max heap\s+stack\s+static/);
    for (const line of text.out.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
    const j = JSON.parse((await capture(runReport, [file, '--interval', '10', '--json'])).out);
    expect(j.intervals.spec).toEqual({ every: 10, unit: 'events' });
    expect(j.intervals.count).toBe(2);
    expect(j.intervals.rows[1]).toMatchObject({ startEvent: 10, endEvent: 19, heapRequested: 1248, maxHeapRequested: 1322, static: 404 });
    expect((await capture(runReport, [file, '--interval', '1ms'])).code).toBe(0);
    const bad = await capture(runReport, [file, '--interval', 'soon']);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--interval wants/);
  });
});
