// The leak-cause analysis as folds (leak-causes.ts): over a streamed trace, over a decoded model and over block slots
// reused at once it gives what the whole-model version gave (test/support/leak-causes-reference.ts), on crafted runs
// with more blocks than it samples, two threads, unwinds, reallocs and frees far from the allocation, and on every
// fixture trace; and the report computes it from the stream, with no decoded model.
import { describe, expect, test } from 'vitest';
import { leakCauses, leakCausesOf, MAX_CANDIDATES, MAX_INSTANCES } from '../../analysis/leak-causes.js';
import { modelSource } from '../../analysis/model-fold.js';
import { computeReport, summaryRequest } from '../../analysis/report.js';
import { memorySource } from '../../analysis/trace/byte-source.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { SiteKind } from '../../analysis/trace/format.js';
import { streamSource } from '../../analysis/trace/resolve-stream.js';
import { S, TraceBuilder, type SiteDef, type ThreadWriter } from '../fixtures/trace-builder.js';
import { foldTraces } from '../support/fold-traces.js';
import { referenceLeakCauses } from '../support/leak-causes-reference.js';
import { rng } from '../support/random.js';
import { slotSource } from '../support/slot-source.js';

const B = SiteKind.BRANCH;
const SITES: SiteDef[] = [
  { kind: S.ENTRY, file: '/src/b.c', func: 'main', name: 'main', line: 50 }, // 1
  { kind: S.ENTRY, file: '/src/b.c', func: 'work', name: 'work', line: 10 }, // 2
  { kind: S.MALLOC, file: '/src/b.c', func: 'work', name: 'malloc', line: 11 }, // 3
  { kind: B, file: '/src/b.c', func: 'work', name: 'if (bad)', line: 12 }, // 4
  { kind: B, file: '/src/b.c', func: 'work', name: 'if (fail)', line: 14 }, // 5
  { kind: S.FREE, file: '/src/b.c', func: 'work', name: 'free', line: 15 }, // 6
  { kind: S.ENTRY, file: '/src/b.c', func: 'release', name: 'release', line: 3 }, // 7
  { kind: S.FREE, file: '/src/b.c', func: 'release', name: 'free', line: 4 }, // 8
  { kind: B, file: '/src/b.c', func: 'work', name: 'i < n', line: 13 }, // 9
  { kind: S.MALLOC, file: '/src/b.c', func: 'main', name: 'malloc', line: 51 }, // 10 (never freed)
  { kind: S.FREE, file: '/src/b.c', func: 'main', name: 'free', line: 52 }, // 11
  { kind: S.ENTRY, file: '/src/b.c', func: 'deep', name: 'deep', line: 30 }, // 12 (left by a longjmp: UNWIND)
  { kind: S.REALLOC, file: '/src/b.c', func: 'work', name: 'realloc', line: 16 }, // 13
  { kind: S.ENTRY, file: '/src/b.c', func: 'worker', name: 'worker', line: 40 }, // 14 (the second thread's)
];

/**
 * Two threads calling work `calls` times in random turns; each call allocates, loops, and frees its block in work, in
 * release, after a realloc, later in main, on the other thread — or leaks it; some calls leave through `deep` with an
 * UNWIND, some allocations happen inside `deep`; the second thread ends inside a call of work.
 */
function churn(seed: number, calls: number): Uint8Array {
  const random = rng(seed);
  const b = new TraceBuilder({ minor: 2, complete: true });
  const threads = [b.thread(0), b.thread(1)];
  threads[0]!.threadBegin(1);
  threads[0]!.unit(1, SITES);
  threads[0]!.enter(1, 100);
  threads[0]!.alloc({ site: 10, size: 64, addr: 0x9000 });
  threads[1]!.chunk().threadBegin(2);
  threads[1]!.enter(14, 100);
  let current = 1;
  let addr = 0x10000;
  const later: number[][] = [[], []];
  const call = (t: ThreadWriter, me: number): void => {
    t.enter(2, 200);
    const viaDeep = random() < 0.2;
    if (viaDeep) t.enter(12, 300);
    let block = t.alloc({ site: 3, size: 16, addr: (addr += 0x40) });
    const loops = Math.floor(random() * 4);
    for (let k = 0; k < loops; k++) t.branch(9, true);
    if (loops > 0) t.branch(9, false);
    const r = random();
    t.branch(4, r < 0.15);
    if (r >= 0.15) t.branch(5, r < 0.3);
    if (r < 0.15) {
      // leaks
    } else if (r < 0.3) {
      // kept, and freed later in main or on the other thread (or never, when no free comes)
      later[random() < 0.7 ? me : 1 - me]!.push(block);
    } else if (r < 0.5) {
      t.free({ site: 6, block });
    } else if (r < 0.6) {
      block = t.realloc({ site: 13, old: block, size: 32, addr: (addr += 0x40) });
      t.free({ site: 6, block });
    } else {
      t.enter(7, 260);
      t.free({ site: 8, block });
      t.exit(7);
    }
    if (viaDeep) t.unwind(2);
    else t.exit(2);
  };
  for (let k = 0; k < calls; k++) {
    const me = random() < 0.7 ? 0 : 1;
    if (me !== current) threads[me]!.chunk();
    current = me;
    const t = threads[me]!;
    call(t, me);
    if (random() < 0.1 && later[me]!.length > 0) t.free({ site: 11, block: later[me]!.shift()! });
  }
  // The second thread ends inside work, with a block just allocated there: THREAD_END closes work and worker.
  threads[1]!.chunk().enter(2, 200);
  threads[1]!.alloc({ site: 3, size: 16, addr: (addr += 0x40) });
  threads[1]!.branch(4, true);
  threads[1]!.threadEnd();
  threads[0]!.chunk().exit(1);
  threads[0]!.end(0, 0);
  return b.build();
}

/** What every reader gives, and the reference. */
function allWays(bytes: Uint8Array): { reference: unknown; model: unknown; slots: unknown; streamed: unknown } {
  const model = decodeTrace(bytes);
  return {
    reference: referenceLeakCauses(model),
    model: leakCauses(model),
    slots: leakCausesOf(slotSource(model)),
    streamed: leakCausesOf(streamSource(memorySource(bytes), { window: 512 })),
  };
}

describe('leak causes as folds', () => {
  test('crafted runs with more blocks than are sampled: the same causes over the stream, the model and reused slots as before', () => {
    for (const [seed, calls] of [
      [1, 40],
      [2, 400],
      [3, 900],
    ] as const) {
      const bytes = churn(seed, calls);
      const all = allWays(bytes);
      const causes = all.reference as ReturnType<typeof leakCauses>;
      if (calls >= 400) {
        // More freed and more leaked blocks than are compared: the sampling is exercised.
        const work = causes.suspects.find((s) => s.site === 3)!;
        expect(work.freed).toBeGreaterThan(MAX_INSTANCES);
        expect(work.leaked).toBeGreaterThan(MAX_INSTANCES);
        expect(work.compared.leaking).toBeGreaterThan(0);
      }
      expect(causes.suspects.length).toBeGreaterThan(0);
      expect(all.model, `seed ${seed}: model`).toEqual(all.reference);
      expect(all.slots, `seed ${seed}: slots`).toEqual(all.reference);
      expect(all.streamed, `seed ${seed}: streamed`).toEqual(all.reference);
    }
  });

  test('every fixture trace: the same over the stream, the model and reused slots as before', () => {
    let compared = 0;
    for (const [name, bytes] of foldTraces()) {
      let all;
      try {
        all = allWays(bytes);
      } catch {
        continue; // refused by the header: nothing to compare
      }
      expect(all.model, `${name}: model`).toEqual(all.reference);
      expect(all.slots, `${name}: slots`).toEqual(all.reference);
      expect(all.streamed, `${name}: streamed`).toEqual(all.reference);
      compared++;
    }
    expect(compared).toBeGreaterThan(5);
  });

  test('the report computes --leak-causes from the stream, without a decoded model', () => {
    const bytes = churn(2, 400);
    const request = { ...summaryRequest(3), leakCauses: true };
    const inputs = { budgets: null, frameSizes: null };
    let passes = 0;
    const stream = streamSource(memorySource(bytes), { onReading: () => passes++ });
    const streamed = computeReport(stream, 'f', request, inputs);
    // The report's own pass (blocks per site, the possible common functions), then the common functions and the paths.
    expect(passes).toBe(2);
    const model = decodeTrace(bytes);
    expect(streamed).toEqual(computeReport(modelSource(model), 'f', request, inputs));
    expect(streamed.leakCauses).toEqual(referenceLeakCauses(model));
  });

  test('a site freed under more possible common functions than are followed at once: their paths in a third pass', () => {
    const callers = MAX_CANDIDATES + 2;
    const sites: SiteDef[] = [
      { kind: S.ENTRY, file: '/src/c.c', func: 'main', name: 'main', line: 90 }, // 1
      { kind: S.ENTRY, file: '/src/c.c', func: 'make', name: 'make', line: 10 }, // 2
      { kind: S.MALLOC, file: '/src/c.c', func: 'make', name: 'malloc', line: 11 }, // 3
      { kind: B, file: '/src/c.c', func: 'make', name: 'if (odd)', line: 12 }, // 4
      { kind: S.FREE, file: '/src/c.c', func: 'caller', name: 'free', line: 20 }, // 5
      ...Array.from({ length: callers }, (_, k): SiteDef => ({ kind: S.ENTRY, file: '/src/c.c', func: `caller${k}`, name: `caller${k}`, line: 30 + k })), // 6…
    ];
    const b = new TraceBuilder({ minor: 2, complete: true });
    const t = b.thread(0);
    t.threadBegin(1);
    t.unit(1, sites);
    t.enter(1, 100);
    for (let k = 0; k < 300; k++) {
      t.enter(6 + (k % callers), 200); // each caller frees what make returns: the common function is the caller
      t.enter(2, 300);
      const block = t.alloc({ site: 3, size: 8, addr: 0x1000 + 0x20 * k });
      t.branch(4, k % 3 === 0);
      t.exit(2);
      if (k % 3 !== 0) t.free({ site: 5, block });
      t.exit(6 + (k % callers));
    }
    t.exit(1);
    t.end(0, 0);
    const bytes = b.build();
    const all = allWays(bytes);
    expect(all.streamed).toEqual(all.reference);
    expect(all.model).toEqual(all.reference);
    expect(all.slots).toEqual(all.reference);
    const s = (all.reference as ReturnType<typeof leakCauses>).suspects[0]!;
    expect(s.commonFunction?.function).toMatch(/^caller\d+$/);
    expect(s.culprit).toMatchObject({ text: 'if (odd)', taken: true });
    let passes = 0;
    leakCausesOf(streamSource(memorySource(bytes), { onReading: () => passes++ }));
    expect(passes).toBe(3);
  });
});
