// Starts the page's index worker (index-worker.ts: the viewer's own index of a trace it holds whole) as a file of the built renderer (the CSP allows workers from 'self' only). The HTML report's build swaps this module for start-index-worker-inline.ts.
export function startIndexWorker(): Worker {
  return new Worker(new URL('./index-worker.ts', import.meta.url), { type: 'module' });
}
