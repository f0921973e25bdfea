// Live heap over the run by allocation site, folded over the streamed records in two passes: the first finds each
// site's most bytes live at once and picks the top sites, the second samples the bytes each of them (and the rest, as
// one "other" band) holds live at the end of each of a fixed number of buckets of events. Memory grows with sites,
// threads, live blocks and buckets, never with events.
import type { ByteSource } from './trace/byte-source.js';
import { streamRecords } from './trace/event-stream.js';
import type { TraceHeader } from './trace/header.js';
import type { TraceRecord } from './trace/records.js';
import { foldFrames, type FrameFold } from './call-paths.js';
import { isEventKind } from './trace/format.js';
import { ProblemLog } from './problems.js';
import { LiveBlocks } from './trace/live-ids.js';
import { NONE } from './model.js';

/** Sites drawn as bands of their own; the rest are one band. */
export const CONSUMED_SITES = 8;
/** Samples across the run. */
export const CONSUMED_BUCKETS = 1000;

/**
 * Where heap bytes are charged, as the 'site' attribution keys them (attribution-groups.ts): an instrumented call by
 * its site ("site:<id>"), a call seen only by the interposed allocator by the entry site of the innermost open frame
 * ("interposed:<entry site>", 0 when none was open).
 */
export type ConsumedKey = string;

export interface Consumed {
  /** Events in the trace. */
  events: number;
  /** The last event of each bucket, ascending; the bucket's values are the bytes live right after it. */
  ends: Int32Array;
  /** The top sites, most bytes live at once first. */
  sites: { key: ConsumedKey; maxBytes: number }[];
  /** Requested bytes live: bytes[b * (sites.length + 1) + s]; s = sites.length is every other site. */
  bytes: Float64Array;
}

interface Charge {
  key: number;
  bytes: number;
  most: number;
}

/** One pass: live requested bytes per charge key. Keys are numbers: a site id, or -(entry site + 1) for interposed calls. */
class LiveBySite implements FrameFold<number> {
  /** Site ids of the open frames' entries, per thread, innermost last. */
  readonly stacks = new Map<number, number[]>();
  /** The live blocks, each tagged with the index of its key's Charge. */
  private readonly live = new LiveBlocks();
  /** Per key: bytes live now and the most at once; `charges` by index, `byKey` to find them. */
  readonly charges: Charge[] = [];
  private readonly byKey = new Map<number, number>();
  heap = 0;
  events = 0;

  constructor(
    /** Called after each event, with its index. */
    private readonly afterEvent: (event: number) => void,
  ) {}

  enter(r: TraceRecord): number {
    return r.site;
  }

  create(r: TraceRecord, s: readonly number[]): void {
    const key = r.interposed ? -((s.length > 0 ? s[s.length - 1]! : 0) + 1) : r.site;
    let index = this.byKey.get(key);
    if (index === undefined) this.byKey.set(key, (index = this.charges.push({ key, bytes: 0, most: 0 }) - 1));
    const c = this.charges[index]!;
    this.live.add(r.seq, index, r.size);
    c.bytes += r.size;
    if (c.bytes > c.most) c.most = c.bytes;
    this.heap += r.size;
  }

  end(id: number): void {
    const b = this.live.take(id);
    if (b === NONE) return;
    const size = this.live.size(b);
    this.charges[this.live.tag(b)]!.bytes -= size;
    this.heap -= size;
  }

  /** Bytes live now charged to `key`. */
  liveBytes(key: number): number {
    const index = this.byKey.get(key);
    return index === undefined ? 0 : this.charges[index]!.bytes;
  }

  record(r: TraceRecord): void {
    if (r.ignored) return;
    foldFrames(r, this);
    if (isEventKind(r.kind)) this.afterEvent(this.events++);
  }
}

const keyName = (key: number): ConsumedKey => (key >= 0 ? `site:${key}` : `interposed:${-key - 1}`);

/** The live heap by top site, sampled at `buckets` points evenly over the events. */
export function consumed(source: ByteSource, header: TraceHeader, problems: ProblemLog, options: { sites?: number; buckets?: number } = {}): Consumed {
  const p = new ConsumedPasses(options);
  streamRecords(source, header, problems, (r) => p.first(r));
  // The same records again: their problems were logged by the first pass.
  streamRecords(source, header, new ProblemLog(), (r) => p.second(r));
  return p.result();
}

/**
 * consumed's two passes as record visitors, for a reader that drives them beside other folds over the same records
 * (analysis/panel-data.ts): `first` on every record, `second` on every record again, then `result()`.
 */
export class ConsumedPasses {
  private readonly firstPass = new LiveBySite(() => {});
  private secondPass: LiveBySite | null = null;
  private out: Consumed | null = null;

  constructor(private readonly options: { sites?: number; buckets?: number } = {}) {}

  first(r: TraceRecord): void {
    this.firstPass.record(r);
  }

  second(r: TraceRecord): void {
    (this.secondPass ??= this.sampler()).record(r);
  }

  /** The top sites from the first pass, and the second pass that samples them. */
  private sampler(): LiveBySite {
    const first = this.firstPass;
    const events = first.events;
    const top = first.charges
      .filter((c) => c.most > 0)
      .map((c): [number, number] => [c.key, c.most])
      .sort((a, b) => b[1] - a[1] || a[0] - b[0])
      .slice(0, this.options.sites ?? CONSUMED_SITES);
    const n = Math.min(this.options.buckets ?? CONSUMED_BUCKETS, events);
    const ends = new Int32Array(n);
    for (let b = 0; b < n; b++) ends[b] = Math.floor(((b + 1) * events) / n) - 1;
    const width = top.length + 1;
    const bytes = new Float64Array(n * width);
    let bucket = 0;
    const second: LiveBySite = new LiveBySite((event) => {
      if (bucket >= n || event !== ends[bucket]) return;
      let rest = second.heap;
      top.forEach(([key], s) => {
        const v = second.liveBytes(key);
        bytes[bucket * width + s] = v;
        rest -= v;
      });
      bytes[bucket * width + top.length] = rest;
      bucket++;
    });
    this.out = { events, ends, sites: top.map(([key, most]) => ({ key: keyName(key), maxBytes: most })), bytes };
    return second;
  }

  /** After both passes. */
  result(): Consumed {
    if (this.out === null) this.sampler();
    return this.out!;
  }
}
