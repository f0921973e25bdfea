// The timeline series on crafted traces: per event, per interval of events and of time, static bytes, per-thread stacks.
import { describe, expect, test } from 'vitest';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { NONE } from '../../analysis/model.js';
import { eventSeries, IntervalError, intervalSeries, peakEvent, staticSeries, threadStackSeries } from '../../analysis/timeline.js';
import { TraceBuilder } from '../fixtures/trace-builder.js';
import { DEMO_SITES, basicTrace, twoThreadsTrace } from '../fixtures/scenarios.js';

const basic = decodeTrace(basicTrace().build());

describe('per event', () => {
  test('heap, stack and static after every event of the basic trace', () => {
    const s = eventSeries(basic);
    expect(s.count).toBe(20);
    expect(Array.from(s.static)).toEqual([0, 400, 404, ...Array<number>(17).fill(404)]);
    expect(s.heapRequested[13]).toBe(1322);
    expect(s.heapUsable[13]).toBe(1328);
    expect(s.stack[4]).toBe(192);
    expect(s.stack[13]).toBe(128);
    expect(s.heapRequested[19]).toBe(1248);
    // Heap usable + stack is highest at the interposed allocation.
    expect(peakEvent(s)).toBe(13);
  });

  test('static bytes count from the event that registered them', () => {
    const b = new TraceBuilder({ complete: true });
    const t = b.thread(0);
    t.threadBegin(1);
    t.unit(1, DEMO_SITES);
    t.enter(1, 64);
    t.alloc({ site: 4, size: 8, addr: 0x10 });
    t.static(13, 0x601200, 16);
    t.alloc({ site: 4, size: 8, addr: 0x20 });
    t.static(8, 0x601040, 100);
    t.exit(2);
    t.end(0, 0);
    const m = decodeTrace(b.build());
    expect(Array.from(staticSeries(m))).toEqual([0, 0, 0, 16, 16, 116, 116, 116]);
  });

  test('per-thread stack carries each thread’s value over the other’s events', () => {
    const m = decodeTrace(twoThreadsTrace().build());
    const t0 = threadStackSeries(m, 0);
    const t1 = threadStackSeries(m, 1);
    for (let i = 0; i < m.events.count; i++) {
      expect(t0[i]! + t1[i]!).toBe(m.events.stackTotal[i]);
      const own = m.events.thread[i] === 0 ? t0 : t1;
      expect(own[i]).toBe(m.events.stack[i]);
    }
    expect(Math.max(...t1)).toBe(64);
    expect(Math.max(...t0)).toBe(160);
  });

  test('no events: empty series, no peak, no intervals', () => {
    const b = new TraceBuilder({ complete: false });
    b.thread(0).unit(1, DEMO_SITES);
    const m = decodeTrace(b.build());
    expect(m.events.count).toBe(0);
    expect(peakEvent(eventSeries(m))).toBe(NONE);
    expect(intervalSeries(m, { every: 10, unit: 'events' }).count).toBe(0);
    expect(intervalSeries(m, { every: 1e6, unit: 'time' }).count).toBe(0);
  });
});

describe('intervals of events', () => {
  test('every 5: values at the end, maxima within', () => {
    const ev = basic.events;
    const s = intervalSeries(basic, { every: 5, unit: 'events' });
    expect(s.count).toBe(4);
    expect(Array.from(s.startEvent)).toEqual([0, 5, 10, 15]);
    expect(Array.from(s.endEvent)).toEqual([4, 9, 14, 19]);
    for (let k = 0; k < 4; k++) {
      const end = s.endEvent[k]!;
      expect(s.heapRequested[k]).toBe(ev.heapRequested[end]);
      expect(s.heapUsable[k]).toBe(ev.heapUsable[end]);
      expect(s.stack[k]).toBe(ev.stackTotal[end]);
      expect(s.startTime[k]).toBe(ev.time[s.startEvent[k]!]);
      expect(s.endTime[k]).toBe(ev.time[end]);
    }
    expect(Array.from(s.static)).toEqual([404, 404, 404, 404]);
    // Events 10–14 hold the peak (1,322 B at 13), then a realloc to 0 frees 50 B.
    expect(s.maxHeapRequested[2]).toBe(1322);
    expect(s.heapRequested[2]).toBe(1272);
    expect(s.maxHeapUsable[2]).toBe(1328);
    expect(s.maxStack[0]).toBe(192);
    expect(s.stack[0]).toBe(192);
    expect(s.maxStack[1]).toBe(192);
    expect(s.stack[1]).toBe(128);
  });

  test('the last interval may be short; every 1 is the event series', () => {
    const s = intervalSeries(basic, { every: 7, unit: 'events' });
    expect(Array.from(s.endEvent)).toEqual([6, 13, 19]);
    const one = intervalSeries(basic, { every: 1, unit: 'events' });
    expect(one.count).toBe(20);
    expect(Array.from(one.heapUsable)).toEqual(Array.from(basic.events.heapUsable));
    expect(Array.from(one.maxHeapUsable)).toEqual(Array.from(basic.events.heapUsable.map((v, i) => Math.max(v, i > 0 ? basic.events.heapUsable[i - 1]! : 0))));
  });

  test('bad specs throw IntervalError', () => {
    expect(() => intervalSeries(basic, { every: 0, unit: 'events' })).toThrow(IntervalError);
    expect(() => intervalSeries(basic, { every: 1.5, unit: 'events' })).toThrow(IntervalError);
    expect(() => intervalSeries(basic, { every: -1, unit: 'time' })).toThrow(IntervalError);
    expect(() => intervalSeries(basic, { every: Number.NaN, unit: 'time' })).toThrow(IntervalError);
    expect(() => intervalSeries(basic, { every: 1e-6, unit: 'time' })).toThrow(/intervals/);
  });
});

/** One thread: an allocation of 100·(i+1) B after each TIME step of `gaps[i]` ns (TIME records right before and after
 *  each, so its time is exact: events between two TIME records are spread evenly between them). */
function timedTrace(gaps: number[]): TraceBuilder {
  const b = new TraceBuilder({ complete: true });
  const t = b.thread(0);
  t.threadBegin(1);
  t.unit(1, DEMO_SITES);
  t.time(0);
  gaps.forEach((g, i) => {
    t.time(g);
    t.alloc({ site: 4, size: 100 * (i + 1), addr: 0x1000 * (i + 1) });
    t.time(0);
  });
  t.end(0, 0);
  return b;
}

describe('intervals of time', () => {
  test('events fall into the interval of their time; empty intervals carry the values over', () => {
    // Allocations at about 1, 3, 3.5 and 25 ms.
    const m = decodeTrace(timedTrace([1e6, 2e6, 0.5e6, 21.5e6]).build());
    const times = Array.from(m.events.time);
    expect(times).toEqual([0, 1e6, 3e6, 3.5e6, 25e6, 25e6]);
    const s = intervalSeries(m, { every: 1e7, unit: 'time' });
    expect(s.count).toBe(3);
    expect(Array.from(s.startTime)).toEqual([0, 1e7, 2e7]);
    expect(Array.from(s.endTime)).toEqual([1e7, 2e7, 3e7]);
    for (let k = 0; k < s.count; k++) {
      for (let e = s.startEvent[k]!; e <= s.endEvent[k]!; e++) expect(Math.floor(times[e]! / 1e7)).toBe(k);
    }
    expect(s.endEvent[1]).toBeLessThan(s.startEvent[1]!); // nothing happened between 10 and 20 ms
    expect(Array.from(s.heapRequested)).toEqual([600, 600, 1000]);
    expect(Array.from(s.maxHeapRequested)).toEqual([600, 600, 1000]);
    expect(s.endEvent[1]).toBe(s.endEvent[0]);
    expect(s.endEvent[2]).toBe(m.events.count - 1);
  });

  test('intervals start at the one holding the first event', () => {
    const m = decodeTrace(timedTrace([5e6, 1e6, 1e6]).build());
    const s = intervalSeries(m, { every: 2e6, unit: 'time' });
    expect(s.startTime[0]).toBe(Math.floor(m.events.time[0]! / 2e6) * 2e6);
    let covered = 0;
    for (let k = 0; k < s.count; k++) covered += Math.max(0, s.endEvent[k]! - s.startEvent[k]! + 1);
    expect(covered).toBe(m.events.count);
  });

  test('interleaved threads whose clocks disagree keep event order', () => {
    const m = decodeTrace(twoThreadsTrace().build());
    const s = intervalSeries(m, { every: 1, unit: 'time' });
    let next = 0;
    for (let k = 0; k < s.count; k++) {
      expect(s.startEvent[k]).toBe(next);
      next = Math.max(next, s.endEvent[k]! + 1);
    }
    expect(next).toBe(m.events.count);
  });

  test('half a million events aggregate into interval series with no accidental quadratic (a loose 2 s bound)', () => {
    const b = new TraceBuilder({ complete: true });
    const t = b.thread(0);
    t.threadBegin(1);
    t.unit(1, DEMO_SITES);
    t.enter(1, 64);
    for (let i = 0; i < 250_000; i++) {
      const id = t.alloc({ site: 4, size: 16 + (i % 7), addr: 0x10000 + i * 64 });
      if (i % 50 === 0) t.time(1000);
      t.free({ site: 6, block: id });
    }
    t.exit(2);
    t.end(0, 0);
    const m = decodeTrace(b.build());
    expect(m.events.count).toBeGreaterThan(500_000);
    // Their speed is measured by `npm run bench -- --only readers`, as a ratio to one pass of the reader.
    const byEvents = intervalSeries(m, { every: 1000, unit: 'events' });
    const byTime = intervalSeries(m, { every: 1e5, unit: 'time' });
    const perEvent = intervalSeries(m, { every: 1, unit: 'events' });
    expect(byEvents.count).toBe(Math.ceil(m.events.count / 1000));
    expect(byTime.count).toBeGreaterThan(1);
    expect(perEvent.count).toBe(m.events.count);
  });
});

