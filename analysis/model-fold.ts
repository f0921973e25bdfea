// Folds driven by a decoded Model: each event row read back as a FoldEvent, block and frame handles being their rows.
// The viewer decodes small traces whole and runs the same folds as the streaming report (event-fold.ts).
import { Flag, Kind } from './trace/format.js';
import { NONE, type Model } from './model.js';
import { eventCalls, type EventFold, type FoldBlocks, type FoldEvent, type FoldFrames, type FoldSource, type FoldTables, type TraceEnd, type TraceStart } from './event-fold.js';

/** The facts of a model known before its first event. */
export function modelStart(model: Model): TraceStart {
  return {
    header: model.header,
    program: model.program,
    libraries: model.libraries,
    sites: model.sites,
    ...(model.symbols === undefined ? {} : { symbols: model.symbols }),
    events: model.events.count,
    blocks: model.blocks.count,
    frames: model.frames.count,
    threads: model.threads.length,
  };
}

/** A fresh event object, every field at its "nothing" value. */
export function emptyEvent(): FoldEvent {
  return {
    index: 0,
    kind: 0,
    flags: 0,
    thread: 0,
    site: 0,
    time: 0,
    value: 0,
    newBlock: NONE,
    oldBlock: NONE,
    frame: NONE,
    stack: 0,
    stackTotal: 0,
    heapRequested: 0,
    heapUsable: 0,
    library: NONE,
    callPath: null,
    untrackedAddress: 0,
    staticAddress: 0,
    linked: null,
    linkedPartial: false,
  };
}

const identity = (n: number): Int32Array => {
  const a = new Int32Array(n);
  for (let i = 0; i < n; i++) a[i] = i;
  return a;
};

/** The model's blocks and frames as fold tables (handles = rows). */
export function modelTables(model: Model): FoldTables {
  const { blocks, events, frames } = model;
  const entry = new Uint32Array(blocks.count);
  for (let b = 0; b < blocks.count; b++) {
    const alloc = blocks.allocEvent[b]!;
    const frame = alloc < 0 ? NONE : events.frame[alloc]!;
    entry[b] = frame === NONE ? 0 : frames.entrySite[frame]!;
  }
  const foldBlocks: FoldBlocks = { ...blocks, row: identity(blocks.count), entry };
  const foldFrames: FoldFrames = { ...frames, row: identity(frames.count) };
  return { blocks: foldBlocks, frames: foldFrames, timeOf: (e) => ({ time: e.time }) };
}

/** The facts of a model after its last event. */
export function modelEnd(model: Model): TraceEnd {
  const liveBlocks: number[] = [];
  for (let b = 0; b < model.blocks.count; b++) if (model.blocks.freeEvent[b] === NONE) liveBlocks.push(b);
  return {
    events: model.events.count,
    rank: model.rank,
    threads: model.threads,
    end: model.end,
    lostRecords: model.lostRecords,
    leakScan: model.leakScan,
    problems: model.problems,
    blocksCreated: model.blocks.count,
    statics: { count: model.statics.count, totalBytes: model.statics.totalBytes },
    untrackedFrees: model.untrackedFrees.count,
    branches: model.branches.count,
    liveBlocks,
  };
}

/** Runs the folds over every event of the model, then finishes them. */
export function foldModel(model: Model, folds: EventFold[]): void {
  const tables = modelTables(model);
  const E = model.events;
  const e = emptyEvent();
  const handOut = eventCalls(folds);
  const untracked = new Map<number, number>();
  for (let k = 0; k < model.untrackedFrees.count; k++) untracked.set(model.untrackedFrees.event[k]!, model.untrackedFrees.address[k]!);
  const statics = new Map<number, number>();
  for (let s = 0; s < model.statics.count; s++) statics.set(model.statics.event[s]!, model.statics.address[s]!);
  const L = model.linked;
  const paths = model.callPaths;
  let nextLinked = 0;
  // Branch outcomes after their `after` event (those before any event of their thread first), to the folds that read them.
  const branchFolds = folds.filter((f) => f.branch !== undefined);
  const Br = model.branches;
  let nextBranch = branchFolds.length === 0 ? Br.count : 0;
  const branchesUpTo = (i: number): void => {
    for (; nextBranch < Br.count && Br.after[nextBranch]! <= i; nextBranch++) {
      for (const f of branchFolds) f.branch!(Br.thread[nextBranch]!, Br.site[nextBranch]!, Br.taken[nextBranch]!);
    }
  };
  branchesUpTo(-1);
  for (let i = 0; i < E.count; i++) {
    e.index = i;
    const kind = (e.kind = E.kind[i]!);
    e.flags = E.flags[i]!;
    e.thread = E.thread[i]!;
    e.site = E.site[i]!;
    e.time = E.time[i]!;
    e.value = E.value[i]!;
    e.newBlock = E.newBlock[i]!;
    e.oldBlock = E.oldBlock[i]!;
    e.frame = E.frame[i]!;
    e.stack = E.stack[i]!;
    e.stackTotal = E.stackTotal[i]!;
    e.heapRequested = E.heapRequested[i]!;
    e.heapUsable = E.heapUsable[i]!;
    e.library = E.library[i]!;
    const path = paths.ofEvent.size === 0 ? undefined : paths.ofEvent.get(i);
    e.callPath = path === undefined ? null : paths.paths[path]!;
    e.untrackedAddress = kind === Kind.FREE && (e.flags & Flag.FREE_UNTRACKED) !== 0 ? (untracked.get(i) ?? 0) : 0;
    e.staticAddress = kind === Kind.STATIC ? (statics.get(i) ?? 0) : 0;
    e.linked = null;
    e.linkedPartial = false;
    if (nextLinked < L.count && L.event[nextLinked] === i) {
      e.linked = Array.from(L.blocks.subarray(L.start[nextLinked]!, L.start[nextLinked + 1]!));
      e.linkedPartial = L.partial[nextLinked] === 1;
      nextLinked++;
    }
    handOut(e, tables);
    if (nextBranch < Br.count) branchesUpTo(i);
  }
  const end = modelEnd(model);
  for (const f of folds) f.finish?.(end, tables);
}

/** A decoded model as a fold source. */
export function modelSource(model: Model): FoldSource {
  return { run: (build) => (foldModel(model, build(modelStart(model))), modelEnd(model)) };
}
