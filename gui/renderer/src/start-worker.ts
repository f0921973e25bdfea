// Starts the decoding worker as a file of the built renderer (the viewer: the CSP allows workers from 'self' only). The HTML report's build swaps this module for start-worker-inline.ts.
export function startDecodeWorker(): Worker {
  return new Worker(new URL('./decode-worker.ts', import.meta.url), { type: 'module' });
}
