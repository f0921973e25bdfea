// The budget lines the chart draws, from the budgets checked on a run (the viewer's panels' data, a decoded trace's),
// apart from the decoding worker so that a page which does not decode (the viewer, its HTML report) does not carry it.
import type { BudgetCheck } from '../../../analysis/budgets.js';
import type { BudgetMark } from './chart/chart.js';

/** The budgets checked on the run (a decoded trace's, or the index's panels'), as lines (and exceeded ranges) on the chart. */
export function budgetMarks(budgets: readonly BudgetCheck[]): BudgetMark[] {
  return budgets.map((b) => ({
    label: b.kind,
    side: b.kind === 'heap' ? 'heap' : 'above',
    bytes: b.limitBytes,
    ranges: b.ranges.map((r) => [r.startEvent, r.endEvent] as [number, number]),
    ...(b.libraryBlocks === false ? { library: false } : {}),
  }));
}
