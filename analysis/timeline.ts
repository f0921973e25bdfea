// The timeline series: memory in use after every event (heap requested and usable, stack, static), and the same per fixed interval of events or of time.
import { NONE, type Model } from './model.js';

/** Per event, after the event. Columns of the model are shared, not copied. */
export interface EventSeries {
  count: number;
  /** Nanoseconds since the start (the model's `events.time`). */
  time: Float64Array;
  heapRequested: Float64Array;
  heapUsable: Float64Array;
  /** Stack bytes summed over threads (`events.stackTotal`). */
  stack: Float64Array;
  /** Bytes of the static objects registered at or before the event. */
  static: Float64Array;
}

/** `{ every: 1000, unit: 'events' }`: 1000 events per interval; `{ every: 1e7, unit: 'time' }`: 10 ms per interval. */
export interface IntervalSpec {
  every: number;
  unit: 'events' | 'time';
}

/**
 * One row per interval. Interval k holds events `startEvent[k] ..= endEvent[k]` (empty when `endEvent < startEvent`,
 * which only time intervals can be). The values are those after its last event (for an empty interval: after the
 * last event before it; 0 before the first event); the maxima are over the values after each of its events and the
 * value it starts with, so a max is never below the end value.
 */
export interface IntervalSeries {
  spec: IntervalSpec;
  count: number;
  startEvent: Int32Array;
  endEvent: Int32Array;
  /** ns. Events: the time of its first event; time: k × every. */
  startTime: Float64Array;
  /** ns. Events: the time of its last event; time: (k + 1) × every. */
  endTime: Float64Array;
  heapRequested: Float64Array;
  heapUsable: Float64Array;
  stack: Float64Array;
  static: Float64Array;
  maxHeapRequested: Float64Array;
  maxHeapUsable: Float64Array;
  maxStack: Float64Array;
}

/** A bad interval spec, or one that makes too many intervals. */
export class IntervalError extends RangeError {
  override name = 'IntervalError';
}

/** Time intervals are refused beyond this many (a 1 ns interval over a run of seconds). */
export const MAX_INTERVALS = 10_000_000;

/** Static bytes registered at or before each event (statics.event / statics.size, summed). */
export function staticSeries(model: Model): Float64Array {
  const n = model.events.count;
  const out = new Float64Array(n);
  const st = model.statics;
  for (let i = 0; i < st.count; i++) {
    const e = st.event[i]!;
    if (e >= 0 && e < n) out[e] = out[e]! + st.size[i]!;
  }
  for (let i = 1; i < n; i++) out[i] = out[i]! + out[i - 1]!;
  return out;
}

/** The per-event series. */
export function eventSeries(model: Model): EventSeries {
  const ev = model.events;
  return {
    count: ev.count,
    time: ev.time,
    heapRequested: ev.heapRequested,
    heapUsable: ev.heapUsable,
    stack: ev.stackTotal,
    static: staticSeries(model),
  };
}

/** The stack bytes of one thread (row in `model.threads`) after every event: its last value carried over other threads' events. */
export function threadStackSeries(model: Model, thread: number): Float64Array {
  const ev = model.events;
  const out = new Float64Array(ev.count);
  let cur = 0;
  for (let i = 0; i < ev.count; i++) {
    if (ev.thread[i] === thread) cur = ev.stack[i]!;
    out[i] = cur;
  }
  return out;
}

/** Checks a spec; returns a message for a bad one, else null. */
export function intervalSpecError(spec: IntervalSpec): string | null {
  if (spec.unit !== 'events' && spec.unit !== 'time') return `unknown interval unit '${String(spec.unit)}'`;
  if (!Number.isFinite(spec.every) || spec.every <= 0) return `interval must be positive, got ${spec.every}`;
  if (spec.unit === 'events' && !Number.isSafeInteger(spec.every)) return `an interval of events must be a whole number, got ${spec.every}`;
  return null;
}

function allocSeries(spec: IntervalSpec, count: number): IntervalSeries {
  const f = (): Float64Array => new Float64Array(count);
  return {
    spec,
    count,
    startEvent: new Int32Array(count),
    endEvent: new Int32Array(count),
    startTime: f(),
    endTime: f(),
    heapRequested: f(),
    heapUsable: f(),
    stack: f(),
    static: f(),
    maxHeapRequested: f(),
    maxHeapUsable: f(),
    maxStack: f(),
  };
}

/**
 * Aggregates the per-event series per interval. Time intervals are aligned to multiples of `every` from time 0 and run
 * from the one holding the first event to the one holding the last; an event whose time is below an earlier event's
 * (threads' clocks are interpolated separately) stays in the earlier event's interval, so intervals keep event order.
 * Throws IntervalError for a bad spec or more than MAX_INTERVALS time intervals.
 */
export function intervalSeries(model: Model, spec: IntervalSpec, series: EventSeries = eventSeries(model)): IntervalSeries {
  const bad = intervalSpecError(spec);
  if (bad !== null) throw new IntervalError(bad);
  const n = series.count;
  const { time, heapRequested: hr, heapUsable: hu, stack: st, static: sb } = series;
  if (n === 0) return allocSeries(spec, 0);
  const every = spec.every;

  let count: number;
  let first = 0;
  if (spec.unit === 'events') {
    count = Math.ceil(n / every);
  } else {
    let maxT = 0;
    for (let i = 0; i < n; i++) if (time[i]! > maxT) maxT = time[i]!;
    first = Math.floor(Math.max(0, time[0]!) / every);
    const last = Math.max(first, Math.floor(maxT / every));
    count = last - first + 1;
    if (count > MAX_INTERVALS) {
      throw new IntervalError(`an interval of ${every} ns makes ${count} intervals (at most ${MAX_INTERVALS}); use a larger one`);
    }
  }
  const out = allocSeries(spec, count);

  // Values carried from the previous event (0 before the first).
  let cr = 0;
  let cu = 0;
  let cs = 0;
  let cst = 0;
  let i = 0;
  let bucket = first;
  for (let k = 0; k < count; k++) {
    let end: number;
    if (spec.unit === 'events') {
      end = Math.min(n, (k + 1) * every);
      out.startTime[k] = time[i]!;
      out.endTime[k] = time[end - 1]!;
    } else {
      // An event's interval is the latest one seen so far (times of different threads are interpolated separately).
      end = i;
      while (end < n) {
        const b = Math.max(bucket, Math.floor(time[end]! / every));
        if (b > first + k) break;
        bucket = b;
        end++;
      }
      if (k === count - 1) end = n;
      out.startTime[k] = (first + k) * every;
      out.endTime[k] = (first + k + 1) * every;
    }
    out.startEvent[k] = i;
    out.endEvent[k] = end - 1;
    let mr = cr;
    let mu = cu;
    let ms = cs;
    for (; i < end; i++) {
      const r = hr[i]!;
      const u = hu[i]!;
      const s = st[i]!;
      if (r > mr) mr = r;
      if (u > mu) mu = u;
      if (s > ms) ms = s;
    }
    if (end > 0 && end - 1 >= out.startEvent[k]!) {
      cr = hr[end - 1]!;
      cu = hu[end - 1]!;
      cs = st[end - 1]!;
      cst = sb[end - 1]!;
    }
    out.heapRequested[k] = cr;
    out.heapUsable[k] = cu;
    out.stack[k] = cs;
    out.static[k] = cst;
    out.maxHeapRequested[k] = mr;
    out.maxHeapUsable[k] = mu;
    out.maxStack[k] = ms;
  }
  return out;
}

/** Index of the first event with the largest heap usable + stack (NONE if there are no events). */
export function peakEvent(series: EventSeries): number {
  let best = -1;
  let at = NONE;
  for (let i = 0; i < series.count; i++) {
    const v = series.heapUsable[i]! + series.stack[i]!;
    if (v > best) {
      best = v;
      at = i;
    }
  }
  return at;
}
