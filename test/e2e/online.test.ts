// Online mode (MEMWRAP_MODE=online): the runtime keeps the --by function, library and thread tables in a mapped file
// instead of a trace. The same program, recorded both ways, gives the same rows; a SIGKILLed run's tables still print;
// damaged files and questions the tables cannot answer get a clear message.
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ONLINE_BY, onlineAttribution, readOnline, OnlineRefusedError } from '../../analysis/online.js';
import { buildInstrumented, programsDir, run, runTraced, scratch, traceOf, wrapper } from '../support/programs.js';

type Row = { key: string; label: string; thread: number | null; [k: string]: unknown };
type Json = { attribution: { by: string; mode: string; groups: number; rows: Row[] } } & Record<string, unknown>;

const dir = scratch('online');
const exe = path.join(dir, 'online-tables');
const online = { MEMWRAP_MODE: 'online' };

function report(file: string, ...args: string[]): ReturnType<typeof run> {
  return run(process.execPath, [wrapper, 'report', file, ...args]);
}

function json(file: string, ...args: string[]): Json {
  const r = report(file, '--json', '--top', '1000', ...args);
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return JSON.parse(r.stdout) as Json;
}

/**
 * What online mode's rows and a trace's share: the OS thread ids differ from run to run ("thread 1 (tid 1234)" →
 * "thread 1"), and online mode counts calls, not blocks (its rows' allocations and frees are null).
 */
function withoutTids(rows: Row[]): Row[] {
  return rows.map((r) => ({ ...r, label: r.label.replace(/ \(tid \d+\)$/, ''), allocations: null, frees: null }));
}

let full: string;
let tables: string;
let killed: string;

beforeAll(() => {
  buildInstrumented('gcc', ['-O1', '-g', '-pthread'], [path.join(programsDir, 'online-tables.c')], exe);
  const a = runTraced(exe, [], path.join(dir, 'full'));
  expect(a.status).toBe(0);
  full = traceOf(path.join(dir, 'full'), a.pid);
  const b = runTraced(exe, [], path.join(dir, 'online'), { env: online });
  expect(b.status).toBe(0);
  expect(b.stdout).toBe('done\n');
  tables = traceOf(path.join(dir, 'online'), b.pid);
  const c = runTraced(exe, ['kill'], path.join(dir, 'killed'), { env: online });
  expect(c.signal).toBe('SIGKILL');
  killed = traceOf(path.join(dir, 'killed'), c.pid);
}, 120_000);

describe('online mode', () => {
  it('writes a small tables file, not a trace', () => {
    expect(readFileSync(tables).subarray(0, 8).toString('latin1')).toBe('MWONLINE');
    expect(readFileSync(full).subarray(0, 7).toString('latin1')).toBe('MWTRACE');
  });

  for (const by of ['function', 'library', 'thread'] as const) {
    it(`gives the rows of report --by ${by} of a trace of the same program`, () => {
      const want = json(full, '--by', by).attribution;
      const got = json(tables, '--by', by).attribution;
      expect(got.by).toBe(by);
      expect(got.mode).toBe('innermost');
      expect(want.rows.length).toBeGreaterThan(by === 'library' ? 2 : 3);
      expect(withoutTids(got.rows)).toEqual(withoutTids(want.rows));
      expect(got.groups).toBe(want.groups);
    });
  }

  it('has rows for libc, a function that frees what others allocated, and every thread', () => {
    const lib = json(tables, '--by', 'library').attribution.rows;
    expect(lib.map((r) => r.label)).toEqual(expect.arrayContaining(['(instrumented code)', 'libc.so.6']));
    const fn = json(tables, '--by', 'function').attribution.rows;
    const release = fn.find((r) => r.label.endsWith(' release_all'))!;
    expect(release.netBytes as number).toBeLessThan(0);
    expect((release.counts as { free: number }).free).toBe(20 + 30 + 40);
    expect(json(tables, '--by', 'thread').attribution.rows.map((r) => r.thread).sort()).toEqual([0, 1, 2, 3]);
  });

  it('gives the run heap totals of a trace of the same program', () => {
    const t = json(tables) as unknown as { totals: Record<string, number>; end: { normal: boolean }; tables: Record<string, unknown> };
    const s = json(full) as unknown as { allocations: number; frees: number; bytesAllocated: { requested: number }; peakHeap: { requested: { bytes: number } }; leaked: { blocks: number; requestedBytes: number } };
    expect(t.totals).toMatchObject({
      allocations: s.allocations,
      frees: s.frees,
      bytesAllocated: s.bytesAllocated.requested,
      peakHeap: s.peakHeap.requested.bytes,
      liveBlocks: s.leaked.blocks,
      liveBytes: s.leaked.requestedBytes,
    });
    expect(t.end.normal).toBe(true);
    expect(Object.keys(t.tables)).toEqual(['function', 'library', 'thread']);
  });

  it('prints the three tables and says what it left out', () => {
    const r = report(tables);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^Run +normal exit, status 0$/m);
    expect(r.stdout).toMatch(/heap tables only \(MEMWRAP_MODE=online\), no events; left out:/);
    expect(r.stdout).toMatch(/--peak, --linked, --leaks classes/);
    expect(r.stdout).toMatch(/^Heap by function, innermost \(\d+ of \d+;/m);
    expect(r.stdout).toMatch(/^Heap by library \(\d+ of \d+;/m);
    expect(r.stdout).toMatch(/^Heap by thread \(4 of 4;/m);
  });

  it('still prints the tables of a run killed by SIGKILL, and says it did not end normally', () => {
    const r = report(killed, '--by', 'function');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^Run +did not end normally: killed \(e\.g\. SIGKILL\) or crashed; the tables hold every heap call/m);
    expect(r.stdout).toMatch(/online-tables\.c:\d+ release_all/);
    const k = json(killed, '--by', 'function') as unknown as Json & { end: { normal: boolean; how: string } };
    expect(k.end).toMatchObject({ normal: false, how: 'unknown' });
    // every heap call was made before the kill: the rows are those of the run that exited
    expect(withoutTids(k.attribution.rows)).toEqual(withoutTids(json(full, '--by', 'function').attribution.rows));
  });

  it('refuses what the tables cannot answer, naming the option', () => {
    for (const args of [['--peak'], ['--linked'], ['--leaks'], ['--budget', 'heap=1K'], ['--interval', '100'], ['--by', 'site'], ['--by', 'function', '--attribute', 'outermost'], ['--compare', full]]) {
      const r = report(tables, ...args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/^cc-memwrap report: .*: an online-mode file \(MEMWRAP_MODE=online\): --/);
      expect(r.stderr).toContain(args[0] === '--by' || args[0] === '--compare' ? args[args.length - 2]! : args[0]!);
    }
    const view = run(process.execPath, [wrapper, 'view', tables]);
    expect(view.status).not.toBe(0);
    expect(view.stderr).toMatch(/an online-mode file \(MEMWRAP_MODE=online\): it holds heap tables, not events; `cc-memwrap report FILE` prints them/);
    const dump = run(process.execPath, [wrapper, 'dump', tables]);
    expect(dump.status).toBe(2);
    expect(dump.stderr).toMatch(/an online-mode file/);
  });

  it('counts every call of 8 threads allocating and freeing at once, as a trace does', () => {
    const threads = path.join(dir, 'threads');
    buildInstrumented('gcc', ['-O2', '-pthread'], [path.join(programsDir, 'threads.c')], threads);
    const a = runTraced(threads, [], path.join(dir, 'threads-full'));
    const b = runTraced(threads, [], path.join(dir, 'threads-online'), { env: online });
    expect([a.status, b.status]).toEqual([0, 0]);
    const t = traceOf(path.join(dir, 'threads-full'), a.pid);
    const o = traceOf(path.join(dir, 'threads-online'), b.pid);
    // the threads interleave differently from run to run: min and max may differ, sums and counts may not
    const sums = (rows: Row[]): unknown[] =>
      withoutTids(rows)
        .map(({ minBytes: _min, maxBytes: _max, ...rest }) => rest)
        .sort((x, y) => (x.key < y.key ? -1 : 1));
    for (const by of ['function', 'library', 'thread']) {
      expect(sums(json(o, '--by', by).attribution.rows), by).toEqual(sums(json(t, '--by', by).attribution.rows));
    }
    const totals = (json(o) as unknown as { totals: { allocations: number; frees: number } }).totals;
    expect(totals.allocations).toBe((json(t) as unknown as { allocations: number }).allocations);
    expect(totals.frees).toBeGreaterThanOrEqual(800_000);
  }, 120_000);

  it('gives a fork child its own tables, leaving its parent\'s file alone', () => {
    const forks = path.join(dir, 'fork-lanes');
    buildInstrumented('gcc', ['-O1'], [path.join(programsDir, 'fork-lanes.c')], forks);
    const r = runTraced(forks, [], path.join(dir, 'forks'), { env: online });
    expect(r.status).toBe(0);
    const files = readdirSync(path.join(dir, 'forks')).sort();
    expect(files).toHaveLength(2);
    type T = { process: { pid: number; ppid: number }; totals: Record<string, number>; end: { normal: boolean } };
    const [parent, child] = files.map((f) => json(path.join(dir, 'forks', f)) as unknown as T).sort((a, b) => (a.process.pid === r.pid ? -1 : b.process.pid === r.pid ? 1 : 0));
    expect(parent!.process.pid).toBe(r.pid);
    expect(child!.process.ppid).toBe(r.pid);
    // parent: 40 steps of 1 KiB, all freed; child: 30 of 2 KiB, all but the last freed (fork-lanes.c)
    expect(parent!.totals).toMatchObject({ allocations: 40, frees: 40, bytesAllocated: 40 * 1024, liveBytes: 0 });
    expect(child!.totals).toMatchObject({ allocations: 30, frees: 29, bytesAllocated: 30 * 2048, liveBytes: 2048 });
    expect([parent!.end.normal, child!.end.normal]).toEqual([true, true]);
  });

  it('records a trace, with a warning, for an unknown MEMWRAP_MODE', () => {
    const r = runTraced(exe, [], path.join(dir, 'bogus'), { env: { MEMWRAP_MODE: 'onlin' } });
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('cc-memwrap: MEMWRAP_MODE=onlin: unknown mode (trace or online); recording a trace\n');
    expect(readFileSync(traceOf(path.join(dir, 'bogus'), r.pid)).subarray(0, 7).toString('latin1')).toBe('MWTRACE');
  });
});

describe('damaged online files', () => {
  const bytes = (): Uint8Array => new Uint8Array(readFileSync(tables));
  const damaged = (name: string, b: Uint8Array): string => {
    const f = path.join(dir, `${name}.mwtrace`);
    writeFileSync(f, b);
    return f;
  };
  /** The byte offset of the n-th segment ("MWOS"). */
  function segment(b: Uint8Array, n: number): number {
    let seen = 0;
    for (let i = 128; i + 4 <= b.length; i++) {
      if (b[i] === 0x4d && b[i + 1] === 0x57 && b[i + 2] === 0x4f && b[i + 3] === 0x53 && seen++ === n) return i;
    }
    throw new Error('no such segment');
  }

  it('refuses a cut header, a wrong byte-order mark and an unknown major version by name', () => {
    const b = bytes();
    expect(() => readOnline(b.subarray(0, 100))).toThrow(new OnlineRefusedError('truncated online tables header: the file is 100 bytes, the header needs 128'));
    const bom = b.slice();
    bom[12] = 9;
    expect(() => readOnline(bom)).toThrow(/corrupt online tables header: byte-order mark at offset 12/);
    const v2 = b.slice();
    v2[8] = 2;
    expect(() => readOnline(v2)).toThrow('unsupported online tables version 2.0: this reader reads version 1.0; a newer cc-memwrap wrote it');
    const r = report(damaged('cut-header', b.subarray(0, 100)));
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/cut-header\.mwtrace: truncated online tables header: the file is 100 bytes, the header needs 128\n$/);
  });

  it('keeps what comes before a cut segment and says where it was cut', () => {
    const b = bytes();
    const entries = segment(b, 1);
    const cut = damaged('cut', b.subarray(0, entries + 16 + 112 * 2 + 50));
    const r = report(cut, '--by', 'function');
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`warning: at offset 0x${entries.toString(16)} \\(${entries}\\): segment cut short: \\d+ bytes used, ${112 * 2 + 50} in the file\\n`));
    expect(r.stderr).toMatch(/not a whole number of 112-byte entries/);
    expect(r.stdout).toMatch(/^Heap by function, innermost \(\d of \d;/m);
  });

  it('names a segment that is not one, an entry of unknown kind, an overlong used count and a damaged names log', () => {
    const b = bytes();
    const names = segment(b, 0);
    const entries = segment(b, 1);
    const t = b.slice();
    new DataView(t.buffer).setUint32(entries + 16, 9, true); // first entry: kind 9
    new DataView(t.buffer).setUint32(entries + 12, 0x7fffffff, true); // used > capacity
    t.fill(0xff, names + 16, names + 40); // the names log's first record
    const r = readOnline(t);
    expect(r.problems).toContain(`at offset 0x${(entries + 16).toString(16)} (${entries + 16}): entry of unknown kind 9, skipped`);
    expect(r.problems.some((p) => p.includes(`at offset 0x${entries.toString(16)} (${entries}): segment uses 2147483647 bytes of`))).toBe(true);
    const named = r.problems.find((p) => p.includes(': in the names: '));
    expect(named).toMatch(new RegExp(`^at offset 0x${(names + 16).toString(16)} \\(${names + 16}\\): in the names: `));
    const out = report(damaged('hostile', t), '--by', 'library');
    expect(out.status).toBe(0);
    expect(out.stderr).toMatch(/warning: at offset 0x[0-9a-f]+ \(\d+\): in the names: /);
    const notSeg = b.slice();
    notSeg.set([0x58, 0x58, 0x58, 0x58], entries);
    expect(readOnline(notSeg).problems).toContain(`at offset 0x${entries.toString(16)} (${entries}): not a segment (expected "MWOS"); the rest of the file is skipped`);
  });

  it('reads every byte of random damage without throwing anything but a refusal', () => {
    const b = bytes();
    let seed = 7;
    const rnd = (n: number): number => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) % n;
    for (let k = 0; k < 300; k++) {
      const t = b.slice(0, 128 + rnd(b.length - 128));
      for (let j = 0; j < 8; j++) t[rnd(t.length)] = rnd(256);
      try {
        const r = readOnline(t);
        for (const by of ONLINE_BY) onlineAttribution(r, by);
      } catch (e) {
        expect(e).toBeInstanceOf(OnlineRefusedError);
      }
    }
  });
});
