// The timeline series: memory in use after every event (heap requested and usable, stack, static), and the same per fixed interval of events or of time.
import type { EventFold, FoldEvent, TraceStart } from './event-fold.js';
import { foldModel, modelStart } from './model-fold.js';
import { NONE, type Model } from './model.js';
import { Kind } from './trace/format.js';

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

/** One interval as `IntervalFold` tells it (the object is reused): the fields of row k of an `IntervalSeries`. */
export interface IntervalRow {
  /** Its number, from 0. */
  k: number;
  startEvent: number;
  endEvent: number;
  startTime: number;
  endTime: number;
  heapRequested: number;
  heapUsable: number;
  stack: number;
  static: number;
  maxHeapRequested: number;
  maxHeapUsable: number;
  maxStack: number;
}

/** The columns of IntervalSeries that hold numbers, in the order of IntervalRow's fields after `k`. */
const ROW_FIELDS = ['startEvent', 'endEvent', 'startTime', 'endTime', 'heapRequested', 'heapUsable', 'stack', 'static', 'maxHeapRequested', 'maxHeapUsable', 'maxStack'] as const;

/**
 * The per-event values aggregated per interval, as a fold. Time intervals are aligned to multiples of `every` from
 * time 0 and run from the one holding the first event to the one holding the last; an event whose time is below an
 * earlier event's (threads' clocks are interpolated separately) stays in the earlier event's interval, so intervals
 * keep event order. Each interval is complete when an event beyond it comes (or at the end): it is told to `sink` if
 * one is given (nothing is kept: a CSV of every event streams), else kept for `result`. The constructor throws
 * IntervalError for a bad spec, `result` for more than MAX_INTERVALS time intervals (none are told or kept beyond
 * that: a sink's rows are not the answer until `result` has returned).
 */
export class IntervalFold implements EventFold {
  /** Intervals' times, and time intervals themselves. */
  readonly needsTime = true;
  readonly spec: IntervalSpec;
  private readonly sink: ((row: IntervalRow) => void) | null;
  private readonly row: IntervalRow = { k: 0, startEvent: 0, endEvent: -1, startTime: 0, endTime: 0, heapRequested: 0, heapUsable: 0, stack: 0, static: 0, maxHeapRequested: 0, maxHeapUsable: 0, maxStack: 0 };
  /** The kept rows (without a sink), grown as intervals complete. */
  private kept: IntervalSeries = allocSeries({ every: 1, unit: 'events' }, 0);
  private count = 0;
  /** The current interval's number: events, its number; time, its start as a multiple of `every`. */
  private bucket = NaN;
  private started = false;
  private statics = 0;

  constructor(start: TraceStart, spec: IntervalSpec, sink: ((row: IntervalRow) => void) | null = null) {
    const bad = intervalSpecError(spec);
    if (bad !== null) throw new IntervalError(bad);
    this.spec = spec;
    this.sink = sink;
    // Event intervals: as many as the event count makes, when it is known (a streaming reader may count as it goes).
    if (sink === null) this.kept = allocSeries(spec, spec.unit === 'events' && start.events >= 0 ? Math.ceil(start.events / spec.every) : 16);
  }

  event(e: FoldEvent): void {
    if (e.kind === Kind.STATIC) this.statics += e.value;
    const every = this.spec.every;
    const row = this.row;
    let b: number;
    if (this.spec.unit === 'events') b = Math.floor(e.index / every);
    else if (!this.started) b = Math.floor(Math.max(0, e.time) / every); // the first interval
    else b = Math.max(this.bucket, Math.floor(e.time / every));
    if (!this.started) {
      this.started = true;
      this.bucket = b;
      this.open(e);
    }
    // Each interval before the event's is complete (those in between are empty).
    while (this.bucket < b) {
      if (this.count >= MAX_INTERVALS && this.spec.unit === 'time') {
        // Too many: refused in result(), which only needs their number.
        this.count += b - this.bucket;
        this.bucket = b;
        break;
      }
      this.close();
      this.bucket++;
      this.open(e);
    }
    if (row.endEvent < row.startEvent && this.spec.unit === 'events') row.startTime = e.time;
    row.endEvent = e.index;
    if (this.spec.unit === 'events') row.endTime = e.time;
    const r = (row.heapRequested = e.heapRequested);
    const u = (row.heapUsable = e.heapUsable);
    const st = (row.stack = e.stackTotal);
    row.static = this.statics;
    if (r > row.maxHeapRequested) row.maxHeapRequested = r;
    if (u > row.maxHeapUsable) row.maxHeapUsable = u;
    if (st > row.maxStack) row.maxStack = st;
  }

  /** Starts the interval `bucket` at event `e` (its first event, if it has any): values carried from the one before. */
  private open(e: FoldEvent): void {
    const row = this.row;
    row.k = this.count;
    row.startEvent = e.index;
    row.endEvent = e.index - 1;
    if (this.spec.unit === 'time') {
      row.startTime = this.bucket * this.spec.every;
      row.endTime = (this.bucket + 1) * this.spec.every;
    }
    row.maxHeapRequested = row.heapRequested;
    row.maxHeapUsable = row.heapUsable;
    row.maxStack = row.stack;
  }

  private close(): void {
    const row = this.row;
    const k = this.count++;
    if (k >= MAX_INTERVALS && this.spec.unit === 'time') return; // refused in result()
    if (this.sink !== null) return this.sink(row);
    if (k >= this.kept.count) this.kept = grownSeries(this.kept, Math.max(16, this.kept.count * 2));
    const out = this.kept as unknown as Record<(typeof ROW_FIELDS)[number], Float64Array | Int32Array>;
    for (const f of ROW_FIELDS) out[f][k] = row[f];
  }

  finish(): void {
    if (this.started) this.close();
    this.started = false;
  }

  /** The intervals (after `finish`; none when they went to a sink). Throws IntervalError for too many time intervals. */
  result(): IntervalSeries {
    const count = this.count;
    if (this.spec.unit === 'time' && count > MAX_INTERVALS) {
      throw new IntervalError(`an interval of ${this.spec.every} ns makes ${count} intervals (at most ${MAX_INTERVALS}); use a larger one`);
    }
    return grownSeries(this.kept, this.sink === null ? count : 0, this.spec);
  }
}

/** `s` copied into a series of `count` rows (cut or padded with zeros). */
function grownSeries(s: IntervalSeries, count: number, spec = s.spec): IntervalSeries {
  const out = allocSeries(spec, count);
  const n = Math.min(count, s.count);
  const from = s as unknown as Record<(typeof ROW_FIELDS)[number], Float64Array | Int32Array>;
  const to = out as unknown as Record<(typeof ROW_FIELDS)[number], Float64Array | Int32Array>;
  for (const f of ROW_FIELDS) to[f].set(from[f].subarray(0, n));
  return out;
}

/** `IntervalFold` over a decoded model. Throws IntervalError for a bad spec or more than MAX_INTERVALS time intervals. */
export function intervalSeries(model: Model, spec: IntervalSpec): IntervalSeries {
  const fold = new IntervalFold(modelStart(model), spec);
  foldModel(model, [fold]);
  return fold.result();
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
