// The runtime under load and at the edges (test/programs/stress.c, one mode
// per test): every count below is worked out from the program's source, and
// every mode must print and end exactly as the plain build does.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { NONE, type Model } from '../../analysis/model.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { Kind } from '../../analysis/trace/format.js';
import { blocksAllocatedAt, eventLine, framesOf, lineOf } from '../support/model-queries.js';
import { buildInstrumented, buildPlain, must, programsDir, run, scratch, wrapper, type Ran } from '../support/programs.js';

const source = path.join(programsDir, 'stress.c');
const at = (text: string) => lineOf(source, text);
const dir = scratch('stress');
const plain = path.join(dir, 'plain');
const inst = path.join(dir, 'inst');
/** Every call recorded: at -O2 `down` is recursion without heap work, measured by default (and gcc makes it a loop). */
const instAll = path.join(dir, 'inst-all');

beforeAll(() => {
  const flags = ['-O2', '-g', '-pthread', '-Wall', '-Wextra', '-Werror'];
  buildPlain('gcc', flags, [source], plain);
  buildInstrumented('gcc', flags, [source], inst);
  must(wrapper, ['--mw-strict', '--mw-calls=all', 'gcc', ...flags, source, '-o', instAll]);
});

interface Traced {
  ran: Ran;
  /** Every trace the run left, keyed by the pid in its name. */
  traces: Map<number, Model>;
  model: Model;
}

/** Runs a mode plainly and instrumented (through `shell` if given, e.g. to
 *  set a ulimit); both must print and end alike. */
function traced(mode: string, shell?: string, exe = inst): Traced {
  const wrap = (exe: string) => (shell ? ['bash', ['-c', `${shell}; exec "$0" "$1"`, exe, mode]] : [exe, [mode]]) as [string, string[]];
  const a = run(...wrap(plain));
  const traceDir = scratch(`stress-${mode}`);
  const [command, args] = wrap(exe);
  const b = run(command, args, { env: { ...process.env, MEMWRAP_TRACE: path.join(traceDir, '%p.mwtrace') } });
  expect({ stdout: b.stdout, stderr: b.stderr, status: b.status, signal: b.signal }).toEqual({ stdout: a.stdout, stderr: a.stderr, status: a.status, signal: a.signal });
  const traces = new Map<number, Model>();
  for (const f of readdirSync(traceDir)) traces.set(Number(f.split('.')[0]), decodeTrace(readFileSync(path.join(traceDir, f))));
  for (const m of traces.values()) expect(m.problems.filter((p) => p.severity === 'error')).toEqual([]);
  const model = traces.get(b.pid);
  if (!model) throw new Error(`no trace of pid ${b.pid} among ${[...traces.keys()].join(', ')}`);
  return { ran: b, traces, model };
}

const freedAt = (model: Model, block: number) => eventLine(model, model.blocks.freeEvent[block]!);
const sizes = (model: Model, blocks: number[]) => [...new Set(blocks.map((b) => model.blocks.requested[b]!))];

describe('stress', () => {
  it('16 threads × 5,000 malloc, realloc and free, ending in pthread_exit', () => {
    const { ran, model } = traced('threads');
    expect(ran.stdout).toBe('16 threads done\n');
    expect(model.lostRecords).toBe(0);
    expect(model.threads).toHaveLength(17);
    const mallocs = blocksAllocatedAt(model, 'stress.c', at('char *p = malloc(24);'));
    const reallocs = blocksAllocatedAt(model, 'stress.c', at('q = realloc(p, 48);'));
    expect([mallocs.length, reallocs.length]).toEqual([80_000, 80_000]);
    expect([sizes(model, mallocs), sizes(model, reallocs)]).toEqual([[24], [48]]);
    // Each malloc'd block ends in the realloc (moved or resized in place),
    // each realloc'd one in the free; 5,000 of each kind per worker thread.
    expect(new Set(mallocs.map((b) => freedAt(model, b)))).toEqual(new Set([at('q = realloc(p, 48);')]));
    expect(new Set(reallocs.map((b) => freedAt(model, b)))).toEqual(new Set([at('free(q);')]));
    const perThread = new Map<number, number>();
    for (const b of reallocs) perThread.set(model.blocks.thread[b]!, (perThread.get(model.blocks.thread[b]!) ?? 0) + 1);
    expect([...perThread.values()]).toEqual(Array(16).fill(5_000));
    expect(perThread.has(0)).toBe(false);
    // pthread_exit from finish_thread: both open frames are closed.
    const exits = framesOf(model, 'finish_thread');
    expect(exits).toHaveLength(16);
    for (const f of [...exits, ...framesOf(model, 'churn')]) expect(model.frames.exit[f]).not.toBe(NONE);
    expect(model.threads.slice(1).every((t) => t.endEvent !== NONE)).toBe(true);
  });

  it('fork: the child that allocates and the child that execs each write their own trace', () => {
    const { ran, traces, model } = traced('fork');
    expect(ran.stdout).toBe('child exited 0\nrealloc to 0 gave NULL\nexec child exited 0\n');
    expect(traces.size).toBe(3);
    const childAllocs = (m: Model) => [...blocksAllocatedAt(m, 'stress.c', at('char *a = malloc(10)'))];
    expect(childAllocs(model)).toEqual([]);
    const children = [...traces.values()].filter((m) => m !== model);
    for (const child of children) expect(child.header.ppid).toBe(ran.pid);
    const [allocating, execd] = children.sort((x, y) => childAllocs(y).length - childAllocs(x).length);
    // One line allocates both blocks (10 and 20 bytes), both freed.
    const blocks = childAllocs(allocating!);
    expect(sizes(allocating!, blocks).sort()).toEqual([10, 20]);
    expect(blocks.every((b) => allocating!.blocks.freeEvent[b] !== NONE)).toBe(true);
    expect(allocating!.end).toMatchObject({ how: 'exit', code: 0 });
    // The exec'd program ran the "edges" mode from the start.
    expect(blocksAllocatedAt(execd!, 'stress.c', at('char *p = malloc(32);'))).toHaveLength(1);
  });

  it('a signal handler that allocates, 1,000 times', () => {
    const { ran, model } = traced('signal');
    expect(ran.stdout).toBe('handled 1000\n');
    const blocks = blocksAllocatedAt(model, 'stress.c', at('char *p = malloc(100);'));
    expect(blocks).toHaveLength(1_000);
    expect(new Set(blocks.map((b) => freedAt(model, b)))).toEqual(new Set([at('free(p); /* in the handler */')]));
    expect(framesOf(model, 'on_usr1')).toHaveLength(1_000);
    expect(model.lostRecords).toBe(0);
  });

  it('longjmp out of 10,000 levels of recursion', () => {
    const { ran, model } = traced('longjmp');
    expect(ran.stdout).toBe('back from 10000 levels\n');
    const blocks = blocksAllocatedAt(model, 'stress.c', at('kept[level] = malloc(8);'));
    expect(blocks).toHaveLength(10_000);
    expect(new Set(blocks.map((b) => freedAt(model, b)))).toEqual(new Set([at('for (i = 0; i < LEVELS; i++) free(kept[i]);')]));
    const frames = framesOf(model, 'descend');
    expect(frames).toHaveLength(10_000);
    // The jump closes every level at once; the frees that follow are made at
    // the depth of jumps()'s own frame.
    const closers = new Set(frames.map((f) => model.events.kind[model.frames.exit[f]!]));
    expect(closers).toEqual(new Set([Kind.UNWIND]));
    const jumpsFrame = framesOf(model, 'jumps')[0]!;
    const firstFree = model.blocks.freeEvent[blocks[0]!]!;
    expect(model.events.stack[firstFree]).toBe(model.frames.depth[jumpsFrame]);
  });

  it('recursion 100,000 deep', () => {
    const { ran, model } = traced('deep', undefined, instAll);
    expect(ran.stdout).toBe('depth 100000\n');
    const frames = framesOf(model, 'down');
    expect(frames).toHaveLength(100_001);
    const deepest = model.frames.depth[frames[100_000]!]! - model.frames.depth[frames[0]!]!;
    // 16 bytes of pad, a return address and the frame record at least.
    expect(deepest).toBeGreaterThanOrEqual(100_000 * 32);
    for (const f of frames) expect(model.events.kind[model.frames.exit[f]!]).toBe(Kind.EXIT);
  });

  it('a 1 GiB block', () => {
    const { ran, model } = traced('huge');
    expect(ran.stdout).toBe('touched 3\n');
    const [block, ...more] = blocksAllocatedAt(model, 'stress.c', at('char *p = malloc(n);'));
    expect(more).toEqual([]);
    expect(model.blocks.requested[block!]).toBe(2 ** 30);
    expect(model.blocks.usable[block!]).toBeGreaterThanOrEqual(2 ** 30);
    expect(model.blocks.freeEvent[block!]).not.toBe(NONE);
  });

  it('malloc returning NULL under an address-space limit', () => {
    const { ran, model } = traced('oom', 'ulimit -v 1048576');
    expect(ran.stdout).toBe('NULL\n');
    // A failed malloc makes no block, and the free(NULL) after it frees none.
    expect(blocksAllocatedAt(model, 'stress.c', at('void *p = malloc((size_t)1 << 31);'))).toEqual([]);
    expect(model.untrackedFrees.count).toBe(0);
    expect(model.end).toMatchObject({ how: 'exit', code: 0 });
  });

  it('realloc to 0 frees, free(NULL) is nothing', () => {
    const { ran, model } = traced('edges');
    expect(ran.stdout).toBe('realloc to 0 gave NULL\n');
    const [block, ...more] = blocksAllocatedAt(model, 'stress.c', at('char *p = malloc(32);'));
    expect(more).toEqual([]);
    expect(freedAt(model, block!)).toBe(at('void *r = realloc(p, 0);'));
    expect(model.events.kind[model.blocks.freeEvent[block!]!]).toBe(Kind.REALLOC);
    expect(model.untrackedFrees.count).toBe(0);
  });

  it('quick_exit: the at_quick_exit handler is recorded, then the run ends with its status', () => {
    const { ran, model } = traced('quick');
    expect({ stdout: ran.stdout, status: ran.status }).toEqual({ stdout: 'handler ran\n', status: 5 });
    const [block, ...more] = blocksAllocatedAt(model, 'stress.c', at('char *p = malloc(50);'));
    expect(more).toEqual([]);
    expect(freedAt(model, block!)).toBe(at('free(p); /* at quick exit */'));
    expect(model.end).toMatchObject({ how: 'exit', code: 5, complete: true });
  });

  it.each([
    ['double', 'free(): double free detected in tcache 2', 'free(p); /* the second time */', 'char *volatile p = malloc(40);'],
    ['badfree', 'free(): invalid pointer', 'free(p); /* not a heap block */', null],
  ] as const)('%s: glibc aborts as it does without cc-memwrap; the trace keeps the untracked free', (mode, message, badFree, allocation) => {
    const { ran, model } = traced(mode);
    expect(ran.signal).toBe('SIGABRT');
    expect(ran.stderr).toContain(message);
    expect(model.end).toMatchObject({ how: 'signal', code: 6 });
    expect(model.untrackedFrees.count).toBe(1);
    expect(eventLine(model, model.untrackedFrees.event[0]!)).toBe(at(badFree));
    if (allocation) {
      const [block] = blocksAllocatedAt(model, 'stress.c', at(allocation));
      expect(model.blocks.freeEvent[block!]).not.toBe(NONE);
    }
  });
});

