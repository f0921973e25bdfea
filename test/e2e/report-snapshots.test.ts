// One snapshot per report kind over the two samples: the numbers each report
// must show are derived by hand in the comment at the end of
// samples/linked-list.c and samples/recursion.c; here they are asserted
// exactly from --json, and the text of each report is kept as a file
// snapshot with its volatile parts (pids, paths, times, addresses)
// normalised. Sizes assume x86-64 glibc (16-byte nodes, 24 usable, a
// 4096-byte stdout buffer), so the suite runs there only.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../package-root.js';
import { buildInstrumented, must, runTraced, samplesDir, scratch, traceOf, wrapper } from '../support/programs.js';
import { notX86_64Glibc, skipAllWhen } from '../support/machine.js';


interface Traced {
  dir: string;
  trace: string;
  pid: number;
  stdout: string;
}

/** Builds a sample with gcc -O0 through cc-memwrap and runs it with stdout piped (spawnSync's pipe). */
function traceSample(name: string): Traced {
  const dir = scratch(`snap-${name}`);
  const exe = path.join(dir, name);
  buildInstrumented('gcc', ['-O0'], [path.join(samplesDir, `${name}.c`)], exe);
  const ran = runTraced(exe, [], path.join(dir, 'traces'));
  if (ran.status !== 0) throw new Error(`${name} exited ${ran.status ?? ran.signal}: ${ran.stderr}`);
  return { dir, trace: traceOf(path.join(dir, 'traces'), ran.pid), pid: ran.pid, stdout: ran.stdout };
}

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function reportJson(t: Traced, args: string[]): Json {
  return JSON.parse(must(process.execPath, [wrapper, 'report', t.trace, ...args, '--json']).stdout) as Json;
}

/** Replaces what changes from run to run; column widths follow the replaced
 *  values, so runs of spaces are collapsed too. */
function normalize(text: string, t: Traced, ppid: number): string {
  let out = text.replaceAll(t.dir, '<DIR>').replaceAll(packageRoot, '<ROOT>');
  out = out.replace(new RegExp(`\\b${t.pid}\\b`, 'g'), '<PID>').replace(new RegExp(`\\b${ppid}\\b`, 'g'), '<PPID>');
  // the trace's path is cut to fit ("…ked-list-Ab12Cd/traces/…"), with the scratch dir's random suffix in it
  out = out.replace(/^Trace(\s+)\S*\/traces\/<PID>\.mwtrace/m, 'Trace$1<DIR>/traces/<PID>.mwtrace');
  out = out.replace(/\b0x[0-9a-f]{6,}\b/g, '<ADDR>');
  out = out.replace(/\b\d+(\.\d+)? ?(ns|us|µs|ms|s)\b/g, '<TIME>');
  return out.replace(/ {2,}/g, '  ').replace(/ +$/gm, '');
}

function reportText(t: Traced, args: string[], ppid: number): string {
  return normalize(must(process.execPath, [wrapper, 'report', t.trace, ...args]).stdout, t, ppid);
}

function exportCsv(t: Traced): string[][] {
  const csv = must(process.execPath, [wrapper, 'export', t.trace, '--format', 'csv']).stdout;
  return csv.trim().split('\n').map((l) => l.split(','));
}

const snap = (sample: string, kind: string) => path.join('__snapshots__', 'report-snapshots', `${sample}.${kind}.txt`);

/** The report kinds: the file name of the snapshot and the extra arguments. */
const KINDS: Array<[string, string[]]> = [
  ['plain', []],
  ['by-function', ['--by', 'function']],
  ['by-site', ['--by', 'site']],
  ['by-file', ['--by', 'file']],
  ['by-thread', ['--by', 'thread']],
  ['by-library', ['--by', 'library']],
  ['peak', ['--peak']],
  ['linked', ['--linked']],
  ['leaks', ['--leaks']],
  ['temporary', ['--temporary']],
  ['interval-4', ['--interval', '4']],
];

const counts = (malloc: number, free: number) => ({ malloc, calloc: 0, aligned: 0, strdup: 0, realloc: 0, free });

describe('report snapshots: samples/linked-list.c (gcc -O0, x86-64 glibc)', () => {
  skipAllWhen(notX86_64Glibc);
  let t: Traced;
  let ppid: number;
  const line = (l: number) => `samples/linked-list.c:${l} main → malloc`;
  beforeAll(() => {
    t = traceSample('linked-list');
    ppid = reportJson(t, []).process.ppid as number;
  });

  it('runs as the comment assumes: stdout piped, one line printed', () => {
    expect(t.stdout).toBe('first=1 second=4\n');
  });

  it('plain report: 5 allocations, 2 frees, peak 4144 at event 9, 3 blocks live at exit', async () => {
    const j = reportJson(t, []);
    expect(j.format.pointerSize).toBe(8);
    expect(j.end).toMatchObject({ how: 'exit', code: 0, complete: true });
    expect(j.events).toBe(13);
    expect(j.allocations).toBe(5);
    expect(j.frees).toBe(2);
    expect(j.untrackedFrees).toBe(0);
    expect(j.bytesAllocated).toEqual({ requested: 4 * 16 + 4096, usable: 4 * 24 + 4104 });
    expect(j.peakHeap).toEqual({ requested: { bytes: 3 * 16 + 4096, event: 9 }, usable: { bytes: 3 * 24 + 4104, event: 9 } });
    expect(j.peakStack.event).toBe(6); // make_node's frame on top of main's
    expect(j.static).toEqual({ objects: 0, bytes: 0 });
    expect(j.leaked).toEqual({ blocks: 3, requestedBytes: 2 * 16 + 4096, usableBytes: 2 * 24 + 4104 });
    expect(j.valgrind).toEqual({ allocs: 5, frees: 2, bytesAllocated: 4160, inUseAtExit: { bytes: 4128, blocks: 3 } });
    expect(j.siteGroups).toBe(5);
    expect(j.threads).toHaveLength(1);
    expect(j.threads[0]).toMatchObject({ index: 0, events: 13, maxStackEvent: 6 });
    expect(j.topSites.map((s: Json) => [s.label, s.allocs, s.requestedBytes, s.usableBytes, s.liveBlocks])).toEqual([
      ['main (via libc/uninstrumented)', 1, 4096, 4104, 1],
      ['samples/linked-list.c:23 make_node → malloc', 1, 16, 24, 0],
      [line(31), 1, 16, 24, 1],
      [line(32), 1, 16, 24, 0],
      [line(33), 1, 16, 24, 1],
    ]);
    expect(j.topSites[0]).toMatchObject({ kind: 'interposed', function: 'main', line: 30 });
    expect(j.problems.errors).toBe(0);
    await expect(reportText(t, [], ppid)).toMatchFileSnapshot(snap('linked-list', 'plain'));
  });

  const rows = (j: Json) =>
    (j.attribution.rows as Json[]).map((r) => ({ label: r.label, net: r.netBytes, min: r.minBytes, max: r.maxBytes, allocated: r.bytesAllocated, freed: r.bytesFreed, counts: r.counts }));

  it('--by function: main nets 4112 (it frees make_node’s node), make_node 16', () => {
    const j = reportJson(t, ['--by', 'function']);
    expect(j.attribution).toMatchObject({ by: 'function', mode: 'innermost', groups: 2 });
    expect(rows(j)).toEqual([
      { label: 'samples/linked-list.c:30 main', net: 4112, min: 0, max: 4128, allocated: 4144, freed: 32, counts: counts(4, 2) },
      { label: 'samples/linked-list.c:22 make_node', net: 16, min: 0, max: 16, allocated: 16, freed: 0, counts: counts(1, 0) },
    ]);
  });

  it('--by site: 5 allocation sites and the 2 free sites', () => {
    const j = reportJson(t, ['--by', 'site']);
    expect(j.attribution.groups).toBe(7);
    const alloc = (label: string, bytes: number) => ({ label, net: bytes, min: 0, max: bytes, allocated: bytes, freed: 0, counts: counts(1, 0) });
    const free = (l: number) => ({ label: `samples/linked-list.c:${l} main → free`, net: -16, min: -16, max: 0, allocated: 0, freed: 16, counts: counts(0, 1) });
    expect(rows(j)).toEqual([
      alloc('main (via libc/uninstrumented)', 4096),
      alloc('samples/linked-list.c:23 make_node → malloc', 16),
      alloc(line(31), 16),
      alloc(line(32), 16),
      alloc(line(33), 16),
      free(38),
      free(41),
    ]);
  });

  it('--by file and --by thread: one row with the whole run', () => {
    const whole = { net: 4128, min: 0, max: 4144, allocated: 4160, freed: 32, counts: counts(5, 2) };
    const byFile = reportJson(t, ['--by', 'file']);
    expect(rows(byFile)).toEqual([{ label: 'samples/linked-list.c', ...whole }]);
    const byThread = reportJson(t, ['--by', 'thread']);
    expect(rows(byThread)).toEqual([{ label: `thread 0 (tid ${t.pid})`, ...whole }]);
  });

  it('--by library: libc’s stdout buffer and the instrumented code', () => {
    const j = reportJson(t, ['--by', 'library']);
    expect(rows(j)).toEqual([
      { label: 'libc.so.6', net: 4096, min: 0, max: 4096, allocated: 4096, freed: 0, counts: counts(1, 0) },
      { label: '(instrumented code)', net: 32, min: 0, max: 48, allocated: 64, freed: 32, counts: counts(4, 2) },
    ]);
  });

  it('--peak: 4 blocks at event 9, and the total peak at the same event', () => {
    const p = reportJson(t, ['--peak']).peak;
    expect(p.heap).toMatchObject({ event: 9, peakBytes: 4144, heapBytes: 4144, staticBytes: 0, liveBlocks: 4, sites: 4, functions: 2 });
    expect(p.heap.bySite.map((s: Json) => [s.label, s.blocks, s.bytes, s.share])).toEqual([
      ['main (via libc/uninstrumented)', 1, 4096, 4096 / 4144],
      ['samples/linked-list.c:23 make_node → malloc', 1, 16, 16 / 4144],
      [line(31), 1, 16, 16 / 4144],
      [line(33), 1, 16, 16 / 4144],
    ]);
    expect(p.heap.byFunction.map((f: Json) => [f.function, f.blocks, f.bytes])).toEqual([
      ['main', 3, 4128],
      ['make_node', 1, 16],
    ]);
    expect(p.total).toMatchObject({ event: 9, heapBytes: 4144, staticBytes: 0, liveBlocks: 4 });
    expect(p.total.peakBytes).toBe(4144 + p.total.stackBytes);
    expect(p.total.stackBytes).toBe(p.heap.stackBytes);
  });

  it('--linked: the free at line 38 releases line 32’s node and orphans line 33’s', () => {
    const l = reportJson(t, ['--linked']).linked;
    expect(l.frees).toBe(1);
    expect(l.orphanedBlocks).toBe(1);
    expect(l.rows).toHaveLength(1);
    const row = l.rows[0];
    expect(row.event).toBe(5);
    expect(row.at.line).toBe(38);
    expect(row.freed).toMatchObject({ requestedBytes: 16, allocation: { line: 32 }, freeEvent: 5 });
    expect(row.blocks.map((b: Json) => [b.allocation.line, b.requestedBytes, b.freeEvent, b.leaked, b.orphaned])).toEqual([[33, 16, null, true, true]]);
    expect(row.orphaned).toBe(1);
    expect(row.orphanedBytes).toBe(16);
    expect(l.orphanedLeaks.map((o: Json) => [o.block.allocation.line, o.freeEvent, o.at.line])).toEqual([[33, 5, 38]]);
  });

  it('--leaks: lines 31 and 33 direct, nothing indirect, stdout’s buffer still reachable', () => {
    const l = reportJson(t, ['--leaks']).leaks;
    expect(l).toMatchObject({ present: true, partial: false, unclassified: 0, unclassifiedBytes: 0 });
    const summary = (l.classes as Json[]).map((c) => ({
      class: c.class,
      count: c.count,
      bytes: c.bytes,
      sites: (c.sites as Json[]).map((s) => [s.allocation.label, s.count, s.bytes, s.blocks.map((b: Json) => b.orphanedBy?.at.line ?? null)]),
    }));
    expect(summary).toEqual([
      { class: 'direct', count: 2, bytes: 32, sites: [[line(31), 1, 16, [null]], [line(33), 1, 16, [38]]] },
      { class: 'indirect', count: 0, bytes: 0, sites: [] },
      { class: 'reachable', count: 1, bytes: 4096, sites: [['main (via libc/uninstrumented)', 1, 4096, [null]]] },
    ]);
  });

  it('--temporary: line 32’s and make_node’s nodes, 2 of 5 blocks', () => {
    const tm = reportJson(t, ['--temporary']).temporaries;
    expect(tm).toMatchObject({ within: 16, blocks: 2, bytes: 32, allocations: 5, siteCount: 2 });
    expect(tm.sites.map((s: Json) => [s.line, s.function, s.allocs, s.temporaries, s.bytes, s.share])).toEqual([
      [23, 'make_node', 1, 1, 16, 1],
      [32, 'main', 1, 1, 16, 1],
    ]);
  });

  it('--calls make_node: one call, net 16, peak 16', async () => {
    const c = reportJson(t, ['--calls', 'make_node']).calls;
    expect(c.function).toBe('make_node');
    expect(c.invocations.map((i: Json) => [i.enterEvent, i.endEvent, i.recursion, i.bytesAllocated, i.bytesFreed, i.netBytes, i.peakBytes, i.peakEvent, i.heapEvents])).toEqual([
      [6, 8, 0, 16, 0, 16, 16, 7, 1],
    ]);
    expect(c.totals).toEqual({ calls: 1, bytesAllocated: 16, bytesFreed: 0, netBytes: 16, maxPeakBytes: 16, maxPeakCall: 0 });
    await expect(reportText(t, ['--calls', 'make_node'], ppid)).toMatchFileSnapshot(snap('linked-list', 'calls-make_node'));
  });

  it('--interval 4: 4 intervals, heap 32, 48, 4128, 4128', () => {
    const iv = reportJson(t, ['--interval', '4']).intervals;
    expect(iv.spec).toEqual({ every: 4, unit: 'events' });
    expect(iv.rows.map((r: Json) => [r.startEvent, r.endEvent, r.heapRequested, r.maxHeapRequested, r.heapUsable, r.maxHeapUsable, r.static])).toEqual([
      [0, 3, 32, 32, 48, 48, 0],
      [4, 7, 48, 48, 72, 72, 0],
      [8, 11, 4128, 4144, 4152, 4176, 0],
      [12, 12, 4128, 4128, 4152, 4152, 0],
    ]);
    expect(iv.rows[2].stack).toBe(0);
    expect(iv.rows[3].stack).toBe(0);
  });

  it('export csv: one row per event with the heap after it', async () => {
    const rows = exportCsv(t);
    expect(rows[0]).toEqual(['event', 'time_ns', 'heap_requested', 'heap_usable', 'stack', 'static']);
    const body = rows.slice(1);
    expect(body.map((r) => Number(r[0]))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(body.map((r) => Number(r[2]))).toEqual([0, 0, 16, 32, 48, 32, 32, 48, 48, 4144, 4128, 4128, 4128]);
    expect(body.map((r) => Number(r[3]))).toEqual([0, 0, 24, 48, 72, 48, 48, 72, 72, 4176, 4152, 4152, 4152]);
    const stack = body.map((r) => Number(r[4]));
    const main = stack[1]!;
    expect(main).toBeGreaterThan(0);
    // main's frame from its entry to its return; make_node's on top at events 6-7.
    expect(stack).toEqual([0, main, main, main, main, main, stack[6], stack[6], main, main, main, 0, 0]);
    expect(stack[6]).toBeGreaterThan(main);
    expect(body.every((r) => r[5] === '0')).toBe(true);
    const text = rows.map((r) => [r[0], r[0] === 'event' ? r[1] : '<T>', ...r.slice(2)].join(',')).join('\n') + '\n';
    await expect(text).toMatchFileSnapshot(snap('linked-list', 'export-csv'));
  });

  it.each(KINDS)('text snapshot: %s', async (kind, args) => {
    await expect(reportText(t, args, ppid)).toMatchFileSnapshot(snap('linked-list', kind));
  });
});

describe('report snapshots: samples/recursion.c (gcc -O0, x86-64 glibc)', () => {
  skipAllWhen(notX86_64Glibc);
  let t: Traced;
  let ppid: number;
  const stdoutSite = 'main (via libc/uninstrumented)';
  beforeAll(() => {
    t = traceSample('recursion');
    ppid = reportJson(t, []).process.ppid as number;
  });

  it('runs as the comment assumes: 1275 = sum of 0..50, 325 = sum of 0..25', () => {
    expect(t.stdout).toBe('sum=1275\nagain=325\n');
  });

  it('plain report: 159 events, stdout’s buffer the only block, stack peak at depth(0)', () => {
    const j = reportJson(t, []);
    expect(j.events).toBe(159);
    expect(j.allocations).toBe(1);
    expect(j.frees).toBe(0);
    expect(j.bytesAllocated).toEqual({ requested: 4096, usable: 4104 });
    expect(j.peakHeap).toEqual({ requested: { bytes: 4096, event: 104 }, usable: { bytes: 4104, event: 104 } });
    expect(j.peakStack.event).toBe(52);
    expect(j.static).toEqual({ objects: 0, bytes: 0 });
    expect(j.leaked).toEqual({ blocks: 1, requestedBytes: 4096, usableBytes: 4104 });
    expect(j.valgrind).toEqual({ allocs: 1, frees: 0, bytesAllocated: 4096, inUseAtExit: { bytes: 4096, blocks: 1 } });
    expect(j.siteGroups).toBe(1);
    expect(j.topSites.map((s: Json) => [s.label, s.kind, s.line, s.allocs, s.requestedBytes, s.liveBlocks])).toEqual([[stdoutSite, 'interposed', 25, 1, 4096, 1]]);
  });

  it('the stack per frame: 52 frames at the peak, the same size each, at least 288 bytes', () => {
    const body = exportCsv(t).slice(1);
    expect(body).toHaveLength(159);
    const stack = body.map((r) => Number(r[4]));
    const main = stack[1]!;
    const frame = stack[2]! - main; // depth(50)'s entry minus main's
    // events 2..52: entries of depth(50)..depth(0), one frame deeper each.
    for (let e = 2; e <= 52; e++) expect(stack[e]).toBe(main + (e - 1) * frame);
    expect(frame).toBeGreaterThanOrEqual(256 + 4 + 8 + 4 + 8 + 8);
    expect(Math.max(...stack)).toBe(main + 51 * frame);
    expect(reportJson(t, []).peakStack.bytes).toBe(main + 51 * frame);
    // back at main's depth after each recursion, and 0 after main returns
    expect(stack[103]).toBe(main);
    expect(stack[104]).toBe(main);
    expect(stack[105]).toBe(main + frame); // depth(25) starts where depth(50) did
    expect(stack[130]).toBe(main + 26 * frame);
    expect(stack[156]).toBe(main);
    expect(stack[157]).toBe(0);
    expect(body.map((r) => Number(r[2])).findIndex((h) => h > 0)).toBe(104);
  });

  it('--by function/site/file/thread/library: one row, main’s 4096 through libc', () => {
    const one = { net: 4096, min: 0, max: 4096, allocated: 4096, freed: 0, counts: counts(1, 0) };
    const labels: Record<string, string> = {
      function: 'samples/recursion.c:25 main',
      site: stdoutSite,
      file: 'samples/recursion.c',
      thread: `thread 0 (tid ${t.pid})`,
      library: 'libc.so.6',
    };
    for (const [by, label] of Object.entries(labels)) {
      const rows = (reportJson(t, ['--by', by]).attribution.rows as Json[]).map((r) => ({
        label: r.label,
        net: r.netBytes,
        min: r.minBytes,
        max: r.maxBytes,
        allocated: r.bytesAllocated,
        freed: r.bytesFreed,
        counts: r.counts,
      }));
      expect(rows, by).toEqual([{ label, ...one }]);
    }
  });

  it('--peak: the heap peak is stdout’s buffer; the total peak is all stack', () => {
    const p = reportJson(t, ['--peak']).peak;
    expect(p.heap).toMatchObject({ event: 104, peakBytes: 4096, heapBytes: 4096, liveBlocks: 1, sites: 1, functions: 1 });
    expect(p.heap.bySite.map((s: Json) => [s.label, s.blocks, s.bytes, s.share])).toEqual([[stdoutSite, 1, 4096, 1]]);
    expect(p.total).toMatchObject({ event: 52, heapBytes: 0, staticBytes: 0, liveBlocks: 0, bySite: [], byFunction: [] });
    expect(p.total.peakBytes).toBe(p.total.stackBytes);
    // at the heap peak only main's frame is on the stack: the same as main's entry
    expect(p.heap.stackBytes).toBe(Number(exportCsv(t)[2]![4]));
  });

  it('--linked, --leaks, --temporary: no frees, one still-reachable block, no temporaries', () => {
    expect(reportJson(t, ['--linked']).linked).toEqual({ frees: 0, orphanedBlocks: 0, rows: [], orphanedLeaks: [] });
    const l = reportJson(t, ['--leaks']).leaks;
    expect((l.classes as Json[]).map((c) => [c.class, c.count, c.bytes, c.sites.map((s: Json) => s.allocation.label)])).toEqual([
      ['direct', 0, 0, []],
      ['indirect', 0, 0, []],
      ['reachable', 1, 4096, [stdoutSite]],
    ]);
    expect(reportJson(t, ['--temporary']).temporaries).toMatchObject({ blocks: 0, bytes: 0, allocations: 1, sites: [], siteCount: 0 });
  });

  it('--calls depth: 77 calls, nesting 0..50 then 0..25, none touching the heap', async () => {
    const c = reportJson(t, ['--calls', 'depth']).calls;
    expect(c.totals).toEqual({ calls: 77, bytesAllocated: 0, bytesFreed: 0, netBytes: 0, maxPeakBytes: 0, maxPeakCall: 0 });
    // the JSON lists the first calls (--top, 10 by default)
    expect(c.invocations.map((i: Json) => [i.enterEvent, i.recursion])).toEqual(Array.from({ length: 10 }, (_, k) => [k + 2, k]));
    expect(c.invocations[0].endEvent).toBe(103);
    expect(c.invocations.every((i: Json) => i.netBytes === 0 && i.peakBytes === 0 && i.heapEvents === 0)).toBe(true);
    const all = reportJson(t, ['--calls', 'depth', '--top', '100']).calls.invocations as Json[];
    expect(all).toHaveLength(77);
    expect(all.map((i) => i.recursion)).toEqual([...Array.from({ length: 51 }, (_, k) => k), ...Array.from({ length: 26 }, (_, k) => k)]);
    expect([all[51]!.enterEvent, all[51]!.endEvent]).toEqual([105, 156]);
    await expect(reportText(t, ['--calls', 'depth'], ppid)).toMatchFileSnapshot(snap('recursion', 'calls-depth'));
  });

  it('--interval 4: 40 intervals, the heap 0 until the interval of event 104', () => {
    const iv = reportJson(t, ['--interval', '4']).intervals;
    expect(iv.count).toBe(40);
    expect(iv.rows).toHaveLength(40);
    expect(iv.rows.map((r: Json) => r.heapRequested)).toEqual([...Array(26).fill(0), ...Array(14).fill(4096)]);
    expect(iv.rows[26]).toMatchObject({ startEvent: 104, endEvent: 107 });
    expect(iv.rows[39]).toMatchObject({ startEvent: 156, endEvent: 158, stack: 0 });
  });

  it('export csv snapshot', async () => {
    const text = exportCsv(t).map((r) => [r[0], r[0] === 'event' ? r[1] : '<T>', ...r.slice(2)].join(',')).join('\n') + '\n';
    await expect(text).toMatchFileSnapshot(snap('recursion', 'export-csv'));
  });

  it.each(KINDS)('text snapshot: %s', async (kind, args) => {
    await expect(reportText(t, args, ppid)).toMatchFileSnapshot(snap('recursion', kind));
  });
});
