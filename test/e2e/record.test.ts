// What a trace holds, checked against the observations the sample programs
// promise in their comments: linked frees, stack depths, threads.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { NONE, type Model } from '../../analysis/model.js';
import { siteInfo } from '../../analysis/sites.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { Kind, SiteKind } from '../../analysis/trace/format.js';
import { blocksAllocatedAt, framesOf } from '../support/model-queries.js';
import { buildInstrumented, programsDir, run, runTraced, samplesDir, scratch, traceOf } from '../support/programs.js';

function traceModel(source: string, flags: string[], args: string[] = []): { model: Model; stdout: string } {
  const dir = scratch(path.basename(source, '.c'));
  const exe = path.join(dir, 'prog');
  buildInstrumented('gcc', ['-O0', '-g', '-pthread', ...flags], [source], exe);
  const ran = runTraced(exe, args, dir);
  expect(ran.status).toBe(0);
  const model = decodeTrace(readFileSync(traceOf(dir, ran.pid)));
  expect(model.problems.filter((p) => p.severity === 'error')).toEqual([]);
  return { model, stdout: ran.stdout };
}

/** Line of the block's allocation site (user code only). */
function allocLine(model: Model, block: number): number | null {
  return siteInfo(model, model.blocks.site[block]!)?.line ?? null;
}


describe('the three-node list of the published design', () => {
  let model: Model;
  beforeAll(() => {
    model = traceModel(path.join(samplesDir, 'linked-list.c'), []).model;
  });

  it('records the three allocations at their lines', () => {
    for (const line of [31, 32, 33]) expect(blocksAllocatedAt(model, 'linked-list.c', line)).toHaveLength(1);
  });

  it('the middle free releases the block from line 32 and links the one from line 33', () => {
    const [middle] = blocksAllocatedAt(model, 'linked-list.c', 32);
    const freeEvent = model.blocks.freeEvent[middle!]!;
    expect(freeEvent).not.toBe(NONE);
    expect(siteInfo(model, model.events.site[freeEvent]!)).toMatchObject({ line: 38, kind: SiteKind.FREE });
    const set = [...Array(model.linked.count).keys()].find((i) => model.linked.event[i] === freeEvent);
    expect(set).toBeDefined();
    const linked = Array.from(model.linked.blocks.subarray(model.linked.start[set!]!, model.linked.start[set! + 1]!));
    expect(linked.map((b) => allocLine(model, b))).toEqual([33]);
    expect(model.linked.partial[set!]).toBe(0);
  });

  it('leaves the first and the orphaned third node allocated at exit', () => {
    const live = [31, 32, 33].filter((line) => blocksAllocatedAt(model, 'linked-list.c', line).some((b) => model.blocks.freeEvent[b] === NONE));
    expect(live).toEqual([31, 33]);
  });
});

describe('recursion with a 256-byte local buffer', () => {
  it('grows the stack by at least 256 bytes a level and returns to where it began', () => {
    const { model } = traceModel(path.join(samplesDir, 'recursion.c'), []);
    const depthFrames = framesOf(model, 'depth');
    // depth(50) then depth(25): 51 + 26 frames.
    expect(depthFrames).toHaveLength(51 + 26);
    const first = depthFrames.slice(0, 51).map((f) => model.frames.depth[f]!);
    for (let i = 1; i < first.length; i++) expect(first[i]! - first[i - 1]!).toBeGreaterThanOrEqual(256);
    expect(first[50]! - first[0]!).toBeGreaterThanOrEqual(50 * 256);
    // Every one of those frames was closed by an EXIT, and after the last one
    // the thread's stack is back at the depth of main's frame.
    for (const f of depthFrames) expect(model.events.kind[model.frames.exit[f]!]).toBe(Kind.EXIT);
    const outer = model.frames.exit[depthFrames[0]!]!;
    const mainFrame = model.frames.parent[depthFrames[0]!]!;
    expect(model.events.stack[outer]).toBe(model.frames.depth[mainFrame]);
    // and the second recursion starts exactly where the first one did.
    expect(model.frames.depth[depthFrames[51]!]).toBe(first[0]);
  });
});

describe('8 threads × 100,000 allocations and frees', () => {
  it('loses and duplicates nothing', () => {
    const { model, stdout } = traceModel(path.join(programsDir, 'threads.c'), []);
    expect(stdout).toBe('done 8 threads\n');
    expect(model.lostRecords).toBe(0);
    const workerBlocks = blocksAllocatedAt(model, "threads.c", 23);
    expect(workerBlocks).toHaveLength(800_000);
    const perThread = new Map<number, number>();
    const ids = new Set<number>();
    let freedByWorker = 0;
    let freedByMain = 0;
    for (const b of workerBlocks) {
      perThread.set(model.blocks.thread[b]!, (perThread.get(model.blocks.thread[b]!) ?? 0) + 1);
      ids.add(model.blocks.id[b]!);
      const free = model.blocks.freeEvent[b]!;
      expect(free).not.toBe(NONE);
      const line = siteInfo(model, model.events.site[free]!)?.line;
      if (line === 26) freedByWorker++;
      else if (line === 41) freedByMain++;
    }
    expect(ids.size).toBe(800_000);
    expect([...perThread.values()]).toEqual(Array(8).fill(100_000));
    expect(freedByWorker).toBe(800_000 - 8_000);
    expect(freedByMain).toBe(8_000);
    expect(model.threads).toHaveLength(9);
    // A FREE recorded twice would only be a decoder warning and a free of no live block: count them outright.
    let freesAtTheirLines = 0;
    let untrackedFrees = 0;
    for (let i = 0; i < model.events.count; i++) {
      if (model.events.kind[i] !== Kind.FREE) continue;
      if (model.events.oldBlock[i] === NONE) untrackedFrees++;
      const line = siteInfo(model, model.events.site[i]!)?.line;
      if (line === 26 || line === 41) freesAtTheirLines++;
    }
    expect(freesAtTheirLines).toBe(800_000);
    expect(untrackedFrees).toBe(0);
    expect(model.problems).toEqual([]);
  });
});

describe('static objects', () => {
  it('registers file-scope objects and static locals with their sizeof', () => {
    const { model } = traceModel(path.join(programsDir, 'heap-calls.c'), []);
    const statics = new Map<string, number>();
    for (let i = 0; i < model.statics.count; i++) {
      const info = siteInfo(model, model.statics.site[i]!);
      statics.set(`${info?.func ?? '?'}:${info?.name ?? '?'}`, model.statics.size[i]!);
    }
    expect(statics).toEqual(new Map([[':counter_name', 32], [':calls', 4]]));
    expect(model.statics.totalBytes).toBe(36);

    const threads = traceModel(path.join(programsDir, 'threads.c'), []).model;
    const work = [...Array(threads.statics.count).keys()].map((i) => ({ info: siteInfo(threads, threads.statics.site[i]!), size: threads.statics.size[i]! }));
    // static struct work work[8] inside main: 8 × (int + 1000 pointers), padded.
    expect(work).toEqual([{ info: expect.objectContaining({ func: 'main', name: "work", line: 33 }), size: 8 * (8 + 1000 * 8) }]);
  });
});

describe('where traces go', () => {
  const dir = scratch('trace-files');
  const exe = path.join(dir, 'linked-list');
  beforeAll(() => {
    buildInstrumented('gcc', ['-O0'], [path.join(samplesDir, 'linked-list.c')], exe);
  });

  it('defaults to <program>.<pid>.mwtrace in the working directory', () => {
    const ran = run(exe, [], { cwd: dir, env: { ...process.env, MEMWRAP_TRACE: '' } });
    expect(ran.status).toBe(0);
    expect(readdirSync(dir)).toContain(`linked-list.${ran.pid}.mwtrace`);
  });

  it('never overwrites an earlier trace at a fixed path', () => {
    const fixed = path.join(dir, 'fixed.mwtrace');
    const env = { ...process.env, MEMWRAP_TRACE: fixed };
    run(exe, [], { env });
    run(exe, [], { env });
    const names = readdirSync(dir).filter((f) => f.startsWith('fixed'));
    expect(names.sort()).toEqual(['fixed-1.mwtrace', 'fixed.mwtrace']);
    for (const name of names) expect(decodeTrace(readFileSync(path.join(dir, name))).end.complete).toBe(true);
  });

  it('runs unrecorded, saying so in one line, where the trace cannot be written', () => {
    const ran = run(exe, [], { env: { ...process.env, MEMWRAP_TRACE: '/nonexistent-dir/x.mwtrace' } });
    expect(ran.status).toBe(0);
    expect(ran.stdout).toBe('first=1 second=4\n');
    expect(ran.stderr.trim().split('\n')).toHaveLength(1);
    expect(ran.stderr).toMatch(/nonexistent-dir.*unrecorded/);
  });
});
