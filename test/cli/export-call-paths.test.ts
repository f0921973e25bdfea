// Heap and stack by call path: `export --format folded` on a program whose paths and bytes its comment works out by
// hand (test/programs/call-paths.c), the same numbers as the report's totals on a bigger program, the speedscope file,
// and the command's errors.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { dumpTraceText } from '../../analysis/dump.js';
import { runExport } from '../../cli/export.js';
import { capture } from '../fixtures/cli-capture.js';
import { buildInstrumented, programsDir, reportJson, runTraced, samplesDir, scratch, traceOf } from '../support/programs.js';

const dir = scratch('export-call-paths');
let trace = '';

/** The folded lines of one metric, as a sorted list. */
async function folded(file: string, metric: string): Promise<string[]> {
  const r = await capture(runExport, [file, '--format', 'folded', '--metric', metric]);
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  return r.out.trimEnd().split('\n').sort();
}

/** Sum of the values of folded lines. */
const total = (lines: string[]): number => lines.reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);

beforeAll(() => {
  const exe = path.join(dir, 'call-paths');
  buildInstrumented('gcc', ['-O0'], [path.join(programsDir, 'call-paths.c')], exe);
  const traces = path.join(dir, 'traces');
  trace = traceOf(traces, runTraced(exe, [], traces).pid);
}, 60_000);

describe('export --format folded', () => {
  test('gives the lines call-paths.c works out by hand, for every heap metric', async () => {
    expect(await folded(trace, 'allocated')).toEqual(['main 232', 'main;build;new_node 120', 'main;scratch 100']);
    expect(await folded(trace, 'count')).toEqual(['main 2', 'main;build;new_node 5', 'main;scratch 1']);
    expect(await folded(trace, 'peak')).toEqual(['main 232', 'main;build;new_node 48']);
    expect(await folded(trace, 'leaked')).toEqual(['main 200', 'main;build;new_node 48']);
  });

  test('stack: one line per call path, deeper paths deeper, the deepest equal to the report’s peak stack', async () => {
    const lines = await folded(trace, 'stack');
    expect(lines.map((l) => l.split(' ')[0])).toEqual(['main', 'main;build', 'main;build;new_node', 'main;release', 'main;scratch']);
    const value = new Map(lines.map((l) => [l.split(' ')[0]!, Number(l.split(' ')[1])]));
    expect(value.get('main;build')!).toBeGreaterThan(value.get('main')!);
    expect(value.get('main;build;new_node')!).toBeGreaterThan(value.get('main;build')!);
    const summary = reportJson(trace) as { peakStack: { bytes: number } };
    expect(Math.max(...value.values())).toBe(summary.peakStack.bytes);
  });

  test('on a program that prints (libc allocates inside printf), the totals are the report’s', async () => {
    const exe = path.join(dir, 'linked-list');
    buildInstrumented('gcc', ['-O0'], [path.join(samplesDir, 'linked-list.c')], exe);
    const traces = path.join(dir, 'traces-list');
    const t = traceOf(traces, runTraced(exe, [], traces).pid);
    const s = reportJson(t) as {
      allocations: number;
      bytesAllocated: { requested: number };
      peakHeap: { requested: { bytes: number } };
      leaked: { requestedBytes: number };
    };
    const allocated = await folded(t, 'allocated');
    expect(allocated.some((l) => l.includes(';(libc or uninstrumented code) '))).toBe(true);
    expect(total(allocated)).toBe(s.bytesAllocated.requested);
    expect(total(await folded(t, 'count'))).toBe(s.allocations);
    expect(total(await folded(t, 'peak'))).toBe(s.peakHeap.requested.bytes);
    expect(total(await folded(t, 'leaked'))).toBe(s.leaked.requestedBytes);
  }, 60_000);
});

describe('export --format speedscope', () => {
  test('one sampled profile per metric, each path a sample weighted by its value, frames with their lines', async () => {
    const r = await capture(runExport, [trace, '--format', 'speedscope']);
    expect(r.code).toBe(0);
    const file = JSON.parse(r.out) as {
      $schema: string;
      shared: { frames: { name: string; file?: string; line?: number }[] };
      profiles: { type: string; name: string; unit: string; samples: number[][]; weights: number[]; endValue: number }[];
    };
    expect(file.$schema).toBe('https://www.speedscope.app/file-format-schema.json');
    expect(file.profiles.map((p) => p.name.split(' (')[0])).toEqual([
      'heap: bytes allocated',
      'heap: allocations',
      'heap: live at the peak',
      'heap: leaked at the end',
      'stack: most bytes in use',
    ]);
    const allocated = file.profiles[0]!;
    const named = allocated.samples.map((s, i) => `${s.map((f) => file.shared.frames[f]!.name).join(';')} ${allocated.weights[i]}`).sort();
    expect(named).toEqual(['main 232', 'main;build;new_node 120', 'main;scratch 100']);
    expect(allocated.endValue).toBe(452);
    expect(allocated.unit).toBe('bytes');
    const newNode = file.shared.frames.find((f) => f.name === 'new_node')!;
    expect(newNode.file).toMatch(/call-paths\.c$/);
    expect(newNode.line).toBe(readFileSync(path.join(programsDir, 'call-paths.c'), 'utf8').split('\n').findIndex((l) => l.startsWith('static struct node *new_node(')) + 1);
  });
});

describe('export errors', () => {
  test('a bad metric, a metric without folded, an interval with folded, a file that is not a trace', async () => {
    const bad = await capture(runExport, [trace, '--format', 'folded', '--metric', 'bytes']);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("--metric wants allocated, count, peak, leaked, stack, got 'bytes'");
    expect((await capture(runExport, [trace, '--format', 'csv', '--metric', 'count'])).err).toContain('--metric goes with --format folded');
    expect((await capture(runExport, [trace, '--format', 'folded', '--interval', '10'])).err).toContain('--interval goes with --format massif or csv');
    const notTrace = path.join(mkdtempSync(path.join(tmpdir(), 'mw-folded-')), 'x.mwtrace');
    writeFileSync(notTrace, 'hello');
    const r = await capture(runExport, [notTrace, '--format', 'folded']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('not a cc-memwrap trace');
    const missing = await capture(runExport, [path.join(dir, 'missing.mwtrace'), '--format', 'speedscope']);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/missing\.mwtrace/);
  });

  test('a trace cut inside a record: the paths up to the cut, and the damage said on stderr', async () => {
    const bytes = readFileSync(trace);
    // Cut one byte into scratch's malloc (the sixth ALLOC): the five nodes before it are whole.
    const allocs = dumpTraceText(new Uint8Array(bytes)).split('\n').filter((l) => / ALLOC /.test(l));
    const at = parseInt(allocs[5]!.trim().split(' ')[0]!, 16);
    const cut = path.join(dir, 'cut.mwtrace');
    writeFileSync(cut, bytes.subarray(0, at + 1));
    const r = await capture(runExport, [cut, '--format', 'folded']);
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/error: at offset .*: the file ends .* inside this ALLOC record/);
    expect(r.out).toBe('main;build;new_node 120\n');
  });
});
