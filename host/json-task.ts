// A host computation whose result is JSON text, run in the worker thread that reads large traces
// (index-build-worker.ts) so the viewer's server or window keeps answering, or on this thread when the compiled
// worker is not there (tests run the TypeScript). Used by the panels' data and the compare page's differences.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { WORKER_LIMITS } from '../analysis/worker-limits.js';

/** The worker script (compiled beside this file). */
const WORKER = fileURLToPath(new URL('./index-build-worker.js', import.meta.url));

/**
 * Runs `job` (workerData; its `task` names it) in the worker, which answers `{type: task, json}`, progress as
 * `{type: task + '-progress', progress}`, or `{type: 'error', message}`; `here` computes the same on this thread.
 */
export function jsonInWorker<P, J extends { task: string }>(job: J, here: (onProgress?: (p: P) => void) => string, onProgress?: (p: P) => void): Promise<string> {
  if (!existsSync(WORKER)) return Promise.resolve().then(() => here(onProgress));
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, { workerData: job, resourceLimits: WORKER_LIMITS });
    worker.on('message', (m: { type: string; json?: string; progress?: P; message?: string }) => {
      if (m.type === `${job.task}-progress`) onProgress?.(m.progress!);
      else if (m.type === job.task) resolve(m.json!);
      else reject(new Error(m.message));
    });
    worker.on('error', reject);
  });
}
