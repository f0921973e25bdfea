// The worker thread that reads a large trace for the viewer's host (host/index-cache.ts): builds its index
// (buildIndexFile) or the summaries the chart draws first (buildSummaryFile), or computes the report index mode's
// panel shows (indexReport), the data of its panels (indexPanelsJson) or the differences of two traces for the compare
// page (compareTracesJson), so the viewer's server or window keeps answering meanwhile; progress and the result go to
// the thread that started it.
import { parentPort, workerData } from 'node:worker_threads';
import type { PanelInputs } from '../analysis/panel-data.js';
import { indexPanelsJson } from './index-panels.js';
import { compareTracesJson, type CompareInput } from './compare-runs.js';
import { buildIndexFile, buildSummaryFile, indexReport, type BuildProgress } from './index-cache.js';

const job = workerData as
  | { task: 'index' | 'summaries'; trace: string; dest: string; times?: boolean }
  | { task: 'report'; trace: string }
  | { task: 'panels'; trace: string; inputs: PanelInputs }
  | { task: 'compare'; runs: [CompareInput, CompareInput] };
let last = 0;
/** Progress to the starting thread at most every 200 ms, as `{type, progress}`. */
const every200ms =
  <P>(type: string) =>
  (progress: P): void => {
    const now = Date.now();
    if (now - last < 200) return;
    last = now;
    parentPort!.postMessage({ type, progress });
  };
try {
  if (job.task === 'compare') {
    parentPort!.postMessage({ type: 'compare', json: compareTracesJson(job.runs, every200ms('compare-progress')) });
  } else if (job.task === 'panels') {
    parentPort!.postMessage({ type: 'panels', json: indexPanelsJson(job.trace, job.inputs, every200ms('panels-progress')) });
  } else if (job.task === 'report') {
    parentPort!.postMessage({ type: 'report', text: indexReport(job.trace) });
  } else {
    const onProgress = (progress: BuildProgress): void => {
      const now = Date.now();
      if (now - last < 200 && progress.fraction < 1) return;
      last = now;
      parentPort!.postMessage({ type: 'progress', progress });
    };
    if (job.task === 'index') buildIndexFile(job.trace, job.dest, onProgress);
    else buildSummaryFile(job.trace, job.dest, onProgress, job.times === true);
    parentPort!.postMessage({ type: 'done' });
  }
} catch (e) {
  parentPort!.postMessage({ type: 'error', message: (e as Error).message });
}
