// The folds of --by, --budget, --temporary, --calls, --interval, --stack and the Massif and CSV exports give the same results
// whether a block or frame handle is its row (a decoded model), a slot reused at once (slot-source.ts), or the
// streaming reader's: they copy what they need at the event.
import { describe, expect, test } from 'vitest';
import { ATTRIBUTION_BY, ATTRIBUTION_MODES, AttributionFold } from '../../analysis/attribution.js';
import { BudgetFold } from '../../analysis/budgets.js';
import { DeepestStackFold } from '../../analysis/deepest-stack.js';
import type { EventFold, FoldSource } from '../../analysis/event-fold.js';
import { CsvFold } from '../../analysis/export-csv.js';
import { MassifFold } from '../../analysis/export-massif.js';
import { modelSource } from '../../analysis/model-fold.js';
import { PerCallFold } from '../../analysis/per-call.js';
import { TemporariesFold } from '../../analysis/temporaries.js';
import { IntervalFold } from '../../analysis/timeline.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { memorySource } from '../../analysis/trace/byte-source.js';
import { streamSource } from '../../analysis/trace/resolve-stream.js';
import { slotSource } from '../support/slot-source.js';
import { foldTraces } from '../support/fold-traces.js';

function results(source: FoldSource): object {
  let result: () => object = () => ({});
  source.run((start) => {
    const by = ATTRIBUTION_BY.flatMap((b) => ATTRIBUTION_MODES.map((mode) => new AttributionFold(start, { by: b, mode })));
    const massif = new MassifFold(start, { snapshots: 7, detailedEvery: 2, threshold: 0 });
    const budgets = new BudgetFold(start, { heap: 100, stack: 100, static: 100, total: 300 }, { maxRanges: 2 });
    const temporaries = new TemporariesFold(start, { within: 4 });
    const calls = ['main', 'make_node'].map((name) => new PerCallFold(start, name, { keepCalls: 2 }));
    const intervals = [new IntervalFold(start, { every: 3, unit: 'events' }), new IntervalFold(start, { every: 1e6, unit: 'time' })];
    const csv = new CsvFold(start, { every: 2, unit: 'events' });
    const stack = new DeepestStackFold(start, 48);
    result = () => ({
      stack: stack.result(),
      by: by.map((f) => f.result()),
      massif: massif.result(),
      budgets: budgets.result(),
      temporaries: temporaries.result(),
      calls: calls.map((f) => f.result()),
      intervals: intervals.map((f) => f.result()),
      csv: csv.result(),
    });
    const folds: EventFold[] = [...by, massif, budgets, temporaries, ...calls, ...intervals, csv, stack];
    return folds;
  });
  return result();
}

describe('more folds over reused block and frame slots', () => {
  test('the same results as over the model rows: slots reused at once, and the streaming reader', () => {
    let compared = 0;
    for (const [name, bytes] of foldTraces()) {
      let model;
      try {
        model = decodeTrace(bytes);
      } catch {
        continue;
      }
      const expected = results(modelSource(model));
      expect(results(slotSource(model)), name).toEqual(expected);
      expect(results(streamSource(memorySource(bytes), { window: 4096 })), `${name} streamed`).toEqual(expected);
      compared++;
    }
    expect(compared).toBeGreaterThan(5);
  });
});
