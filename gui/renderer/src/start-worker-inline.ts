// Starts the decoding worker from code inlined in the page (a Blob URL): a report opened from file:// has no second file to load a worker from. Used by vite.report.config.ts in place of start-worker.ts.
import DecodeWorker from './decode-worker.ts?worker&inline';

export function startDecodeWorker(): Worker {
  return new DecodeWorker();
}
