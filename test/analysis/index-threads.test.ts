// What the index keeps for the thread filter and the "libc heap" toggle (analysis/event-index.ts): the thread table's
// rows, the buckets' instrumented heap and the events of a range read back, each equal to the same numbers computed by
// brute force from the decoded model (chartSeries with a thread, instrumentedHeap), for every fold trace and buckets
// of 7 events (many buckets, threads switching inside them) and of 16,384.
import { describe, expect, it } from 'vitest';
import { eventClassBit, eventClassOfKind } from '../../analysis/event-detail.js';
import { nextEventOfClass } from '../../analysis/event-sets.js';
import { chartSeries, instrumentedHeap } from '../../analysis/lod.js';
import { memorySource } from '../../analysis/trace/byte-source.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { streamSource } from '../../analysis/trace/resolve-stream.js';
import { staticSeries, threadStackSeries } from '../../analysis/timeline.js';
import { decodeRange, encodeRange, IndexFold, S, SUMMARY_FIELDS, T, THREAD_FIELDS, threadAbove, type IndexRange } from '../../analysis/event-index.js';
import { DEMO_SITES } from '../fixtures/scenarios.js';
import { TraceBuilder } from '../fixtures/trace-builder.js';
import { foldTraces } from '../support/fold-traces.js';
import { memoryIndex } from '../support/memory-index.js';

/** The summary table of the first stage (the fold without its events), in memory. */
function summariesOnly(bytes: Uint8Array, bucketSize: number): Float64Array {
  let fold: IndexFold | null = null;
  streamSource(memorySource(bytes), { window: 4096 }).run((start) => {
    fold = new IndexFold(start, { bucket: () => {}, freed: () => {}, fine: () => {} }, bucketSize, 256, false);
    return [fold];
  });
  return (fold as unknown as IndexFold).result().summary;
}

/** Two threads, the second ended before the first registers more static bytes: its rows hold its stack with them. */
function staticAfterThread(): Uint8Array {
  const b = new TraceBuilder({ complete: true });
  const t0 = b.thread(0);
  const t1 = b.thread(1);
  t0.threadBegin(500); // seq 1
  t0.unit(1, DEMO_SITES);
  t0.enter(1, 100);
  t0.static(8, 0x601040, 400);
  t1.threadBegin(501); // seq 2
  t1.enter(10, 64);
  const y = t1.alloc({ site: 12, size: 20, addr: 0x2000 }); // seq 3
  t1.enter(10, 96);
  t1.exit(11);
  t1.threadEnd();
  const x = t0.alloc({ site: 4, size: 10, addr: 0x1000 }); // seq 4
  t0.static(13, 0x601200, 4000);
  t0.enter(3, 160);
  t0.exit(5);
  t0.free({ site: 6, block: y }); // seq 5
  t0.free({ site: 6, block: x }); // seq 6
  t0.exit(2);
  t0.end(0, 3);
  return b.build();
}

const traces = foldTraces([['static-after-thread', staticAfterThread()]]).filter(([n]) => !n.startsWith('invalid/'));

describe('the index for the thread filter and the libc toggle', () => {
  it('covers traces of more than one thread and with blocks allocated inside libc', () => {
    const models = traces.map(([, b]) => decodeTrace(b));
    expect(models.some((m) => m.threads.length > 1)).toBe(true);
    expect(models.some((m) => Array.from(m.blocks.interposed.subarray(0, m.blocks.count)).some((v) => v === 1))).toBe(true);
  });

  for (const [name, bytes] of traces) {
    it.each([7, 1 << 14])(`${name}: the thread table and the instrumented heap equal the model's (buckets of %i events)`, (bucketSize) => {
      const model = decodeTrace(bytes);
      const index = memoryIndex(bytes, bucketSize);
      const { meta, summary } = index;
      const n = model.events.count;
      const statics = staticSeries(model);
      const iheap = instrumentedHeap(model);
      const threads = model.threads.length;
      const above = model.threads.map((_, t) => chartSeries(model, t, statics).above);
      const stacks = model.threads.map((_, t) => threadStackSeries(model, t));
      const bit = (e: number): number => eventClassBit(eventClassOfKind(model.events.kind[e]!));
      const table = index.threadTable;
      expect(summary.length).toBe(SUMMARY_FIELDS * meta.buckets + THREAD_FIELDS * meta.threadRows);
      let rows = 0;
      for (let k = 0; k < meta.buckets; k++) {
        const r = SUMMARY_FIELDS * k;
        const a = k * bucketSize;
        const b = Math.min(n, a + bucketSize);
        expect(summary[r + S.IHEAP_MIN], `bucket ${k}`).toBe(Math.min(...iheap.subarray(a, b)));
        expect(summary[r + S.IHEAP_MAX], `bucket ${k}`).toBe(Math.max(...iheap.subarray(a, b)));
        expect(summary[r + S.IHEAP_LAST], `bucket ${k}`).toBe(iheap[b - 1]);
        expect(summary[r + S.STATIC_MIN], `bucket ${k}`).toBe(Math.min(...statics.subarray(a, b)));
        expect(summary[r + S.THREAD_START], `bucket ${k}`).toBe(rows);
        // One row per thread with events in the bucket, no other.
        const want = new Map<number, number[]>();
        for (let e = a; e < b; e++) {
          const t = model.events.thread[e]!;
          if (!want.has(t)) want.set(t, [t, Math.min(...above[t]!.subarray(a, b)), Math.max(...above[t]!.subarray(a, b)), stacks[t]![b - 1]!, 0]);
          want.get(t)![T.MASK] |= bit(e);
        }
        const got = new Map<number, number[]>();
        const end = k + 1 < meta.buckets ? summary[r + SUMMARY_FIELDS + S.THREAD_START]! : meta.threadRows;
        for (let row = rows; row < end; row++) {
          const v = Array.from(table.subarray(THREAD_FIELDS * row, THREAD_FIELDS * (row + 1)));
          got.set(v[T.THREAD]!, v);
        }
        expect(got, `bucket ${k}`).toEqual(want);
        rows = end;
        // Each thread's stack before the bucket, from the table.
        const before = index.stacksBefore(k);
        for (let t = 0; t < threads; t++) expect(before[t], `thread ${t} before bucket ${k}`).toBe(a > 0 ? stacks[t]![a - 1] : 0);
      }
      expect(rows).toBe(meta.threadRows);
      // The libc toggle's status line.
      let libc = 0;
      for (let h = 0; h < model.blocks.count; h++) libc += model.blocks.interposed[h]!;
      let hidden = 0;
      for (let e = 0; e < n; e++) hidden = Math.max(hidden, model.events.heapRequested[e]! - iheap[e]!);
      expect(meta.libcBlocks).toBe(libc);
      expect(meta.maxLibcHeap).toBe(hidden);
      // The first stage's summaries hold the same (its times aside).
      const first = summariesOnly(bytes, bucketSize);
      expect(first.length).toBe(summary.length);
      for (let k = 0; k < meta.buckets; k++) {
        for (const f of [S.STATIC_MIN, S.IHEAP_MIN, S.IHEAP_MAX, S.IHEAP_LAST, S.THREAD_START]) expect(first[SUMMARY_FIELDS * k + f]).toBe(summary[SUMMARY_FIELDS * k + f]);
      }
      expect(Array.from(first.subarray(SUMMARY_FIELDS * meta.buckets))).toEqual(Array.from(table));
      // The next event of a class on one thread (n and p with the thread filter set), buckets skipped by the table.
      for (let t = 0; t < threads; t++) {
        for (const cls of ['alloc', 'free', 'call', 'return'] as const) {
          for (const from of [-1, Math.floor(n / 2), n]) {
            for (const dir of [1, -1] as const) expect(index.nextOfClass(from, dir, eventClassBit(cls), t), `thread ${t} ${cls} from ${from} by ${dir}`).toBe(nextEventOfClass(model, from, dir, cls, t));
          }
        }
      }
      // A range, whole or starting inside a bucket, through the page's bytes: each thread's series as the model's.
      for (const from of [0, Math.floor(n / 3), n - 2].filter((f) => f >= 0 && f < n)) {
        const r = decodeRange(encodeRange(index.range(from, n)).slice().buffer);
        expect(Array.from(r.thread)).toEqual(Array.from(model.events.thread.subarray(from, n)));
        expect(Array.from(r.stack)).toEqual(Array.from(model.events.stack.subarray(from, n)));
        expect(Array.from(r.iheap)).toEqual(Array.from(iheap.subarray(from, n)));
        for (let t = 0; t < threads; t++) expect(Array.from(threadAbove(r, t)), `thread ${t} from ${from}`).toEqual(Array.from(above[t]!.subarray(from, n)));
      }
    });
  }

  it("a range's bytes leave out the columns the page can make, and are refused when they do not match their counts", () => {
    const full: IndexRange = {
      first: 5,
      count: 3,
      kinds: Uint8Array.of(1, 2, 3),
      above: Float64Array.of(10, 20, 30),
      heap: Float64Array.of(1, 2, 3),
      statics: Float64Array.of(4, 4, 4),
      times: Float64Array.of(7, 8, 9),
      thread: Uint32Array.of(0, 1, 0),
      stack: Float64Array.of(6, 9, 26),
      iheap: Float64Array.of(1, 0, 3),
      stacksBefore: Float64Array.of(0, 11),
    };
    const plain = (r: IndexRange): Record<string, unknown> => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'number' ? v : Array.from(v as ArrayLike<number>)]));
    // One thread: its stack is above − statics; no libc blocks: the instrumented heap is the heap.
    const oneThread: IndexRange = { ...full, thread: new Uint32Array(3), stack: Float64Array.of(6, 16, 26), stacksBefore: Float64Array.of(2) };
    const noLibc: IndexRange = { ...full, iheap: full.heap };
    const both: IndexRange = { ...oneThread, iheap: full.heap };
    const sizes: number[] = [];
    for (const r of [full, oneThread, noLibc, both]) {
      const bytes = encodeRange(r);
      sizes.push(bytes.length);
      expect(plain(decodeRange(bytes.slice().buffer))).toEqual(plain(r));
    }
    // 24 bytes of header, kinds padded to 8, thread rows (u32) padded to 8, 8 per number.
    expect(sizes).toEqual([24 + 8 + 16 + 6 * 24 + 16, 24 + 8 + 5 * 24 + 8, 24 + 8 + 16 + 5 * 24 + 16, 24 + 8 + 4 * 24 + 8]);
    const bytes = encodeRange(full);
    expect(() => decodeRange(bytes.slice(0, bytes.length - 8).buffer)).toThrow(/events: 200 bytes for 3 events of 2 threads/);
    const flagged = bytes.slice();
    flagged[16] = 9;
    expect(() => decodeRange(flagged.buffer)).toThrow(/events: 208 bytes for 3 events of 2 threads/);
  });
});
