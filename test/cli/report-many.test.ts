// `report` over several traces: a program that forks (its parent, a forked child and an exec'd child each write a
// trace) reported together gives one row per process, equal to each trace's own report, totals equal to their sums,
// and --by tables summed over the processes; a folder means its traces; options that read one trace are refused.
import { copyFileSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { runReport } from '../../cli/report.js';
import { capture } from '../fixtures/cli-capture.js';
import { buildInstrumented, programsDir, reportJson, runTraced, scratch } from '../support/programs.js';

const dir = scratch('report-many');
const traces = path.join(dir, 'traces');
let files: string[] = [];

interface Single {
  process: { pid: number; ppid: number };
  events: number;
  allocations: number;
  frees: number;
  bytesAllocated: { requested: number };
  peakHeap: { requested: { bytes: number } };
  leaked: { blocks: number; requestedBytes: number };
}

interface Many {
  schema: string;
  processes: { pid: number; ppid: number; events: number; allocations: number; frees: number; bytesAllocated: number; peakHeap: number; leakedBytes: number; leakedBlocks: number }[];
  totals: { events: number; allocations: number; frees: number; bytesAllocated: number; largestPeakHeap: number; leakedBytes: number };
  by: { by: string; groups: { label: string; netBytes: number; counts: Record<string, number>; perProcess: { pid: number }[] }[] } | null;
}

async function many(args: string[]): Promise<Many> {
  const r = await capture(runReport, [...args, '--json']);
  expect(r.code, r.err).toBe(0);
  return JSON.parse(r.out) as Many;
}

beforeAll(() => {
  const exe = path.join(dir, 'stress');
  buildInstrumented('gcc', ['-O0'], [path.join(programsDir, 'stress.c')], exe);
  runTraced(exe, ['fork'], traces);
  files = readdirSync(traces).map((f) => path.join(traces, f)).sort();
}, 60_000);

describe('report over the traces of several processes', () => {
  test('one row per process, equal to its own report; totals are their sums', async () => {
    expect(files.length).toBe(3);
    const singles = files.map((f) => reportJson(f) as unknown as Single);
    const m = await many(files);
    expect(m.schema).toBe('cc-memwrap.processes/1');
    expect(m.processes.map((p) => p.pid)).toEqual(singles.map((s) => s.process.pid));
    // The children's parent is the first process.
    expect(m.processes.filter((p) => p.ppid === m.processes[0]!.pid)).toHaveLength(2);
    for (const [i, s] of singles.entries()) {
      const p = m.processes[i]!;
      expect([p.events, p.allocations, p.frees, p.bytesAllocated, p.peakHeap, p.leakedBytes]).toEqual([
        s.events,
        s.allocations,
        s.frees,
        s.bytesAllocated.requested,
        s.peakHeap.requested.bytes,
        s.leaked.requestedBytes,
      ]);
    }
    const sum = (f: (s: Single) => number): number => singles.reduce((n, s) => n + f(s), 0);
    expect(m.totals).toMatchObject({
      events: sum((s) => s.events),
      allocations: sum((s) => s.allocations),
      frees: sum((s) => s.frees),
      bytesAllocated: sum((s) => s.bytesAllocated.requested),
      largestPeakHeap: Math.max(...singles.map((s) => s.peakHeap.requested.bytes)),
      leakedBytes: sum((s) => s.leaked.requestedBytes),
    });
  });

  test('--by function sums each function over the processes, and keeps its row per process', async () => {
    const m = await many([...files, '--by', 'function']);
    const singles = await Promise.all(files.map(async (f) => JSON.parse((await capture(runReport, [f, '--by', 'function', '--json'])).out) as { attribution: { rows: { label: string; netBytes: number; counts: Record<string, number> }[] } }));
    const forks = m.by!.groups.find((g) => g.label.endsWith(' forks'))!;
    const forkRows = singles.flatMap((s) => s.attribution.rows.filter((r) => r.label === forks.label));
    expect(forkRows.length).toBe(forks.perProcess.length);
    expect(forks.perProcess.length).toBe(2); // the parent and the forked child (the exec'd child runs edges)
    expect(forks.netBytes).toBe(forkRows.reduce((n, r) => n + r.netBytes, 0));
    expect(forks.counts.malloc).toBe(forkRows.reduce((n, r) => n + r.counts.malloc!, 0));
    const text = (await capture(runReport, [...files, '--by', 'function'])).out;
    expect(text).toContain('Heap by function, innermost, 3 processes summed');
    expect(text).toMatch(/forks \(pid \d+\)/);
  });

  test('a folder means the traces in it', async () => {
    const folder = path.join(dir, 'folder');
    mkdirSync(folder, { recursive: true });
    for (const f of files) copyFileSync(f, path.join(folder, path.basename(f)));
    writeFileSync(path.join(folder, 'notes.txt'), 'not a trace');
    expect((await many([folder])).totals).toEqual((await many(files)).totals);
    const text = (await capture(runReport, [folder])).out;
    expect(text).toMatch(/^Traces {7}3, one per process/);
  });

  test('refuses options that read one trace, a folder without traces, and names a file that is not a trace', async () => {
    const peak = await capture(runReport, [...files, '--peak']);
    expect(peak.code).toBe(2);
    expect(peak.err).toContain('--peak reads one trace; got 3');
    const empty = path.join(dir, 'empty');
    mkdirSync(empty, { recursive: true });
    const none = await capture(runReport, [empty]);
    expect(none.code).toBe(2);
    expect(none.err).toContain('a folder with no .mwtrace files');
    const bad = path.join(dir, 'bad.mwtrace');
    writeFileSync(bad, 'hello');
    const r = await capture(runReport, [files[0]!, bad]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('bad.mwtrace');
    expect(r.err).toContain('not a cc-memwrap trace');
  });
});
