// The page's side of its own index (index-worker.ts): a trace the page holds whole served through the same interface
// as a large trace's index on the host (backend.ts IndexApi): the summaries, then the index itself, built in the
// worker; a range of events encoded there, off the page's thread, as the host sends it; details, call stacks, fine rows
// and the next event of a class read here, at once (as a click wants), by the host's IndexReader from a copy of the
// index (what made a block a library made from each block's calling object, which the index does not hold); the
// panels' data; the events of a table row, some blocks or a call path, which the worker's decoded trace lists.
import type { Budgets } from '../../../analysis/budgets.js';
import { NONE } from '../../../analysis/model.js';
import { encodeFine, type IndexMeta, type IndexReader } from '../../../analysis/event-index.js';
import { memoryIndexReader, type MemoryIndexParts } from '../../../analysis/memory-index.js';
import { eventClassBit, madeByLibrary, type EventClass } from '../../../analysis/event-detail.js';
import type { PanelInputs } from '../../../analysis/panel-data.js';
import { indexPanelsOf, type IndexPanels } from '../../../analysis/panel-data.js';
import type { AttributionBy } from '../../../analysis/attribution.js';
import type { BuildState, IndexDetailReply, IndexPanelsReply, IndexStatusReply } from '../../../host/session-types.js';
import type { EventsQuery, IndexApi } from './backend.js';
import { startIndexWorker } from './start-index-worker.js';

/** Page → worker: the trace to open. */
export interface LocalOpen {
  type: 'open';
  bytes: ArrayBuffer;
  budgets: Budgets | null;
  frameSizes: PanelInputs['frameSizes'];
}

/** Page → worker: the events of a row, blocks or call path, answered by id. */
export type LocalQuery =
  | { by: AttributionBy; key: string }
  | { blocks: number[] }
  | { callPath: string[] }
  /** A range of events, encoded as the host sends it (an ArrayBuffer of encodeRange). */
  | { range: [number, number] };

export interface LocalAsk {
  type: 'ask';
  id: number;
  query: LocalQuery;
}

/** A block the program made itself (not through the interposed allocator), in `LocalLibraries.of`. */
export const NOT_INTERPOSED = -2;

/** Each block's calling object, by block row: a row of `paths`, NONE (not said) or NOT_INTERPOSED. */
export interface LocalLibraries {
  of: Int32Array;
  paths: string[];
}

/** Worker → page. */
export type LocalReply =
  | { type: 'progress'; fraction: number; phase: string }
  | { type: 'summaries'; meta: IndexMeta; summary: Float64Array }
  | { type: 'index'; parts: MemoryIndexParts; libraries: LocalLibraries }
  | { type: 'rows'; by: AttributionBy; keys: string[]; starts: Int32Array; events: Int32Array }
  | { type: 'panels'; json: string; decodeMs: number; tablesMs: number }
  | { type: 'panels-failed'; message: string }
  | { type: 'answer'; id: number; value: unknown }
  | { type: 'refused'; id: number; message: string }
  | { type: 'error'; message: string };

/**
 * The index of `bytes` built in a worker, as an IndexApi (its status says how far the decoding is until the summaries
 * are there). The worker lives as long as the page shows the trace (`close` ends it).
 */
export function localIndex(bytes: ArrayBuffer, budgets: Budgets | null, frameSizes: PanelInputs['frameSizes']): IndexApi & { close(): void } {
  const worker = startIndexWorker();
  const t0 = performance.now();
  const seconds = (): number => (performance.now() - t0) / 1000;
  let status: IndexStatusReply = { state: 'building', fraction: 0, phase: 'decoding', seconds: 0 };
  let events: BuildState = { state: 'building', fraction: 0, phase: 'indexing the events', seconds: 0 };
  let summary: Float64Array | null = null;
  let panels: IndexPanelsReply = { state: 'computing', fraction: 0, phase: 'decoding the trace' };
  let timing: { decodeMs: number; tablesMs: number } | null = null;
  /** The events of each row of the panels' tables, by table and row key (answered at once, as a click wants). */
  const rows = new Map<AttributionBy, Map<string, Int32Array>>();
  /** The index, once its events are in; who waits for it meanwhile. */
  let reader: IndexReader | null = null;
  let libraries: LocalLibraries | null = null;
  let indexed!: (r: IndexReader) => void;
  const whole = new Promise<IndexReader>((resolve) => (indexed = resolve));
  const asked = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextId = 0;
  const ask = (query: LocalQuery): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      asked.set(id, { resolve, reject });
      worker.postMessage({ type: 'ask', id, query } satisfies LocalAsk);
    });
  const fail = (message: string): void => {
    status = { state: 'failed', message };
    if (events.state === 'building') events = { state: 'failed', message };
    if (panels.state !== 'ready') panels = { state: 'failed', message };
    for (const a of asked.values()) a.reject(new Error(message));
    asked.clear();
  };
  worker.onmessage = (e: MessageEvent<LocalReply>) => {
    const m = e.data;
    if (m.type === 'progress') {
      status = { state: 'building', fraction: m.fraction, phase: m.phase, seconds: seconds() };
    } else if (m.type === 'summaries') {
      summary = m.summary;
      status = { state: 'ready', seconds: seconds(), meta: m.meta, events };
    } else if (m.type === 'index') {
      summary = m.parts.summary.slice();
      reader = memoryIndexReader(m.parts);
      libraries = m.libraries;
      indexed(reader);
      events = { state: 'ready', seconds: seconds() };
      if (status.state === 'ready') status = { ...status, events };
      panels = { state: 'computing', fraction: 0.5, phase: 'the tables, flame graph and consumed chart' };
    } else if (m.type === 'rows') {
      const table = new Map<string, Int32Array>();
      m.keys.forEach((key, g) => table.set(key, m.events.subarray(m.starts[g]!, m.starts[g + 1]!)));
      rows.set(m.by, table);
    } else if (m.type === 'panels') {
      timing = { decodeMs: m.decodeMs, tablesMs: m.tablesMs };
      panels = { state: 'ready', panels: indexPanelsOf(JSON.parse(m.json) as IndexPanels) };
    } else if (m.type === 'panels-failed') {
      panels = { state: 'failed', message: m.message };
    } else if (m.type === 'answer' || m.type === 'refused') {
      const a = asked.get(m.id);
      asked.delete(m.id);
      if (m.type === 'answer') a?.resolve(m.value);
      else a?.reject(new Error(m.message));
    } else fail(m.message);
  };
  worker.onerror = (e) => fail(e.message || 'the worker that indexes the trace failed');
  worker.postMessage({ type: 'open', bytes, budgets, frameSizes } satisfies LocalOpen, [bytes]);
  // No events watch: the worker answers a request for events once it has them (requests wait in its queue).
  return {
    status: async () => status,
    summary: async () => {
      if (summary === null) throw new Error('the summaries are not there yet');
      return summary.slice().buffer;
    },
    // The worker holds requests that come before the index is built, and answers them once it is.
    events: async (from, to) => (await ask({ range: [from, to] })) as ArrayBuffer,
    fine: async (from, to) => {
      const rows = encodeFine((reader ?? (await whole)).fine(from, to, 1 << 18));
      return rows.buffer.slice(rows.byteOffset, rows.byteOffset + rows.byteLength) as ArrayBuffer;
    },
    async detail(event): Promise<IndexDetailReply> {
      const r = reader ?? (await whole);
      if (event < 0 || event >= r.events) throw new Error(`no event ${event.toLocaleString('en-US')}: the trace has ${r.events.toLocaleString('en-US')}`);
      const detail = r.detail(event);
      // What made a block a library made, from the block's calling object (the index does not hold it).
      const lib = detail.created === null || libraries === null ? NOT_INTERPOSED : (libraries.of[detail.created.block] ?? NOT_INTERPOSED);
      const named = lib === NOT_INTERPOSED ? {} : madeByLibrary(r.run, detail.place, lib === NONE ? null : (libraries!.paths[lib] ?? null));
      return { detail: { ...detail, ...named }, stack: r.callStack(event) };
    },
    next: async (from, direction, cls, thread) => (reader ?? (await whole)).nextOfClass(from, direction, eventClassBit(cls as EventClass), thread),
    // No text report of its own: its panels come as quickly (if they fail, so does the report, saying why).
    report: async () => (panels.state === 'failed' ? { state: 'failed', message: panels.message } : { state: 'waiting' }),
    panels: async () => (panels.state === 'ready' && timing !== null ? { ...panels, timing } : panels),
    async eventsOf(query: EventsQuery) {
      const table = 'by' in query ? rows.get(query.by) : undefined;
      if (table !== undefined && 'key' in query) return (table.get(query.key) ?? new Int32Array(0)).slice();
      return (await ask(query)) as Int32Array;
    },
    whole: true,
    close: () => worker.terminate(),
  };
}
