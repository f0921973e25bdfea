// The chart's data for a trace opened through the host's index (index mode): the bucket summaries the host sends
// (analysis/trace-index.ts) drawn when the whole run or much of it is in view; the fine summaries (one per 256 events)
// of the part in view fetched from the host when a bucket would be wider than a column, so the chart never draws a
// summary much wider than a column; and the events in view fetched when few enough of them are in view, drawn one by
// one. Until a window arrives, and beyond it, the coarser level stands in. The page holds the summaries (about 100
// bytes per bucket of 16,384 events), one window of fine rows (at most 6 MiB) and one of events, never the whole trace.
import { eventClassBit, eventClassOfKind } from '../../../analysis/event-detail.js';
import { MaskPyramid, MinMaxPyramid, type Extent } from '../../../analysis/lod.js';
import { decodeFine, decodeRange, F, FINE_FIELDS, S, SUMMARY_FIELDS, type IndexMeta, type IndexRange } from '../../../analysis/trace-index.js';
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
}

/** A series read from the window where it holds the event, else its fine row's largest value, else its bucket's. */
function column(of: () => { win: Float64Array | null; first: number; fine: FineWindow | null; pick: (w: FineWindow) => Float64Array; bucket: Float64Array }, bucketSize: number, fineSize: number, count: number): SeriesColumn {
  return new Proxy({ length: count } as SeriesColumn, {
    get(target, key) {
      if (typeof key !== 'string') return undefined;
      if (key === 'length') return count;
      const e = Number(key);
      if (!Number.isInteger(e)) return (target as unknown as Record<string, unknown>)[key];
      const { win, first, fine, pick, bucket } = of();
      if (win !== null && e >= first && e < first + win.length) return win[e - first];
      const k = Math.floor(e / fineSize);
      if (fine !== null && k >= fine.first && k < fine.first + fine.count) return pick(fine)[k - fine.first];
      return bucket[Math.floor(e / bucketSize)];
    },
  });
}

export class IndexChartData {
  readonly data: ChartData;
  readonly kinds: Uint8Array;
  private window: IndexRange | null = null;
  private winPyramids: { above: MinMaxPyramid; heap: MinMaxPyramid; statics: MinMaxPyramid; masks: MaskPyramid } | null = null;
  private readonly bucket: { aboveMin: Float64Array; aboveMax: Float64Array; heapMin: Float64Array; heapMax: Float64Array; staticMax: Float64Array; mask: Uint8Array };
  private readonly pyr: { aboveMin: MinMaxPyramid; aboveMax: MinMaxPyramid; heapMin: MinMaxPyramid; heapMax: MinMaxPyramid; staticMax: MinMaxPyramid; mask: MinMaxPyramid };
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
    this.bucket = { aboveMin: col(S.ABOVE_MIN), aboveMax: col(S.ABOVE_MAX), heapMin: col(S.HEAP_MIN), heapMax: col(S.HEAP_MAX), staticMax: col(S.STATIC_MAX), mask: Uint8Array.from(col(S.MASK)) };
    const b = this.bucket;
    this.pyr = {
      aboveMin: new MinMaxPyramid(b.aboveMin),
      aboveMax: new MinMaxPyramid(b.aboveMax),
      heapMin: new MinMaxPyramid(b.heapMin),
      heapMax: new MinMaxPyramid(b.heapMax),
      staticMax: new MinMaxPyramid(b.staticMax),
      mask: new MinMaxPyramid(Float64Array.from(b.mask)),
    };
    const B = meta.bucketSize;
    const count = meta.events;
    const FS = meta.fineSize;
    const win = (pick: (r: IndexRange) => Float64Array, fine: (w: FineWindow) => Float64Array, bucket: Float64Array) => () => ({
      win: this.window ? pick(this.window) : null,
      first: this.window?.first ?? 0,
      fine: this.fine,
      pick: fine,
      bucket,
    });
    const win_ = (): IndexRange | null => this.window;
    const kinds = new Proxy(new Uint8Array(0), {
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
    this.kinds = kinds;
    const scratch: Extent = { min: 0, max: 0 };
    const extent = (which: 'above' | 'heap' | 'statics', lo: MinMaxPyramid, hi: MinMaxPyramid, fine: (f: FineWindow) => [MinMaxPyramid, MinMaxPyramid]) => ({
      extent: (a: number, b: number, out: Extent = { min: Infinity, max: -Infinity }): Extent => {
        const w = this.window;
        if (w !== null && this.winPyramids !== null && a >= w.first && b <= w.first + w.count) return this.winPyramids[which].extent(a - w.first, b - w.first, out);
        const f = this.fineCovering(a, b);
        if (f !== null) {
          const [flo, fhi] = fine(f);
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
    const time = indexTimes(meta, summary, () => this.window);
    this.data = {
      count,
      series: {
        above: column(win((r) => r.above, (f) => f.aboveMax.values, b.aboveMax), B, FS, count),
        heap: column(win((r) => r.heap, (f) => f.heapMax.values, b.heapMax), B, FS, count),
        static: column(win((r) => r.statics, (f) => f.staticMax.values, b.staticMax), B, FS, count),
      },
      above: extent('above', this.pyr.aboveMin, this.pyr.aboveMax, (f) => [f.aboveMin, f.aboveMax]),
      heap: extent('heap', this.pyr.heapMin, this.pyr.heapMax, (f) => [f.heapMin, f.heapMax]),
      statics: extent('statics', this.pyr.staticMax, this.pyr.staticMax, (f) => [f.staticMax, f.staticMax]),
      maskPyramid: {
        or: (a: number, b: number): number => {
          const w = this.window;
          if (w !== null && this.winPyramids !== null && a >= w.first && b <= w.first + w.count) return this.winPyramids.masks.or(a - w.first, b - w.first);
          const f = this.fineCovering(a, b);
          if (f !== null) {
            const j0 = Math.floor(a / FS) - f.first;
            return f.masks.or(j0, Math.max(j0 + 1, Math.ceil(b / FS) - f.first));
          }
          let bits = 0;
          for (let k = Math.floor(a / B); k < Math.max(Math.floor(a / B) + 1, Math.ceil(b / B)) && k < meta.buckets; k++) bits |= this.bucket.mask[k]!;
          return bits;
        },
      },
      times: time.times,
      eventAtTime: time.eventAt,
      endsAtLastEvent: false,
      representative: (a, b) => this.representative(a, b),
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
        const r = decodeRange(bytes);
        this.window = r;
        const masks = new Uint8Array(r.count);
        for (let i = 0; i < r.count; i++) masks[i] = BIT_OF_KIND[r.kinds[i]!]!;
        this.winPyramids = { above: new MinMaxPyramid(r.above), heap: new MinMaxPyramid(r.heap), statics: new MinMaxPyramid(r.statics), masks: new MaskPyramid(masks) };
        this.fetchTimes.push(performance.now() - t0);
        this.onWindow();
      },
      () => {
        this.fetching = null;
      },
    );
  }

  /** The fullest event of [a, b): from the window when it holds them, else the first event of the fullest bucket. */
  representative(a: number, b: number): number {
    const w = this.window;
    if (w !== null && a >= w.first && b <= w.first + w.count) {
      let best = a;
      let bestV = -Infinity;
      for (let e = a; e < b; e++) {
        const v = w.above[e - w.first]! + w.heap[e - w.first]!;
        if (v > bestV) [best, bestV] = [e, v];
      }
      return best;
    }
    const f = this.fineCovering(a, b);
    if (f !== null) {
      const FS = this.meta.fineSize;
      let best = a;
      let bestV = -Infinity;
      const am = f.aboveMax.values;
      const hm = f.heapMax.values;
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
      const v = this.bucket.aboveMax[k]! + this.bucket.heapMax[k]!;
      if (v > bestV) [best, bestV] = [Math.max(a, k * B), v];
    }
    return best;
  }
}

/** Each kind's class bit (eventClassBit), as the masks of lod.ts have them. */
const BIT_OF_KIND = new Uint8Array(256);
for (let k = 0; k < 256; k++) BIT_OF_KIND[k] = eventClassBit(eventClassOfKind(k));
