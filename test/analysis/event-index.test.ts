// The viewer's index (analysis/event-index.ts) read back gives every event exactly as the decoded model does: the
// chart's series, each event's detail (eventDetail) and call stack (callStackAt), the next event of a class.
import { describe, expect, it } from 'vitest';
import { callStackAt, eventClassBit, eventClassOfKind, eventDetail } from '../../analysis/event-detail.js';
import { findSites, findSitesIn, nextEventOfClass } from '../../analysis/event-sets.js';
import { chartSeries, instrumentedHeap, monotonicTimes } from '../../analysis/lod.js';
import { orphaningEvents } from '../../analysis/linked.js';
import { staticSeries } from '../../analysis/timeline.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { decodeFine, decodeRange, encodeFine, encodeRange, F, FINE_FIELDS, SUMMARY_FIELDS, S } from '../../analysis/event-index.js';
import { foldTraces } from '../support/fold-traces.js';
import { memoryIndex } from '../support/memory-index.js';

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
      // A range that starts inside a bucket has the same times (the wall-time axis of index mode).
      for (const from of [Math.floor(n / 3), n - 2].filter((f) => f > 0 && f % bucketSize !== 0)) {
        expect(Array.from(index.range(from, n).times), `from ${from}`).toEqual(Array.from(times.subarray(from), Math.round));
      }
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

    it.each([
      [7, 3],
      [1 << 14, 256],
      [16, 16],
    ])(`${name}: every fine summary is min/max over its events (buckets of %i events, fine rows of %i)`, (bucketSize, fineSize) => {
      const model = decodeTrace(bytes);
      const index = memoryIndex(bytes, bucketSize, fineSize);
      const n = model.events.count;
      const statics = staticSeries(model);
      const series = chartSeries(model, null, statics);
      const iheap = instrumentedHeap(model);
      const rows = Math.ceil(n / fineSize);
      expect(index.meta.fineSize).toBe(fineSize);
      expect(index.meta.fines).toBe(rows);
      // All rows, through the page's bytes.
      const all = decodeFine(encodeFine(index.fine(0, n)).slice().buffer);
      expect(all.first).toBe(0);
      expect(all.count).toBe(rows);
      const f32 = (v: number): number => Math.fround(v);
      for (let k = 0; k < rows; k++) {
        const a = k * fineSize;
        const b = Math.min(n, a + fineSize);
        let mask = 0;
        for (let e = a; e < b; e++) mask |= eventClassBit(eventClassOfKind(model.events.kind[e]!));
        const row = Array.from(all.rows.subarray(FINE_FIELDS * k, FINE_FIELDS * (k + 1)));
        const want = [];
        want[F.ABOVE_MIN] = f32(Math.min(...series.above.subarray(a, b)));
        want[F.ABOVE_MAX] = f32(Math.max(...series.above.subarray(a, b)));
        want[F.HEAP_MIN] = f32(Math.min(...series.heap.subarray(a, b)));
        want[F.HEAP_MAX] = f32(Math.max(...series.heap.subarray(a, b)));
        want[F.STATIC_MAX] = f32(Math.max(...statics.subarray(a, b)));
        want[F.MASK] = mask;
        want[F.IHEAP_MIN] = f32(Math.min(...iheap.subarray(a, b)));
        want[F.IHEAP_MAX] = f32(Math.max(...iheap.subarray(a, b)));
        expect(row, `fine row ${k}`).toEqual(want);
      }
      // A part of the run: the rows holding its events, from the row of its first; a cap cuts it.
      if (n > 2) {
        const a = Math.floor(n / 3);
        const b = Math.floor((2 * n) / 3) + 1;
        const part = index.fine(a, b);
        expect(part.first).toBe(Math.floor(a / fineSize));
        expect(part.count).toBe(Math.ceil(b / fineSize) - part.first);
        expect(Array.from(part.rows)).toEqual(Array.from(all.rows.subarray(FINE_FIELDS * part.first, FINE_FIELDS * (part.first + part.count))));
        expect(index.fine(a, b, 1).count).toBe(1);
      }
      expect(index.fine(n + 5, n + 9).count).toBe(0);
    });
  }

  it('refuses fine rows whose bytes do not match their count', () => {
    const bytes = encodeFine({ first: 0, count: 2, rows: new Float32Array(FINE_FIELDS * 2) });
    expect(() => decodeFine(bytes.slice(0, bytes.length - 4).buffer)).toThrow(/fine rows: 76 bytes for 2 rows/);
  });
});
