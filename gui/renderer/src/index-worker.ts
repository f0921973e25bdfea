// The page's own index of a trace it holds whole (a small trace, a file dropped on the page, an HTML report's trace),
// built in a worker: the trace decoded, then the same folds the host runs over a large trace's file run over it in
// memory (analysis/memory-index.ts: the summaries the chart draws first, then every event; analysis/panel-data.ts:
// the panels' data), the page told as each is done (with a copy of the index, from which it answers a click at once).
// The worker then encodes the ranges of events the page asks for, as the host does (the host's IndexReader over the
// index here, local-index.ts the page's side), and from the decoded trace it keeps answers what a host's index does
// not list: the events of a table row, of some blocks or of a call path.
import { allocationsOf, allocationsOfCallPath, eventsOfGroup } from '../../../analysis/event-sets.js';
import { buildMemoryIndex } from '../../../analysis/memory-index.js';
import { modelSource } from '../../../analysis/model-fold.js';
import { indexPanelsText, panelExtras, panelTables, PANEL_BY, type PanelBy, type PanelInputs } from '../../../analysis/panel-data.js';
import { attribution } from '../../../analysis/attribution.js';
import { decodeTrace } from '../../../analysis/trace/decode.js';
import type { Model } from '../../../analysis/model.js';
import { NOT_INTERPOSED, type LocalAsk, type LocalLibraries, type LocalOpen, type LocalQuery, type LocalReply } from './local-index.js';
import { encodeRange, type IndexReader } from '../../../analysis/event-index.js';

interface WorkerScope {
  postMessage(message: LocalReply, transfer?: Transferable[]): void;
  onmessage: ((e: MessageEvent<LocalOpen | LocalAsk>) => void) | null;
}
const scope = self as unknown as WorkerScope;

/** The trace decoded, and its index once built. */
let model: Model | null = null;
let reader: IndexReader | null = null;
/** Requests that came before the index was built, answered once it is. */
const early: LocalAsk[] = [];

/** Bytes as an ArrayBuffer of their own (to be transferred). */
function own(bytes: Uint8Array): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

/** What the page asks of the worker's index: a range of events, encoded as the host sends it. */
function indexAnswer(r: IndexReader, q: LocalQuery): { value: unknown; transfer: Transferable[] } | null {
  if ('range' in q) {
    const value = own(encodeRange(r.range(q.range[0], q.range[1], 1 << 20)));
    return { value, transfer: [value] };
  }
  return null;
}

/**
 * What the page needs beside the index to name what made a block a library made (the index holds no block's library):
 * each block's calling object (its path's row in `paths`; NONE: none said; NOT_INTERPOSED: the program made it).
 */
function libraryOfBlocks(m: Model): LocalLibraries {
  const of = new Int32Array(m.blocks.count);
  for (let b = 0; b < of.length; b++) of[b] = m.blocks.interposed[b] === 1 ? m.blocks.library[b]! : NOT_INTERPOSED;
  return { of, paths: m.libraries.slice() };
}

/** Answers a request: of the index (a range, as the host answers), or of the decoded trace (the events of a row, of some blocks, of a call path). */
function answer(ask: LocalAsk): void {
  try {
    const m = model!;
    const q = ask.query;
    const indexed = indexAnswer(reader!, q);
    if (indexed !== null) return scope.postMessage({ type: 'answer', id: ask.id, value: indexed.value }, indexed.transfer);
    const value = 'by' in q ? eventsOfGroup(m, { by: q.by }, q.key) : 'blocks' in q ? allocationsOf(m, q.blocks) : allocationsOfCallPath(m, (q as { callPath: string[] }).callPath);
    scope.postMessage({ type: 'answer', id: ask.id, value }, [value.buffer as ArrayBuffer]);
  } catch (err) {
    scope.postMessage({ type: 'refused', id: ask.id, message: (err as Error).message });
  }
}

/** The events charged to each group of one attribution table, handed to the page as one list with its rows' starts. */
function rowsOf(m: Model, by: PanelBy): void {
  const groups = new Map<string, number[]>();
  attribution(m, { by }, (e, key) => {
    let list = groups.get(key);
    if (list === undefined) groups.set(key, (list = []));
    // An event charged to the group twice is listed once (as eventsOfGroup lists them).
    if (list[list.length - 1] !== e) list.push(e);
  });
  const keys = [...groups.keys()];
  const starts = new Int32Array(keys.length + 1);
  keys.forEach((k, g) => (starts[g + 1] = starts[g]! + groups.get(k)!.length));
  const events = new Int32Array(starts[keys.length]!);
  keys.forEach((k, g) => events.set(groups.get(k)!, starts[g]!));
  scope.postMessage({ type: 'rows', by, keys, starts, events }, [starts.buffer, events.buffer]);
}

/** Decodes the trace, then builds what the page reads, telling it each as it comes. */
function open(o: LocalOpen): void {
  const t0 = performance.now();
  let shown = -1;
  const m = decodeTrace(new Uint8Array(o.bytes), {
    // One message per percent at most: the decoder reports every chunk.
    onProgress: (fraction, phase) => {
      const pct = Math.floor(fraction * 100);
      if (pct === shown) return;
      shown = pct;
      scope.postMessage({ type: 'progress', fraction, phase });
    },
  });
  model = m;
  const decodeMs = performance.now() - t0;
  // What the chart draws first: the summaries, with the buckets' times.
  const first = buildMemoryIndex(modelSource(m), { events: false, times: true });
  scope.postMessage({ type: 'summaries', meta: first.meta, summary: first.summary }, [first.summary.buffer as ArrayBuffer]);
  // Then every event: the index, which answers the page from here on (its summaries with times handed over).
  const whole = buildMemoryIndex(modelSource(m), { events: true });
  reader = whole.reader;
  // A copy of the index for the page, which answers a click's detail, call stack and next event from it at once;
  // the ranges of events, the heavy requests, are encoded here.
  const parts = { meta: whole.meta, summary: whole.summary, buckets: whole.buckets, frees: whole.frees, fines: whole.fines };
  scope.postMessage({ type: 'index', parts, libraries: libraryOfBlocks(m) });
  for (const ask of early.splice(0)) answer(ask);
  // Then the panels' data, after the requests that came meanwhile.
  setTimeout(() => {
    const t1 = performance.now();
    const inputs: PanelInputs = { budgets: o.budgets, frameSizes: o.frameSizes };
    try {
      // The events of every row of the tables the panels show, for a row's click to find at once.
      for (const by of PANEL_BY) rowsOf(m, by);
      const tables = panelTables(modelSource(m), inputs);
      const extras = panelExtras(modelSource(m));
      const json = indexPanelsText({ tables, extras, seconds: (performance.now() - t1) / 1000 });
      scope.postMessage({ type: 'panels', json, decodeMs, tablesMs: performance.now() - t1 });
    } catch (err) {
      scope.postMessage({ type: 'panels-failed', message: (err as Error).message });
    }
  }, 0);
}

scope.onmessage = (e) => {
  const m = e.data;
  if (m.type === 'ask') {
    if (reader === null) early.push(m);
    else answer(m);
    return;
  }
  try {
    open(m);
  } catch (err) {
    scope.postMessage({ type: 'error', message: (err as Error).message });
  }
};
