// The viewer's index (analysis/trace-index.ts) read back gives every event exactly as the decoded model does: the
// chart's series, each event's detail (eventDetail) and call stack (callStackAt), the next event of a class.
import { describe, expect, it } from 'vitest';
import { callStackAt, eventClassBit, eventDetail } from '../../analysis/event-detail.js';
import { findSites, findSitesIn, nextEventOfClass } from '../../analysis/event-sets.js';
import { chartSeries, monotonicTimes } from '../../analysis/lod.js';
import { orphaningEvents } from '../../analysis/linked.js';
import { staticSeries } from '../../analysis/timeline.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { memorySource } from '../../analysis/trace/byte-source.js';
import { streamSource } from '../../analysis/trace/resolve-stream.js';
import { decodeRange, encodeRange, IndexFold, IndexReader, NOT_FREED, SUMMARY_FIELDS, S, type IndexStore } from '../../analysis/trace-index.js';
import { foldTraces } from '../support/fold-traces.js';

/** Builds an index in memory: the buckets one after the other, the free column as a map. */
export function memoryIndex(bytes: Uint8Array, bucketSize?: number): IndexReader {
  const parts: Uint8Array[] = [];
  const frees = new Map<number, number>();
  let fold: IndexFold | null = null;
  streamSource(memorySource(bytes), { window: 4096 }).run((start) => {
    parts.length = 0;
    fold = new IndexFold(start, { bucket: (b) => parts.push(b), freed: (row, e) => frees.set(row, e) }, bucketSize);
    return [fold];
  });
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  const { meta, summary } = (fold as unknown as IndexFold).result();
  const store: IndexStore = { bucketBytes: (o, n) => all.subarray(o, o + n), freeOf: (row) => frees.get(row) ?? NOT_FREED };
  return new IndexReader(meta, summary, store);
}

describe('trace index', () => {
  for (const [name, bytes] of foldTraces().filter(([n]) => !n.startsWith('invalid/'))) {
    it.each([7, 1 << 14])(`${name}: every event as the model has it (buckets of %i events)`, (bucketSize) => {
      const model = decodeTrace(bytes);
      const index = memoryIndex(bytes, bucketSize);
      const n = model.events.count;
      expect(index.events).toBe(n);
      const statics = staticSeries(model);
      const orphans = orphaningEvents(model);
      const series = chartSeries(model, null, statics);
      const times = monotonicTimes(model);
      const range = decodeRange(encodeRange(index.range(0, n)).slice().buffer);
      expect(range.count).toBe(n);
      expect(Array.from(range.above)).toEqual(Array.from(series.above));
      expect(Array.from(range.heap)).toEqual(Array.from(series.heap));
      expect(Array.from(range.statics)).toEqual(Array.from(statics));
      // Times to the nanosecond.
      expect(Array.from(range.times)).toEqual(Array.from(times, Math.round));
      expect(Array.from(range.kinds)).toEqual(Array.from(model.events.kind));
      for (let e = 0; e < n; e++) {
        const whole = eventDetail(model, e, statics, orphans);
        expect(index.detail(e), `event ${e}`).toEqual({ ...whole, timeNs: Math.round(whole.timeNs) });
        expect(index.callStack(e), `stack at ${e}`).toEqual(callStackAt(model, e));
      }
      for (const cls of ['alloc', 'free', 'call', 'return'] as const) {
        expect(index.nextOfClass(-1, 1, eventClassBit(cls))).toBe(nextEventOfClass(model, -1, 1, cls));
        expect(index.nextOfClass(n, -1, eventClassBit(cls))).toBe(nextEventOfClass(model, n, -1, cls));
      }
      // The search finds the same sites, first events and counts from the index's per-site numbers.
      for (const q of ['main', '.c', 'alloc', 'x']) expect(findSitesIn(index.run, index.meta.siteFirst, index.meta.siteEvents, q), q).toEqual(findSites(model, q));
      // The summary of each bucket bounds its events.
      for (let k = 0; k < index.meta.buckets; k++) {
        const r = SUMMARY_FIELDS * k;
        const a = k * index.meta.bucketSize;
        const b = Math.min(n, a + index.meta.bucketSize);
        expect(index.summary[r + S.HEAP_MAX]).toBe(Math.max(...series.heap.subarray(a, b)));
        expect(index.summary[r + S.ABOVE_MIN]).toBe(Math.min(...series.above.subarray(a, b)));
      }
    });
  }
});
