// Calls written only where they matter (--mw-calls=heap, the default at -O1 and above): the same program built so and
// with every call recorded gives the same heap, leak, linked-free and budget results, and the same calls open at each
// heap event, at a crash, at exit(), after a longjmp, in a signal handler and in a fork child; the trace holds a small
// part of the calls, the report and `--calls` say so, and the peak stack counts a shallow call's summarised leaf even
// after a deeper chain of calls (the runtime compares a frame's depth plus its summarised calls' bound); online mode
// charges each heap call to the same function.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { NONE, type Model } from '../../analysis/model.js';
import { siteInfo } from '../../analysis/sites.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { blocksAllocatedAt, lineOf } from '../support/model-queries.js';
import { buildPlain, heapNumbers, must, programsDir, reportJson, run, scratch, wrapper } from '../support/programs.js';

const source = path.join(programsDir, 'pending-calls.c');
const at = (text: string) => lineOf(source, text);
const dir = scratch('pending-calls');
const exe = (build: string) => path.join(dir, build);

interface Ran {
  stdout: string;
  /** The run's traces by pid; `main` is the process's own. */
  traces: Map<number, { file: string; model: Model }>;
  main: { file: string; model: Model };
}

/** Runs a build in `mode`; it must end as the plain build does and print the same sum (the depth it prints differs). */
function ran(build: string, mode: string): Ran {
  const plain = run(exe('plain'), [mode]);
  const traceDir = scratch(`pending-calls-${build}-${mode}`);
  const r = run(exe(build), [mode], { env: { ...process.env, MEMWRAP_TRACE: path.join(traceDir, '%p.mwtrace') } });
  const sum = (out: string) => out.split('\n')[0];
  expect({ sum: sum(r.stdout), status: r.status, signal: r.signal }).toEqual({ sum: sum(plain.stdout), status: plain.status, signal: plain.signal });
  expect(sum(r.stdout)).toBe('sum 50000');
  const traces = new Map<number, { file: string; model: Model }>();
  for (const f of readdirSync(traceDir)) {
    const file = path.join(traceDir, f);
    const model = decodeTrace(readFileSync(file));
    expect(model.problems.filter((p) => p.severity === 'error')).toEqual([]);
    traces.set(Number(f.split('.')[0]), { file, model });
  }
  return { stdout: r.stdout, traces, main: traces.get(r.pid)! };
}

const nameOf = (model: Model, f: number) => siteInfo(model, model.frames.entrySite[f]!)?.name ?? '?';

/** The functions of the frames open on the thread of `event` just before it, outermost first. */
function openAt(model: Model, event: number): string[] {
  const thread = model.events.thread[event]!;
  const out: string[] = [];
  for (let f = 0; f < model.frames.count; f++) {
    if (model.frames.thread[f] !== thread || model.frames.enter[f]! >= event) continue;
    if (model.frames.exit[f] === NONE || model.frames.exit[f]! > event) out.push(nameOf(model, f));
  }
  return out;
}

/** The functions of the frames no EXIT closed (open at the end, or closed by an UNWIND or the thread's end), in order. */
const neverExited = (model: Model) => Array.from({ length: model.frames.count }, (_, f) => f).filter((f) => model.frames.exitSite[f] === 0).map((f) => nameOf(model, f));

/** The calls open at each allocation made at `line`. */
const pathsAt = (model: Model, line: number) => blocksAllocatedAt(model, 'pending-calls.c', line).map((b) => openAt(model, model.blocks.allocEvent[b]!));

const DESCENT = ['main', ...Array<string>(11).fill('descend')];

describe('pending calls (--mw-calls=heap)', () => {
  beforeAll(() => {
    buildPlain('gcc', ['-O2'], [source], exe('plain'));
    must(wrapper, ['--mw-strict', 'gcc', '-O2', source, '-o', exe('heap')]);
    must(wrapper, ['--mw-strict', '--mw-calls=all', 'gcc', '-O2', source, '-o', exe('all')]);
  });

  it('keeps every heap number, linked set, leak and budget, and the calls open at every allocation, in a small part of the events', () => {
    const heap = ran('heap', 'run');
    const all = ran('all', 'run');
    expect(heapNumbers(heap.main.file, 'heap=4K')).toEqual(heapNumbers(all.main.file, 'heap=4K'));
    const line = at('e = malloc(sizeof *e);');
    const paths = pathsAt(all.main.model, line);
    expect(paths.length).toBeGreaterThanOrEqual(500);
    expect(pathsAt(heap.main.model, line)).toEqual(paths);
    const [h, a] = [reportJson(heap.main.file), reportJson(all.main.file)] as { events: number; pendingCalls?: { functions: number } }[];
    expect(a.events).toBeGreaterThan(400_000); // 100,000 hits: step and lookup entered and left
    expect(h.events).toBeLessThan(a.events / 50);
    expect([h.pendingCalls, a.pendingCalls]).toEqual([{ functions: 7 }, undefined]); // all recorded but on_signal, whose every call allocates
  });

  it('gives online mode the same tables as the every-call build (each heap call charged to the innermost call, pending or not)', () => {
    const tables = (build: string) => {
      const file = path.join(scratch(`pending-calls-online-${build}`), 'tables.mwonline');
      const r = run(exe(build), ['run'], { env: { ...process.env, MEMWRAP_MODE: 'online', MEMWRAP_TRACE: file } });
      expect(r.stdout).toBe('sum 50000\n');
      return must(process.execPath, [wrapper, 'report', '--by', 'function', file]).stdout.split('\n').slice(2).join('\n');
    };
    const all = tables('all');
    expect(all).toMatch(/^ +7\.9 KiB +0 B +7\.9 KiB +505 +\S*pending-calls\.c:\d+ lookup$/m);
    expect(tables('heap')).toBe(all);
  });

  it('says so: the report\'s head and `--calls` of a function whose calls were written only with heap work inside', () => {
    const heap = ran('heap', 'run');
    const text = must(process.execPath, [wrapper, 'report', heap.main.file]).stdout;
    expect(text).toMatch(/^Calls +of 7 functions written only with heap work inside or a new depth\n +\(others not in the trace: heap, leaks, stack as with every call recorded\)$/m);
    const calls = must(process.execPath, [wrapper, 'report', '--calls', 'lookup', heap.main.file]).stdout;
    expect(calls).toMatch(/^Heap per call of lookup .*\n  calls written only with heap work inside or a new depth \(others not counted\)$/m);
    // Every call of lookup that allocated is there, with what it allocated.
    const totals = (file: string) => (JSON.parse(must(process.execPath, [wrapper, 'report', '--json', '--calls', 'lookup', file]).stdout) as { calls: { pending: boolean; invocations: { heapEvents: number; bytesAllocated: number }[] } }).calls;
    const h = totals(heap.main.file);
    const a = totals(ran('all', 'run').main.file);
    const allocating = (c: typeof h) => c.invocations.filter((i) => i.heapEvents > 0).map((i) => i.bytesAllocated);
    expect(allocating(h)).toEqual(allocating(a));
    expect([h.pending, a.pending]).toEqual([true, false]);
  });

  it.each(['segv', 'exit'])('names the calls the program ended in (%s ten calls deep)', (mode) => {
    const heap = ran('heap', mode);
    expect(neverExited(ran('all', mode).main.model)).toEqual(DESCENT);
    expect(neverExited(heap.main.model)).toEqual(DESCENT);
  });

  it('a longjmp past written and pending calls: the allocation after it is main\'s', () => {
    const heap = ran('heap', 'jump');
    expect(heap.stdout).toContain('jumped');
    const line = at('char *after = malloc(7);');
    expect(pathsAt(ran('all', 'jump').main.model, line)).toEqual([['main']]);
    expect(pathsAt(heap.main.model, line)).toEqual([['main']]);
    expect(heapNumbers(heap.main.file)).toEqual(heapNumbers(ran('all', 'jump').main.file));
  });

  it('a signal handler that allocates inside pending calls: its allocation has them all', () => {
    const line = at('char *p = malloc(40);');
    expect(pathsAt(ran('all', 'signal').main.model, line)).toEqual([[...DESCENT, 'on_signal']]);
    expect(pathsAt(ran('heap', 'signal').main.model, line)).toEqual([[...DESCENT, 'on_signal']]);
  });

  it('a fork child allocating inside pending calls: its trace has them all', () => {
    const child = (r: Ran) => [...r.traces.values()].find((t) => t !== r.main)!.model;
    const line = at('char *p = malloc(9);');
    expect(pathsAt(child(ran('all', 'fork')), line)).toEqual([DESCENT]);
    expect(pathsAt(child(ran('heap', 'fork')), line)).toEqual([DESCENT]);
  });

  it('counts a shallow call\'s summarised leaf in the peak stack after a deeper chain of calls', () => {
    const heap = ran('heap', 'reach');
    const deepest = Number(/^deepest (\d+)$/m.exec(heap.stdout)![1]);
    const peak = (r: Ran) => (reportJson(r.main.file) as { peakStack: { bytes: number } }).peakStack.bytes;
    const bound = (reportJson(heap.main.file) as { summarisedFunctions: { name: string; stackBytes: number }[] }).summarisedFunctions.find((f) => f.name === 'pad')!.stackBytes;
    expect(bound).toBeGreaterThanOrEqual(3000);
    expect(peak(heap)).toBeGreaterThanOrEqual(deepest);
    expect(peak(heap)).toBeLessThanOrEqual(peak(ran('all', 'reach')) + bound);
  });
});
