// Heap per invocation of one function: for each frame of it, the net heap bytes its events (callees included) allocated minus freed, and the peak of that running net.
import { NONE, type Model } from './model.js';
import { siteInfo } from './sites.js';

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

/** The function a frame's entry site names (its name, else its enclosing function). */
function frameFunction(model: Model, frame: number): string | null {
  const info = siteInfo(model, model.frames.entrySite[frame]!);
  return info === null ? null : info.name || info.func || null;
}

/**
 * Each invocation of `name` (frames whose entry site names it): the heap events on its thread after its ENTER up to its
 * closing event (or the end of the run), callees included. O(frames + events + heap events inside the invocations),
 * which recursion makes O(depth × heap events) at worst.
 */
export function perCall(model: Model, name: string): PerCall {
  const { events, frames, blocks } = model;
  const match = new Uint8Array(frames.count);
  const bySite = new Map<number, boolean>();
  for (let f = 0; f < frames.count; f++) {
    const site = frames.entrySite[f]!;
    let m = bySite.get(site);
    if (m === undefined) {
      m = frameFunction(model, f) === name;
      bySite.set(site, m);
    }
    if (m) match[f] = 1;
  }
  // Heap events of each thread with the running net after each (prefix sums).
  const perThread = new Map<number, { event: number[]; net: number[] }>();
  for (let i = 0; i < events.count; i++) {
    const nb = events.newBlock[i]!;
    const ob = events.oldBlock[i]!;
    if (nb === NONE && ob === NONE) continue;
    const delta = (nb === NONE ? 0 : blocks.requested[nb]!) - (ob === NONE ? 0 : blocks.requested[ob]!);
    const t = events.thread[i]!;
    let list = perThread.get(t);
    if (list === undefined) {
      list = { event: [], net: [] };
      perThread.set(t, list);
    }
    list.net.push((list.net.length === 0 ? 0 : list.net[list.net.length - 1]!) + delta);
    list.event.push(i);
  }
  /** First index in the sorted `a` whose value is > x. */
  const upper = (a: number[], x: number): number => {
    let lo = 0;
    let hi = a.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (a[mid]! <= x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const invocations: Invocation[] = [];
  const recursion = new Int32Array(frames.count).fill(-1);
  const totals = { calls: 0, bytesAllocated: 0, bytesFreed: 0, netBytes: 0, maxPeakBytes: 0, maxPeakCall: null as number | null };
  for (let f = 0; f < frames.count; f++) {
    if (match[f] === 0) continue;
    let depth = 0;
    for (let p = frames.parent[f]!; p !== NONE; p = frames.parent[p]!) {
      if (match[p] === 1) {
        depth = recursion[p]! + 1; // frames are in order of entry: the parent's depth is known
        break;
      }
    }
    recursion[f] = depth;
    const thread = frames.thread[f]!;
    const enter = frames.enter[f]!;
    const exit = frames.exit[f]!;
    const inv: Invocation = {
      frame: f,
      thread,
      enterEvent: enter,
      enterTimeNs: events.time[enter]!,
      endEvent: exit === NONE ? null : exit,
      recursion: depth,
      bytesAllocated: 0,
      bytesFreed: 0,
      netBytes: 0,
      peakBytes: 0,
      peakEvent: null,
      heapEvents: 0,
    };
    const list = perThread.get(thread);
    if (list !== undefined) {
      const from = upper(list.event, enter);
      const to = exit === NONE ? list.event.length : upper(list.event, exit);
      const base = from === 0 ? 0 : list.net[from - 1]!;
      for (let k = from; k < to; k++) {
        const e = list.event[k]!;
        const nb = events.newBlock[e]!;
        const ob = events.oldBlock[e]!;
        if (nb !== NONE) inv.bytesAllocated += blocks.requested[nb]!;
        if (ob !== NONE) inv.bytesFreed += blocks.requested[ob]!;
        const net = list.net[k]! - base;
        if (net > inv.peakBytes) {
          inv.peakBytes = net;
          inv.peakEvent = e;
        }
      }
      inv.heapEvents = to - from;
      inv.netBytes = inv.bytesAllocated - inv.bytesFreed;
    }
    if (depth === 0) {
      totals.bytesAllocated += inv.bytesAllocated;
      totals.bytesFreed += inv.bytesFreed;
      totals.netBytes += inv.netBytes;
    }
    if (totals.maxPeakCall === null || inv.peakBytes > totals.maxPeakBytes) {
      totals.maxPeakBytes = inv.peakBytes;
      totals.maxPeakCall = invocations.length;
    }
    invocations.push(inv);
    totals.calls++;
  }
  return { function: name, invocations, totals };
}
