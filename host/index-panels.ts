// Index mode's panels (analysis/panel-data.ts) computed on the host as it streams the trace: the tables, counts,
// peaks, leaks, linked frees, leak causes, budgets and stack in one pass of folds (and the leak causes' own), then the
// flame graph's call paths and the consumed chart, in a worker thread so the server or window keeps answering; kept
// in the trace's cache folder (index-cache.ts) as `panels`, keyed by the trace's size and modification time, the
// index's version and the budgets and frame sizes it was computed with, with a checksum.
import { existsSync } from 'node:fs';
import { indexPanelsText, panelExtras, panelTables, type IndexPanels, type PanelInputs } from '../analysis/panel-data.js';
import { INDEX_VERSION } from '../analysis/event-index.js';
import { FileSource } from '../analysis/trace/file-source.js';
import { streamSource } from '../analysis/trace/resolve-stream.js';
import { fileSymbolNamer } from './library-symbols.js';
import { describeReadError } from './read-errors.js';
import { jsonInWorker } from './json-task.js';
import { cacheFiles, keepText, keptText, traceStamp } from './index-cache.js';

/** How far the computation is: the fraction of its passes done and what it is doing. */
export interface PanelsProgress {
  fraction: number;
  phase: string;
}

/**
 * The panels' data of `trace`, computed in passes over the streamed file (synchronous: the hosts run it in a worker,
 * indexPanelsInWorker), as JSON text. The first pass (the folds) is most of the fraction; the records' passes the rest.
 */
export function indexPanelsJson(trace: string, inputs: PanelInputs, onProgress?: (p: PanelsProgress) => void): string {
  const t0 = Date.now();
  let file: FileSource;
  try {
    file = FileSource.open(trace);
  } catch (e) {
    throw new Error(describeReadError(trace, e));
  }
  try {
    const tables = panelTables(streamSource(file.clone(), { symbols: fileSymbolNamer, onProgress: (f) => onProgress?.({ fraction: f * 0.5, phase: 'the tables' }) }), inputs);
    // Two passes: a fraction that goes back down is the second one.
    let pass = 0;
    let last = Infinity;
    const extras = panelExtras(
      streamSource(file.clone(), {
        onProgress: (f) => {
          if (f < last) pass++;
          last = f;
          const phase = pass === 1 ? 'call paths and the live heap by site' : 'the blocks live at the peak, the live heap sampled';
          onProgress?.({ fraction: 0.5 + (Math.min(pass, 2) - 1 + f) * 0.25, phase });
        },
      }),
    );
    const out: IndexPanels = { tables, extras, seconds: (Date.now() - t0) / 1000 };
    return indexPanelsText(out);
  } finally {
    file.close();
  }
}

/** indexPanelsJson in a worker thread when the compiled worker is there. */
export function indexPanelsInWorker(trace: string, inputs: PanelInputs, onProgress?: (p: PanelsProgress) => void): Promise<string> {
  return jsonInWorker({ task: 'panels', trace, inputs }, (progress) => indexPanelsJson(trace, inputs, progress), onProgress);
}

/**
 * The panels' data of `trace` for its cache folder `dir`, as JSON text: kept in its `panels` file when it was made for
 * the trace as it is now with the same inputs and verifies, else computed (in a worker thread) and kept there.
 * `onNote` is told when a kept one was damaged.
 */
export async function cachedIndexPanels(trace: string, dir: string, inputs: PanelInputs, onProgress?: (p: PanelsProgress) => void, onNote?: (note: string) => void): Promise<string> {
  const file = cacheFiles(dir).panels;
  let stamp: { size: number; mtimeMs: number };
  try {
    stamp = traceStamp(trace);
  } catch (e) {
    throw new Error(describeReadError(trace, e));
  }
  const key = { version: INDEX_VERSION, ...stamp, inputs };
  const kept = keptText(file, key, onNote);
  if (kept !== null) return kept;
  const json = await indexPanelsInWorker(trace, inputs, onProgress);
  keepText(file, key, json);
  return json;
}
