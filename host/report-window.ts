// What `report --html` embeds for a trace opened through its index (a large trace): the summaries whole, and one
// window of events — WINDOW_EVENTS around the total peak — with what the page needs to answer for them as the host
// would (host/index-api.ts): the index's buckets that cover the window, and the few facts those buckets point at
// elsewhere in the trace (the free of each block they name, the frames entered before them that their call stacks
// reach, the place of a free that orphaned a block they made). Everything is read from the index (host/index-cache.ts,
// the viewer's cache beside the trace), never from the trace itself: memory follows the window, not the trace.
import { NONE } from '../analysis/model.js';
import { IndexBucket, S, SUMMARY_FIELDS, type IndexMeta, type IndexReader } from '../analysis/event-index.js';
import type { EmbeddedIndex } from './embedded-types.js';
import type { TraceIndex } from './index-cache.js';

/** Events a report holds one by one (the window around the total peak). */
export const WINDOW_EVENTS = 200_000;
/**
 * The most bytes the window's data may take before base64 (its buckets' events, the frees, frames, places and live
 * blocks it names): a window over it is halved until it fits.
 */
export const MAX_WINDOW_BYTES = 32 << 20;

/**
 * The event the page's "Total peak" goes to in index mode: the first bucket with the most stack + static + heap (by
 * its summary's maxima), then its first fullest event.
 */
export function totalPeak(reader: IndexReader): number {
  const s = reader.summary;
  const { buckets, bucketSize: B, events } = reader.meta;
  if (events === 0) return 0;
  let k = 0;
  let kv = -Infinity;
  for (let b = 0; b < buckets; b++) {
    const v = s[SUMMARY_FIELDS * b + S.ABOVE_MAX]! + s[SUMMARY_FIELDS * b + S.HEAP_MAX]!;
    if (v > kv) [k, kv] = [b, v];
  }
  const r = reader.range(k * B, Math.min(events, (k + 1) * B));
  let best = 0;
  for (let i = 1; i < r.count; i++) if (r.above[i]! + r.heap[i]! > r.above[best]! + r.heap[best]!) best = i;
  return r.first + best;
}

/** `n` events around `peak`, inside [0, events). */
export function windowAround(peak: number, n: number, events: number): { first: number; end: number } {
  const first = Math.max(0, Math.min(peak - Math.floor(n / 2), events - n));
  return { first, end: Math.min(events, first + n) };
}

/** The buckets covering events [first, end): their range and their bytes' place in the index's bucket section. */
function coveringBuckets(meta: IndexMeta, summary: Float64Array, first: number, end: number): { k0: number; k1: number; offset: number; bytes: number } {
  const B = meta.bucketSize;
  const k0 = Math.floor(first / B);
  const k1 = end > first ? Math.ceil(end / B) : k0;
  let bytes = 0;
  for (let k = k0; k < k1; k++) bytes += summary[SUMMARY_FIELDS * k + S.LENGTH]!;
  return { k0, k1, offset: k1 > k0 ? summary[SUMMARY_FIELDS * k0 + S.OFFSET]! : 0, bytes };
}

/** The bucket holding frame row f (as IndexReader finds it: the last bucket whose frames start at or before f). */
function bucketOfFrame(meta: IndexMeta, summary: Float64Array, f: number): number {
  let lo = 0;
  let hi = meta.buckets - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (summary[SUMMARY_FIELDS * mid + S.FRAME_START]! <= f) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

export interface ReportWindow {
  index: Omit<EmbeddedIndex, 'report' | 'leftOut'>;
  /** The covering buckets' bytes (EMBEDDED_BUCKETS_ID). */
  buckets: Uint8Array;
}

/** The window's data: its buckets, and the frees, frames and places they point at outside them. */
export function reportWindow(ix: TraceIndex, first: number, end: number, peak: number): ReportWindow {
  const reader = ix.reader;
  const { meta, summary } = ix;
  const B = meta.bucketSize;
  const cover = coveringBuckets(meta, summary, first, end);
  // Read from the index file and each verified against its checksum.
  const buckets = ix.bucketRange(cover.k0, cover.k1);
  // The bytes read must be the buckets the reader decodes: checked by decoding them as the page will.
  for (let k = cover.k0, at = 0; k < cover.k1; k++) {
    const r = SUMMARY_FIELDS * k;
    const n = summary[r + S.LENGTH]!;
    void new IndexBucket(buckets.subarray(at, at + n), k * B, Math.min(B, meta.events - k * B), summary[r + S.BLOCK_START]!, summary[r + S.FRAME_START]!);
    at += n;
  }
  const inside = (k: number): boolean => k >= cover.k0 && k < cover.k1;

  const frees = new Map<number, number>();
  const orphans = new Set<number>();
  for (let e = first; e < end; e++) {
    const d = reader.detail(e);
    if (d.created !== null) {
      frees.set(d.created.block, d.created.freeEvent ?? -1);
      if (d.created.orphanedBy !== null) orphans.add(d.created.orphanedBy.event);
    }
    for (const b of d.linked?.blocks ?? []) frees.set(b.block, b.freeEvent ?? -1);
  }
  const places: EmbeddedIndex['places'] = { event: [], place: [], flags: [] };
  for (const e of orphans) {
    const k = Math.floor(e / B);
    if (inside(k)) continue;
    const b = reader.bucket(k);
    places.event.push(e);
    places.place.push(b.place[e - b.first]!);
    places.flags.push(b.flags[e - b.first]!);
  }
  // Every frame open at a window event, up to its thread's outermost: those entered outside the covering buckets.
  const frames: EmbeddedIndex['frames'] = { row: [], site: [], depth: [], enter: [], parent: [] };
  const seen = new Set<number>();
  for (let k = Math.floor(first / B); k < Math.ceil(end / B); k++) {
    const b = reader.bucket(k);
    for (let i = Math.max(0, first - b.first); i < Math.min(b.count, end - b.first); i++) {
      for (let f = b.frame[i]!; f !== NONE && !seen.has(f); ) {
        seen.add(f);
        const fb = reader.bucket(bucketOfFrame(meta, summary, f));
        const j = f - fb.frameStart;
        const parent = fb.frameParent[j]!;
        if (!inside(Math.floor(fb.first / B))) {
          frames.row.push(f);
          frames.site.push(fb.frameSite[j]!);
          frames.depth.push(fb.frameDepth[j]!);
          frames.enter.push(fb.frameEnter[j]!);
          frames.parent.push(parent);
        }
        f = parent;
      }
    }
  }
  const live = { rows: [] as number[], leakClass: [] as number[], orphanedBy: [] as number[] };
  meta.live.rows.forEach((row, i) => {
    if (!frees.has(row)) return;
    live.rows.push(row);
    live.leakClass.push(meta.live.leakClass[i]!);
    live.orphanedBy.push(meta.live.orphanedBy[i]!);
  });
  return {
    index: {
      meta: { ...meta, live },
      window: { first, end, peak, firstBucket: cover.k0, buckets: cover.k1 - cover.k0 },
      frees: { rows: [...frees.keys()], events: [...frees.values()] },
      frames,
      places,
    },
    buckets,
  };
}

/** The bytes a window's data takes before base64: its buckets, and its JSON facts (frees, frames, places, live). */
export function windowBytes(w: ReportWindow): number {
  const { frees, frames, places, meta } = w.index;
  return w.buckets.byteLength + JSON.stringify({ frees, frames, places, live: meta.live }).length;
}

/**
 * The window a report embeds: `n` events around the total peak, halved until its data fits `maxBytes` (a cheap look
 * at its buckets' sizes first, then the whole data) — down to no events at all, should one bucket alone not fit.
 */
export function boundedWindow(ix: TraceIndex, n = WINDOW_EVENTS, maxBytes = MAX_WINDOW_BYTES): ReportWindow {
  const peak = totalPeak(ix.reader);
  for (;;) {
    const { first, end } = windowAround(peak, n, ix.meta.events);
    if (n > 0 && coveringBuckets(ix.meta, ix.summary, first, end).bytes > maxBytes) {
      n = Math.floor(n / 2);
      continue;
    }
    const w = reportWindow(ix, first, end, peak);
    if (n === 0 || windowBytes(w) <= maxBytes) return w;
    n = Math.floor(n / 2);
  }
}
