// Index mode's panels (analysis/panel-data.ts) computed on the host as it streams the trace: the tables, counts,
// peaks, leaks, linked frees, leak causes, budgets and stack in one pass of folds (and the leak causes' own), then the
// flame graph's call paths and the consumed chart, in a worker thread so the server or window keeps answering; kept
// beside the index as `<index>.panels` (checked against the trace's size and modification time, the index's version
// and the budgets and frame sizes it was computed with; written under a temporary name and renamed).
import { readFileSync, renameSync, existsSync } from 'node:fs';
import { writePrivateFile } from './private-files.js';
import { indexPanelsText, panelExtras, panelTables, type IndexPanels, type PanelInputs } from '../analysis/panel-data.js';
import { INDEX_VERSION } from '../analysis/event-index.js';
import { FileSource } from '../analysis/trace/file-source.js';
import { streamSource } from '../analysis/trace/resolve-stream.js';
import { fileSymbolNamer } from './library-symbols.js';
import { describeReadError } from './read-errors.js';
import { jsonInWorker } from './json-task.js';
import { track, traceStamp, untrack } from './index-cache.js';

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
 * The panels' data of `trace` for the index file `index`, as JSON text: read from `<index>.panels` when it was made
 * for the trace as it is now with the same inputs, else computed (in a worker thread) and kept there.
 */
export async function cachedIndexPanels(trace: string, index: string, inputs: PanelInputs, onProgress?: (p: PanelsProgress) => void): Promise<string> {
  const file = `${index}.panels`;
  let stamp: { size: number; mtimeMs: number };
  try {
    stamp = traceStamp(trace);
  } catch (e) {
    throw new Error(describeReadError(trace, e));
  }
  const key = JSON.stringify({ version: INDEX_VERSION, ...stamp, inputs });
  try {
    const kept = readFileSync(file, 'utf8');
    const cut = kept.indexOf('\n');
    if (cut > 0 && kept.slice(0, cut) === key) {
      // A damaged body (a disk error, an edit) is computed again rather than handed to the page.
      const body = kept.slice(cut + 1);
      const parsed = JSON.parse(body) as Partial<IndexPanels> | null;
      if (parsed !== null && typeof parsed === 'object' && typeof parsed.tables === 'object' && typeof parsed.extras === 'object') return body;
    }
  } catch {
    // none yet, or not one of ours
  }
  const json = await indexPanelsInWorker(trace, inputs, onProgress);
  const tmp = `${file}.tmp-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  try {
    track(tmp);
    writePrivateFile(tmp, `${key}\n${json}`);
    renameSync(tmp, file);
  } catch {
    // a cache that cannot be written is computed again next time
  } finally {
    untrack(tmp);
  }
  return json;
}
