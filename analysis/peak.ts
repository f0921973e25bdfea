// What was live at the peaks of a run: the heap blocks live at the heap peak and at the total (heap + stack + static) peak, grouped by allocation site and by function.
import { BlockGroups, type GroupRef } from './block-groups.js';
import { NONE, type Model } from './model.js';

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

/** For each event, the static bytes registered at or before it. */
function staticsSoFar(model: Model): Float64Array {
  const { events, statics } = model;
  const out = new Float64Array(events.count);
  for (let s = 0; s < statics.count; s++) {
    const e = statics.event[s]!;
    if (e >= 0 && e < out.length) out[e] = out[e]! + statics.size[s]!;
  }
  for (let i = 1; i < out.length; i++) out[i] = out[i]! + out[i - 1]!;
  return out;
}

/** The first index of the largest value above 0, or null. */
function firstMax(count: number, value: (i: number) => number): number | null {
  let best = 0;
  let at: number | null = null;
  for (let i = 0; i < count; i++) {
    const v = value(i);
    if (v > best) {
      best = v;
      at = i;
    }
  }
  return at;
}

function byBytes(a: PeakGroup, b: PeakGroup): number {
  return b.bytes - a.bytes || b.blocks - a.blocks || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0);
}

/** The blocks live after `event`, grouped. */
function snapshot(model: Model, kind: PeakKind, event: number | null, statics: Float64Array): PeakSnapshot {
  const { events, blocks } = model;
  const heapBytes = event === null ? 0 : events.heapRequested[event]!;
  const stackBytes = event === null ? 0 : events.stackTotal[event]!;
  const staticBytes = event === null ? 0 : statics[event]!;
  const peakBytes = kind === 'heap' ? heapBytes : heapBytes + stackBytes + staticBytes;
  const bySite = new Map<string, PeakGroup>();
  const byFunction = new Map<string, PeakGroup>();
  const groups = new BlockGroups(model);
  const add = (map: Map<string, PeakGroup>, ref: GroupRef, bytes: number): void => {
    let g = map.get(ref.key);
    if (g === undefined) {
      g = { ...ref, blocks: 0, bytes: 0, share: 0 };
      map.set(ref.key, g);
    }
    g.blocks++;
    g.bytes += bytes;
  };
  let liveBlocks = 0;
  if (event !== null) {
    for (let b = 0; b < blocks.count; b++) {
      const alloc = blocks.allocEvent[b]!;
      if (alloc > event) break; // blocks are in creation order
      const freed = blocks.freeEvent[b]!;
      if (freed !== NONE && freed <= event) continue;
      liveBlocks++;
      const bytes = blocks.requested[b]!;
      add(bySite, groups.siteOf(b), bytes);
      add(byFunction, groups.functionOf(b), bytes);
    }
  }
  const finish = (map: Map<string, PeakGroup>): PeakGroup[] => {
    const rows = [...map.values()];
    for (const g of rows) g.share = peakBytes > 0 ? g.bytes / peakBytes : 0;
    return rows.sort(byBytes);
  };
  return {
    kind,
    event,
    timeNs: event === null ? null : events.time[event]!,
    peakBytes,
    heapBytes,
    stackBytes,
    staticBytes,
    liveBlocks,
    bySite: finish(bySite),
    byFunction: finish(byFunction),
  };
}

/**
 * The heap peak (largest `heapRequested`, first event reaching it) and the total peak (largest heap + stack summed over
 * threads + static bytes registered so far), each with the blocks live after that event grouped by allocation site and
 * by function (the innermost instrumented frame open at the allocation; for interposed blocks, their attributed frame).
 * O(events + blocks).
 */
export function peaks(model: Model): Peaks {
  const { events } = model;
  const statics = staticsSoFar(model);
  const heapEvent = firstMax(events.count, (i) => events.heapRequested[i]!);
  const totalEvent = firstMax(events.count, (i) => events.heapRequested[i]! + events.stackTotal[i]! + statics[i]!);
  return { heap: snapshot(model, 'heap', heapEvent, statics), total: snapshot(model, 'total', totalEvent, statics) };
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
