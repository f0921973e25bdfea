// What was live at the peaks of a run: the heap blocks live at the heap peak and at the total (heap + stack + static) peak, grouped by allocation site and by function.
import type { GroupRef } from './block-groups.js';
import type { EventFold, FoldBlocks, FoldEvent, FoldTables, TimeTicket, TraceStart } from './event-fold.js';
import { GroupIndex, grown } from './group-index.js';
import { foldModel, modelStart } from './model-fold.js';
import { NONE, type Model } from './model.js';
import { Kind } from './trace/format.js';

/** One group of the blocks live at a peak: its identity and labels (`GroupRef`, see block-groups.ts), and: */
export interface PeakGroup extends GroupRef {
  /** Live blocks of the group at the peak and their requested bytes. */
  blocks: number;
  bytes: number;
  /** `bytes` divided by the snapshot's `peakBytes` (0 when that is 0). */
  share: number;
}

export type PeakKind = 'heap' | 'total';

/** The live heap at one peak. */
export interface PeakSnapshot {
  kind: PeakKind;
  /** The first event reaching the peak (index in the global order), or null if the value never rose above 0. */
  event: number | null;
  /** Nanoseconds since the start, or null. */
  timeNs: number | null;
  /** The peak's value: heap requested bytes ('heap'), or heap + stack + static bytes ('total'). */
  peakBytes: number;
  /** Its parts after that event: live heap (requested), stack summed over threads, static objects registered so far. */
  heapBytes: number;
  stackBytes: number;
  staticBytes: number;
  /** Heap blocks live after that event. */
  liveBlocks: number;
  /** Groups by allocation site and by function, by bytes descending, then blocks, then label. */
  bySite: PeakGroup[];
  byFunction: PeakGroup[];
}

export interface Peaks {
  heap: PeakSnapshot;
  total: PeakSnapshot;
}

function byBytes(a: PeakGroup, b: PeakGroup): number {
  return b.bytes - a.bytes || b.blocks - a.blocks || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0);
}

const HEAP = 0;
const TOTAL = 1;

/**
 * The grouped live heap at the latest maximum of one peak value, kept exact in one pass: the groups whose blocks
 * changed since that maximum are marked, and only they are copied from the running state when a new maximum comes.
 */
class PeakState {
  best = 0;
  event = NONE;
  /** The event's time: a streaming reader may learn it later (FoldTables.timeOf). */
  time: TimeTicket | null = null;
  heapBytes = 0;
  stackBytes = 0;
  staticBytes = 0;
  liveBlocks = 0;
  /** Per group at the maximum: live blocks, their requested bytes, the row of the first of them (the tie-break). */
  blocks: number[] = [];
  bytes: number[] = [];
  first: number[] = [];
  dirty = new Uint8Array(64);
  dirtyList = new Int32Array(64);
  dirtyCount = 0;

  mark(g: number): void {
    if (this.dirty[g] === 1) return;
    this.dirty[g] = 1;
    this.dirtyList[this.dirtyCount++] = g;
  }
}

/**
 * The heap peak (largest `heapRequested`, first event reaching it) and the total peak (largest heap + stack summed over
 * threads + static bytes registered so far), each with the blocks live after that event grouped by allocation site and
 * by function (the innermost instrumented frame open at the allocation; for interposed blocks, their attributed frame).
 * One pass; memory grows with the live blocks and the groups. A new maximum asks for its event's time (a ticket).
 */
export class PeakFold implements EventFold {
  private readonly index: GroupIndex;
  private statics = 0;
  private live = 0;
  /** Per block handle: its site group and function group. */
  private siteOf = new Int32Array(64);
  private functionOf = new Int32Array(64);
  // Each group's live blocks as a list in creation order (links per handle, one pair of lists per grouping), so that
  // the first of them is known at any maximum.
  private siteNext = new Int32Array(64);
  private sitePrev = new Int32Array(64);
  private functionNext = new Int32Array(64);
  private functionPrev = new Int32Array(64);
  private head = new Int32Array(64);
  private tail = new Int32Array(64);
  /** Per group now: live blocks and their requested bytes. */
  private blocks: number[] = [];
  private bytes: number[] = [];
  private readonly peaks = [new PeakState(), new PeakState()];

  constructor(start: TraceStart) {
    this.index = new GroupIndex(start);
  }

  event(e: FoldEvent, tables: FoldTables): void {
    const kind = e.kind;
    if (kind === Kind.ALLOC || kind === Kind.FREE || kind === Kind.REALLOC) {
      if (e.oldBlock !== NONE) this.end(e.oldBlock, tables.blocks);
      if (e.newBlock !== NONE) this.begin(e.newBlock, tables.blocks);
    } else if (kind === Kind.STATIC) {
      this.statics += e.value;
    }
    const heap = e.heapRequested;
    let time: TimeTicket | null = null;
    if (heap > this.peaks[HEAP]!.best) this.reach(this.peaks[HEAP]!, heap, e, (time = tables.timeOf(e)), tables.blocks);
    const total = heap + e.stackTotal + this.statics;
    if (total > this.peaks[TOTAL]!.best) this.reach(this.peaks[TOTAL]!, total, e, time ?? tables.timeOf(e), tables.blocks);
  }

  private group(g: number): void {
    if (g < this.blocks.length) return;
    this.blocks.push(0);
    this.bytes.push(0);
    this.head = grown(this.head, g + 1, NONE);
    this.tail = grown(this.tail, g + 1, NONE);
    this.head[g] = NONE;
    this.tail[g] = NONE;
    for (const p of this.peaks) {
      p.blocks.push(0);
      p.bytes.push(0);
      p.first.push(NONE);
      p.dirty = grown(p.dirty, g + 1);
      p.dirtyList = grown(p.dirtyList, g + 1);
    }
  }

  private begin(h: number, blocks: FoldBlocks): void {
    const s = this.index.siteGroup(blocks, h);
    this.group(s);
    const f = this.index.functionGroup(blocks, h);
    this.group(f);
    if (h >= this.siteOf.length) {
      const n = h + 1;
      this.siteOf = grown(this.siteOf, n);
      this.functionOf = grown(this.functionOf, n);
      this.siteNext = grown(this.siteNext, n);
      this.sitePrev = grown(this.sitePrev, n);
      this.functionNext = grown(this.functionNext, n);
      this.functionPrev = grown(this.functionPrev, n);
    }
    this.siteOf[h] = s;
    this.functionOf[h] = f;
    this.append(s, h, this.siteNext, this.sitePrev);
    this.append(f, h, this.functionNext, this.functionPrev);
    this.change(s, f, 1, blocks.requested[h]!);
  }

  private end(h: number, blocks: FoldBlocks): void {
    const s = this.siteOf[h]!;
    const f = this.functionOf[h]!;
    this.unlink(s, h, this.siteNext, this.sitePrev);
    this.unlink(f, h, this.functionNext, this.functionPrev);
    this.change(s, f, -1, -blocks.requested[h]!);
  }

  private change(s: number, f: number, blocks: number, bytes: number): void {
    this.live += blocks;
    this.blocks[s]! += blocks;
    this.bytes[s]! += bytes;
    this.blocks[f]! += blocks;
    this.bytes[f]! += bytes;
    for (const p of this.peaks) {
      p.mark(s);
      p.mark(f);
    }
  }

  private append(g: number, h: number, next: Int32Array, prev: Int32Array): void {
    const t = this.tail[g]!;
    prev[h] = t;
    next[h] = NONE;
    if (t === NONE) this.head[g] = h;
    else next[t] = h;
    this.tail[g] = h;
  }

  private unlink(g: number, h: number, next: Int32Array, prev: Int32Array): void {
    const p = prev[h]!;
    const n = next[h]!;
    if (p === NONE) this.head[g] = n;
    else next[p] = n;
    if (n === NONE) this.tail[g] = p;
    else prev[n] = p;
  }

  /** A new maximum: the groups changed since the last one are copied into the snapshot. */
  private reach(p: PeakState, value: number, e: FoldEvent, time: TimeTicket, blocks: FoldBlocks): void {
    p.best = value;
    p.event = e.index;
    p.time = time;
    p.heapBytes = e.heapRequested;
    p.stackBytes = e.stackTotal;
    p.staticBytes = this.statics;
    p.liveBlocks = this.live;
    for (let i = 0; i < p.dirtyCount; i++) {
      const g = p.dirtyList[i]!;
      p.dirty[g] = 0;
      p.blocks[g] = this.blocks[g]!;
      p.bytes[g] = this.bytes[g]!;
      const first = this.head[g]!;
      p.first[g] = first === NONE ? NONE : blocks.row[first]!;
    }
    p.dirtyCount = 0;
  }

  private snapshot(kind: PeakKind, p: PeakState): PeakSnapshot {
    const reached = p.event !== NONE;
    const peakBytes = !reached ? 0 : kind === 'heap' ? p.heapBytes : p.heapBytes + p.stackBytes + p.staticBytes;
    const bySite: { group: PeakGroup; first: number }[] = [];
    const byFunction: { group: PeakGroup; first: number }[] = [];
    if (reached) {
      this.index.refs.forEach((ref, g) => {
        if (p.blocks[g] === 0) return;
        const bytes = p.bytes[g]!;
        const group: PeakGroup = { ...ref, blocks: p.blocks[g]!, bytes, share: peakBytes > 0 ? bytes / peakBytes : 0 };
        (ref.key === 'none' || ref.key.startsWith('function:') ? byFunction : bySite).push({ group, first: p.first[g]! });
      });
    }
    // Groups that tie come in the order of their first live block, as a walk over the blocks meets them.
    const sorted = (rows: { group: PeakGroup; first: number }[]): PeakGroup[] =>
      rows.sort((a, b) => byBytes(a.group, b.group) || a.first - b.first).map((r) => r.group);
    return {
      kind,
      event: reached ? p.event : null,
      timeNs: reached ? p.time!.time : null,
      peakBytes,
      heapBytes: reached ? p.heapBytes : 0,
      stackBytes: reached ? p.stackBytes : 0,
      staticBytes: reached ? p.staticBytes : 0,
      liveBlocks: reached ? p.liveBlocks : 0,
      bySite: sorted(bySite),
      byFunction: sorted(byFunction),
    };
  }

  /** Both snapshots; after the last event. */
  result(): Peaks {
    return { heap: this.snapshot('heap', this.peaks[HEAP]!), total: this.snapshot('total', this.peaks[TOTAL]!) };
  }
}

/** The heap and total peaks of a decoded model (see `PeakFold`). */
export function peaks(model: Model): Peaks {
  const fold = new PeakFold(modelStart(model));
  foldModel(model, [fold]);
  return fold.result();
}

/** A snapshot with its group lists cut to the first `top` (for reports); `sites` and `functions` keep the full counts. */
export function limitSnapshot(s: PeakSnapshot, top: number): PeakSnapshot & { sites: number; functions: number } {
  const n = Math.max(0, top);
  return { ...s, sites: s.bySite.length, functions: s.byFunction.length, bySite: s.bySite.slice(0, n), byFunction: s.byFunction.slice(0, n) };
}

/**
 * The text of line `line` (1-based) of `file`, trimmed, or null when the reader has no such file or the file no such
 * line. `readSource` does the I/O (node:fs in the CLI, anything in a browser); this stays pure.
 */
export function sourceLineText(readSource: (file: string) => string | null, file: string | null, line: number | null): string | null {
  if (file === null || line === null || !Number.isInteger(line) || line < 1) return null;
  let text: string | null;
  try {
    text = readSource(file);
  } catch {
    return null;
  }
  if (text === null) return null;
  let start = 0;
  for (let n = 1; n < line; n++) {
    const nl = text.indexOf('\n', start);
    if (nl < 0) return null;
    start = nl + 1;
  }
  if (start >= text.length && line > 1) return null;
  const end = text.indexOf('\n', start);
  return text.slice(start, end < 0 ? text.length : end).replace(/\r$/, '').trim();
}
