// The worker thread that builds a trace's index (host/trace-index.ts, buildIndexFile), so the viewer's server or
// window keeps answering while it reads the trace; progress goes to the thread that started it.
import { parentPort, workerData } from 'node:worker_threads';
import { buildIndexFile } from './trace-index.js';

const { trace, dest } = workerData as { trace: string; dest: string };
let last = 0;
try {
  buildIndexFile(trace, dest, (progress) => {
    const now = Date.now();
    if (now - last < 200 && progress.fraction < 1) return;
    last = now;
    parentPort!.postMessage({ type: 'progress', progress });
  });
  parentPort!.postMessage({ type: 'done' });
} catch (e) {
  parentPort!.postMessage({ type: 'error', message: (e as Error).message });
}
