// The blocks live at the heap peak and at the total peak, by site and by function; the source line helper; `report --peak`.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { peaks, sourceLineText } from '../../analysis/peak.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { runReport } from '../../cli/report.js';
import { capture } from '../fixtures/cli-capture.js';
import { basicTrace, DEMO_SITES } from '../fixtures/scenarios.js';
import { S, sourceSites, TraceBuilder, type SiteDef } from '../fixtures/trace-builder.js';

/** main (depth 128) allocates 1,000 B and frees it, then make_node runs 50,000 B deep and allocates 10 B. */
function stackDominatesTrace(sites: SiteDef[] = DEMO_SITES): TraceBuilder {
  const b = new TraceBuilder({ complete: true });
  const t = b.thread(0);
  t.threadBegin(1);
  t.unit(1, sites);
  t.static(8, 0x601040, 400);
  t.enter(1, 128);
  const big = t.alloc({ site: 9, size: 1000, addr: 0x1000 });
  t.free({ site: 6, block: big });
  t.enter(3, 50_000);
  t.alloc({ site: 4, size: 10, addr: 0x2000 });
  t.exit(5);
  t.exit(2);
  t.end(0, 0);
  return b;
}

describe('peaks', () => {
  test('heap peak: live blocks by site and by function, with shares', () => {
    const p = peaks(decodeTrace(basicTrace().build()));
    expect(p.heap.event).toBe(13);
    expect(p.heap.peakBytes).toBe(1322);
    expect(p.heap.liveBlocks).toBe(5);
    expect(p.heap.bySite.map((g) => [g.key, g.label, g.blocks, g.bytes])).toEqual([
      ['interposed:1', 'main (via libc/uninstrumented)', 1, 1024],
      ['site:7', 'demo.c:16 main → realloc', 2, 250],
      ['site:4', 'demo.c:4 make_node → malloc', 2, 48],
    ]);
    expect(p.heap.bySite[0]!.share).toBeCloseTo(1024 / 1322, 10);
    expect(p.heap.bySite.reduce((s, g) => s + g.share, 0)).toBeCloseTo(1, 10);
    expect(p.heap.bySite[1]).toMatchObject({ file: 'demo.c', line: 16, function: 'main', site: 7 });
    expect(p.heap.byFunction.map((g) => [g.key, g.label, g.blocks, g.bytes])).toEqual([
      ['function:1', 'demo.c:10 main', 3, 1274],
      ['function:3', 'demo.c:3 make_node', 2, 48],
    ]);
    // Total = heap + stack (main's frame, 128 B) + statics (404 B), at the same event here.
    expect(p.total).toMatchObject({ event: 13, heapBytes: 1322, stackBytes: 128, staticBytes: 404, peakBytes: 1854 });
    expect(p.total.bySite[0]!.share).toBeCloseTo(1024 / 1854, 10);
  });

  test('the total peak differs from the heap peak when the stack dominates', () => {
    const model = decodeTrace(stackDominatesTrace().build());
    const p = peaks(model);
    expect(p.heap.peakBytes).toBe(1000);
    expect(p.heap.bySite.map((g) => [g.label, g.bytes, g.share])).toEqual([['demo.c:15 main → calloc', 1000, 1]]);
    expect(p.total.event).not.toBe(p.heap.event);
    expect(p.total).toMatchObject({ heapBytes: 10, stackBytes: 50_000, staticBytes: 400, peakBytes: 50_410, liveBlocks: 1 });
    expect(model.events.kind[p.total.event!]).toBe(7); // the ALLOC in make_node reaches it first
    expect(p.total.bySite.map((g) => [g.label, g.bytes])).toEqual([['demo.c:4 make_node → malloc', 10]]);
    expect(p.total.bySite[0]!.share).toBeCloseTo(10 / 50_410, 10);
    expect(p.total.byFunction.map((g) => g.label)).toEqual(['demo.c:3 make_node']);
  });

  test('groups that tie on bytes, blocks and label come in the order of their first block live at the peak', () => {
    // Sites 14 and 15 read the same (two mallocs on one line); 16 is another line, for a second maximum.
    const twin = { kind: S.MALLOC, file: 'demo.c', func: 'main', name: 'malloc', line: 60 };
    const b = new TraceBuilder({ complete: true });
    const t = b.thread(0);
    t.threadBegin(1);
    t.unit(1, [...DEMO_SITES, twin, twin, { ...twin, line: 61 }]);
    t.enter(1, 128);
    const b1 = t.alloc({ site: 15, size: 10, addr: 0x1000 });
    t.alloc({ site: 14, size: 10, addr: 0x2000 });
    t.free({ site: 6, block: b1 }); // site 15's first block ends: site 14's block is now the earlier one
    t.alloc({ site: 15, size: 10, addr: 0x3000 });
    t.alloc({ site: 16, size: 5, addr: 0x4000 });
    t.exit(2);
    t.end(0, 0);
    const p = peaks(decodeTrace(b.build()));
    expect(p.heap.liveBlocks).toBe(3);
    expect(p.heap.bySite.map((g) => [g.key, g.bytes])).toEqual([
      ['site:14', 10],
      ['site:15', 10],
      ['site:16', 5],
    ]);
    expect(p.total.bySite.map((g) => g.key)).toEqual(['site:14', 'site:15', 'site:16']);
  });

  test('the snapshot is of the first maximum: blocks that come and go after it are not in it', () => {
    const b = new TraceBuilder({ complete: true });
    const t = b.thread(0);
    t.threadBegin(1);
    t.unit(1, DEMO_SITES);
    t.enter(1, 128);
    const a = t.alloc({ site: 4, size: 100, addr: 0x1000 });
    t.free({ site: 6, block: a });
    t.alloc({ site: 9, size: 60, addr: 0x2000 });
    const c = t.alloc({ site: 4, size: 40, addr: 0x3000 }); // 100 again: not a new maximum
    t.free({ site: 6, block: c });
    t.exit(2);
    t.end(0, 0);
    const p = peaks(decodeTrace(b.build()));
    expect(p.heap).toMatchObject({ event: 2, peakBytes: 100, liveBlocks: 1 });
    expect(p.heap.bySite.map((g) => [g.key, g.blocks, g.bytes])).toEqual([['site:4', 1, 100]]);
  });

  test('an empty run has no peak', () => {
    const b = new TraceBuilder({ complete: true });
    b.thread(0).threadBegin(1);
    const p = peaks(decodeTrace(b.build()));
    expect(p.heap).toMatchObject({ event: null, peakBytes: 0, bySite: [], byFunction: [] });
    expect(p.total.event).toBeNull();
  });
});

describe('sourceLineText', () => {
  const files: Record<string, string> = { '/src/a.c': 'int x;\r\n  char *p = malloc(4);  \nlast' };
  const read = (f: string): string | null => files[f] ?? null;
  test('the trimmed line, or null', () => {
    expect(sourceLineText(read, '/src/a.c', 1)).toBe('int x;');
    expect(sourceLineText(read, '/src/a.c', 2)).toBe('char *p = malloc(4);');
    expect(sourceLineText(read, '/src/a.c', 3)).toBe('last');
    expect(sourceLineText(read, '/src/a.c', 4)).toBeNull();
    expect(sourceLineText(read, '/src/a.c', 0)).toBeNull();
    expect(sourceLineText(read, '/src/missing.c', 1)).toBeNull();
    expect(sourceLineText(read, null, 1)).toBeNull();
    expect(
      sourceLineText(() => {
        throw new Error('EACCES');
      }, '/src/a.c', 1),
    ).toBeNull();
  });
});

describe('report --peak', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'mw-peak-'));
  const src = path.join(dir, 'prog.c');
  writeFileSync(src, Array.from({ length: 20 }, (_, i) => `/* line ${i + 1} */`).join('\n') + '\n');
  // The demo sites, but in a file that exists (absolute path, as real traces have), with its content hash as built.
  const sites = [...DEMO_SITES.map((s) => ({ ...s, file: src })), ...sourceSites([src])];
  const stackTrace = path.join(dir, 'stack.mwtrace');
  writeFileSync(stackTrace, stackDominatesTrace(sites).build());
  const basic = path.join(dir, 'basic.mwtrace');
  writeFileSync(basic, basicTrace().build());

  test('text: both peaks, source lines, 80 columns', async () => {
    const r = await capture(runReport, [stackTrace, '--peak']);
    expect(r.code).toBe(0);
    expect(r.err).toBe('');
    const out = r.out;
    expect(out).toContain('Heap peak: 1000 B requested at event 3, 1 block live');
    expect(out).toMatch(/1000 B {2}100\.0% +1 {2}\S*prog\.c:15 main → calloc\n {6}\| \/\* line 15 \*\//);
    expect(out).toContain('Total peak: 49.2 KiB at event 6 (heap 10 B, stack 48.8 KiB,');
    expect(out).toMatch(/10 B {3}0\.0% +1 {2}\S*prog\.c:4 make_node → malloc\n {6}\| \/\* line 4 \*\//);
    expect(out).toMatch(/by function \(1 of 1\)\n.*\n.*prog\.c:3 make_node\n/);
    for (const line of out.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
  });

  test('text: a site whose file cannot be read says so', async () => {
    const r = await capture(runReport, [basic, '--peak', '--top', '1']);
    expect(r.out).toContain('  by allocation site (1 of 3)');
    expect(r.out).toContain('main (via libc/uninstrumented)\n      (source not found)\n');
    expect(r.out).toContain('the same event as the heap peak: the same blocks are live');
    for (const line of r.out.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
  });

  test('--json has "peak", cut to --top; without --peak it has none', async () => {
    const j = JSON.parse((await capture(runReport, [basic, '--json', '--peak', '--top', '2'])).out);
    expect(j.peak.heap).toMatchObject({ kind: 'heap', event: 13, peakBytes: 1322, liveBlocks: 5, sites: 3, functions: 2 });
    expect(j.peak.heap.bySite).toHaveLength(2);
    expect(j.peak.heap.bySite[0]).toMatchObject({ key: 'interposed:1', blocks: 1, bytes: 1024, file: 'demo.c', line: 10, function: 'main' });
    expect(j.peak.total).toMatchObject({ kind: 'total', event: 13, peakBytes: 1854 });
    const plain = JSON.parse((await capture(runReport, [basic, '--json'])).out);
    expect(plain.peak).toBeUndefined();
    expect(plain.linked).toBeUndefined();
  });
});
