// The queries behind the viewer: call stack at an event, an event's detail (block ends, leak class, linked set), the events of an attribution row, walking by class, finding sites, and the level-of-detail pyramids against brute force.
import { describe, expect, test } from 'vitest';
import { attribution } from '../../analysis/attribution.js';
import { callStackAt, eventClassBit, eventDetail } from '../../analysis/event-detail.js';
import { allocationsOf, eventsOfGroup, findSites, nextEventOfClass } from '../../analysis/event-sets.js';
import { linkedFreeAt, linkedFrees } from '../../analysis/linked.js';
import { chartSeries, eventAtTime, eventClassMasks, MaskPyramid, MinMaxPyramid, monotonicTimes } from '../../analysis/lod.js';
import { Kind } from '../../analysis/trace/format.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { staticSeries } from '../../analysis/timeline.js';
import { basicTrace, studentMain } from '../fixtures/scenarios.js';

/** main (128 B) → make_node (192 B) allocates A, B; main frees A whose set is {B}; B is never freed. */
function listTrace(): Uint8Array {
  const { b, t } = studentMain(); // 1
  t.enter(3, 192); // 2
  const a = t.alloc({ site: 4, size: 24, addr: 0x1000 }); // 3
  const bb = t.alloc({ site: 4, size: 40, addr: 0x1020 }); // 4
  t.exit(5); // 5
  t.free({ site: 6, block: a }); // 6
  t.linked([bb]);
  t.exit(2); // 7
  t.end(0, 0); // 8
  return b.build();
}

describe('event detail', () => {
  const model = decodeTrace(listTrace());
  const statics = staticSeries(model);
  const kinds = Array.from(model.events.kind);
  const allocA = kinds.indexOf(Kind.ALLOC);
  const free = kinds.indexOf(Kind.FREE);

  test('the call stack at an allocation is make_node inside main, innermost first', () => {
    const stack = callStackAt(model, allocA);
    expect(stack.map((s) => [s.function, s.line, s.depth, s.label])).toEqual([
      ['make_node', 3, 192, 'demo.c:3 make_node'],
      ['main', 10, 128, 'demo.c:10 main'],
    ]);
    expect(callStackAt(model, free).map((s) => s.function)).toEqual(['main']);
    expect(callStackAt(model, -1)).toEqual([]);
  });

  test('an allocation names its free; a free names its allocation and its linked set', () => {
    const d = eventDetail(model, allocA, statics);
    expect(d).toMatchObject({ kind: 'ALLOC', class: 'alloc', bytes: 24, heapRequested: 24, stack: 192 });
    expect(d.place).toMatchObject({ label: 'demo.c:4 make_node → malloc', line: 4, file: '/home/student/demo.c' });
    expect(d.created).toMatchObject({ block: 0, freeEvent: free, leakClass: null });
    const f = eventDetail(model, free, statics);
    expect(f.ended).toMatchObject({ block: 0, allocEvent: allocA });
    expect(f.linked?.blocks.map((m) => [m.block, m.requestedBytes, m.orphaned])).toEqual([[1, 40, true]]);
    expect(f.heapRequested).toBe(40);
    expect(d.created?.orphanedBy).toBeNull();
  });

  test('a block the free orphaned names that free, and the free\'s set names its allocation event', () => {
    const f = eventDetail(model, free, statics);
    const orphan = f.linked!.blocks[0]!;
    expect(orphan.allocEvent).toBe(model.blocks.allocEvent[orphan.block]);
    const o = eventDetail(model, orphan.allocEvent, statics);
    expect(o.created?.orphanedBy).toEqual({ event: free, at: f.place });
    expect(o.created?.orphanedBy?.at.label).toMatch(/^demo\.c:\d+ \S+ → free$/);
  });

  test('a block never freed says so with its class from the runtime', () => {
    const m = decodeTrace(basicTrace().build());
    const live = Array.from({ length: m.blocks.count }, (_, b) => b).filter((b) => m.blocks.freeEvent[b] === -1);
    expect(live.length).toBeGreaterThan(0);
    const d = eventDetail(m, m.blocks.allocEvent[live[0]!]!, staticSeries(m));
    expect(d.created?.freeEvent).toBeNull();
    // basicTrace has no LEAKS record: the class is unknown, not guessed.
    expect(d.created?.leakClass).toBeNull();
  });

  test('linkedFreeAt finds the same set linkedFrees lists, and null elsewhere', () => {
    expect(linkedFreeAt(model, free)).toEqual(linkedFrees(model)[0]);
    expect(linkedFreeAt(model, allocA)).toBeNull();
  });
});

describe('event sets', () => {
  const model = decodeTrace(basicTrace().build());

  test('the events of each attribution row add up to its counts', () => {
    for (const by of ['function', 'site', 'thread'] as const) {
      for (const row of attribution(model, { by }).rows) {
        const events = eventsOfGroup(model, { by }, row.key);
        expect(events.length).toBeGreaterThan(0);
        let allocated = 0;
        for (const e of events) {
          const nb = model.events.newBlock[e]!;
          if (nb >= 0) allocated += model.blocks.requested[nb]!;
        }
        expect(allocated, `${by} ${row.label}`).toBe(row.bytesAllocated);
      }
    }
    expect(eventsOfGroup(model, { by: 'site' }, 'site:9999')).toHaveLength(0);
  });

  test('next and previous event of a class', () => {
    const kinds = Array.from(model.events.kind);
    const firstAlloc = kinds.indexOf(Kind.ALLOC);
    expect(nextEventOfClass(model, -1, 1, 'alloc')).toBe(firstAlloc);
    expect(nextEventOfClass(model, firstAlloc, -1, 'alloc')).toBeNull();
    const lastFree = kinds.lastIndexOf(Kind.FREE);
    expect(nextEventOfClass(model, model.events.count, -1, 'free')).toBe(lastFree);
    expect(allocationsOf(model, [1, 0, 0])).toEqual(Int32Array.from([model.blocks.allocEvent[0]!, model.blocks.allocEvent[1]!]));
  });

  test('sites found by function and by file, with their first event', () => {
    const found = findSites(model, 'MAKE_node');
    expect(found.map((s) => s.label)).toEqual(['demo.c:3 make_node', 'demo.c:4 make_node → malloc', 'demo.c:5 make_node']);
    expect(found[0]!.firstEvent).toBe(Array.from(model.events.site).indexOf(3));
    expect(found[0]!.events).toBe(2);
    expect(findSites(model, 'demo.c').length).toBeGreaterThan(3);
    expect(findSites(model, '  ')).toEqual([]);
    expect(findSites(model, 'no-such-thing')).toEqual([]);
  });
});

describe('level of detail', () => {
  // A deterministic pseudo-random series long enough for several levels.
  const n = 100_003;
  const values = new Float64Array(n);
  let x = 12345;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    values[i] = (x % 100000) - 20000;
  }
  const pyramid = new MinMaxPyramid(values);

  test('min and max of any range equal a brute-force scan', () => {
    const ranges: Array<[number, number]> = [[0, n], [0, 1], [5, 70], [63, 129], [64, 128], [1000, 99_999], [n - 10, n], [777, 778], [50_000, 50_000]];
    for (let k = 0; k < 200; k++) {
      const a = (k * 7919) % n;
      ranges.push([a, Math.min(n, a + ((k * 104729) % 40_000))]);
    }
    for (const [a, b] of ranges) {
      let mn = Infinity;
      let mx = -Infinity;
      for (let i = a; i < b; i++) {
        mn = Math.min(mn, values[i]!);
        mx = Math.max(mx, values[i]!);
      }
      expect(pyramid.extent(a, b), `[${a}, ${b})`).toEqual({ min: mn, max: mx });
    }
  });

  test('the OR of class bits over a range equals a scan', () => {
    const bits = new Uint8Array(n);
    for (let i = 0; i < n; i++) bits[i] = i % 997 === 0 ? 2 : i % 13 === 0 ? 4 : 1;
    const p = new MaskPyramid(bits);
    for (const [a, b] of [[0, n], [1, 996], [1, 998], [998, 1993], [1994, 60_000], [20, 25]] as const) {
      let or = 0;
      for (let i = a; i < b; i++) or |= bits[i]!;
      expect(p.or(a, b), `[${a}, ${b})`).toBe(or);
    }
  });

  test('chart series and masks of a trace', () => {
    const model = decodeTrace(basicTrace().build());
    const s = chartSeries(model);
    const last = model.events.count - 1;
    expect(s.above[last]).toBe(model.events.stackTotal[last]! + 404);
    expect(s.heap).toBe(model.events.heapRequested);
    const masks = eventClassMasks(model);
    expect(masks[Array.from(model.events.kind).indexOf(Kind.ENTER)]).toBe(eventClassBit('call'));
    expect(masks[Array.from(model.events.kind).indexOf(Kind.FREE)]).toBe(eventClassBit('free'));
  });

  test('monotonic times never step back, and eventAtTime finds the first event at or after a time', () => {
    const times = Float64Array.from([0, 10, 5, 20, 20, 30]);
    const model = { events: { time: times } } as unknown as Parameters<typeof monotonicTimes>[0];
    const mono = monotonicTimes(model);
    expect(Array.from(mono)).toEqual([0, 10, 10, 20, 20, 30]);
    expect(eventAtTime(mono, 10)).toBe(1);
    expect(eventAtTime(mono, 11)).toBe(3);
    expect(eventAtTime(mono, 31)).toBe(6);
  });
});
