// Decodes a trace into the columnar Model: a fold (ModelFold) over the streaming resolver (resolve-stream.ts) that
// writes every event, block and frame it is told into columns, so the model holds exactly what every other reader sees.
import { Flag, Kind } from './format.js';
import { memorySource, type ByteSource } from './byte-source.js';
import { grown } from './typed-arrays.js';
import { streamSource, timeBetween } from './resolve-stream.js';
import { NONE, type BlockTable, type BranchTable, type CallPath, type EventTable, type FrameTable, type Model, type StaticTable } from '../model.js';
import type { EventFold, FoldEvent, FoldTables, TraceEnd, TraceStart } from '../event-fold.js';

export { TraceRefusedError } from './header.js';

export interface DecodeOptions {
  /** Called now and then with the fraction done (0…1) and what is being done. */
  onProgress?: (fraction: number, phase: string) => void;
}

/** Decodes a whole trace. Throws TraceRefusedError if the file is not a readable trace; never throws after the header. */
export function decodeTrace(input: Uint8Array | ByteSource, options: DecodeOptions = {}): Model {
  const bytes = input instanceof Uint8Array ? memorySource(input) : input;
  let fold: ModelFold | null = null;
  streamSource(bytes, { twoPasses: true, ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }) }).run((start) => [(fold = new ModelFold(start))]);
  options.onProgress?.(1, 'done');
  return fold!.result();
}

/** One thread's clock as the model places its events: the events since its latest reading, and that reading. */
interface ThreadTimes {
  /** Rows of the events since the latest TIME record (`pending[0 .. count)`). */
  pending: Int32Array;
  count: number;
  /** The latest reading, and whether there was one. */
  last: number;
  seen: boolean;
  /** The thread's latest event (NONE: none yet): where its branch outcomes are placed. */
  lastEvent: number;
  /** Rows of its open frames, innermost last: the frames an UNWIND or THREAD_END closes. */
  open: number[];
}

/**
 * The fold that keeps everything: every event as a row of the event columns (sized once, from the event count the
 * reader gives first), every block and frame as a row of theirs (grown as they come), the statics, linked sets,
 * untracked frees, call paths and branch outcomes, each event's time placed between its thread's clock readings.
 */
export class ModelFold implements EventFold {
  readonly needsEventCount = true;
  private readonly E: EventTable;
  private B: BlockTable;
  private F: FrameTable;
  private readonly statics = { site: [] as number[], address: [] as number[], size: [] as number[], event: [] as number[], totalBytes: 0 };
  private readonly linked = { event: [] as number[], start: [0], blocks: [] as number[], partial: [] as number[] };
  private readonly untracked = { event: [] as number[], address: [] as number[] };
  private readonly paths: CallPath[] = [];
  private readonly pathIndex = new Map<CallPath, number>();
  private readonly ofEvent = new Map<number, number>();
  private branches: BranchTable = { count: 0, after: new Int32Array(64), thread: new Uint32Array(64), site: new Uint32Array(64), taken: new Uint8Array(64) };
  private readonly threads: ThreadTimes[] = [];
  private model: Model | null = null;

  constructor(private readonly start: TraceStart) {
    this.E = eventTable(Math.max(0, start.events));
    this.B = blockTable(Math.max(64, start.blocks));
    this.F = frameTable(Math.max(64, start.frames));
    for (let t = 0; t < start.threads; t++) this.threads.push({ pending: new Int32Array(64), count: 0, last: 0, seen: false, lastEvent: NONE, open: [] });
  }

  event(e: FoldEvent, tables: FoldTables): void {
    const i = e.index;
    const E = this.E;
    const t = this.threads[e.thread]!;
    const frame = e.frame === NONE ? NONE : tables.frames.row[e.frame]!;
    E.kind[i] = e.kind;
    E.flags[i] = e.flags;
    E.thread[i] = e.thread;
    E.site[i] = e.site;
    E.value[i] = e.value;
    E.frame[i] = frame;
    E.stack[i] = e.stack;
    E.stackTotal[i] = e.stackTotal;
    E.heapRequested[i] = e.heapRequested;
    E.heapUsable[i] = e.heapUsable;
    E.library[i] = e.library;
    E.time[i] = t.last;
    if (t.count === t.pending.length) t.pending = grown(t.pending, t.count + 1);
    t.pending[t.count++] = i;
    t.lastEvent = i;
    E.oldBlock[i] = e.oldBlock === NONE ? NONE : this.endBlock(e.oldBlock, i, tables);
    E.newBlock[i] = e.newBlock === NONE ? NONE : this.newBlock(e.newBlock, tables);
    if (frame !== NONE) this.frames(e, frame, t, tables);
    if (e.kind === Kind.THREAD_END) this.close(t, t.open.length, i);
    if (e.kind === Kind.STATIC) this.staticObject(e);
    if (e.kind === Kind.FREE && (e.flags & Flag.FREE_UNTRACKED) !== 0) {
      this.untracked.event.push(i);
      this.untracked.address.push(e.untrackedAddress);
    }
    if (e.callPath !== null) this.callPath(i, e.callPath);
    if (e.linked !== null) this.linkedSet(e, tables);
  }

  /** Frames opened (ENTER) and closed (EXIT: one, UNWIND: down to the outermost it names). */
  private frames(e: FoldEvent, frame: number, t: ThreadTimes, tables: FoldTables): void {
    const F = this.F;
    if (e.kind === Kind.ENTER && frame === F.count) {
      const h = e.frame;
      if (F.count === F.thread.length) this.F = growFrames(F, 2 * F.count);
      const G = this.F;
      const parent = tables.frames.parent[h]!;
      G.thread[frame] = e.thread;
      G.enter[frame] = e.index;
      G.exit[frame] = NONE;
      G.entrySite[frame] = e.site;
      G.exitSite[frame] = 0;
      G.depth[frame] = tables.frames.depth[h]!;
      G.parent[frame] = parent === NONE ? NONE : tables.frames.row[parent]!;
      G.count++;
      t.open.push(frame);
    } else if (e.kind === Kind.EXIT) {
      this.close(t, 1, e.index);
      F.exitSite[frame] = e.site;
    } else if (e.kind === Kind.UNWIND) {
      const at = t.open.lastIndexOf(frame);
      if (at >= 0) this.close(t, t.open.length - at, e.index);
    }
  }

  /** Closes the thread's `count` innermost open frames at event `i`. */
  private close(t: ThreadTimes, count: number, i: number): void {
    for (let k = 0; k < count && t.open.length > 0; k++) this.F.exit[t.open.pop()!] = i;
  }

  private newBlock(h: number, tables: FoldTables): number {
    const src = tables.blocks;
    const b = src.row[h]!;
    if (b >= this.B.id.length) this.B = growBlocks(this.B, Math.max(2 * this.B.id.length, b + 1));
    const B = this.B;
    B.id[b] = src.id[h]!;
    B.allocEvent[b] = src.allocEvent[h]!;
    B.freeEvent[b] = NONE;
    B.requested[b] = src.requested[h]!;
    B.usable[b] = src.usable[h]!;
    B.address[b] = src.address[h]!;
    B.site[b] = src.site[h]!;
    B.fn[b] = src.fn[h]!;
    B.thread[b] = src.thread[h]!;
    B.interposed[b] = src.interposed[h]!;
    B.library[b] = src.library[h]!;
    if (b >= B.count) B.count = b + 1;
    return b;
  }

  private endBlock(h: number, i: number, tables: FoldTables): number {
    const b = tables.blocks.row[h]!;
    this.B.freeEvent[b] = i;
    return b;
  }

  private staticObject(e: FoldEvent): void {
    const s = this.statics;
    s.site.push(e.site);
    s.address.push(e.staticAddress);
    s.size.push(e.value);
    s.event.push(e.index);
    s.totalBytes += e.value;
  }

  private callPath(i: number, path: CallPath): void {
    let k = this.pathIndex.get(path);
    if (k === undefined) this.pathIndex.set(path, (k = this.paths.push(path) - 1));
    this.ofEvent.set(i, k);
  }

  private linkedSet(e: FoldEvent, tables: FoldTables): void {
    const L = this.linked;
    for (const h of e.linked!) L.blocks.push(tables.blocks.row[h]!);
    L.event.push(e.index);
    L.partial.push(e.linkedPartial ? 1 : 0);
    L.start.push(L.blocks.length);
  }

  /** The thread's events since its previous reading, placed evenly between the two (all at this one before the first). */
  clock(thread: number, now: number): void {
    const t = this.threads[thread];
    if (t === undefined) return;
    const time = this.E.time;
    const k = t.count;
    if (!t.seen) {
      for (let j = 0; j < k; j++) time[t.pending[j]!] = now;
    } else {
      for (let j = 0; j < k; j++) time[t.pending[j]!] = timeBetween(t.last, now, j, k);
    }
    t.count = 0;
    t.last = now;
    t.seen = true;
  }

  branch(thread: number, site: number, taken: number): void {
    let b = this.branches;
    if (b.count === b.after.length) {
      const n = 2 * b.count;
      b = this.branches = { count: b.count, after: grown(b.after, n), thread: grown(b.thread, n), site: grown(b.site, n), taken: grown(b.taken, n) };
    }
    const k = b.count++;
    b.after[k] = this.threads[thread]?.lastEvent ?? NONE;
    b.thread[k] = thread;
    b.site[k] = site;
    b.taken[k] = taken;
  }

  finish(end: TraceEnd, tables: FoldTables): void {
    const B = this.B;
    for (const h of end.liveBlocks) B.leakClass[tables.blocks.row[h]!] = tables.blocks.leakClass[h]!;
    const s = this.statics;
    const L = this.linked;
    const start = this.start;
    this.model = {
      header: start.header,
      program: start.program,
      rank: end.rank,
      libraries: start.libraries,
      callPaths: { paths: this.paths, ofEvent: this.ofEvent },
      events: this.E,
      blocks: trimBlocks(B),
      frames: trimFrames(this.F),
      sites: start.sites,
      statics: { count: s.event.length, site: Uint32Array.from(s.site), address: Float64Array.from(s.address), size: Float64Array.from(s.size), event: Int32Array.from(s.event), totalBytes: s.totalBytes } satisfies StaticTable,
      linked: { count: L.event.length, event: Int32Array.from(L.event), start: Int32Array.from(L.start), blocks: Int32Array.from(L.blocks), partial: Uint8Array.from(L.partial) },
      untrackedFrees: { count: this.untracked.event.length, event: Int32Array.from(this.untracked.event), address: Float64Array.from(this.untracked.address) },
      branches: sortBranches(this.branches, end.events),
      threads: end.threads,
      end: end.end,
      lostRecords: end.lostRecords,
      leakScan: end.leakScan,
      problems: end.problems,
    };
  }

  /** After `finish`. */
  result(): Model {
    if (this.model === null) throw new Error('ModelFold.result() before the pass finished');
    return this.model;
  }
}

/** The event table, `n` rows. */
function eventTable(n: number): EventTable {
  return {
    count: n,
    kind: new Uint8Array(n),
    flags: new Uint8Array(n),
    thread: new Uint32Array(n),
    site: new Uint32Array(n),
    time: new Float64Array(n),
    value: new Float64Array(n),
    newBlock: new Int32Array(n),
    oldBlock: new Int32Array(n),
    frame: new Int32Array(n),
    stack: new Float64Array(n),
    stackTotal: new Float64Array(n),
    heapRequested: new Float64Array(n),
    heapUsable: new Float64Array(n),
    library: new Int32Array(n),
  };
}

/** A block table with room for `n` blocks. */
function blockTable(n: number): BlockTable {
  return {
    count: 0,
    id: new Float64Array(n),
    allocEvent: new Int32Array(n),
    freeEvent: new Int32Array(n),
    requested: new Float64Array(n),
    usable: new Float64Array(n),
    address: new Float64Array(n),
    site: new Uint32Array(n),
    fn: new Uint8Array(n),
    thread: new Uint32Array(n),
    interposed: new Uint8Array(n),
    library: new Int32Array(n),
    leakClass: new Uint8Array(n).fill(255),
  };
}

function growBlocks(B: BlockTable, n: number): BlockTable {
  return {
    count: B.count,
    id: grown(B.id, n),
    allocEvent: grown(B.allocEvent, n),
    freeEvent: grown(B.freeEvent, n),
    requested: grown(B.requested, n),
    usable: grown(B.usable, n),
    address: grown(B.address, n),
    site: grown(B.site, n),
    fn: grown(B.fn, n),
    thread: grown(B.thread, n),
    interposed: grown(B.interposed, n),
    library: grown(B.library, n),
    leakClass: grown(B.leakClass, n, 255),
  };
}

/** The table cut to its rows (views, no copies). */
function trimBlocks(B: BlockTable): BlockTable {
  const n = B.count;
  return {
    count: n,
    id: B.id.subarray(0, n),
    allocEvent: B.allocEvent.subarray(0, n),
    freeEvent: B.freeEvent.subarray(0, n),
    requested: B.requested.subarray(0, n),
    usable: B.usable.subarray(0, n),
    address: B.address.subarray(0, n),
    site: B.site.subarray(0, n),
    fn: B.fn.subarray(0, n),
    thread: B.thread.subarray(0, n),
    interposed: B.interposed.subarray(0, n),
    library: B.library.subarray(0, n),
    leakClass: B.leakClass.subarray(0, n),
  };
}

/** A frame table with room for `n` frames. */
function frameTable(n: number): FrameTable {
  return {
    count: 0,
    thread: new Uint32Array(n),
    enter: new Int32Array(n),
    exit: new Int32Array(n),
    entrySite: new Uint32Array(n),
    exitSite: new Uint32Array(n),
    depth: new Float64Array(n),
    parent: new Int32Array(n),
  };
}

function growFrames(F: FrameTable, n: number): FrameTable {
  return {
    count: F.count,
    thread: grown(F.thread, n),
    enter: grown(F.enter, n),
    exit: grown(F.exit, n),
    entrySite: grown(F.entrySite, n),
    exitSite: grown(F.exitSite, n),
    depth: grown(F.depth, n),
    parent: grown(F.parent, n),
  };
}

function trimFrames(F: FrameTable): FrameTable {
  const n = F.count;
  return {
    count: n,
    thread: F.thread.subarray(0, n),
    enter: F.enter.subarray(0, n),
    exit: F.exit.subarray(0, n),
    entrySite: F.entrySite.subarray(0, n),
    exitSite: F.exitSite.subarray(0, n),
    depth: F.depth.subarray(0, n),
    parent: F.parent.subarray(0, n),
  };
}

/**
 * Branches into the order of their `after` event (a stable counting sort: each thread's branches keep their order, and
 * one `after` event belongs to one thread). Branches before any event of their thread (NONE) come first.
 */
function sortBranches(b: BranchTable, events: number): BranchTable {
  const n = b.count;
  const start = new Int32Array(events + 2);
  for (let k = 0; k < n; k++) start[b.after[k]! + 2]!++;
  for (let e = 1; e < start.length; e++) start[e]! += start[e - 1]!;
  const out: BranchTable = { count: n, after: new Int32Array(n), thread: new Uint32Array(n), site: new Uint32Array(n), taken: new Uint8Array(n) };
  for (let k = 0; k < n; k++) {
    const to = start[b.after[k]! + 1]!++;
    out.after[to] = b.after[k]!;
    out.thread[to] = b.thread[k]!;
    out.site[to] = b.site[k]!;
    out.taken[to] = b.taken[k]!;
  }
  return out;
}
