// Index mode's thread filter and libc toggle in the page's chart data (gui/renderer/src/index-view.ts, setFilter), on
// test/programs/thread-libc.c (four threads, blocks allocated inside libc) and the fold traces, indexed in small
// buckets: every bucket's extremes and classes as drawn equal the whole-trace viewer's series over the bucket
// (chartSeries with the thread, instrumentedHeap, eventClassMasks with the thread), and once a window of events has
// arrived, any range in it equals them exactly.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { chartSeries, eventClassMasks, instrumentedHeap, MaskPyramid, MinMaxPyramid } from '../../analysis/lod.js';
import type { Model } from '../../analysis/model.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { encodeRange, type IndexReader } from '../../analysis/event-index.js';
import type { IndexApi } from '../../gui/renderer/src/backend.js';
import { IndexChartData, type IndexFilter } from '../../gui/renderer/src/index-view.js';
import { foldTraces } from '../support/fold-traces.js';
import { memoryIndex } from '../support/memory-index.js';
import { programsDir } from '../support/programs.js';
import { traceProgram } from './browser.js';

/** An API that answers the events of a range from the index in memory (the fine rows: none, the buckets stand in). */
function apiOf(index: IndexReader): IndexApi {
  const no = (): never => {
    throw new Error('not asked in this test');
  };
  return {
    status: no,
    summary: no,
    events: async (from, to) => encodeRange(index.range(from, to)).slice().buffer,
    fine: async () => null,
    detail: no,
    next: no,
    report: no,
    panels: no,
  };
}

/** What the whole-trace viewer draws under `f`: its series with their pyramids. */
function wholeDrawn(model: Model, f: IndexFilter): { above: MinMaxPyramid; heap: MinMaxPyramid; masks: MaskPyramid } {
  const s = chartSeries(model, f.thread, undefined, f.instrumented ? instrumentedHeap(model) : model.events.heapRequested);
  return { above: new MinMaxPyramid(s.above), heap: new MinMaxPyramid(s.heap), masks: new MaskPyramid(eventClassMasks(model, f.thread)) };
}

function filtersOf(model: Model): IndexFilter[] {
  const out: IndexFilter[] = [{ thread: null, instrumented: true }];
  for (let t = 0; t < model.threads.length; t++) out.push({ thread: t, instrumented: false }, { thread: t, instrumented: true });
  return out;
}

function check(name: string, bytes: Uint8Array, B: number): void {
  const model = decodeTrace(bytes);
  const index = memoryIndex(bytes, B);
  const n = model.events.count;
  const ix = new IndexChartData(index.meta, index.summary.slice(), apiOf(index));
  for (const f of filtersOf(model)) {
    ix.setFilter(f);
    const want = wholeDrawn(model, f);
    const d = ix.data;
    const what = `${name}, buckets of ${B}, ${JSON.stringify(f)}`;
    // The whole run (the unzoomed axes) and each bucket, from the summaries.
    expect(d.above.extent(0, n).max, what).toBe(want.above.extent(0, n).max);
    expect(d.heap.extent(0, n).max, what).toBe(want.heap.extent(0, n).max);
    for (let k = 0; k * B < n; k++) {
      const [a, b] = [k * B, Math.min(n, (k + 1) * B)];
      expect(d.above.extent(a, b), `${what}: above, bucket ${k}`).toEqual(want.above.extent(a, b));
      expect(d.heap.extent(a, b), `${what}: heap, bucket ${k}`).toEqual(want.heap.extent(a, b));
      expect(d.maskPyramid.or(a, b), `${what}: classes, bucket ${k}`).toBe(want.masks.or(a, b));
      expect(d.series.above[a], `${what}: above's column, bucket ${k}`).toBe(want.above.extent(a, b).max);
    }
  }
}

describe('index mode: the thread filter and the libc toggle in the chart data', () => {
  let program: Uint8Array;
  beforeAll(() => {
    program = new Uint8Array(readFileSync(traceProgram(path.join(programsDir, 'thread-libc.c')).trace));
  }, 120_000);

  it('the program has threads and blocks allocated inside libc, and the filters change what is drawn', () => {
    const model = decodeTrace(program);
    expect(model.threads.length).toBe(4);
    const n = model.events.count;
    const all = wholeDrawn(model, { thread: null, instrumented: false });
    const hidden = wholeDrawn(model, { thread: null, instrumented: true });
    expect(hidden.heap.extent(0, n).max).toBeLessThan(all.heap.extent(0, n).max);
    for (let t = 0; t < 4; t++) expect(wholeDrawn(model, { thread: t, instrumented: false }).above.extent(0, n).max).toBeLessThan(all.above.extent(0, n).max);
  });

  it.each([1000, 16384])('thread-libc.c: each bucket as the whole trace draws it (buckets of %i events)', (B) => check('thread-libc.c', program, B));

  for (const [name, bytes] of foldTraces().filter(([n]) => !n.startsWith('invalid/'))) {
    it(`${name}: each bucket as the whole trace draws it`, () => check(name, bytes, 7));
  }

  it('the window of events fetched: any range in it exactly as the whole trace draws it, under each filter', async () => {
    const model = decodeTrace(program);
    const index = memoryIndex(program, 1000);
    const n = model.events.count;
    const ix = new IndexChartData(index.meta, index.summary.slice(), apiOf(index));
    const [a, b] = [Math.floor(n / 3), Math.floor(n / 3) + 20_000];
    const arrived = new Promise<void>((r) => (ix.onWindow = r));
    ix.want(a + 5000, b - 5000);
    await arrived;
    expect(ix.covers(a, b)).toBe(true);
    for (const f of filtersOf(model)) {
      ix.setFilter(f);
      const want = wholeDrawn(model, f);
      const d = ix.data;
      for (let x = a; x < b; x += 777) {
        const y = Math.min(b, x + 1 + ((x * 7) % 3000));
        const what = `${JSON.stringify(f)} ${x}–${y}`;
        expect(d.above.extent(x, y), what).toEqual(want.above.extent(x, y));
        expect(d.heap.extent(x, y), what).toEqual(want.heap.extent(x, y));
        expect(d.maskPyramid.or(x, y), what).toBe(want.masks.or(x, y));
        expect(d.series.above[x], what).toBe(want.above.values[x]);
        expect(d.series.heap[x], what).toBe(want.heap.values[x]);
      }
    }
  });
});
