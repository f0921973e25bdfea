// The decoding worker: trace bytes in, model and tables out, with progress on the way, so a multi-million-event trace never blocks the page.
import { checkBudgets } from '../../../analysis/budgets.js';
import { orphaningEvents } from '../../../analysis/linked.js';
import { monotonicTimes } from '../../../analysis/lod.js';
import { summarize } from '../../../analysis/summary.js';
import { staticSeries } from '../../../analysis/timeline.js';
import { decodeTrace } from '../../../analysis/trace/decode.js';
import { memorySource } from '../../../analysis/trace/byte-source.js';
import { streamSource } from '../../../analysis/trace/resolve-stream.js';
import { panelExtras } from '../../../analysis/panel-data.js';
import { type DecodeRequest, type ViewData, type WorkerMessage } from './view-data.js';

interface WorkerScope {
  postMessage(message: WorkerMessage, transfer?: Transferable[]): void;
  onmessage: ((e: MessageEvent<DecodeRequest>) => void) | null;
}
const scope = self as unknown as WorkerScope;

/** Every ArrayBuffer under `value` (typed arrays of the model), once each, to transfer instead of copying. */
function buffersOf(value: unknown, out = new Set<ArrayBuffer>(), seen = new Set<unknown>()): Set<ArrayBuffer> {
  if (value === null || typeof value !== 'object' || seen.has(value)) return out;
  seen.add(value);
  if (ArrayBuffer.isView(value)) {
    if (value.buffer instanceof ArrayBuffer) out.add(value.buffer);
    return out;
  }
  for (const v of Object.values(value)) buffersOf(v, out, seen);
  return out;
}

scope.onmessage = (e) => {
  try {
    const t0 = performance.now();
    let shown = -1;
    const bytes = new Uint8Array(e.data.bytes);
    const model = decodeTrace(bytes, {
      // One message per percent at most: the decoder reports every chunk.
      onProgress: (fraction, phase) => {
        const pct = Math.floor(fraction * 100);
        if (pct === shown) return;
        shown = pct;
        scope.postMessage({ type: 'progress', fraction, phase });
      },
    });
    const t1 = performance.now();
    scope.postMessage({ type: 'progress', fraction: 1, phase: 'computing the summary' });
    const data: ViewData = {
      model,
      statics: staticSeries(model),
      times: monotonicTimes(model),
      orphanedBy: orphaningEvents(model),
      summary: summarize(model),
      budgets: e.data.budgets ? checkBudgets(model, e.data.budgets) : [],
      flame: null,
      consumed: null,
      decodeMs: t1 - t0,
      tablesMs: 0,
    };
    data.tablesMs = performance.now() - t1;
    scope.postMessage({ type: 'done', data }, [...buffersOf(data)]);
    // Then the flame graph's call paths and the consumed chart, two more passes over the trace (the model's arrays
    // went to the page): the page shows the chart without waiting for them.
    scope.postMessage({ type: 'extras', ...panelExtras(streamSource(memorySource(bytes))) });
  } catch (err) {
    scope.postMessage({ type: 'error', message: (err as Error).message });
  }
};
