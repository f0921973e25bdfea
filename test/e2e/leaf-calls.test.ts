// Leaf call trees summarised (--mw-calls=leaves, the default at -O1 and above): the same program built that way
// and with every call recorded gives the same heap, leak, linked-free and heap budget results; the summarised
// functions are named with their stack bounds; the peak stack is never below the deepest stack the program measured
// itself in a leaf, and stays within the trees' bound of the every-call build's; a function reached through a function
// pointer, one calling out of its unit and a frame of run-time size are never summarised; a call tree without heap
// work that no caller bounds (recursion, a function called through a pointer or from other units) is measured (a
// call recorded only when deeper than any since the last record), which keeps the peak stack exact and in the
// recursion; main, an exported function and one called through a pointer count the summarised calls they make in
// the peak stack; the optimisation level
// picks the default (-O1 and above: `heap`, which also writes a recorded call only with heap work inside or at a new
// depth, test/e2e/pending-calls.test.ts); a tree the compiler's graph cannot bound is recorded after all; online mode
// keeps the same tables. The builds here name `--mw-calls=leaves`, so that every call of a recorded function is in
// the trace and the events left out are exactly the summarised and measured calls.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildPlain, heapNumbers, must, programsDir, run, runTraced, scratch, traceOf, wrapper } from '../support/programs.js';

const sources = [path.join(programsDir, 'leaf-calls.c'), path.join(programsDir, 'leaf-calls-other.c')];
const SUMMARISED = ['checksum', 'fill', 'mix', 'note_depth', 'scramble'];
const MEASURED = ['count_down', 'other_unit', 'through_pointer', 'walk'];
/** Calls of the measured functions in leaf-calls.c: walk's, count_down(3)'s 4, and 200 each of through_pointer and
 *  other_unit (called by calls_out). */
const MEASURED_CALLS = 2 ** 15 - 1 + 4 + 200 + 200;
/** walk(list, 14) in leaf-calls.c: 2^15 - 1 calls, 15 deep. */
const WALK_CALLS = 2 ** 15 - 1;
const WALK_DEEP = 15;

interface Built {
  trace: string;
  /** The deepest stack a leaf measured, from the stack base (printed by the program). */
  deepest: number;
  json: {
    events: number;
    peakStack: { bytes: number };
    summarisedFunctions?: { name: string; file: string; line: number; stackBytes: number | null; measured?: boolean }[];
    pendingCalls?: { functions: number };
  };
}

/** The ENTER records of `fn` in a trace's dump. */
function enters(trace: string, fn: string): number {
  const dump = must(process.execPath, [wrapper, 'dump', trace]).stdout;
  const entrySite = new RegExp(`site (\\d+) entry file="[^"]*" line=\\d+ func="${fn}"`).exec(dump)![1];
  return dump.split('\n').filter((l) => l.includes(` ENTER site=${entrySite} `)).length;
}

describe('leaf call trees summarised', () => {
  const dir = scratch('leaf-calls');
  let plainSum = '';
  /** Builds with cc-memwrap (`flags` before the compiler's name, `cflags` after), runs, reads the report. */
  const build = (name: string, flags: string[], cc = 'gcc', cflags = ['-O2']): Built => {
    const exe = path.join(dir, name);
    must(wrapper, ['--mw-strict', ...flags, cc, ...cflags, ...sources, '-o', exe]);
    const r = runTraced(exe, [], path.join(dir, 'traces'));
    expect(r.stdout.split('\n')[0]).toBe(plainSum);
    const trace = traceOf(path.join(dir, 'traces'), r.pid);
    const json = JSON.parse(must(process.execPath, [wrapper, 'report', '--json', trace]).stdout) as Built['json'];
    return { trace, deepest: Number(/^deepest (\d+)$/m.exec(r.stdout)![1]), json };
  };
  const names = (b: Built): string[] => (b.json.summarisedFunctions ?? []).filter((f) => f.measured !== true).map((f) => f.name);
  const measured = (b: Built): string[] => (b.json.summarisedFunctions ?? []).filter((f) => f.measured === true).map((f) => f.name);
  let leaves: Built;
  let all: Built;
  beforeAll(() => {
    buildPlain('gcc', ['-O2'], sources, path.join(dir, 'plain'));
    plainSum = must(path.join(dir, 'plain'), []).stdout.split('\n')[0]!;
    leaves = build('leaves', ['--mw-calls=leaves']);
    all = build('all', ['--mw-calls=all']);
  });

  it('keeps every heap number, linked set, leak and heap or static budget of the every-call build', () => {
    const budget = 'heap=2K,static=4';
    const want = heapNumbers(all.trace, budget);
    expect(want.allocations).toBe(202); // 200 nodes, the kept block, stdout's buffer
    expect((want.linked as { frees: number }).frees).toBe(1);
    expect(heapNumbers(leaves.trace, budget)).toEqual(want);
  });

  it('records no call of the summarised functions, and names them with the stack their trees take', () => {
    expect(names(leaves)).toEqual(SUMMARISED);
    // checksum → mix → fill → scramble → note_depth, once per node: 2 events a call; note_depth in every walk; the
    // measured functions' calls but their deepest (an ENTER and an EXIT each).
    const deepest = MEASURED.reduce((sum, fn) => sum + enters(leaves.trace, fn), 0);
    expect(all.json.events - leaves.json.events).toBe(200 * 5 * 2 + WALK_CALLS * 2 + (MEASURED_CALLS - deepest) * 2);
    const bound = (name: string) => leaves.json.summarisedFunctions!.find((f) => f.name === name)!.stackBytes!;
    expect(bound('scramble')).toBeGreaterThanOrEqual(1000); // its volatile pad
    expect(bound('fill')).toBeGreaterThanOrEqual(bound('scramble') + 48); // and its own text
    expect(bound('checksum')).toBeGreaterThanOrEqual(bound('fill'));
    const text = must(process.execPath, [wrapper, 'report', leaves.trace]).stdout;
    expect(text).toMatch(/^Summarised +calls of 5 functions \(leaf call trees\): checksum, fill, mix,$/m);
    expect(text).toMatch(/^Measured +calls of 4 functions \(no heap work, measured at run time\):\n +count_down, other_unit, through_pointer, walk$/m);
    expect(text).toMatch(/^ +\(calls not recorded; peak stack counts the stack they take, at most 1\.\d KiB\)$/m);
    expect(must(process.execPath, [wrapper, 'report', all.trace]).stdout).not.toContain('Summarised');
  });

  it('never summarises a function called through a pointer, one calling out of its unit, or a run-time sized frame', () => {
    for (const name of ['through_pointer', 'calls_out', 'count_down', 'walk', 'sized', 'push', 'main']) expect(names(leaves)).not.toContain(name);
    expect([enters(leaves.trace, 'calls_out'), enters(leaves.trace, 'sized')]).toEqual([200, 200]);
    // Called through a pointer, with no heap work in it: measured. Between two of its calls come only calls_out's and
    // sized's ENTER and EXIT, none of them a record of another kind, so after the first none is deeper.
    expect(measured(leaves)).toContain('through_pointer');
    expect(enters(leaves.trace, 'through_pointer')).toBe(1);
  });

  it('measures recursion without heap work: its deepest calls recorded, the peak stack in it and exact', () => {
    expect(measured(leaves)).toEqual(MEASURED);
    expect(measured(all)).toEqual([]);
    expect(enters(all.trace, 'walk')).toBe(WALK_CALLS);
    // One walk from main: each level deeper than the last is recorded on the way down, nothing after.
    const walks = enters(leaves.trace, 'walk');
    expect(walks).toBeGreaterThanOrEqual(1);
    expect(walks).toBeLessThanOrEqual(WALK_DEEP);
    // walk goes deepest: the peak is no less than the program's own deepest address, and no more than a frame of
    // walk and its leaf (note_depth) past it.
    expect(leaves.json.peakStack.bytes).toBeGreaterThanOrEqual(leaves.deepest);
    expect(leaves.json.peakStack.bytes).toBeLessThanOrEqual(leaves.deepest + 512);
    const stack = must(process.execPath, [wrapper, 'report', '--stack', leaves.trace]).stdout;
    expect(stack).toMatch(/walk/);
    // --calls says which of a function's calls the trace holds.
    const calls = (fn: string) => must(process.execPath, [wrapper, 'report', '--calls', fn, leaves.trace]).stdout;
    expect(calls('walk')).toMatch(new RegExp(`^Heap per call of walk \\(\\d+ of ${walks} calls?;.*\\n  measured \\(no heap work in its call tree\\): only its deepest calls are recorded$`, 'm'));
    expect(calls('fill')).toMatch(/^Heap per call of fill \(0 of 0 calls;.*\n  summarised \(a leaf call tree\): its calls are not recorded, and do no heap work$/m);
  });

  it('keeps the peak stack above the deepest stack the program measured, and within the trees\' bound of the every-call build\'s', () => {
    const most = Math.max(...leaves.json.summarisedFunctions!.filter((f) => f.measured !== true).map((f) => f.stackBytes!));
    expect(leaves.json.peakStack.bytes).toBeGreaterThanOrEqual(leaves.deepest);
    expect(all.json.peakStack.bytes).toBeGreaterThanOrEqual(all.deepest);
    expect(leaves.json.peakStack.bytes).toBeLessThanOrEqual(all.json.peakStack.bytes + most);
    // A stack budget the program's own stack went past is reported exceeded.
    const r = JSON.parse(must(process.execPath, [wrapper, 'report', '--json', '--budget', `stack=${leaves.deepest - 1}`, leaves.trace]).stdout) as { budgets: { exceeded: boolean } };
    expect(r.budgets.exceeded).toBe(true);
  });

  it('gives online mode the same tables as the every-call build (a summarised tree does no heap work to charge)', () => {
    const tables = (name: string) => {
      const traces = path.join(dir, `online-${name}`);
      const r = runTraced(path.join(dir, name), [], traces, { env: { MEMWRAP_MODE: 'online' } });
      expect(r.stdout.split('\n')[0]).toBe(plainSum);
      const json = JSON.parse(must(process.execPath, [wrapper, 'report', '--json', traceOf(traces, r.pid)]).stdout) as Record<string, unknown>;
      // What two runs and two builds differ in: the files, the process, and the site numbers in the rows' keys.
      const masked = ['file', 'pid', 'ppid', 'startTimeNs', 'osTid', 'program', 'key'];
      return JSON.parse(JSON.stringify(json, (key, value) => (masked.includes(key) ? '…' : typeof value === 'string' ? value.replace(/tid \d+/, 'tid …') : value))) as {
        totals: { allocations: number };
        tables: { function: { rows: unknown[] } };
      };
    };
    const want = tables('all');
    expect([want.totals.allocations, want.tables.function.rows.length]).toEqual([202, 2]);
    expect(tables('leaves')).toEqual(want);
  });

  it('bounds clang\'s trees from its frame sizes alone (no call graph)', () => {
    const clang = build('clang', ['--mw-calls=leaves'], 'clang');
    expect(names(clang)).toEqual(SUMMARISED);
    expect(clang.json.peakStack.bytes).toBeGreaterThanOrEqual(clang.deepest);
  });

  it('records every call at -O0 and -Og, summarises and writes pending calls at -O1 and -Os, and --mw-calls= overrides either way', () => {
    const o0 = build('o0', [], 'gcc', ['-O0']);
    expect([names(o0), o0.json.pendingCalls]).toEqual([[], undefined]);
    expect(names(build('og', [], 'gcc', ['-Og']))).toEqual([]);
    const o1 = build('o1', [], 'gcc', ['-O1']);
    expect([names(o1), o1.json.pendingCalls !== undefined]).toEqual([SUMMARISED, true]);
    expect(names(build('os', [], 'gcc', ['-Os']))).toEqual(SUMMARISED);
    const o0leaves = build('o0-leaves', [], 'gcc', ['-O0', '--mw-calls=leaves']);
    expect([names(o0leaves), measured(o0leaves), o0leaves.json.pendingCalls]).toEqual([SUMMARISED, MEASURED, undefined]);
    const o0heap = build('o0-heap', [], 'gcc', ['-O0', '--mw-calls=heap']);
    expect([names(o0heap), o0heap.json.pendingCalls !== undefined]).toEqual([SUMMARISED, true]);
    expect(all.json.summarisedFunctions).toBeUndefined();
    expect(leaves.json.pendingCalls).toBeUndefined();
  });

  it('records a tree the compiled call graph cannot bound (-finstrument-functions calls out of every function)', () => {
    const r = run(wrapper, ['--mw-strict', '--mw-verbose', '--mw-calls=leaves', 'gcc', '-O2', '-finstrument-functions', ...sources, '-o', path.join(dir, 'profiled')]);
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(/leaf-calls\.c: unbounded: .*scramble.*; compiling again/);
    const out = runTraced(path.join(dir, 'profiled'), [], path.join(dir, 'traces'));
    const trace = traceOf(path.join(dir, 'traces'), out.pid);
    const json = JSON.parse(must(process.execPath, [wrapper, 'report', '--json', trace]).stdout) as Built['json'];
    // The leaves recorded after all, and walk, which calls one of them; those that call none stay measured.
    const built: Built = { trace, deepest: 0, json };
    const still = ['count_down', 'other_unit', 'through_pointer'];
    expect([names(built), measured(built)]).toEqual([[], still]);
    expect(json.events).toBe(all.json.events - (4 + 200 + 200 - still.reduce((sum, fn) => sum + enters(trace, fn), 0)) * 2);
  });

  it('refuses an unknown --mw-calls= value with one line and status 2', () => {
    const r = run(wrapper, ['--mw-calls=some', 'gcc', ...sources, '-o', path.join(dir, 'never')]);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(
      'cc-memwrap: --mw-calls=some: give --mw-calls=all (record every call), --mw-calls=leaves (summarise leaf call trees) or ' +
        '--mw-calls=heap (that, and write a call only with heap work inside or at a new depth)\n',
    );
  });
});

describe('summarised calls of functions never summarised themselves', () => {
  const dir = scratch('leaf-callers');
  const source = path.join(programsDir, 'leaf-callers.c');
  const exe = (name: string) => path.join(dir, name);
  /** Runs a build with the caller `mode` and reads what the program printed and the report. */
  const runMode = (name: string, mode: string) => {
    const r = runTraced(exe(name), [mode], path.join(dir, 'traces'));
    const printed = (what: string) => Number(new RegExp(`^${what} (\\d+)$`, 'm').exec(r.stdout)![1]);
    const trace = traceOf(path.join(dir, 'traces'), r.pid);
    const json = JSON.parse(must(process.execPath, [wrapper, 'report', '--json', trace]).stdout) as Built['json'];
    return { deepest: printed('deepest'), comparisons: printed('comparisons'), json, trace };
  };
  beforeAll(() => {
    must(wrapper, ['--mw-strict', 'gcc', '-O2', source, '-o', exe('leaves')]);
    must(wrapper, ['--mw-strict', '--mw-calls=all', 'gcc', '-O2', source, '-o', exe('all')]);
  });

  it.each(['main', 'exported', 'pointer', 'sort'])('%s: the peak stack counts the leaf it calls', (mode) => {
    const leaves = runMode('leaves', mode);
    const all = runMode('all', mode);
    const bounds = leaves.json.summarisedFunctions!.filter((f) => f.measured !== true);
    expect(bounds.map((f) => f.name)).toEqual(['note_depth', 'pad']);
    expect(leaves.json.peakStack.bytes).toBeGreaterThanOrEqual(leaves.deepest);
    expect(leaves.json.peakStack.bytes).toBeLessThanOrEqual(all.json.peakStack.bytes + Math.max(...bounds.map((f) => f.stackBytes!)));
  });

  it('measures a qsort comparator: a few of its calls recorded, where every one was', () => {
    const leaves = runMode('leaves', 'sort');
    const all = runMode('all', 'sort');
    expect(leaves.json.summarisedFunctions!.filter((f) => f.measured === true).map((f) => f.name)).toEqual(['compare']);
    expect(leaves.comparisons).toBeGreaterThan(100_000);
    expect(enters(all.trace, 'compare')).toBe(all.comparisons);
    const recorded = enters(leaves.trace, 'compare');
    expect(recorded).toBeGreaterThanOrEqual(1);
    expect(recorded).toBeLessThan(64); // one per new depth of the sort's recursion since the last record
    expect(leaves.json.events).toBeLessThan(100);
  });
});

describe('measured calls where the depth is not plain', () => {
  const dir = scratch('measured-stacks');
  const exe = path.join(dir, 'measured-stacks');
  beforeAll(() => {
    must(wrapper, ['--mw-strict', 'gcc', '-O2', path.join(programsDir, 'measured-stacks.c'), '-o', exe, '-lpthread']);
  });
  const runMode = (mode: string) => {
    const r = runTraced(exe, [mode], path.join(dir, 'traces'));
    const below = Number(/^below (\d+)$/m.exec(r.stdout)![1]);
    const json = JSON.parse(must(process.execPath, [wrapper, 'report', '--json', traceOf(path.join(dir, 'traces'), r.pid)]).stdout) as Built['json'] & {
      threads: { maxStackBytes: number }[];
    };
    return { below, json };
  };

  it('a new thread whose first call is measured: its recursion reaches the thread\'s max stack', () => {
    const { below, json } = runMode('thread');
    expect((json.summarisedFunctions ?? []).filter((f) => f.measured === true).map((f) => f.name)).toEqual(['down', 'on_signal', 'worker']);
    expect(json.threads).toHaveLength(2);
    expect(below).toBeGreaterThan(200 * 64);
    expect(json.threads[1]!.maxStackBytes).toBeGreaterThanOrEqual(below);
  });

  it('a measured signal handler on another stack (sigaltstack) hides no deeper call on this one', () => {
    const { below, json } = runMode('altstack');
    expect(below).toBeGreaterThan(200 * 64);
    expect(json.peakStack.bytes).toBeGreaterThanOrEqual(below);
  });
});
