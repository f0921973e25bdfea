// Starts the page's index worker from code inlined in the page (a Blob URL): a report opened from file:// has no second file to load a worker from. Used by vite.report.config.ts in place of start-index-worker.ts.
import IndexWorker from './index-worker.ts?worker&inline';

export function startIndexWorker(): Worker {
  return new IndexWorker();
}
