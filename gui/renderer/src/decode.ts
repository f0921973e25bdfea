// Opening a decoded trace, for the compare and lanes pages: the decoding worker run on trace bytes.
import type { Budgets } from '../../../analysis/budgets.js';
import { startDecodeWorker } from './start-worker.js';
import type { ViewData, WorkerMessage } from './view-data.js';

/**
 * Decodes trace bytes in the worker, reporting each phase; resolves with everything a page shows. With `onExtras`,
 * the worker is kept for what it reads after (the flame graph's call paths, the consumed chart), handed over later.
 */
export function decodeInWorker(
  bytes: ArrayBuffer,
  budgets: Budgets | null,
  onProgress: (phase: string, fraction: number) => void,
  onExtras?: (extras: Pick<ViewData, 'flame' | 'consumed'>) => void,
): Promise<ViewData> {
  const worker = startDecodeWorker();
  return new Promise((resolve, reject) => {
    worker.onmessage = (e: MessageEvent<WorkerMessage>) => {
      const m = e.data;
      if (m.type === 'progress') onProgress(m.phase, m.fraction);
      else if (m.type === 'done') {
        if (onExtras === undefined) worker.terminate();
        resolve(m.data);
      } else if (m.type === 'extras') {
        worker.terminate();
        onExtras?.({ flame: m.flame, consumed: m.consumed });
      } else {
        worker.terminate();
        reject(new Error(m.message));
      }
    };
    worker.onerror = (e) => {
      worker.terminate();
      reject(new Error(e.message || 'the decoding worker failed'));
    };
    worker.postMessage({ bytes, budgets }, [bytes]);
  });
}
