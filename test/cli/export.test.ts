// The export command and its formats: CSV rows, Massif files read by the real ms_print, CLI errors, and one real program end to end.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { CSV_HEADER, exportCsv } from '../../analysis/export-csv.js';
import { exportMassif, snapshotEvents } from '../../analysis/export-massif.js';
import { eventSeries } from '../../analysis/timeline.js';
import { parseInterval, runExport } from '../../cli/export.js';
import { capture } from '../fixtures/cli-capture.js';
import { DEMO_SITES, basicTrace, twoThreadsTrace } from '../fixtures/scenarios.js';
import { S, TraceBuilder } from '../fixtures/trace-builder.js';
import { buildInstrumented, runTraced, samplesDir, scratch, traceOf } from '../support/programs.js';
import { skipAllWhen, skipWhen } from '../support/machine.js';

const dir = mkdtempSync(path.join(tmpdir(), 'mw-export-'));
const basicFile = path.join(dir, 'basic.mwtrace');
writeFileSync(basicFile, basicTrace().build());
const basic = decodeTrace(basicTrace().build());

// ms_print --version prints "ms_print-3.19.0" on stderr and exits 255.
const version = spawnSync('ms_print', ['--version'], { encoding: 'utf8' });
const haveMsPrint = /ms_print-/.test(`${version.stdout ?? ''}${version.stderr ?? ''}`);
const noMsPrint = haveMsPrint ? null : "Valgrind's ms_print is missing (test/run-all.sh installs valgrind)";

/** ms_print on a Massif file's text; its exit status and output. */
function msPrint(text: string, name = 'massif.out'): { status: number | null; out: string } {
  const file = path.join(mkdtempSync(path.join(dir, 'ms-')), name);
  writeFileSync(file, text);
  const r = spawnSync('ms_print', [file], { encoding: 'utf8' });
  return { status: r.status, out: r.stdout + r.stderr };
}

describe('CSV', () => {
  test('one row per event by default, header first', () => {
    const lines = exportCsv(basic).split('\n');
    expect(lines[0]).toBe(CSV_HEADER);
    expect(CSV_HEADER).toBe('event,time_ns,heap_requested,heap_usable,stack,static');
    expect(lines.at(-1)).toBe(''); // ends with a newline
    expect(lines).toHaveLength(1 + 20 + 1);
    expect(lines[1]).toBe(`0,${basic.events.time[0]},0,0,0,0`);
    expect(lines[2]).toBe(`1,${basic.events.time[1]},0,0,0,400`);
    expect(lines[14]).toBe(`13,${Math.round(basic.events.time[13]!)},1322,1328,128,404`);
    expect(lines[20]).toBe(`19,${Math.round(basic.events.time[19]!)},1248,1248,0,404`);
  });

  test('intervals of events: the values after each interval’s last event', () => {
    const lines = exportCsv(basic, { every: 5, unit: 'events' }).trimEnd().split('\n');
    expect(lines.slice(1).map((l) => l.split(',').filter((_, i) => i !== 1).join(','))).toEqual([
      '4,0,0,192,404',
      '9,48,48,128,404',
      '14,1272,1272,128,404',
      '19,1248,1248,0,404',
    ]);
  });

  test('intervals of time: end boundary in time_ns; an empty interval repeats the last event', () => {
    const b = new TraceBuilder({ complete: true });
    const t = b.thread(0);
    t.threadBegin(1);
    t.unit(1, DEMO_SITES);
    t.time(1_000_000);
    t.alloc({ site: 4, size: 10, addr: 0x10 });
    t.time(0);
    t.time(25_000_000);
    t.alloc({ site: 4, size: 20, addr: 0x20 });
    t.time(0);
    t.end(0, 0);
    const m = decodeTrace(b.build());
    expect(exportCsv(m, { every: 1e7, unit: 'time' })).toBe(
      [CSV_HEADER, '1,10000000,10,10,0,0', '1,20000000,10,10,0,0', '3,30000000,30,30,0,0', ''].join('\n'),
    );
  });
});

describe('Massif', () => {
  test('the file’s grammar: header, numbered snapshots, one peak with its tree', () => {
    const text = exportMassif(basic, { desc: 'test' });
    const lines = text.split('\n');
    expect(lines.slice(0, 3)).toEqual(['desc: test', 'cmd: /home/student/demo', 'time_unit: i']);
    expect(lines.slice(3, 11)).toEqual(['#-----------', 'snapshot=0', '#-----------', 'time=0', 'mem_heap_B=0', 'mem_heap_extra_B=0', 'mem_stacks_B=0', 'heap_tree=empty']);
    expect(text.match(/^snapshot=/gm)).toHaveLength(20); // 20 events: each one, the peak among them
    expect(text.match(/^heap_tree=peak$/gm)).toHaveLength(1);
    const peak = text.slice(text.indexOf('heap_tree=peak'));
    const block = text.slice(text.lastIndexOf('snapshot=', text.indexOf('heap_tree=peak')), text.indexOf('heap_tree=peak'));
    expect(block).toContain('time=13\nmem_heap_B=1322\nmem_heap_extra_B=6\nmem_stacks_B=128\n');
    expect(peak.split('\n').slice(0, 5)).toEqual([
      'heap_tree=peak',
      'n3: 1322 (heap allocation functions) malloc/new/new[], --alloc-fns, etc.',
      ' n0: 1024 0x0: main (via libc/uninstrumented)',
      ' n0: 250 0x0: realloc (demo.c:16) in main',
      ' n0: 48 0x0: malloc (demo.c:4) in make_node',
    ]);
  });

  test('at most ~100 snapshots evenly spaced, plus the peak', () => {
    const s = eventSeries(basic);
    expect(snapshotEvents(s, 5)).toEqual({ events: [0, 5, 10, 13, 14, 19], peak: 13 });
    const b = new TraceBuilder({ complete: true });
    const t = b.thread(0);
    t.threadBegin(1);
    t.unit(1, DEMO_SITES);
    t.enter(1, 64);
    const ids: number[] = [];
    for (let i = 0; i < 3000; i++) ids.push(t.alloc({ site: i % 2 ? 4 : 9, size: 8 + (i % 5), addr: 0x1000 + 32 * i }));
    for (let i = 0; i < 3000; i += 2) t.free({ site: 6, block: ids[i]! });
    t.alloc({ fn: S.MALLOC, size: 5, addr: 0x900000 });
    t.exit(2);
    t.end(0, 0);
    const m = decodeTrace(b.build());
    const text = exportMassif(m);
    const n = text.match(/^snapshot=/gm)!.length;
    expect(n).toBeGreaterThanOrEqual(100);
    expect(n).toBeLessThanOrEqual(101);
    expect(text.match(/^heap_tree=(detailed|peak)$/gm)!.length).toBeGreaterThanOrEqual(10);
    // The tiny interposed group is below 1 % at the peak: merged like Massif does.
    if (haveMsPrint) {
      const r = msPrint(text);
      expect(r.status).toBe(0);
      expect(r.out).toContain('Number of snapshots: ' + n);
    }
  });

  test('the real ms_print reads it and shows the peak', (ctx) => {
    skipWhen(ctx, noMsPrint);
    const r = msPrint(exportMassif(basic));
    expect(r.status, r.out).toBe(0);
    expect(r.out).toContain('Command:            /home/student/demo');
    expect(r.out).toMatch(/Detailed snapshots: \[.*13 \(peak\).*\]/);
    // The peak snapshot's row: n, time (event), total, useful heap, extra heap, stacks.
    expect(r.out).toMatch(/^\s+13\s+13\s+1,456\s+1,322\s+6\s+128$/m);
    expect(r.out).toContain('(1,024B) 0x0: main (via libc/uninstrumented)');
    expect(r.out).toContain('(250B) 0x0: realloc (demo.c:16) in main');
  });

  test('two threads, and a trace with no events, are valid too', (ctx) => {
    skipWhen(ctx, noMsPrint);
    expect(msPrint(exportMassif(decodeTrace(twoThreadsTrace().build()))).status).toBe(0);
    const empty = new TraceBuilder({ complete: false });
    empty.thread(0).unit(1, DEMO_SITES);
    const r = msPrint(exportMassif(decodeTrace(empty.build())));
    expect(r.status, r.out).toBe(0);
    expect(r.out).toContain('Number of snapshots: 1');
  });
});

describe('cc-memwrap export', () => {
  test('--interval parsing', () => {
    expect(parseInterval('1')).toEqual({ every: 1, unit: 'events' });
    expect(parseInterval('1000')).toEqual({ every: 1000, unit: 'events' });
    expect(parseInterval('10ms')).toEqual({ every: 1e7, unit: 'time' });
    expect(parseInterval('1.5s')).toEqual({ every: 1.5e9, unit: 'time' });
    expect(parseInterval('20us')).toEqual({ every: 2e4, unit: 'time' });
    expect(parseInterval('500ns')).toEqual({ every: 500, unit: 'time' });
    for (const bad of ['0', '-5', '1.5', '10 ms', '10m', 'ms', '', '0ms', 'abc']) expect(parseInterval(bad)).toBeNull();
  });

  test('csv to stdout, exit 0', async () => {
    const r = await capture(runExport, [basicFile, '--format', 'csv', '--interval', '1']);
    expect(r).toEqual({ code: 0, out: exportCsv(basic), err: '' });
  });

  test('massif to a file with -o', async () => {
    const out = path.join(dir, 'massif.out.1234');
    const r = await capture(runExport, [basicFile, '--format', 'massif', '-o', out]);
    expect(r).toEqual({ code: 0, out: '', err: '' });
    expect(readFileSync(out, 'utf8')).toMatch(/^desc: cc-memwrap export --format massif .*basic\.mwtrace\ncmd: \/home\/student\/demo\ntime_unit: i\n/);
  });

  test('massif with --interval: a snapshot at the end of each interval, plus the peak', async () => {
    const r = await capture(runExport, [basicFile, '-f', 'massif', '--interval', '5']);
    expect(r.code).toBe(0);
    expect(r.out.match(/^time=\d+$/gm)).toEqual(['time=4', 'time=9', 'time=13', 'time=14', 'time=19']);
  });

  test('errors: one line on stderr, exit 2', async () => {
    const missing = path.join(dir, 'nope.mwtrace');
    expect(await capture(runExport, [missing, '--format', 'csv'])).toEqual({ code: 2, out: '', err: `cc-memwrap export: ${missing}: no such file\n` });
    expect(await capture(runExport, [basicFile, '--format', 'svg'])).toEqual({ code: 2, out: '', err: "cc-memwrap export: --format wants massif, csv, folded or speedscope, got 'svg'\n" });
    expect(await capture(runExport, [basicFile])).toEqual({ code: 2, out: '', err: 'cc-memwrap export: --format is required: massif, csv, folded or speedscope\n' });
    const badInterval = await capture(runExport, [basicFile, '--format', 'csv', '--interval', '10 ms']);
    expect(badInterval.code).toBe(2);
    expect(badInterval.err).toBe("cc-memwrap export: --interval wants a number of events (1000) or a time (500ns, 20us, 10ms, 1.5s), got '10 ms'\n");
    const long = new TraceBuilder({ complete: true });
    long.thread(0).threadBegin(1);
    long.thread(0).time(0);
    long.thread(0).time(25_000_000);
    long.thread(0).end(0, 0);
    const longFile = path.join(dir, 'long.mwtrace');
    writeFileSync(longFile, long.build());
    const tooMany = await capture(runExport, [longFile, '--format', 'csv', '--interval', '1ns']);
    expect(tooMany.code).toBe(2);
    expect(tooMany.err).toMatch(/^cc-memwrap export: --interval 1ns: an interval of 1 ns makes \d+ intervals \(at most 10000000\); use a larger one\n$/);
    const many = new TraceBuilder({ complete: true });
    const mt = many.thread(0);
    mt.threadBegin(1);
    mt.unit(1, DEMO_SITES);
    for (let i = 0; i < 1200; i++) {
      mt.alloc({ site: 4, size: 8, addr: 0x1000 + 16 * i });
      mt.time(1000);
    }
    mt.end(0, 0);
    const manyFile = path.join(dir, 'many.mwtrace');
    writeFileSync(manyFile, many.build());
    const tooManySnapshots = await capture(runExport, [manyFile, '--format', 'massif', '--interval', '1us']);
    expect(tooManySnapshots.code).toBe(2);
    expect(tooManySnapshots.err).toMatch(/^cc-memwrap export: --interval 1us makes 1\d{3} snapshots; a Massif file holds at most 1000: use a larger interval\n$/);
    expect((await capture(runExport, [manyFile, '--format', 'massif', '--interval', '2us'])).code).toBe(0);
    expect((await capture(runExport, [])).code).toBe(2);
    expect((await capture(runExport, [basicFile, basicFile, '--format', 'csv'])).code).toBe(2);
    const unknown = await capture(runExport, [basicFile, '--frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toMatch(/^cc-memwrap export: Unknown option '--frobnicate'/);
    const cannotWrite = await capture(runExport, [basicFile, '--format', 'csv', '-o', path.join(dir, 'no', 'such', 'dir.csv')]);
    expect(cannotWrite).toEqual({ code: 2, out: '', err: `cc-memwrap export: cannot write ${path.join(dir, 'no', 'such', 'dir.csv')}: ENOENT\n` });
  });

  test('--help', async () => {
    const r = await capture(runExport, ['--help']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^Usage: cc-memwrap export <trace> --format massif\|csv/);
    for (const line of r.out.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
  });
});

const haveGcc = spawnSync('gcc', ['--version']).status === 0;

describe('end to end: samples/linked-list.c', () => {
  skipAllWhen(haveGcc ? noMsPrint : 'gcc is missing');
  test('build, run, export massif, ms_print it', async () => {
    const work = scratch('export-linked-list');
    const exe = path.join(work, 'prog');
    buildInstrumented('gcc', ['-O0', '-g'], [path.join(samplesDir, 'linked-list.c')], exe);
    const ran = runTraced(exe, [], work);
    expect(ran.status).toBe(0);
    const trace = traceOf(work, ran.pid);
    const out = path.join(work, `massif.out.${ran.pid}`);
    const r = await capture(runExport, [trace, '--format', 'massif', '-o', out]);
    expect(r.code, r.err).toBe(0);
    expect(existsSync(out)).toBe(true);
    const text = readFileSync(out, 'utf8');
    const printed = spawnSync('ms_print', [out], { encoding: 'utf8' });
    expect(printed.status, printed.stderr).toBe(0);
    expect(printed.stdout).toMatch(/Detailed snapshots: \[.*\(peak\).*\]/);
    const peakBlock = text.slice(text.lastIndexOf('snapshot=', text.indexOf('heap_tree=peak')));
    const heap = Number(/mem_heap_B=(\d+)/.exec(peakBlock)![1]);
    // The peak is printf's stdout buffer (seen only by the interposed malloc) plus the 16-byte list nodes of lines
    // 31, 33 and 39, which are each below Massif's 1 % threshold and merged into one node, as Massif does.
    expect(heap).toBeGreaterThan(48);
    expect(printed.stdout).toContain(`(${heap.toLocaleString('en-US')}B) (heap allocation functions)`);
    expect(printed.stdout).toMatch(/\(\d[\d,]*B\) 0x0: main \(via libc\/uninstrumented\)/);
    expect(text).toMatch(/^ n0: 48 in 3 places, all below massif's threshold \(1\.00%\)$/m);
    // With a 0 % threshold every site is its own node.
    const all = exportMassif(decodeTrace(readFileSync(trace)), { threshold: 0 });
    for (const [line, fn] of [[31, 'main'], [33, 'main'], [23, 'make_node']] as const) {
      expect(all).toMatch(new RegExp(`^ n0: 16 0x0: malloc \\((.*/)?linked-list\\.c:${line}\\) in ${fn}$`, 'm'));
    }
  });
});
