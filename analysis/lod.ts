// Level of detail for the chart: min/max pyramids over a per-event series and OR-pyramids over event-class bits, so any range of events (a pixel column) is summarised in O(log n) reads; the series the chart draws (stack + static above the axis, heap below); a non-decreasing time axis for wall-time mode.
import { eventClassBit, eventClassOfKind } from './event-detail.js';
import { NONE, type Model } from './model.js';
import { staticSeries, threadStackSeries } from './timeline.js';

/** Events per bucket of the finest level: shorter ranges are read from the series itself. */
export const LOD_BASE = 64;

/** Min and max of a series over [start, end) of its rows; an empty range gives min Infinity, max -Infinity. */
export interface Extent {
  min: number;
  max: number;
}

/**
 * Level k holds, for bucket i, the min and max of rows [i·B·2^k, (i+1)·B·2^k) (B = LOD_BASE), the last bucket of a
 * level covering what is left. About 2n/B numbers of each kind in all.
 */
export class MinMaxPyramid {
  readonly mins: Float64Array[] = [];
  readonly maxs: Float64Array[] = [];

  constructor(readonly values: Float64Array) {
    let n = Math.ceil(values.length / LOD_BASE);
    let mn = new Float64Array(n).fill(Infinity);
    let mx = new Float64Array(n).fill(-Infinity);
    for (let i = 0; i < values.length; i++) {
      const b = (i / LOD_BASE) | 0;
      const v = values[i]!;
      if (v < mn[b]!) mn[b] = v;
      if (v > mx[b]!) mx[b] = v;
    }
    for (;;) {
      this.mins.push(mn);
      this.maxs.push(mx);
      if (n <= 1) break;
      const m = Math.ceil(n / 2);
      const pmn = new Float64Array(m);
      const pmx = new Float64Array(m);
      for (let i = 0; i < m; i++) {
        const r = 2 * i + 1 < n ? 2 * i + 1 : 2 * i;
        pmn[i] = Math.min(mn[2 * i]!, mn[r]!);
        pmx[i] = Math.max(mx[2 * i]!, mx[r]!);
      }
      mn = pmn;
      mx = pmx;
      n = m;
    }
  }

  /** Min and max over rows [start, end), into `out`. */
  extent(start: number, end: number, out: Extent = { min: Infinity, max: -Infinity }): Extent {
    out.min = Infinity;
    out.max = -Infinity;
    const v = this.values;
    const s = Math.max(0, start | 0);
    const e = Math.min(v.length, end | 0);
    if (e <= s) return out;
    let i = Math.ceil(s / LOD_BASE);
    let j = Math.floor(e / LOD_BASE);
    if (j <= i) {
      for (let r = s; r < e; r++) this.take(out, v[r]!, v[r]!);
      return out;
    }
    for (let r = s; r < i * LOD_BASE; r++) this.take(out, v[r]!, v[r]!);
    for (let r = j * LOD_BASE; r < e; r++) this.take(out, v[r]!, v[r]!);
    // Bottom-up segment-tree walk: whole buckets at each level, climbing while the range allows.
    for (let k = 0; i < j && k < this.mins.length; k++) {
      const mn = this.mins[k]!;
      const mx = this.maxs[k]!;
      if (i & 1) {
        this.take(out, mn[i]!, mx[i]!);
        i++;
      }
      if (j & 1) {
        j--;
        this.take(out, mn[j]!, mx[j]!);
      }
      i >>= 1;
      j >>= 1;
    }
    return out;
  }

  private take(out: Extent, mn: number, mx: number): void {
    if (mn < out.min) out.min = mn;
    if (mx > out.max) out.max = mx;
  }
}

/** Like MinMaxPyramid for bit masks: the OR of rows [start, end). */
export class MaskPyramid {
  readonly levels: Uint8Array[] = [];

  constructor(readonly values: Uint8Array) {
    let n = Math.ceil(values.length / LOD_BASE);
    let level = new Uint8Array(n);
    for (let i = 0; i < values.length; i++) level[(i / LOD_BASE) | 0]! |= values[i]!;
    for (;;) {
      this.levels.push(level);
      if (n <= 1) break;
      const m = Math.ceil(n / 2);
      const up = new Uint8Array(m);
      for (let i = 0; i < m; i++) up[i] = level[2 * i]! | (level[2 * i + 1] ?? 0);
      level = up;
      n = m;
    }
  }

  or(start: number, end: number): number {
    const v = this.values;
    const s = Math.max(0, start | 0);
    const e = Math.min(v.length, end | 0);
    let bits = 0;
    if (e <= s) return 0;
    let i = Math.ceil(s / LOD_BASE);
    let j = Math.floor(e / LOD_BASE);
    if (j <= i) {
      for (let r = s; r < e; r++) bits |= v[r]!;
      return bits;
    }
    for (let r = s; r < i * LOD_BASE; r++) bits |= v[r]!;
    for (let r = j * LOD_BASE; r < e; r++) bits |= v[r]!;
    for (let k = 0; i < j && k < this.levels.length; k++) {
      const level = this.levels[k]!;
      if (i & 1) bits |= level[i++]!;
      if (j & 1) bits |= level[--j]!;
      i >>= 1;
      j >>= 1;
    }
    return bits;
  }
}

/** Per event, the bit of its class (`eventClassBit`); events of other threads than `thread` (a row) get 0. */
export function eventClassMasks(model: Model, thread: number | null = null): Uint8Array {
  const { kind, thread: th } = model.events;
  const bitOfKind = new Uint8Array(256);
  for (let k = 0; k < 256; k++) bitOfKind[k] = eventClassBit(eventClassOfKind(k));
  const out = new Uint8Array(model.events.count);
  for (let e = 0; e < out.length; e++) if (thread === null || th[e] === thread) out[e] = bitOfKind[kind[e]!]!;
  return out;
}

/** What the chart draws per event: above the axis static bytes and stack + static, below it the live heap. */
export interface ChartSeries {
  /** Static bytes registered so far. */
  static: Float64Array;
  /** Stack (all threads, or the one thread) plus static bytes. */
  above: Float64Array;
  /** Live heap bytes requested. */
  heap: Float64Array;
  /** Events of the thread (row) this series was made for, or null for all threads. */
  thread: number | null;
}

/**
 * The chart's series, for all threads or for one thread row (its own stack; the heap is shared by all threads). With
 * `heap` given (`instrumentedHeap(model)`), the heap series is that one instead of every live block.
 */
export function chartSeries(model: Model, thread: number | null = null, statics: Float64Array = staticSeries(model), heap: Float64Array = model.events.heapRequested): ChartSeries {
  const stack = thread === null ? model.events.stackTotal : threadStackSeries(model, thread);
  const above = new Float64Array(stack.length);
  for (let i = 0; i < above.length; i++) above[i] = stack[i]! + statics[i]!;
  return { static: statics, above, heap, thread };
}

/**
 * Live heap bytes (requested) after each event, counting only blocks allocated by instrumented code: what is left when
 * the allocations made inside libc or uninstrumented code (a stdio buffer, say) are hidden.
 */
export function instrumentedHeap(model: Model): Float64Array {
  const { events, blocks } = model;
  const out = new Float64Array(events.count);
  let live = 0;
  for (let i = 0; i < events.count; i++) {
    const ended = events.oldBlock[i]!;
    if (ended !== NONE && blocks.interposed[ended] === 0) live -= blocks.requested[ended]!;
    const created = events.newBlock[i]!;
    if (created !== NONE && blocks.interposed[created] === 0) live += blocks.requested[created]!;
    out[i] = live;
  }
  return out;
}

/**
 * Event times made non-decreasing (each the largest time so far): threads' clocks are interpolated separately, so
 * raw times can step back; this axis keeps event order, and `eventAtTime` can binary-search it.
 */
export function monotonicTimes(model: Model): Float64Array {
  const t = model.events.time;
  const out = new Float64Array(t.length);
  let max = -Infinity;
  for (let i = 0; i < t.length; i++) {
    if (t[i]! > max) max = t[i]!;
    out[i] = max;
  }
  return out;
}

/** How many distinct values a non-decreasing series holds (`monotonicTimes`): 1 when every event shares one time. */
export function distinctSteps(values: ArrayLike<number>): number {
  let n = 0;
  for (let i = 0; i < values.length; i++) if (i === 0 || values[i]! !== values[i - 1]!) n++;
  return n;
}

/** The first index of sorted `values` holding a value at or above `v` (`values.length` if none). */
export function lowerBound(values: ArrayLike<number>, v: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid]! < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The first event whose (monotonic) time is at or after `ns`: `times.length` if none. */
export function eventAtTime(times: Float64Array, ns: number): number {
  return lowerBound(times, ns);
}
