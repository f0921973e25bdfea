// Attribution tables (`cc-memwrap report --by …`) on crafted traces, asserted exactly, plus the CLI flags and one real program.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { attribute, attribution, type AttributionRow } from '../../analysis/attribution.js';
import { renderAttribution } from '../../analysis/report-text.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { runReport } from '../../cli/report.js';
import { capture } from '../fixtures/cli-capture.js';
import { basicTrace, twoThreadsTrace } from '../fixtures/scenarios.js';
import { S, TraceBuilder, type SiteDef } from '../fixtures/trace-builder.js';
import { buildInstrumented, must, runTraced, samplesDir, scratch, traceOf, wrapper } from '../support/programs.js';

const CWD = '/home/student';
const A = `${CWD}/app.c`;
const B = `${CWD}/lib/util.c`;

/** Sites of a two-file program (global ids from 1). */
const SITES: SiteDef[] = [
  { kind: S.ENTRY, file: A, func: 'main', name: 'main', line: 10 }, // 1
  { kind: S.ENTRY, file: B, func: 'make', name: 'make', line: 3 }, // 2
  { kind: S.MALLOC, file: B, func: 'make', name: 'malloc', line: 4 }, // 3
  { kind: S.ENTRY, file: A, func: 'cleanup', name: 'cleanup', line: 30 }, // 4
  { kind: S.FREE, file: A, func: 'cleanup', name: 'free', line: 31 }, // 5
  { kind: S.ENTRY, file: B, func: 'helper', name: 'helper', line: 20 }, // 6
  { kind: S.MALLOC, file: B, func: 'helper', name: 'malloc', line: 21 }, // 7
  { kind: S.FREE, file: B, func: 'helper', name: 'free', line: 22 }, // 8
  { kind: S.ENTRY, file: A, func: 'phase', name: 'phase', line: 40 }, // 9
  { kind: S.MALLOC, file: A, func: 'main', name: 'malloc', line: 11 }, // 10
  { kind: S.CALLOC, file: B, func: 'helper', name: 'calloc', line: 23 }, // 11
  { kind: S.REALLOC, file: B, func: 'helper', name: 'realloc', line: 24 }, // 12
  { kind: S.ALIGNED_ALLOC, file: B, func: 'helper', name: 'aligned_alloc', line: 25 }, // 13
  { kind: S.POSIX_MEMALIGN, file: B, func: 'helper', name: 'posix_memalign', line: 26 }, // 14
  { kind: S.STRDUP, file: B, func: 'helper', name: 'strdup', line: 27 }, // 15
  { kind: S.STRNDUP, file: B, func: 'helper', name: 'strndup', line: 28 }, // 16
  { kind: S.ENTRY, file: A, func: 'worker', name: 'worker', line: 50 }, // 17
];

/**
 * main → phase → make allocates 100 and 50, main → phase → make → make allocates 30 (recursion), main allocates 8
 * itself, main → cleanup frees the three blocks of make, main → helper allocates 100, frees it, allocates 40.
 */
function cleanupTrace(): TraceBuilder {
  const b = new TraceBuilder({ complete: true, pid: 77 });
  const t = b.thread(0);
  t.threadBegin(77);
  t.program(`${CWD}/app`, CWD);
  t.unit(1, SITES);
  t.enter(1, 100);
  t.enter(9, 150);
  t.enter(2, 200);
  const x = t.alloc({ site: 3, size: 100, addr: 0x1000 });
  const y = t.alloc({ site: 3, size: 50, addr: 0x2000 });
  t.enter(2, 250);
  const z = t.alloc({ site: 3, size: 30, addr: 0x3000 });
  t.exit(2);
  t.exit(2);
  t.exit(9);
  t.alloc({ site: 10, size: 8, addr: 0x4000 });
  t.enter(4, 150);
  t.free({ site: 5, block: x });
  t.free({ site: 5, block: y });
  t.free({ site: 5, block: z });
  t.exit(4);
  t.enter(6, 150);
  const h = t.alloc({ site: 7, size: 100, addr: 0x5000 });
  t.free({ site: 8, block: h });
  t.alloc({ site: 7, size: 40, addr: 0x6000 });
  t.exit(6);
  t.exit(1);
  t.end(0, 0);
  return b;
}

/** helper calls every allocator once: sites of malloc, calloc, realloc, aligned_alloc, posix_memalign, strdup, strndup; an interposed memalign and valloc; a free. */
function allocatorsTrace(): TraceBuilder {
  const b = new TraceBuilder({ complete: true });
  const t = b.thread(0);
  t.threadBegin(9);
  t.program(`${CWD}/app`, CWD);
  t.unit(1, SITES);
  t.enter(1, 100);
  t.enter(6, 150);
  const m = t.alloc({ site: 7, size: 10, addr: 0x1000 });
  t.alloc({ site: 11, size: 20, addr: 0x2000 });
  const r = t.realloc({ site: 12, old: m, size: 30, addr: 0x3000 });
  t.alloc({ site: 13, size: 64, addr: 0x4000 });
  t.alloc({ site: 14, size: 64, addr: 0x5000 });
  t.alloc({ site: 15, size: 6, addr: 0x6000 });
  t.alloc({ site: 16, size: 4, addr: 0x7000 });
  t.alloc({ fn: S.MEMALIGN, size: 32, addr: 0x8000 });
  t.alloc({ fn: S.VALLOC, size: 4096, addr: 0x9000 });
  t.realloc({ site: 12, old: 0, size: 5, addr: 0xa000 });
  t.free({ site: 8, block: r });
  t.exit(6);
  t.exit(1);
  t.end(0, 0);
  return b;
}

const model = (b: TraceBuilder) => decodeTrace(b.build());
const row = (rows: AttributionRow[], label: string): AttributionRow => {
  const r = rows.find((x) => x.label === label);
  if (r === undefined) throw new Error(`no row ${label} in ${rows.map((x) => x.label).join(', ')}`);
  return r;
};
const brief = (r: AttributionRow) => [r.label, r.netBytes, r.minBytes, r.maxBytes];

describe('by function', () => {
  const m = model(cleanupTrace());

  test('innermost: a cleanup function that frees what another allocated goes negative; min and max over time', () => {
    const rows = attribute(m, { by: 'function' });
    expect(rows.map(brief)).toEqual([
      ['lib/util.c:3 make', 180, 0, 180],
      ['lib/util.c:20 helper', 40, 0, 100],
      ['app.c:10 main', 8, 0, 8],
      ['app.c:30 cleanup', -180, -180, 0],
    ]);
    expect(row(rows, 'app.c:30 cleanup')).toEqual({
      key: 'function:4',
      label: 'app.c:30 cleanup',
      file: A,
      line: 30,
      function: 'cleanup',
      thread: null,
      netBytes: -180,
      minBytes: -180,
      maxBytes: 0,
      bytesAllocated: 0,
      bytesFreed: 180,
      allocations: 0,
      frees: 3,
      counts: { malloc: 0, calloc: 0, aligned: 0, strdup: 0, realloc: 0, free: 3 },
    });
    expect(row(rows, 'lib/util.c:20 helper')).toMatchObject({ bytesAllocated: 140, bytesFreed: 100, allocations: 2, frees: 1, counts: { malloc: 2, free: 1 } });
    expect(attribution(m, { by: 'function' })).toMatchObject({ by: 'function', mode: 'innermost' });
  });

  test('outermost: the function called from main gets what its callees did; main keeps its own', () => {
    const rows = attribute(m, { by: 'function', mode: 'outermost' });
    expect(rows.map(brief)).toEqual([
      ['app.c:40 phase', 180, 0, 180],
      ['lib/util.c:20 helper', 40, 0, 100],
      ['app.c:10 main', 8, 0, 8],
      ['app.c:30 cleanup', -180, -180, 0],
    ]);
    expect(row(rows, 'app.c:40 phase').counts.malloc).toBe(3);
  });

  test('inclusive: every function on the path, recursion counted once', () => {
    const rows = attribute(m, { by: 'function', mode: 'inclusive' });
    expect(rows.map(brief)).toEqual([
      // main: +180 (→ 188 with its own 8), −180 in cleanup, +100 −100 +40 in helper.
      ['app.c:10 main', 48, 0, 188],
      ['app.c:40 phase', 180, 0, 180],
      ['lib/util.c:3 make', 180, 0, 180],
      ['lib/util.c:20 helper', 40, 0, 100],
      ['app.c:30 cleanup', -180, -180, 0],
    ]);
    expect(row(rows, 'lib/util.c:3 make').counts.malloc).toBe(3);
    expect(row(rows, 'app.c:10 main').counts).toEqual({ malloc: 6, calloc: 0, aligned: 0, strdup: 0, realloc: 0, free: 4 });
  });

  test('outermost on a thread without main: its root function', () => {
    const rows = attribute(model(twoThreadsTrace()), { by: 'function', mode: 'outermost' });
    expect(rows.map(brief)).toEqual([
      ['demo.c:40 worker', 10, 0, 20],
      ['demo.c:10 main', -10, -10, 10],
    ]);
  });

  test('events with no instrumented frame', () => {
    const b = new TraceBuilder({ complete: true });
    const t = b.thread(0);
    t.threadBegin(1);
    t.unit(1, SITES);
    t.alloc({ fn: S.MALLOC, size: 7, addr: 0x10 });
    t.end(0, 0);
    for (const mode of ['innermost', 'outermost', 'inclusive'] as const) {
      expect(attribute(model(b), { by: 'function', mode }).map(brief)).toEqual([['<no instrumented frame>', 7, 0, 7]]);
    }
    expect(attribute(model(b), { by: 'site' }).map(brief)).toEqual([['<no instrumented frame> (via libc/uninstrumented)', 7, 0, 7]]);
  });
});

describe('by site, file, thread', () => {
  test('site: allocations at their site, frees at the freeing site', () => {
    const rows = attribute(model(cleanupTrace()), { by: 'site' });
    expect(rows.map(brief)).toEqual([
      ['lib/util.c:4 make → malloc', 180, 0, 180],
      ['lib/util.c:21 helper → malloc', 140, 0, 140],
      ['app.c:11 main → malloc', 8, 0, 8],
      ['app.c:31 cleanup → free', -180, -180, 0],
      ['lib/util.c:22 helper → free', -100, -100, 0],
    ]);
    expect(row(rows, 'app.c:31 cleanup → free')).toMatchObject({ key: 'site:5', file: A, line: 31, function: 'cleanup' });
  });

  test('site: an interposed allocation goes to its frame, labelled as summary.ts does', () => {
    const rows = attribute(model(basicTrace()), { by: 'site' });
    expect(row(rows, 'main (via libc/uninstrumented)')).toMatchObject({
      key: 'interposed:1',
      function: 'main',
      netBytes: 1024,
      maxBytes: 1024,
      counts: { malloc: 1 },
    });
    // and by function it is main's, with main's own calls
    expect(row(attribute(model(basicTrace()), { by: 'function' }), 'demo.c:10 main').counts).toEqual({
      malloc: 1,
      calloc: 1,
      aligned: 0,
      strdup: 0,
      realloc: 4,
      free: 1,
    });
    // an interposed free on a thread
    const two = attribute(model(twoThreadsTrace()), { by: 'site' });
    expect(brief(row(two, 'worker (via libc/uninstrumented)'))).toEqual(['worker (via libc/uninstrumented)', -10, -10, 0]);
  });

  test('file: the file of the function, relative to the working directory', () => {
    const m = model(cleanupTrace());
    expect(attribute(m, { by: 'file' }).map(brief)).toEqual([
      ['lib/util.c', 220, 0, 280],
      ['app.c', -172, -172, 8],
    ]);
    expect(attribute(m, { by: 'file' })[0]).toMatchObject({ key: `file:${B}`, file: B, line: null, function: null });
    // outermost: phase (app.c) gets make's bytes
    expect(attribute(m, { by: 'file', mode: 'outermost' }).map(brief)).toEqual([
      ['app.c', 8, 0, 188],
      ['lib/util.c', 40, 0, 100],
    ]);
  });

  test('thread: two threads freeing each other’s blocks', () => {
    const rows = attribute(model(twoThreadsTrace()), { by: 'thread' });
    expect(rows.map((r) => [...brief(r), r.thread, r.key, r.bytesAllocated, r.bytesFreed])).toEqual([
      ['thread 1 (tid 501)', 10, 0, 20, 1, 'thread:1', 20, 10],
      ['thread 0 (tid 500)', -10, -10, 10, 0, 'thread:0', 10, 20],
    ]);
  });
});

test('counts per allocator kind', () => {
  const rows = attribute(model(allocatorsTrace()), { by: 'function' });
  expect(rows).toHaveLength(1);
  expect(rows[0]!.counts).toEqual({ malloc: 1, calloc: 1, aligned: 4, strdup: 2, realloc: 2, free: 1 });
  // 10 + 20 + (30 − 10) + 64 + 64 + 6 + 4 + 32 + 4096 + 5 = 4321 at most, then − 30
  expect(rows[0]).toMatchObject({ netBytes: 4291, maxBytes: 4321, bytesAllocated: 4331, bytesFreed: 40 });
});

test('text table: 80 columns, --top rows, negative nets shown', () => {
  const a = attribution(model(cleanupTrace()), { by: 'function' });
  const text = renderAttribution(a, { top: 3, source: null, relativeTo: null });
  for (const line of text.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
  expect(text).toContain('Heap by function, innermost (3 of 4;');
  expect(text).toMatch(/180 B +0 B +180 B +3 +0 +lib\/util\.c:3 make\n/);
  expect(renderAttribution(a, { top: 10, source: null, relativeTo: null })).toMatch(/-180 B +-180 B +0 B +0 +3 +app\.c:30 cleanup\n/);
  // many columns and long labels: labels on lines of their own
  const wide = renderAttribution(attribution(model(allocatorsTrace()), { by: 'site' }), { top: 20, source: null, relativeTo: null });
  for (const line of wide.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
  expect(wide).toContain('\n  lib/util.c:26 helper → posix_memalign\n');
});

describe('cli', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'mw-attr-'));
  const file = path.join(dir, 'cleanup.mwtrace');
  writeFileSync(file, cleanupTrace().build());

  test('--by function prints the table after the summary', async () => {
    const r = await capture(runReport, [file, '--by', 'function', '--top', '2']);
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(r.out).toContain('Valgrind-style heap summary');
    expect(r.out.indexOf('Heap by function')).toBeGreaterThan(r.out.indexOf('Top allocation sites'));
    expect(r.out).toContain('Heap by function, innermost (2 of 4;');
    for (const line of r.out.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
  });

  test('--json adds attribution {by, mode, groups, rows}', async () => {
    const r = await capture(runReport, [file, '--json', '--by', 'file', '--attribute', 'outermost']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.attribution.by).toBe('file');
    expect(j.attribution.mode).toBe('outermost');
    expect(j.attribution.groups).toBe(2);
    expect(j.attribution.rows.map((x: AttributionRow) => [x.label, x.netBytes])).toEqual([
      ['app.c', 8],
      ['lib/util.c', 40],
    ]);
    const plain = JSON.parse((await capture(runReport, [file, '--json'])).out);
    expect(plain.attribution).toBeUndefined();
  });

  test('bad values: one line on stderr, exit 2', async () => {
    expect(await capture(runReport, [file, '--by', 'color'])).toEqual({
      code: 2,
      out: '',
      err: "cc-memwrap report: --by wants function, site, file, thread, library, entry, library-function, got 'color'\n",
    });
    expect(await capture(runReport, [file, '--by', 'function', '--attribute', 'deepest'])).toEqual({
      code: 2,
      out: '',
      err: "cc-memwrap report: --attribute wants innermost, outermost, inclusive, got 'deepest'\n",
    });
    expect(await capture(runReport, [file, '--attribute', 'inclusive'])).toEqual({
      code: 2,
      out: '',
      err: 'cc-memwrap report: --attribute needs --by function or --by file\n',
    });
  });

  test('--help names the flags', async () => {
    const r = await capture(runReport, ['--help']);
    expect(r.out).toContain('--by G');
    expect(r.out).toContain('--attribute MODE');
  });
});

describe('end to end: samples/linked-list.c', () => {
  test('report --by function --json: main and make_node', () => {
    const dir = scratch('attribution');
    const exe = path.join(dir, 'prog');
    buildInstrumented('gcc', ['-O0', '-g'], [path.join(samplesDir, 'linked-list.c')], exe);
    const ran = runTraced(exe, [], dir);
    expect(ran.status).toBe(0);
    const trace = traceOf(dir, ran.pid);
    const j = JSON.parse(must(process.execPath, [wrapper, 'report', '--json', '--by', 'function', trace]).stdout);
    const rows = j.attribution.rows as AttributionRow[];
    expect(rows.map((r) => r.function).sort()).toEqual(['main', 'make_node']);
    const mk = rows.find((r) => r.function === 'make_node')!;
    expect(mk).toMatchObject({ line: 22, netBytes: 16, minBytes: 0, maxBytes: 16, bytesAllocated: 16, bytesFreed: 0 });
    expect(mk.counts).toEqual({ malloc: 1, calloc: 0, aligned: 0, strdup: 0, realloc: 0, free: 0 });
    expect(mk.file!.endsWith('samples/linked-list.c')).toBe(true);
    // main: three nodes of 16 B at lines 31-33, two frees of 16 B (its own node and make_node's); libc may add
    // interposed allocations of its own (stdout's buffer) under main's frame.
    const main = rows.find((r) => r.function === 'main')!;
    expect(main.line).toBe(30);
    expect(main.bytesFreed).toBe(32);
    expect(main.counts.free).toBe(2);
    expect(main.counts.malloc).toBeGreaterThanOrEqual(3);
    expect(main.bytesAllocated).toBeGreaterThanOrEqual(48);
    expect(main.netBytes).toBe(main.bytesAllocated - 32);
    const sites = JSON.parse(must(process.execPath, [wrapper, 'report', '--json', '--by', 'site', trace]).stdout).attribution.rows as AttributionRow[];
    const ownMain = sites.filter((r) => r.key.startsWith('site:') && r.function === 'main');
    expect(ownMain.map((r) => [r.line, r.netBytes]).sort((a, b) => a[0]! - b[0]!)).toEqual([
      [31, 16],
      [32, 16],
      [33, 16],
      [38, -16],
      [41, -16],
    ]);
  });
});
