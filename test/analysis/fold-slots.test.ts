// The folds of the report give the same numbers whether a block handle is its row (a decoded model) or a slot reused
// once the block has ended (the streaming reader, and slot-source.ts, which reuses a slot at once and scribbles on
// it): they copy what they need at the event.
import { describe, expect, test } from 'vitest';
import type { FoldSource } from '../../analysis/event-fold.js';
import { modelSource } from '../../analysis/model-fold.js';
import { SummaryFold } from '../../analysis/summary.js';
import { PeakFold } from '../../analysis/peak.js';
import { LinkedFold, OrphanFold } from '../../analysis/linked.js';
import { LeaksFold } from '../../analysis/leaks.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { memorySource } from '../../analysis/trace/byte-source.js';
import { streamSource } from '../../analysis/trace/resolve-stream.js';
import { FIXTURES, studentMain } from '../fixtures/scenarios.js';
import { slotSource } from '../support/slot-source.js';
import { fixtureFile, foldTraces } from '../support/fold-traces.js';
import { computeReport, type FailOn } from '../../analysis/report.js';

function report(source: FoldSource, keep: number): object {
  let result: () => object = () => ({});
  source.run((start) => {
    const summary = new SummaryFold(start, { top: keep });
    const peak = new PeakFold(start);
    const orphans = new OrphanFold(start);
    const linked = new LinkedFold(start, orphans, { keep });
    const leaks = new LeaksFold(start, orphans);
    result = () => ({ summary: summary.result(), peak: peak.result(), linked: linked.result(), leaks: leaks.result() });
    return [summary, peak, orphans, linked, leaks];
  });
  return result();
}

/** A block named by a linked set ends; the next block takes its slot and leaks, named by no set. */
function reusedSlotTrace(): Uint8Array {
  const { b, t } = studentMain();
  const a = t.alloc({ site: 4, size: 24, addr: 0x1000 });
  const named = t.alloc({ site: 4, size: 24, addr: 0x1020 });
  t.free({ site: 6, block: a });
  t.linked([named]);
  t.free({ site: 6, block: named });
  t.alloc({ site: 9, size: 100, addr: 0x1040 });
  const later = t.alloc({ site: 4, size: 24, addr: 0x1060 });
  t.free({ site: 6, block: later });
  t.exit(2);
  t.end(0, 0);
  return b.build();
}

const everyRecord = (name = '1.2/every-record.bin'): Uint8Array => fixtureFile(name);
const traces = (): [string, Uint8Array][] => foldTraces([['reused slot', reusedSlotTrace()]]);

describe('the report folds over reused block slots', () => {
  test('the same report as over the model rows: slots reused at once, and the streaming reader', () => {
    let compared = 0;
    for (const [name, bytes] of traces()) {
      let model;
      try {
        model = decodeTrace(bytes);
      } catch {
        continue;
      }
      for (const keep of [1, 1000]) {
        const expected = report(modelSource(model), keep);
        expect(report(slotSource(model), keep), `${name}, keep ${keep}`).toEqual(expected);
        expect(report(streamSource(memorySource(bytes), { window: 4096 }), keep), `${name} streamed, keep ${keep}`).toEqual(expected);
      }
      compared++;
    }
    expect(compared).toBeGreaterThan(5);
  });
});

describe('computeReport over a fold source', () => {
  const request = { top: 3, by: null, peak: true, linked: true, leaks: true, temporaryWithin: null, calls: null, interval: null, stack: false, leakCauses: false, failOn: new Set<FailOn>(['leaks']) };
  const inputs = { budgets: null, frameSizes: null };

  test('every section is a fold: streamed, the result is the one of the decoded trace', () => {
    const bytes = everyRecord();
    const streamed = computeReport(streamSource(memorySource(bytes)), 'f', request, inputs);
    const model = decodeTrace(bytes);
    expect(streamed).toEqual(computeReport(modelSource(model), 'f', request, inputs));
    expect(streamed.linked!.count).toBeGreaterThan(0);
    const more = { ...request, by: { by: 'function' as const, mode: 'innermost' as const }, interval: { every: 4, unit: 'events' as const }, leakCauses: true };
    for (const name of ['1.2/every-record.bin', '1.0/basic.bin']) {
      const b = name === '1.0/basic.bin' ? FIXTURES[name]!() : everyRecord(name);
      expect(computeReport(streamSource(memorySource(b)), 'f', more, inputs), name).toEqual(computeReport(modelSource(decodeTrace(b)), 'f', more, inputs));
    }
  });
});
