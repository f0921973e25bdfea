// Heap per invocation of one function: for each frame of it, the net heap bytes its events (callees included) allocated minus freed, and the peak of that running net.
import type { EventFold, FoldEvent, FoldFrames, FoldTables, TraceStart } from './event-fold.js';
import { foldModel, modelStart } from './model-fold.js';
import { NONE, type Model } from './model.js';
import { siteInfo } from './sites.js';
import { Kind, SiteKind } from './trace/format.js';

export interface Invocation {
  /** Row in the frame table, its thread, and its ENTER event. */
  frame: number;
  thread: number;
  enterEvent: number;
  enterTimeNs: number;
  /** The EXIT, UNWIND or THREAD_END event that closed it; null: still open at the end of the run. */
  endEvent: number | null;
  /** Invocations of the same function enclosing this one on its thread (0: outermost; recursion goes deeper). */
  recursion: number;
  /** Requested bytes of the blocks its events created and ended, and their difference. */
  bytesAllocated: number;
  bytesFreed: number;
  netBytes: number;
  /** Highest running net (starts at 0, so never below 0) and the first event reaching it (null: never above 0). */
  peakBytes: number;
  peakEvent: number | null;
  /** Heap events (ALLOC, FREE, REALLOC that created or ended a block) inside it. */
  heapEvents: number;
}

export interface PerCall {
  function: string;
  /** The function's calls were written only with a record inside or at a new depth (a PENDING_CALLS site names it). */
  pending: boolean;
  /** In order of entry. */
  invocations: Invocation[];
  totals: {
    calls: number;
    /** Over outermost invocations only (recursion 0), so nested calls are not counted twice. */
    bytesAllocated: number;
    bytesFreed: number;
    netBytes: number;
    /** The largest peak of any invocation, and which (index into `invocations`; null without calls). */
    maxPeakBytes: number;
    maxPeakCall: number | null;
  };
}

/** An invocation still open, and its place in `invocations` (NONE: not kept). */
interface Open {
  inv: Invocation;
  index: number;
}

/**
 * Each invocation of `name` (frames whose entry site names it): the heap events on its thread after its ENTER up to its
 * closing event (or the end of the run), callees included. A fold: per thread the invocations open on it, each told
 * the thread's heap events, so O(events + heap events × open invocations on the thread) (recursion). The first
 * `keepCalls` invocations are kept (default: all); the totals count every one.
 */
export class PerCallFold implements EventFold {
  /** An invocation's entry time. */
  readonly needsTime = true;
  private readonly name: string;
  private readonly start: TraceStart;
  private readonly keepCalls: number;
  /** Per entry site: 0 not yet known, 1 names the function, 2 does not. */
  private readonly matches: Uint8Array;
  /** Per thread row: its open invocations, outermost first. */
  private readonly open: Open[][] = [];
  /** Invocations closed and not kept, for reuse. */
  private readonly spare: Open[] = [];
  private readonly invocations: Invocation[] = [];
  private readonly totals = { calls: 0, bytesAllocated: 0, bytesFreed: 0, netBytes: 0, maxPeakBytes: 0, maxPeakCall: null as number | null };

  constructor(start: TraceStart, name: string, options: { keepCalls?: number } = {}) {
    this.start = start;
    this.name = name;
    this.keepCalls = options.keepCalls ?? Infinity;
    this.matches = new Uint8Array(start.sites.count);
  }

  /** Whether entry site `site` names the function. */
  private matching(site: number): boolean {
    if (site >= this.matches.length) return false; // no UNIT defines it: it names no function
    if (this.matches[site] === 0) {
      const info = siteInfo(this.start, site);
      this.matches[site] = info !== null && (info.name || info.func || null) === this.name ? 1 : 2;
    }
    return this.matches[site] === 1;
  }

  event(e: FoldEvent, tables: FoldTables): void {
    const kind = e.kind;
    if (kind === Kind.ENTER) {
      if (e.frame !== NONE && this.matching(tables.frames.entrySite[e.frame]!)) this.enter(e, tables.frames);
      return;
    }
    if (kind === Kind.EXIT || kind === Kind.UNWIND) {
      if (e.frame !== NONE) this.close(e.thread, tables.frames.enter[e.frame]!, e.index);
      return;
    }
    if (kind === Kind.THREAD_END) return this.close(e.thread, -1, e.index);
    // A heap event that made or ended a block counts for every matching call open on its thread.
    if (e.newBlock === NONE && e.oldBlock === NONE) return;
    const stack = this.open[e.thread];
    if (stack === undefined || stack.length === 0) return;
    const added = e.newBlock === NONE ? 0 : tables.blocks.requested[e.newBlock]!;
    const freed = e.oldBlock === NONE ? 0 : tables.blocks.requested[e.oldBlock]!;
    for (let i = 0; i < stack.length; i++) {
      const inv = stack[i]!.inv;
      inv.bytesAllocated += added;
      inv.bytesFreed += freed;
      inv.heapEvents++;
      const net = inv.bytesAllocated - inv.bytesFreed;
      if (net > inv.peakBytes) {
        inv.peakBytes = net;
        inv.peakEvent = e.index;
      }
    }
  }

  private enter(e: FoldEvent, frames: FoldFrames): void {
    const f = e.frame;
    const thread = frames.thread[f]!;
    while (this.open.length <= thread) this.open.push([]);
    const stack = this.open[thread]!;
    const index = this.totals.calls++;
    const kept = index < this.keepCalls;
    const o: Open = !kept && this.spare.length > 0 ? this.spare.pop()! : { inv: blankInvocation(), index: NONE };
    const inv = o.inv;
    inv.frame = frames.row[f]!;
    inv.thread = thread;
    inv.enterEvent = e.index;
    inv.enterTimeNs = e.time;
    inv.endEvent = null;
    // The open invocations of the thread are its callers: recursion.
    inv.recursion = stack.length;
    inv.bytesAllocated = inv.bytesFreed = inv.netBytes = inv.peakBytes = inv.heapEvents = 0;
    inv.peakEvent = null;
    o.index = index;
    if (kept) this.invocations.push(inv);
    stack.push(o);
  }

  /** Closes the invocations of thread row `t` entered at or after event `from` (-1: all), at event `at`. */
  private close(t: number, from: number, at: number): void {
    const stack = this.open[t];
    if (stack === undefined) return;
    while (stack.length > 0 && stack[stack.length - 1]!.inv.enterEvent >= from) this.closed(stack.pop()!, at);
  }

  /** An invocation's numbers are final: `at` its closing event, null if the run ended with it open. */
  private closed(o: Open, at: number | null): void {
    const inv = o.inv;
    inv.endEvent = at;
    inv.netBytes = inv.bytesAllocated - inv.bytesFreed;
    const t = this.totals;
    if (inv.recursion === 0) {
      t.bytesAllocated += inv.bytesAllocated;
      t.bytesFreed += inv.bytesFreed;
      t.netBytes += inv.netBytes;
    }
    // The first invocation (in order of entry) with the largest peak.
    if (t.maxPeakCall === null || inv.peakBytes > t.maxPeakBytes || (inv.peakBytes === t.maxPeakBytes && o.index < t.maxPeakCall)) {
      t.maxPeakBytes = inv.peakBytes;
      t.maxPeakCall = o.index;
    }
    if (o.index >= this.keepCalls) this.spare.push(o);
  }

  finish(): void {
    for (const stack of this.open) while (stack.length > 0) this.closed(stack.pop()!, null);
  }

  result(): PerCall {
    return { function: this.name, pending: this.pending(), invocations: this.invocations, totals: { ...this.totals } };
  }

  private pending(): boolean {
    const { sites } = this.start;
    for (let id = 1; id < sites.count; id++) if (sites.kind[id] === SiteKind.PENDING_CALLS && sites.strings[sites.func[id]!] === this.name) return true;
    return false;
  }
}

function blankInvocation(): Invocation {
  return { frame: 0, thread: 0, enterEvent: 0, enterTimeNs: 0, endEvent: null, recursion: 0, bytesAllocated: 0, bytesFreed: 0, netBytes: 0, peakBytes: 0, peakEvent: null, heapEvents: 0 };
}

/** `PerCallFold` over a decoded model: every invocation kept. */
export function perCall(model: Model, name: string): PerCall {
  const fold = new PerCallFold(modelStart(model), name);
  foldModel(model, [fold]);
  return fold.result();
}
