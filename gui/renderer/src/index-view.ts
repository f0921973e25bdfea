// The chart's data for a trace opened through the host's index (index mode): the bucket summaries the host sends
// (analysis/event-index.ts) drawn when the whole run or much of it is in view; the fine summaries (one per 256 events)
// of the part in view fetched from the host when a bucket would be wider than a column, so the chart never draws a
// summary much wider than a column; and the events in view fetched when few enough of them are in view, drawn one by
// one. Until a window arrives, and beyond it, the coarser level stands in. The page holds the summaries (about 180
// bytes per bucket of 16,384 events of one thread), one window of fine rows (at most 8 MiB) and one of events, never
// the whole trace.
//
// The thread filter and the libc toggle (setFilter) draw one thread's stack + static and the heap of instrumented
// code's blocks: from the thread table and the buckets' instrumented heap, from the fine rows' instrumented heap
// (one thread's stack has no fine rows: its buckets stand in), and for the window of events from their threads,
// stacks and instrumented heap, computed here (threadAbove) as the whole-trace viewer computes them.
import { eventClassBit, eventClassOfKind } from '../../../analysis/event-detail.js';
import { MaskPyramid, MinMaxPyramid, type Extent } from '../../../analysis/lod.js';
import { decodeFine, decodeRange, F, FINE_FIELDS, S, SUMMARY_FIELDS, T, THREAD_FIELDS, threadAbove, type IndexMeta, type IndexRange } from '../../../analysis/event-index.js';
import type { IndexApi } from './backend.js';
import type { ChartData, SeriesColumn } from './chart/columns.js';
import { indexTimes } from './index-times.js';

/** Events in view at most for them to be fetched one by one; the window fetched is up to twice as wide. */
export const DETAIL_SPAN = 1 << 18;
const FETCH_MAX = 1 << 19;
/** Events in view at most for the fine summaries of the part in view to be fetched (a bucket is then under a 2,048th of the view). */
export const FINE_SPAN = 1 << 25;
/** Fine rows fetched at most at once (the host's MAX_FINE_ROWS). */
const FINE_FETCH_MAX = 1 << 18;

/** A window of fine rows, one column per field with its pyramid. */
interface FineWindow {
  first: number;
  count: number;
  aboveMin: MinMaxPyramid;
  aboveMax: MinMaxPyramid;
  heapMin: MinMaxPyramid;
  heapMax: MinMaxPyramid;
  staticMax: MinMaxPyramid;
  masks: MaskPyramid;
  iheapMin: MinMaxPyramid;
  iheapMax: MinMaxPyramid;
}

/** What the chart draws: all threads or one thread row's stack, every live block or those of instrumented code alone. */
export interface IndexFilter {
  thread: number | null;
  instrumented: boolean;
}

/** Per bucket columns with their pyramids: least and most above the axis and below it, the classes of event. */
interface BucketLevel {
  aboveMin: MinMaxPyramid;
  aboveMax: MinMaxPyramid;
  mask: Uint8Array;
}

/** The window of events as drawn under the filter: its series and their pyramids. */
interface WindowSeries {
  above: Float64Array;
  heap: Float64Array;
  masks: Uint8Array;
  pyr: { above: MinMaxPyramid; heap: MinMaxPyramid; statics: MinMaxPyramid; masks: MaskPyramid };
}

/** A series read from the window where it holds the event, else its fine row's largest value (when `pick` is given), else its bucket's. */
function column(of: () => { win: Float64Array | null; first: number; fine: FineWindow | null; pick: ((w: FineWindow) => Float64Array) | null; bucket: Float64Array }, bucketSize: number, fineSize: number, count: number): SeriesColumn {
  return new Proxy({ length: count } as SeriesColumn, {
    get(target, key) {
      if (typeof key !== 'string') return undefined;
      if (key === 'length') return count;
      const e = Number(key);
      if (!Number.isInteger(e)) return (target as unknown as Record<string, unknown>)[key];
      const { win, first, fine, pick, bucket } = of();
      if (win !== null && e >= first && e < first + win.length) return win[e - first];
      const k = Math.floor(e / fineSize);
      if (pick !== null && fine !== null && k >= fine.first && k < fine.first + fine.count) return pick(fine)[k - fine.first];
      return bucket[Math.floor(e / bucketSize)];
    },
  });
}

export class IndexChartData {
  /** What the chart draws, under the current filter (setFilter makes it anew). */
  data: ChartData;
  readonly kinds: Uint8Array;
  private window: IndexRange | null = null;
  /** The window as drawn under the filter. */
  private win: WindowSeries | null = null;
  private filter: IndexFilter = { thread: null, instrumented: false };
  private readonly bucket: { aboveMin: Float64Array; aboveMax: Float64Array; heapMin: Float64Array; heapMax: Float64Array; staticMax: Float64Array; mask: Uint8Array; iheapMin: Float64Array; iheapMax: Float64Array };
  private readonly pyr: { aboveMin: MinMaxPyramid; aboveMax: MinMaxPyramid; heapMin: MinMaxPyramid; heapMax: MinMaxPyramid; staticMax: MinMaxPyramid; iheapMin: MinMaxPyramid; iheapMax: MinMaxPyramid };
  /** The filter's thread's buckets (threadLevel), kept for the thread shown. */
  private threadBuckets: { thread: number; level: BucketLevel } | null = null;
  /**
   * Whether the summaries carry the buckets' times (the wall-time axis): not those of the first stage of a build (the
   * summaries file), which come with the events (takeTimes).
   */
  get hasTimes(): boolean {
    return this.meta.buckets === 0 || !Number.isNaN(this.summary[S.TIME_MIN]!);
  }

  /** The buckets' times from the whole index's summaries (`whole`, the same buckets), once its events are built. */
  takeTimes(whole: Float64Array): void {
    if (whole.length !== this.summary.length) throw new Error(`the index's summaries have ${whole.length / SUMMARY_FIELDS} buckets, not ${this.meta.buckets}`);
    for (let k = 0; k < this.meta.buckets; k++) {
      this.summary[SUMMARY_FIELDS * k + S.TIME_MIN] = whole[SUMMARY_FIELDS * k + S.TIME_MIN]!;
      this.summary[SUMMARY_FIELDS * k + S.TIME_MAX] = whole[SUMMARY_FIELDS * k + S.TIME_MAX]!;
    }
  }

  private fetching: { from: number; to: number } | null = null;
  private fine: FineWindow | null = null;
  private fetchingFine: { from: number; to: number } | null = null;
  /** Added to every event's time (ns): a lane's start on the lanes page's shared axis. */
  timeOffset = 0;
  /** Called when a window of events has arrived (the page redraws). */
  onWindow: () => void = () => {};
  /** Milliseconds each window took to arrive (the benchmark). */
  readonly fetchTimes: number[] = [];

  constructor(
    readonly meta: IndexMeta,
    private readonly summary: Float64Array,
    private readonly api: IndexApi,
  ) {
    const n = meta.buckets;
    const col = (f: number): Float64Array => {
      const out = new Float64Array(n);
      for (let k = 0; k < n; k++) out[k] = summary[SUMMARY_FIELDS * k + f]!;
      return out;
    };
    this.bucket = {
      aboveMin: col(S.ABOVE_MIN),
      aboveMax: col(S.ABOVE_MAX),
      heapMin: col(S.HEAP_MIN),
      heapMax: col(S.HEAP_MAX),
      staticMax: col(S.STATIC_MAX),
      mask: Uint8Array.from(col(S.MASK)),
      iheapMin: col(S.IHEAP_MIN),
      iheapMax: col(S.IHEAP_MAX),
    };
    const b = this.bucket;
    this.pyr = {
      aboveMin: new MinMaxPyramid(b.aboveMin),
      aboveMax: new MinMaxPyramid(b.aboveMax),
      heapMin: new MinMaxPyramid(b.heapMin),
      heapMax: new MinMaxPyramid(b.heapMax),
      staticMax: new MinMaxPyramid(b.staticMax),
      iheapMin: new MinMaxPyramid(b.iheapMin),
      iheapMax: new MinMaxPyramid(b.iheapMax),
    };
    const count = meta.events;
    const win_ = (): IndexRange | null => this.window;
    this.kinds = new Proxy(new Uint8Array(0), {
      get(target, key) {
        if (typeof key === 'string' && /^\d+$/.test(key)) {
          const e = Number(key);
          const w = win_();
          return w !== null && e >= w.first && e < w.first + w.count ? w.kinds[e - w.first] : 0;
        }
        if (key === 'length') return count;
        return Reflect.get(target, key);
      },
    });
    this.data = this.makeData();
  }

  /** The filter drawn: its data anew (the page hands it to the chart), the window's series computed again. */
  setFilter(filter: IndexFilter): void {
    this.filter = { ...filter };
    this.derive();
    this.data = this.makeData();
  }

  /**
   * Thread row `t`'s buckets from the thread table: its row's extremes where it has events, else its stack as it was
   * after its latest row (0 before its first) plus the bucket's least and most static bytes.
   */
  private threadLevel(t: number): BucketLevel {
    if (this.threadBuckets?.thread === t) return this.threadBuckets.level;
    const { meta, summary } = this;
    const n = meta.buckets;
    const lo = new Float64Array(n);
    const hi = new Float64Array(n);
    const mask = new Uint8Array(n);
    const base = SUMMARY_FIELDS * n;
    let held = 0;
    for (let k = 0; k < n; k++) {
      const r = SUMMARY_FIELDS * k;
      const r0 = summary[r + S.THREAD_START]!;
      const r1 = k + 1 < n ? summary[r + SUMMARY_FIELDS + S.THREAD_START]! : meta.threadRows;
      let row = r0;
      while (row < r1 && summary[base + THREAD_FIELDS * row + T.THREAD] !== t) row++;
      if (row < r1) {
        const o = base + THREAD_FIELDS * row;
        lo[k] = summary[o + T.ABOVE_MIN]!;
        hi[k] = summary[o + T.ABOVE_MAX]!;
        mask[k] = summary[o + T.MASK]!;
        held = summary[o + T.STACK_LAST]!;
      } else {
        lo[k] = held + summary[r + S.STATIC_MIN]!;
        hi[k] = held + summary[r + S.STATIC_MAX]!;
      }
    }
    const level = { aboveMin: new MinMaxPyramid(lo), aboveMax: new MinMaxPyramid(hi), mask };
    this.threadBuckets = { thread: t, level };
    return level;
  }

  /** The window's series under the filter: one thread's stack + static (threadAbove), the instrumented heap, the thread's events' classes. */
  private derive(): void {
    const r = this.window;
    if (r === null) {
      this.win = null;
      return;
    }
    const t = this.filter.thread;
    const above = t === null ? r.above : threadAbove(r, t);
    const heap = this.filter.instrumented ? r.iheap : r.heap;
    const masks = new Uint8Array(r.count);
    for (let i = 0; i < r.count; i++) masks[i] = t === null || r.thread[i] === t ? BIT_OF_KIND[r.kinds[i]!]! : 0;
    this.win = { above, heap, masks, pyr: { above: new MinMaxPyramid(above), heap: new MinMaxPyramid(heap), statics: new MinMaxPyramid(r.statics), masks: new MaskPyramid(masks) } };
  }

  /** The chart's data under the current filter. */
  private makeData(): ChartData {
    const { meta, summary } = this;
    const B = meta.bucketSize;
    const count = meta.events;
    const FS = meta.fineSize;
    const { thread, instrumented } = this.filter;
    const tl = thread === null ? null : this.threadLevel(thread);
    const b = this.bucket;
    const aboveLo = tl?.aboveMin ?? this.pyr.aboveMin;
    const aboveHi = tl?.aboveMax ?? this.pyr.aboveMax;
    const heapLo = instrumented ? this.pyr.iheapMin : this.pyr.heapMin;
    const heapHi = instrumented ? this.pyr.iheapMax : this.pyr.heapMax;
    // One thread's stack has no fine rows: its buckets stand in for them.
    const aboveFine = tl === null ? (f: FineWindow): [MinMaxPyramid, MinMaxPyramid] => [f.aboveMin, f.aboveMax] : null;
    const heapFine = instrumented ? (f: FineWindow): [MinMaxPyramid, MinMaxPyramid] => [f.iheapMin, f.iheapMax] : (f: FineWindow): [MinMaxPyramid, MinMaxPyramid] => [f.heapMin, f.heapMax];
    const maskBuckets = tl?.mask ?? b.mask;
    const win = (pick: (w: WindowSeries, r: IndexRange) => Float64Array, fine: ((w: FineWindow) => Float64Array) | null, bucket: Float64Array) => () => ({
      win: this.window !== null && this.win !== null ? pick(this.win, this.window) : null,
      first: this.window?.first ?? 0,
      fine: this.fine,
      pick: fine,
      bucket,
    });
    const scratch: Extent = { min: 0, max: 0 };
    const extent = (which: 'above' | 'heap' | 'statics', lo: MinMaxPyramid, hi: MinMaxPyramid, fine: ((f: FineWindow) => [MinMaxPyramid, MinMaxPyramid]) | null) => ({
      extent: (a: number, b: number, out: Extent = { min: Infinity, max: -Infinity }): Extent => {
        const w = this.window;
        if (w !== null && this.win !== null && a >= w.first && b <= w.first + w.count) return this.win.pyr[which].extent(a - w.first, b - w.first, out);
        const f = fine === null ? null : this.fineCovering(a, b);
        if (f !== null) {
          const [flo, fhi] = fine!(f);
          const j0 = Math.floor(a / FS) - f.first;
          const j1 = Math.max(j0 + 1, Math.ceil(b / FS) - f.first);
          const mn = flo.extent(j0, j1, scratch).min;
          const mx = fhi.extent(j0, j1, scratch).max;
          out.min = mn;
          out.max = mx;
          return out;
        }
        const k0 = Math.floor(a / B);
        const k1 = Math.max(k0 + 1, Math.ceil(b / B));
        const mn = lo.extent(k0, k1, scratch).min;
        const mx = hi.extent(k0, k1, scratch).max;
        out.min = mn;
        out.max = mx;
        return out;
      },
    });
    const time = indexTimes(meta, summary, () => this.window, () => this.timeOffset);
    return {
      count,
      series: {
        above: column(win((w) => w.above, tl === null ? (f) => f.aboveMax.values : null, aboveHi.values), B, FS, count),
        heap: column(win((w) => w.heap, instrumented ? (f) => f.iheapMax.values : (f) => f.heapMax.values, heapHi.values), B, FS, count),
        static: column(win((_, r) => r.statics, (f) => f.staticMax.values, b.staticMax), B, FS, count),
      },
      above: extent('above', aboveLo, aboveHi, aboveFine),
      heap: extent('heap', heapLo, heapHi, heapFine),
      statics: extent('statics', this.pyr.staticMax, this.pyr.staticMax, (f) => [f.staticMax, f.staticMax]),
      maskPyramid: {
        or: (a: number, b: number): number => {
          const w = this.window;
          if (w !== null && this.win !== null && a >= w.first && b <= w.first + w.count) return this.win.pyr.masks.or(a - w.first, b - w.first);
          const f = tl === null ? this.fineCovering(a, b) : null;
          if (f !== null) {
            const j0 = Math.floor(a / FS) - f.first;
            return f.masks.or(j0, Math.max(j0 + 1, Math.ceil(b / FS) - f.first));
          }
          let bits = 0;
          for (let k = Math.floor(a / B); k < Math.max(Math.floor(a / B) + 1, Math.ceil(b / B)) && k < meta.buckets; k++) bits |= maskBuckets[k]!;
          return bits;
        },
      },
      times: time.times,
      eventAtTime: time.eventAt,
      endsAtLastEvent: false,
      representative: (a, b) => this.fullest(a, b, aboveHi.values, heapHi.values, tl === null, instrumented),
    };
  }

  /** Whether events [a, b) are all in the window fetched. */
  covers(a: number, b: number): boolean {
    const w = this.window;
    return w !== null && a >= w.first && b <= w.first + w.count;
  }

  /** The fine window when it holds the rows of events [a, b), else null. */
  private fineCovering(a: number, b: number): FineWindow | null {
    const f = this.fine;
    if (f === null) return null;
    const FS = this.meta.fineSize;
    const k0 = Math.floor(a / FS);
    const k1 = Math.max(k0 + 1, Math.ceil(b / FS));
    return k0 >= f.first && k1 <= f.first + f.count ? f : null;
  }

  /** Whether the fine rows of events [a, b) are in the window fetched. */
  coversFine(a: number, b: number): boolean {
    return this.fineCovering(a, b) !== null;
  }

  /**
   * The view shows events [a, b): when a bucket is wider than a part in 2,048 of it, fetches the fine rows of the part
   * in view (with as much again around it); one request at a time, the latest view wins.
   */
  private wantFine(a: number, b: number): void {
    const span = b - a;
    if (span > FINE_SPAN || this.coversFine(a, b)) return;
    const FS = this.meta.fineSize;
    const from = Math.max(0, Math.floor(a - span / 2));
    const to = Math.min(this.meta.events, Math.max(b, from + Math.min(FINE_FETCH_MAX * FS, span * 2)));
    if (this.fetchingFine !== null && this.fetchingFine.from <= a && this.fetchingFine.to >= b) return;
    this.fetchingFine = { from, to };
    this.api.fine(from, to).then(
      (bytes) => {
        if (this.fetchingFine?.from !== from || this.fetchingFine.to !== to) return;
        this.fetchingFine = null;
        if (bytes === null) return;
        const r = decodeFine(bytes);
        const col = (field: number): Float64Array => {
          const out = new Float64Array(r.count);
          for (let j = 0; j < r.count; j++) out[j] = r.rows[FINE_FIELDS * j + field]!;
          return out;
        };
        const masks = Uint8Array.from(col(F.MASK));
        this.fine = {
          first: r.first,
          count: r.count,
          aboveMin: new MinMaxPyramid(col(F.ABOVE_MIN)),
          aboveMax: new MinMaxPyramid(col(F.ABOVE_MAX)),
          heapMin: new MinMaxPyramid(col(F.HEAP_MIN)),
          heapMax: new MinMaxPyramid(col(F.HEAP_MAX)),
          staticMax: new MinMaxPyramid(col(F.STATIC_MAX)),
          masks: new MaskPyramid(masks),
          iheapMin: new MinMaxPyramid(col(F.IHEAP_MIN)),
          iheapMax: new MinMaxPyramid(col(F.IHEAP_MAX)),
        };
        this.onWindow();
      },
      () => {
        this.fetchingFine = null;
      },
    );
  }

  /**
   * The view shows events [a, b): fetches them (with as many again around them) when they are few enough and not
   * fetched yet; one request at a time, the latest view wins.
   */
  want(a: number, b: number): void {
    this.wantFine(a, b);
    const span = b - a;
    if (span > DETAIL_SPAN || this.covers(a, b)) return;
    const from = Math.max(0, Math.floor(a - span / 2));
    const to = Math.min(this.meta.events, Math.max(b, from + Math.min(FETCH_MAX, span * 2)));
    if (this.fetching !== null && this.fetching.from <= a && this.fetching.to >= b) return;
    this.fetching = { from, to };
    const t0 = performance.now();
    this.api.events(from, to).then(
      (bytes) => {
        if (this.fetching?.from !== from || this.fetching.to !== to) return;
        this.fetching = null;
        this.window = decodeRange(bytes);
        this.derive();
        this.fetchTimes.push(performance.now() - t0);
        this.onWindow();
      },
      () => {
        this.fetching = null;
      },
    );
  }

  /** The fullest event of [a, b) as drawn under the filter. */
  representative(a: number, b: number): number {
    return this.data.representative!(a, b);
  }

  /** The fullest event of [a, b): from the window when it holds them, else the first event of the fullest fine row or bucket. */
  private fullest(a: number, b: number, aboveBuckets: Float64Array, heapBuckets: Float64Array, useFine: boolean, instrumented: boolean): number {
    const w = this.window;
    if (w !== null && this.win !== null && a >= w.first && b <= w.first + w.count) {
      let best = a;
      let bestV = -Infinity;
      for (let e = a; e < b; e++) {
        const v = this.win.above[e - w.first]! + this.win.heap[e - w.first]!;
        if (v > bestV) [best, bestV] = [e, v];
      }
      return best;
    }
    const f = useFine ? this.fineCovering(a, b) : null;
    if (f !== null) {
      const FS = this.meta.fineSize;
      let best = a;
      let bestV = -Infinity;
      const am = f.aboveMax.values;
      const hm = (instrumented ? f.iheapMax : f.heapMax).values;
      for (let k = Math.floor(a / FS); k < Math.ceil(b / FS) && k < f.first + f.count; k++) {
        const v = am[k - f.first]! + hm[k - f.first]!;
        if (v > bestV) [best, bestV] = [Math.max(a, k * FS), v];
      }
      return best;
    }
    const B = this.meta.bucketSize;
    let best = a;
    let bestV = -Infinity;
    for (let k = Math.floor(a / B); k < Math.ceil(b / B) && k < this.meta.buckets; k++) {
      const v = aboveBuckets[k]! + heapBuckets[k]!;
      if (v > bestV) [best, bestV] = [Math.max(a, k * B), v];
    }
    return best;
  }
}

/** Each kind's class bit (eventClassBit), as the masks of lod.ts have them. */
const BIT_OF_KIND = new Uint8Array(256);
for (let k = 0; k < 256; k++) BIT_OF_KIND[k] = eventClassBit(eventClassOfKind(k));
