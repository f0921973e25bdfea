// Layout of the chart, apart from drawing: which events fall in each pixel column at the current zoom, summarised through the level-of-detail pyramids, or individual bars when the events are wide enough to see one by one. Shared by the canvas, the SVG export and hit testing.
import { eventAtTime, LOD_BASE, lowerBound, MaskPyramid, MinMaxPyramid, type ChartSeries, type Extent } from '../../../../analysis/lod.js';

/** Individual bars when each event gets at least this many pixels. */
export const MIN_BAR_PX = 3;

export type XMode = 'events' | 'time';

/** Min and max of a series over a range of events (MinMaxPyramid; in index mode, summaries and the events fetched). */
export interface RangeExtent {
  extent(start: number, end: number, out?: Extent): Extent;
}

/** A series by event number (a typed array; in index mode, the events fetched and summaries elsewhere). */
export interface SeriesColumn {
  readonly [event: number]: number;
  readonly length: number;
}

/** The series of the chart with their pyramids. */
export interface ChartData {
  count: number;
  series: { static: SeriesColumn; above: SeriesColumn; heap: SeriesColumn };
  above: RangeExtent;
  statics: RangeExtent;
  heap: RangeExtent;
  maskPyramid: { or(start: number, end: number): number };
  /** Non-decreasing event times (ns). */
  times: Float64Array;
  /**
   * Time mode past the last event: false (a run alone on its axis), its values hold to the axis's end; true (a lane
   * of a process on an axis shared with others), nothing is drawn there, the process having ended.
   */
  endsAtLastEvent: boolean;
  /** The fullest event of [a, b) when the data knows better than by scanning its series (index mode). */
  representative?: (a: number, b: number) => number;
  /** The first event at or after time `ns`, when the data finds it faster than a search through `times` (index mode). */
  eventAtTime?: (ns: number) => number;
}

export function chartData(series: ChartSeries, masks: Uint8Array, times: Float64Array): ChartData {
  return {
    count: series.heap.length,
    series,
    above: new MinMaxPyramid(series.above),
    statics: new MinMaxPyramid(series.static),
    heap: new MinMaxPyramid(series.heap),
    maskPyramid: new MaskPyramid(masks),
    times,
    endsAtLastEvent: false,
  };
}

/** A linear map from domain (events or ns) to pixels, as d3's scales are (kept minimal so layout tests need no DOM). */
export interface XScale {
  (v: number): number;
  invert(px: number): number;
}

/** The first event at or after position v of the x domain. */
export function eventAt(data: ChartData, mode: XMode, v: number): number {
  if (mode === 'events') return Math.min(data.count, Math.max(0, Math.floor(v)));
  return data.eventAtTime ? data.eventAtTime(v) : eventAtTime(data.times, v);
}

/** Where event e starts on the x domain. */
export function positionOf(data: ChartData, mode: XMode, e: number): number {
  if (mode === 'events') return e;
  return data.times[Math.min(e, data.count - 1)] ?? 0;
}

export interface Bar {
  event: number;
  x0: number;
  x1: number;
}

export interface Columns {
  kind: 'columns';
  width: number;
  /** Events [first[c], end[c]) of column c. */
  first: Int32Array;
  end: Int32Array;
  aboveMax: Float64Array;
  aboveMin: Float64Array;
  staticMax: Float64Array;
  heapMax: Float64Array;
  heapMin: Float64Array;
  masks: Uint8Array;
}

export interface Bars {
  kind: 'bars';
  bars: Bar[];
}

/** Bars if the visible events are few enough to draw one by one, else one summary per pixel column. */
export function layout(data: ChartData, mode: XMode, x: XScale, width: number, reuse: Columns | null = null): Columns | Bars {
  const w = Math.max(1, Math.floor(width));
  const e0 = eventAt(data, mode, x.invert(0));
  const e1 = Math.min(data.count, eventAt(data, mode, x.invert(w)) + 1);
  const start = Math.max(0, e0 - 1);
  if ((e1 - start) * MIN_BAR_PX <= w) {
    const bars: Bar[] = [];
    for (let e = start; e < e1; e++) {
      const x0 = x(positionOf(data, mode, e));
      // A bar reaches the next event; the last one gets the width of an event.
      const x1 = e + 1 < data.count ? x(positionOf(data, mode, e + 1)) : mode === 'events' ? x(e + 1) : x0 + MIN_BAR_PX * 4;
      if (x1 < 0 || x0 > w) continue;
      bars.push({ event: e, x0, x1: Math.max(x1, x0 + 1) });
    }
    return { kind: 'bars', bars };
  }
  // Redrawn every frame while panning: the previous frame's arrays are filled again rather than reallocated.
  const cols: Columns = reuse !== null && reuse.width === w ? reuse : {
    kind: 'columns',
    width: w,
    first: new Int32Array(w),
    end: new Int32Array(w),
    aboveMax: new Float64Array(w),
    aboveMin: new Float64Array(w),
    staticMax: new Float64Array(w),
    heapMax: new Float64Array(w),
    heapMin: new Float64Array(w),
    masks: new Uint8Array(w),
  };
  cols.masks.fill(0);
  const ext = { min: 0, max: 0 };
  let a = eventAt(data, mode, x.invert(0));
  // Columns of many buckets start and end on bucket boundaries (moving an edge by under 1/16 of a column), so their
  // extremes come from the pyramid alone, without scanning events at the edges.
  const snap = (e1 - start) / w >= 16 * LOD_BASE;
  if (snap) a = Math.round(a / LOD_BASE) * LOD_BASE;
  for (let c = 0; c < w; c++) {
    let b = Math.max(a, eventAt(data, mode, x.invert(c + 1)));
    if (snap && b < data.count) b = Math.max(a, Math.round(b / LOD_BASE) * LOD_BASE);
    cols.first[c] = a;
    cols.end[c] = b;
    if (b > a) {
      data.above.extent(a, b, ext);
      cols.aboveMax[c] = ext.max;
      cols.aboveMin[c] = ext.min;
      cols.staticMax[c] = data.statics.extent(a, b, ext).max;
      data.heap.extent(a, b, ext);
      cols.heapMax[c] = ext.max;
      cols.heapMin[c] = ext.min;
      cols.masks[c] = data.maskPyramid.or(a, b);
    } else if (a > 0 && (a < data.count || (a === data.count && !data.endsAtLastEvent))) {
      // No event starts in this column (time mode, a quiet stretch): the values after the previous event hold.
      const p = a - 1;
      cols.aboveMax[c] = cols.aboveMin[c] = data.series.above[p]!;
      cols.staticMax[c] = data.series.static[p]!;
      cols.heapMax[c] = cols.heapMin[c] = data.series.heap[p]!;
    } else {
      // Before the first event (time mode, on an axis shared with runs that began earlier), or past a lane's end: empty.
      cols.aboveMax[c] = cols.aboveMin[c] = cols.staticMax[c] = cols.heapMax[c] = cols.heapMin[c] = 0;
    }
    a = b;
  }
  return cols;
}

/** Whether sorted `events` has one in [a, b). */
export function anyIn(events: Int32Array, a: number, b: number): boolean {
  const i = lowerBound(events, a);
  return i < events.length && events[i]! < b;
}

/** The event in [a, b) with the most memory in use (heap + stack + static): what a click on a summarised column picks. Scans at most `cap` events, then steps through the finest pyramid level. */
export function representative(data: ChartData, a: number, b: number, cap = 1 << 16): number {
  if (data.representative) return data.representative(a, b);
  let best = a;
  let bestV = -Infinity;
  const { above, heap } = data.series;
  const step = b - a > cap ? LOD_BASE : 1;
  for (let e = a; e < b; e += step) {
    const v = above[e]! + heap[e]!;
    if (v > bestV) {
      bestV = v;
      best = e;
    }
  }
  return best;
}

/**
 * Tick values from 0 past `max` in round binary steps (1, 2, 2.5 or 5 times a power of 1024 and of 10, e.g. 256 KiB,
 * 1 MiB), at most about `count` + 1 of them; the last one is the axis's end.
 */
export function byteTicks(max: number, count: number): number[] {
  const unit = 1024 ** Math.max(0, Math.floor(Math.log(Math.max(1, max)) / Math.log(1024)));
  const raw = max / unit / count;
  const decade = 10 ** Math.floor(Math.log10(raw));
  // Whole bytes at least: no 0.25 B ticks.
  const step = Math.max(1, ([1, 2, 2.5, 5, 10].map((m) => m * decade).find((s) => s >= raw) ?? 10 * decade) * unit);
  const ticks: number[] = [];
  for (let v = 0; ticks.length === 0 || ticks[ticks.length - 1]! < max; v += step) ticks.push(v);
  return ticks;
}
