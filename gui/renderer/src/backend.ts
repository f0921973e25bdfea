// How the renderer reaches files: the Electron preload API (window.ccMemwrap), the local server's API, or the data a self-contained HTML report carries in the page itself, behind one interface. The renderer never sees a path it did not get from these, and never reads files itself except ones the user picks.
import type { AttributionBy } from '../../../analysis/attribution.js';
import type { IndexMeta } from '../../../analysis/event-index.js';
import type { IndexDetailReply, IndexPanelsReply, IndexReportReply, IndexStatusReply, RecentEntry, SessionReply, SourceResult } from '../../../host/session-types.js';
import { EMBEDDED_SESSION_ID, EMBEDDED_TRACE_ID, type EmbeddedSession } from '../../../host/embedded-types.js';
import { embeddedIndex } from './embedded-index.js';
import { EventsWatch } from './index-events.js';
import { localIndex } from './local-index.js';

export type { RecentEntry, SourceResult };
export type SessionInfo = SessionReply;

export interface Backend {
  readonly name: 'electron' | 'server' | 'file';
  /** The trace the host opened, or null when it has none (a browser tab opened on its own). */
  session(): Promise<SessionInfo | null>;
  traceBytes(onProgress: (fraction: number) => void): Promise<ArrayBuffer>;
  source(file: string): Promise<SourceResult>;
  openRecent(path: string): Promise<SessionInfo>;
  /** A native file dialog, where there is one (Electron); null means: use the page's file input. */
  openDialog: (() => Promise<SessionInfo | null>) | null;
  /** The host's index of a large trace (session mode 'index'); null where there is no host (a report file). */
  index: IndexApi | null;
}

/** The events of a table row (its group), of some blocks (their allocations) or of a call path (its allocations). */
export type EventsQuery = { by: AttributionBy; key: string } | { blocks: number[] } | { callPath: string[] };

/**
 * What the page asks of a trace: of a large one, the host about its index (host/index-api.ts answers); of one the
 * page holds whole, its own index in a worker (local-index.ts). The page reads every trace through this.
 */
export interface IndexApi {
  status(): Promise<IndexStatusReply>;
  /** The bucket summaries (Float64, SUMMARY_FIELDS per bucket). */
  summary(): Promise<ArrayBuffer>;
  /** Events [from, to) as encodeRange's bytes. */
  events(from: number, to: number): Promise<ArrayBuffer>;
  /** The fine summaries of events [from, to) as encodeFine's bytes (null: this backend has none; the buckets stand in). */
  fine(from: number, to: number): Promise<ArrayBuffer | null>;
  detail(event: number): Promise<IndexDetailReply>;
  next(from: number, direction: 1 | -1, cls: string, thread: number | null): Promise<number | null>;
  /** The host's report for the panel (summary, heap by function, peaks, leaks), once computed. */
  report(): Promise<IndexReportReply>;
  /** The panels' data the host computes as it streams the trace (started by the first call), or how far it is. */
  panels(): Promise<IndexPanelsReply>;
  /** A host that builds the events after the summaries: their state, and requests for them held until they are ready. */
  eventsWatch?: EventsWatch;
  /** The events `query` names, or why they cannot be listed (a large trace's host does not list them: its index has no such table). */
  eventsOf(query: EventsQuery): Promise<Int32Array | string>;
  /**
   * The trace is held whole (the page's own index): every event and the panels come at once, so the page is ready
   * when they are drawn; a host's index or a report's window is drawn from its summaries first.
   */
  readonly whole?: boolean;
}

/** Why a large trace's host lists no events of a row, blocks or path. */
export const NO_EVENTS_OF = 'listing the events of a row, of blocks or of a call path needs the whole trace decoded, which the viewer does not do for a trace opened through its index';

/** A host's index API with its requests for events held while the host still builds them (index-events.ts). */
function heldForEvents(api: IndexApi): IndexApi {
  return new EventsWatch(api.status).wrap(api);
}

/** The API the Electron preload script exposes (gui/preload/preload.cts). */
export interface PreloadApi {
  session(): Promise<SessionInfo | null>;
  traceBytes(): Promise<Uint8Array>;
  source(file: string): Promise<SourceResult>;
  openRecent(path: string): Promise<SessionInfo>;
  openDialog(): Promise<SessionInfo | null>;
  indexStatus(): Promise<IndexStatusReply>;
  indexSummary(): Promise<Uint8Array>;
  indexEvents(from: string, to: string): Promise<Uint8Array>;
  indexFine(from: string, to: string): Promise<Uint8Array>;
  indexDetail(event: string): Promise<IndexDetailReply>;
  indexNext(from: string, direction: string, cls: string, thread: string): Promise<{ event: number | null }>;
  indexReport(): Promise<IndexReportReply>;
  /** IndexPanelsReply as JSON text. */
  indexPanels(): Promise<string>;
}

/** Bytes from the preload as an ArrayBuffer of their own. */
function own(bytes: Uint8Array): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

function electronBackend(api: PreloadApi): Backend {
  return {
    name: 'electron',
    session: () => api.session(),
    async traceBytes(onProgress) {
      const bytes = await api.traceBytes();
      onProgress(1);
      return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
    },
    source: (file) => api.source(file),
    openRecent: (path) => api.openRecent(path),
    openDialog: () => api.openDialog(),
    index: heldForEvents({
      status: () => api.indexStatus(),
      summary: async () => own(await api.indexSummary()),
      events: async (from, to) => own(await api.indexEvents(String(from), String(to))),
      fine: async (from, to) => own(await api.indexFine(String(from), String(to))),
      detail: (event) => api.indexDetail(String(event)),
      report: () => api.indexReport(),
      panels: async () => JSON.parse(await api.indexPanels()) as IndexPanelsReply,
      next: async (from, direction, cls, thread) => (await api.indexNext(String(from), String(direction), cls, thread === null ? 'all' : String(thread))).event,
      eventsOf: async () => NO_EVENTS_OF,
    }),
  };
}

const API_HEADERS = { 'x-cc-memwrap': '1' };

async function json<T>(response: Response): Promise<T> {
  const body = (await response.json()) as T & { error?: string };
  if (!response.ok && typeof body.error === 'string') throw new Error(body.error);
  return body;
}

/**
 * The server's refusal of a source file that lies outside the source root by its path alone, made here so the page
 * does not send a request the browser would log as a failed one; null when only the server can tell (it also follows
 * symbolic links, and it stays the one that decides).
 */
export function outsideRoot(file: string, root: string | null): SourceResult | null {
  if (root === null || file.includes('\0')) return null;
  const base = normalPath(root);
  const full = normalPath(file.startsWith('/') ? file : `${base}/${file}`);
  if (full === base || full.startsWith(base === '/' ? '/' : `${base}/`)) return null;
  return { ok: false, file, reason: 'outside-root', message: `${file}: outside the source root ${root}` };
}

/** An absolute POSIX path with `.`, `..` and repeated slashes resolved, as path.resolve would give it. */
function normalPath(p: string): string {
  const parts: string[] = [];
  for (const part of p.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') parts.pop();
    else parts.push(part);
  }
  return `/${parts.join('/')}`;
}

function serverBackend(): Backend {
  /** The open trace's source root (from the last session the server gave). */
  let root: string | null = null;
  return {
    name: 'server',
    async session() {
      const r = await fetch('./api/session', { headers: API_HEADERS });
      const info = r.ok ? await json<SessionInfo>(r) : null;
      root = info?.sourceRoot ?? null;
      return info;
    },
    async traceBytes(onProgress) {
      const r = await fetch('./api/trace', { headers: API_HEADERS });
      if (!r.ok || r.body === null) throw new Error(`the trace could not be fetched (HTTP ${r.status})`);
      const total = Number(r.headers.get('content-length') ?? 0);
      const out = new Uint8Array(total);
      const reader = r.body.getReader();
      let at = 0;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        out.set(value, at);
        at += value.byteLength;
        if (total > 0) onProgress(at / total);
      }
      return out.buffer;
    },
    async source(file) {
      const refused = outsideRoot(file, root);
      if (refused !== null) return refused;
      const r = await fetch(`./api/source?file=${encodeURIComponent(file)}`, { headers: API_HEADERS });
      return json<SourceResult>(r);
    },
    async openRecent(path) {
      const r = await fetch(`./api/open-recent?path=${encodeURIComponent(path)}`, { method: 'POST', headers: API_HEADERS });
      const info = await json<SessionInfo>(r);
      root = info.sourceRoot;
      return info;
    },
    openDialog: null,
    index: heldForEvents(serverIndexApi()),
  };
}

/** How often a page asks the host how far a build it waits for has come. */
export const POLL_MS = 250;

/**
 * Asks `status` until the host's index is no longer building its summaries, telling each answer's phase and fraction
 * to `onProgress`; the first answer that is not 'building' (ready or failed: the caller says what a failure means).
 */
export async function summariesBuilt(
  status: () => Promise<IndexStatusReply>,
  onProgress: (phase: string, fraction: number) => void,
): Promise<Exclude<IndexStatusReply, { state: 'building' }>> {
  let s = await status();
  while (s.state === 'building') {
    onProgress(s.phase, s.fraction);
    await new Promise((r) => setTimeout(r, POLL_MS));
    s = await status();
  }
  return s;
}

/**
 * The local server's index API: the session's index, or with `which` another one's, named on every request: `lane=i`
 * (a lane of the lanes page), `run=b` (the compare page's B).
 */
export function serverIndexApi(which = ''): IndexApi {
  const url = (p: string, query = ''): string => {
    const q = [query, which].filter((x) => x !== '').join('&');
    return q === '' ? p : `${p}?${q}`;
  };
  return {
    status: async () => json<IndexStatusReply>(await fetch(url('./api/index'), { headers: API_HEADERS })),
    summary: async () => bytesOf(await fetch(url('./api/index/summary'), { headers: API_HEADERS })),
    events: async (from, to) => bytesOf(await fetch(url('./api/index/events', `from=${from}&to=${to}`), { headers: API_HEADERS })),
    fine: async (from, to) => bytesOf(await fetch(url('./api/index/fine', `from=${from}&to=${to}`), { headers: API_HEADERS })),
    detail: async (event) => json<IndexDetailReply>(await fetch(url('./api/index/detail', `event=${event}`), { headers: API_HEADERS })),
    report: async () => json<IndexReportReply>(await fetch(url('./api/index/report'), { headers: API_HEADERS })),
    panels: async () => json<IndexPanelsReply>(await fetch(url('./api/index/panels'), { headers: API_HEADERS })),
    next: async (from, direction, cls, thread) =>
      (await json<{ event: number | null }>(await fetch(url('./api/index/next', `from=${from}&direction=${direction}&class=${encodeURIComponent(cls)}&thread=${thread === null ? 'all' : thread}`), { headers: API_HEADERS }))).event,
    eventsOf: async () => NO_EVENTS_OF,
  };
}

/** A binary answer, or its error said in words. */
async function bytesOf(r: Response): Promise<ArrayBuffer> {
  if (!r.ok) throw new Error((await json<{ error?: string }>(r)).error ?? `HTTP ${r.status}`);
  return r.arrayBuffer();
}

/** Base64 to bytes: the built-in decoder where the browser has one, else atob. */
export function fromBase64(text: string): Uint8Array {
  const native = (Uint8Array as unknown as { fromBase64?: (s: string) => Uint8Array }).fromBase64;
  if (native) return native(text);
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/**
 * A report written by `cc-memwrap report --html`: the trace (base64) and the sources it names (JSON) are data blocks
 * of the page; nothing is fetched. The blocks are read once and dropped from the DOM, so the page does not keep
 * the trace twice.
 */
function fileBackend(sessionBlock: HTMLElement): Backend {
  const embedded = JSON.parse(sessionBlock.textContent ?? '') as EmbeddedSession;
  sessionBlock.remove();
  const sources = new Map(Object.entries(embedded.sources));
  return {
    name: 'file',
    session: async () => ({ ...embedded.session, recent: [] }),
    async traceBytes(onProgress) {
      const block = document.getElementById(EMBEDDED_TRACE_ID);
      if (block === null) throw new Error('this report holds no trace');
      const bytes = fromBase64((block.textContent ?? '').trim());
      block.remove();
      onProgress(1);
      return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
    },
    async source(file) {
      return sources.get(file) ?? { ok: false, file, reason: 'not-named', message: `${file}: not a source file of this trace` };
    },
    openRecent: () => Promise.reject(new Error('a report file has no recent list')),
    openDialog: null,
    // A report of a large trace carries the index's summaries and one window of events instead of the trace.
    index: embeddedIndex(fromBase64),
  };
}

/** Electron's preload API when present, else the data of a report file, else the server this page came from. */
export function pickBackend(): Backend {
  const api = (window as unknown as { ccMemwrap?: PreloadApi }).ccMemwrap;
  if (api) return electronBackend(api);
  const block = document.getElementById(EMBEDDED_SESSION_ID);
  return block ? fileBackend(block) : serverBackend();
}

/** The frame sizes of a trace handed to the page without its host: none, and why. */
const NO_PROGRAM = { program: null, units: null, missing: 'this trace was opened without its program (open it with cc-memwrap view)' };

/** A trace opened for the page: the interface it is read through, and what the page says of how it is read. */
export interface OpenedTrace {
  api: IndexApi & { close?(): void };
  /** What the automation handle reports: 'index' for a host's index, 'whole' for the page's own. */
  mode: 'whole' | 'index';
  /** What the title adds. */
  titleNote: string;
  /** The status line once the chart is drawn: how it is drawn and where the events come from. */
  statusNote(meta: IndexMeta): string;
}

/**
 * The interface of the trace to show: the host's index when the host opened it through its index (a large trace),
 * else the page's own index (local-index.ts) of its bytes, read from the host (`onProgress` told how far) or handed to
 * the page.
 */
export async function openTrace(backend: Backend, trace: SessionInfo | ArrayBuffer, onProgress: (phase: string, fraction: number) => void): Promise<OpenedTrace> {
  if (!(trace instanceof ArrayBuffer) && trace.mode === 'index' && backend.index !== null) {
    const report = backend.name === 'file';
    return {
      api: backend.index,
      mode: 'index',
      titleNote: ' (through its index)',
      statusNote: (meta) =>
        `Opened through its index: ${meta.buckets.toLocaleString('en-US')} summaries of ${meta.bucketSize.toLocaleString('en-US')} events each${report ? '' : `, finer ones of ${meta.fineSize.toLocaleString('en-US')} events for the part in view`}; the events themselves are ${report ? 'in this report only where the notice above says' : 'read from the host when you zoom in'}.`,
    };
  }
  const info = trace instanceof ArrayBuffer ? null : trace;
  const bytes = info === null ? (trace as ArrayBuffer) : await backend.traceBytes((f) => onProgress(`Reading ${info.trace.name}`, f));
  return { api: localIndex(bytes, info?.budgets ?? null, info?.stack ?? NO_PROGRAM), mode: 'whole', titleNote: '', statusNote: () => '' };
}
