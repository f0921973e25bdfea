// What the pages only the local server serves (compare.html, lanes.html) share: its API with the app's header, and
// the progress bar while traces are fetched and decoded.
import { byId, fill } from './dom.js';

/** For automation: whether the page is drawn, or what went wrong. */
export interface PageHandle {
  ready: boolean;
  error: string | null;
}

const API_HEADERS = { 'x-cc-memwrap': '1' };

/** A request to the local server's API; rejects on an HTTP error. */
export async function api(path: string, method: 'GET' | 'POST' = 'GET'): Promise<Response> {
  const r = await fetch(path, { method, headers: API_HEADERS });
  if (!r.ok) throw new Error(`${path}: HTTP ${r.status}`);
  return r;
}

/**
 * Runs the page's `start`, which sets `handle.ready` when it is done; on failure, hides the progress bar, records the
 * message on `handle` and shows it in #error after `lead`.
 */
export function startPage(start: () => Promise<void>, handle: PageHandle, lead: string): void {
  start().catch((e: unknown) => {
    progress(null);
    handle.error = (e as Error).message;
    const box = byId('error');
    box.hidden = false;
    fill(box, `${lead}: ${handle.error}`);
  });
}

/** Shows `label` and `fraction` in the page's #progress bar; null hides it. */
export function progress(label: string | null, fraction = 0): void {
  byId('progress').hidden = label === null;
  if (label !== null) {
    fill(byId('progress-label'), label);
    byId<HTMLProgressElement>('progress-bar').value = fraction;
  }
}
