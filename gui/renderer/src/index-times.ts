// Index mode's wall-time axis: every event's time on the non-decreasing axis the whole-trace viewer draws
// (monotonicTimes), read as a column the chart indexes by event. The bucket summaries hold the axis's time at each
// bucket's first and last event (TIME_MIN, TIME_MAX); between them an event is placed by its position in its bucket
// (linearly: the bucket is the resolution there); the events of the window fetched have their own times, exact. At a
// window's edge inside a bucket the placed times are held to the exact ones, so the axis never steps back.
import { S, SUMMARY_FIELDS, type IndexMeta, type IndexRange } from '../../../analysis/event-index.js';

/**
 * `window()`: the events fetched now, or null; read at each access. `times` is the column; `eventAt`, the first event
 * at or after a time, searches it without going through the column (a chart frame searches once per pixel column).
 * `shift()`, read at each access too, is added to every time (a lane's start on the lanes page's shared axis).
 */
export function indexTimes(meta: IndexMeta, summary: Float64Array, window: () => IndexRange | null, shift: () => number = () => 0): { times: Float64Array; eventAt: (ns: number) => number } {
  const B = meta.bucketSize;
  const count = meta.events;
  const lo = (k: number): number => summary[SUMMARY_FIELDS * k + S.TIME_MIN]!;
  const hi = (k: number): number => summary[SUMMARY_FIELDS * k + S.TIME_MAX]!;
  /** The time placed by position in the bucket. */
  const placed = (e: number): number => {
    const k = Math.floor(e / B);
    const n = Math.min(B, count - k * B);
    return n <= 1 ? lo(k) : lo(k) + ((hi(k) - lo(k)) * (e - k * B)) / (n - 1);
  };
  const timeOf = (e: number): number => {
    const w = window();
    if (w === null || w.count === 0) return placed(e);
    const end = w.first + w.count;
    if (e >= w.first && e < end) return w.times[e - w.first]!;
    const k = Math.floor(e / B);
    if (e < w.first && k === Math.floor(w.first / B)) return Math.min(placed(e), w.times[0]!);
    if (e >= end && k === Math.floor((end - 1) / B)) return Math.max(placed(e), w.times[w.count - 1]!);
    return placed(e);
  };
  const eventAt = (at: number): number => {
    const ns = at - shift();
    let a = 0;
    let b = count;
    while (a < b) {
      const mid = (a + b) >>> 1;
      if (timeOf(mid) < ns) a = mid + 1;
      else b = mid;
    }
    return a;
  };
  const times = new Proxy(new Float64Array(0), {
    get(target, key) {
      if (typeof key === 'string' && /^\d+$/.test(key)) {
        const e = Number(key);
        return e < count ? timeOf(e) + shift() : undefined;
      }
      if (key === 'length') return count;
      return Reflect.get(target, key);
    },
  });
  return { times, eventAt };
}
