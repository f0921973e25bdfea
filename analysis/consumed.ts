// Live heap over the run by allocation site, folded over the trace's events in two passes: the first finds each
// site's most bytes live at once and picks the top sites, the second samples the bytes each of them (and the rest, as
// one "other" band) holds live at the end of each of a fixed number of buckets of events. Memory grows with sites,
// threads, live blocks and buckets, never with events.
import type { EventFold, FoldEvent, FoldSource, FoldTables, TraceEnd } from './event-fold.js';
import { NONE } from './model.js';
import { grown } from './trace/typed-arrays.js';

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

/**
 * Live requested bytes per charge key, after each event. Keys are numbers: a site id, or -(entry site + 1) for
 * interposed calls. `afterEvent` is told each event's index once its blocks are counted.
 */
class LiveBySite implements EventFold {
  /** Per key: bytes live now and the most at once; `charges` by index, `byKey` to find them. */
  readonly charges: Charge[] = [];
  private readonly byKey = new Map<number, number>();
  /** The charge index of each live block, by the reader's block handle. */
  private chargeOf = new Int32Array(64);
  heap = 0;
  events = 0;

  constructor(
    /** Called after each event, with its index. */
    private readonly afterEvent: (event: number) => void,
  ) {}

  event(e: FoldEvent, tables: FoldTables): void {
    const B = tables.blocks;
    if (e.oldBlock !== NONE) {
      const size = B.requested[e.oldBlock]!;
      this.charges[this.chargeOf[e.oldBlock]!]!.bytes -= size;
      this.heap -= size;
    }
    if (e.newBlock !== NONE) this.create(e.newBlock, B);
    this.afterEvent(e.index);
  }

  finish(end: TraceEnd): void {
    this.events = end.events;
  }

  private create(h: number, B: FoldTables['blocks']): void {
    const key = B.interposed[h] === 1 ? -(B.entry[h]! + 1) : B.site[h]!;
    let index = this.byKey.get(key);
    if (index === undefined) this.byKey.set(key, (index = this.charges.push({ key, bytes: 0, most: 0 }) - 1));
    const c = this.charges[index]!;
    const size = B.requested[h]!;
    this.chargeOf = grown(this.chargeOf, h + 1);
    this.chargeOf[h] = index;
    c.bytes += size;
    if (c.bytes > c.most) c.most = c.bytes;
    this.heap += size;
  }

  /** Bytes live now charged to `key`. */
  liveBytes(key: number): number {
    const index = this.byKey.get(key);
    return index === undefined ? 0 : this.charges[index]!.bytes;
  }
}

const keyName = (key: number): ConsumedKey => (key >= 0 ? `site:${key}` : `interposed:${-key - 1}`);

/** The live heap by top site, sampled at `buckets` points evenly over the events: two passes over `source`. */
export function consumed(source: FoldSource, options: { sites?: number; buckets?: number } = {}): Consumed {
  const p = new ConsumedPasses(options);
  source.run(() => [p.first()]);
  source.run(() => [p.second()]);
  return p.result();
}

/**
 * consumed's two passes as folds, for a reader that runs them beside other folds (analysis/panel-data.ts): `first()`
 * in one pass, `second()` in the next, then `result()`.
 */
export class ConsumedPasses {
  private firstPass = new LiveBySite(() => {});
  private out: Consumed | null = null;

  constructor(private readonly options: { sites?: number; buckets?: number } = {}) {}

  /** A fold for the first pass (a new one each call: a reader may run a pass again, and the last one counts). */
  first(): EventFold {
    return (this.firstPass = new LiveBySite(() => {}));
  }

  /** A fold for the second pass, sampling the first's top sites (likewise new each call). */
  second(): EventFold {
    return this.sampler();
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
