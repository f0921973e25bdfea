// The chart's layout without a browser: individual bars when zoomed in, one summary per pixel column otherwise (equal to a scan of the events it covers), time mode on a non-decreasing axis, and byte ticks in round binary steps.
import { scaleLinear } from 'd3';
import { describe, expect, test } from 'vitest';
import { chartSeries, eventClassMasks } from '../../analysis/lod.js';
import type { Model } from '../../analysis/model.js';
import { byteTicks, chartData, layout, representative } from '../../gui/renderer/src/chart/columns.js';

/** A model with only what the chart reads: n events with a sawtooth heap and a stack that rises and falls. */
function fakeModel(n: number): Model {
  const heap = new Float64Array(n);
  const stack = new Float64Array(n);
  const time = new Float64Array(n);
  const kind = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    heap[i] = (i % 1000) * 16;
    stack[i] = 64 + (i % 7) * 32;
    time[i] = i < n / 2 ? i * 10 : n * 5 + (i - n / 2) * 1000;
    kind[i] = i % 2 ? 7 : 4;
  }
  return {
    events: { count: n, heapRequested: heap, stackTotal: stack, time, kind, thread: new Uint32Array(n) },
    statics: { count: 0, site: new Uint32Array(0), address: new Float64Array(0), size: new Float64Array(0), event: new Int32Array(0), totalBytes: 0 },
  } as unknown as Model;
}

describe('chart layout', () => {
  const n = 200_000;
  const model = fakeModel(n);
  const series = chartSeries(model);
  const data = chartData(series, eventClassMasks(model), Float64Array.from(model.events.time));

  test('zoomed out: one column per pixel whose extremes equal a scan of its events', () => {
    const x = scaleLinear().domain([0, n]).range([0, 800]);
    const lay = layout(data, 'events', x, 800);
    if (lay.kind !== 'columns') throw new Error('expected columns');
    expect(lay.first[0]).toBe(0);
    expect(lay.end[799]).toBe(n);
    for (const c of [0, 1, 399, 799]) {
      let max = 0;
      for (let e = lay.first[c]!; e < lay.end[c]!; e++) max = Math.max(max, series.heap[e]!);
      expect(lay.heapMax[c]).toBe(max);
      expect(lay.masks[c]).toBe(1 | 4); // allocations and calls in every column
    }
    const r = representative(data, lay.first[0]!, lay.end[0]!);
    expect(series.heap[r]! + series.above[r]!).toBe(Math.max(...Array.from({ length: lay.end[0]! }, (_, e) => series.heap[e]! + series.above[e]!)));
  });

  test('zoomed in: one bar per event, each reaching the next', () => {
    const x = scaleLinear().domain([1000, 1100]).range([0, 800]);
    const lay = layout(data, 'events', x, 800);
    if (lay.kind !== 'bars') throw new Error('expected bars');
    expect(lay.bars[0]!.event).toBe(999);
    expect(lay.bars.at(-1)!.event).toBe(1100);
    expect(lay.bars[1]!.x0).toBeCloseTo(0);
    expect(lay.bars[1]!.x1).toBeCloseTo(8);
  });

  test('wall time: columns follow the clock, so the slow second half gets most of the width', () => {
    const t = model.events.time;
    const x = scaleLinear().domain([t[0]!, t[n - 1]!]).range([0, 1000]);
    const lay = layout(data, 'time', x, 1000);
    if (lay.kind !== 'columns') throw new Error('expected columns');
    const half = lay.first.findIndex((e) => e >= n / 2);
    expect(half).toBeLessThan(20);
  });

  test('byte ticks are round binary steps that reach past the maximum', () => {
    expect(byteTicks(384, 3)).toEqual([0, 200, 400]);
    expect(byteTicks(4.8 * 1048576, 4)).toEqual([0, 2, 4, 6].map((m) => m * 1048576));
    expect(byteTicks(1, 4)).toEqual([0, 1]);
    expect(byteTicks(600 * 1024, 3)).toEqual([0, 200, 400, 600].map((k) => k * 1024));
  });
});
