// Heap per invocation of one function: net and peak incl. callees and recursion, a negative net; `report --calls`; end to end with samples/linked-list.c.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { foldModel, modelStart } from '../../analysis/model-fold.js';
import { perCall, PerCallFold } from '../../analysis/per-call.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { runReport } from '../../cli/report.js';
import { capture } from '../fixtures/cli-capture.js';
import { DEMO_SITES } from '../fixtures/scenarios.js';
import { TraceBuilder } from '../fixtures/trace-builder.js';
import { buildInstrumented, runTraced, samplesDir, scratch, traceOf } from '../support/programs.js';

/**
 * main → make_node (#1) allocates x (10 B) → make_node (#2) allocates y (20 B), frees x; #1 frees y. Then main allocates
 * z (5 B) and make_node (#3) frees it. A second thread's allocation inside #1's span is not #1's.
 */
function recursionTrace(): TraceBuilder {
  const b = new TraceBuilder({ complete: true });
  const t = b.thread(0);
  const u = b.thread(1);
  t.threadBegin(1);
  t.unit(1, DEMO_SITES);
  t.enter(1, 100);
  t.enter(3, 200);
  const x = t.alloc({ site: 4, size: 10, addr: 0x1000 });
  u.threadBegin(2);
  u.enter(10, 64);
  u.alloc({ site: 12, size: 999, addr: 0x9000 });
  t.chunk();
  t.enter(3, 300);
  const y = t.alloc({ site: 4, size: 20, addr: 0x2000 });
  t.free({ site: 6, block: x });
  t.exit(5);
  t.free({ site: 6, block: y });
  t.exit(5);
  const z = t.alloc({ site: 9, size: 5, addr: 0x3000 });
  t.enter(3, 200);
  t.free({ site: 6, block: z });
  t.exit(5);
  t.exit(2);
  t.end(0, 0);
  return b;
}

describe('perCall', () => {
  test('net and peak per invocation, callees and recursion included, and a negative net', () => {
    const model = decodeTrace(recursionTrace().build());
    const p = perCall(model, 'make_node');
    expect(p.invocations.map((c) => [c.recursion, c.bytesAllocated, c.bytesFreed, c.netBytes, c.peakBytes, c.heapEvents])).toEqual([
      [0, 30, 30, 0, 30, 4],
      [1, 20, 10, 10, 20, 2],
      [0, 0, 5, -5, 0, 1],
    ]);
    expect(p.invocations[2]!.peakEvent).toBeNull();
    expect(p.invocations[0]!.endEvent).not.toBeNull();
    expect(p.invocations.every((c) => c.thread === 0)).toBe(true);
    expect(p.totals).toEqual({ calls: 3, bytesAllocated: 30, bytesFreed: 35, netBytes: -5, maxPeakBytes: 30, maxPeakCall: 0 });
    expect(perCall(model, 'worker').invocations.map((c) => [c.thread, c.netBytes, c.endEvent])).toEqual([[1, 999, null]]);
    expect(perCall(model, 'nothing')).toEqual({
      function: 'nothing',
      pending: false,
      invocations: [],
      totals: { calls: 0, bytesAllocated: 0, bytesFreed: 0, netBytes: 0, maxPeakBytes: 0, maxPeakCall: null },
    });
  });

  test('keepCalls keeps the first invocations; the totals count them all', () => {
    const model = decodeTrace(recursionTrace().build());
    const all = perCall(model, 'make_node');
    const fold = new PerCallFold(modelStart(model), 'make_node', { keepCalls: 1 });
    foldModel(model, [fold]);
    expect(fold.result()).toEqual({ ...all, invocations: all.invocations.slice(0, 1) });
  });

  test('report --calls: text and JSON', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'mw-calls-')), 't.mwtrace');
    writeFileSync(file, recursionTrace().build());
    const text = await capture(runReport, [file, '--calls', 'make_node']);
    expect(text.code).toBe(0);
    expect(text.out).toContain('Heap per call of make_node (3 of 3 calls; net = allocated - freed)');
    expect(text.out).toContain('callees included; outermost calls: 30 B allocated, 35 B freed, net -5 B');
    expect(text.out).toMatch(/#3\s+\S+\s+0\s+0\s+-5 B\s+0 B\s+0 B\s+5 B/);
    for (const line of text.out.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
    const j = JSON.parse((await capture(runReport, [file, '--calls', 'make_node', '--top', '2', '--json'])).out);
    expect(j.calls.function).toBe('make_node');
    expect(j.calls.totals.calls).toBe(3);
    expect(j.calls.invocations).toHaveLength(2);
    expect(j.calls.invocations[1]).toMatchObject({ recursion: 1, netBytes: 10, peakBytes: 20 });
    expect((await capture(runReport, [file, '--calls', 'nope'])).out).toContain('(no calls)');
  });
});

describe('samples/linked-list.c end to end', () => {
  test('--calls make_node, --temporary, --budget and --fail-on on a real trace', async () => {
    const work = scratch('per-call');
    const exe = path.join(work, 'prog');
    buildInstrumented('gcc', ['-O0', '-g'], [path.join(samplesDir, 'linked-list.c')], exe);
    const ran = runTraced(exe, [], work);
    expect(ran.status).toBe(0);
    const trace = traceOf(work, ran.pid);
    const r = await capture(runReport, [trace, '--json', '--calls', 'make_node', '--temporary', '--budget', 'heap=1B,stack=1M', '--fail-on', 'budget']);
    expect(r.code).toBe(1);
    const j = JSON.parse(r.out);
    expect(j.calls.totals.calls).toBeGreaterThan(0);
    for (const c of j.calls.invocations) {
      expect(c.recursion).toBe(0);
      expect(c.netBytes).toBeGreaterThan(0); // make_node allocates a node and returns it
      expect(c.peakBytes).toBe(c.netBytes);
    }
    expect(j.budgets.checks.map((c: { kind: string; exceeded: boolean }) => [c.kind, c.exceeded])).toEqual([
      ['heap', true],
      ['stack', false],
    ]);
    const first = j.budgets.checks[0].ranges[0];
    expect(first.liveBlocks).toBeGreaterThan(0);
    expect(first.functions[0].sites[0].file).toMatch(/linked-list\.c$/);
    expect(j.temporaries.within).toBe(16);
    const text = await capture(runReport, [trace, '--calls', 'make_node', '--temporary', '--budget', 'heap=1B', '--interval', '5']);
    expect(text.code).toBe(0);
    for (const line of text.out.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
  });
});
