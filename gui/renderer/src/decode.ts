// Opening a decoded trace, for the viewer and the compare page alike: the decoding worker run on trace bytes, and the
// budget lines the chart draws from what it found.
import type { Budgets } from '../../../analysis/budgets.js';
import type { BudgetMark } from './chart/chart.js';
import { startDecodeWorker } from './start-worker.js';
import type { ViewData, WorkerMessage } from './view-data.js';

/** Decodes trace bytes in the worker, reporting each phase; resolves with everything a page shows. */
export function decodeInWorker(bytes: ArrayBuffer, budgets: Budgets | null, onProgress: (phase: string, fraction: number) => void): Promise<ViewData> {
  const worker = startDecodeWorker();
  return new Promise((resolve, reject) => {
    worker.onmessage = (e: MessageEvent<WorkerMessage>) => {
      const m = e.data;
      if (m.type === 'progress') onProgress(m.phase, m.fraction);
      else {
        worker.terminate();
        if (m.type === 'done') resolve(m.data);
        else reject(new Error(m.message));
      }
    };
    worker.onerror = (e) => {
      worker.terminate();
      reject(new Error(e.message || 'the decoding worker failed'));
    };
    worker.postMessage({ bytes, budgets }, [bytes]);
  });
}

/** The budgets checked on the run, as lines (and exceeded ranges) on the chart. */
export function budgetMarks(v: ViewData): BudgetMark[] {
  return v.budgets.map((b) => ({
    label: b.kind,
    side: b.kind === 'heap' ? 'heap' : 'above',
    bytes: b.limitBytes,
    ranges: b.ranges.map((r) => [r.startEvent, r.endEvent] as [number, number]),
  }));
}
