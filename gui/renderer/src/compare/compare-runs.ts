// The two runs of the compare page, each as the page draws and explains it: from the local server (`view A --compare
// B`: its session, the trace decoded in the worker or, for a trace the host opened through its index, the index's
// summaries), or from the blocks of a compare report (`report A --compare B --html`: both traces whole, nothing
// fetched). Each run answers for its own sources and for an event's detail and call stack.
import { callStackAt, eventDetail, type EventDetail, type StackEntry } from '../../../../analysis/event-detail.js';
import type { Model } from '../../../../analysis/model.js';
import { chartSeries, eventClassMasks } from '../../../../analysis/lod.js';
import { describeEnd } from '../../../../analysis/summary.js';
import { siteTableOf } from '../../../../analysis/event-index.js';
import { EMBEDDED_RUN_IDS, type EmbeddedSession } from '../../../../host/embedded-types.js';
import type { SourceResult } from '../../../../host/session-types.js';
import { fromBase64, serverIndexApi, summariesBuilt, type IndexApi, type SessionInfo } from '../backend.js';
import { chartData, type ChartData } from '../chart/columns.js';
import { decodeInWorker } from '../decode.js';
import { IndexChartData } from '../index-view.js';
import { api, progress } from '../served-page.js';
import type { ViewData } from '../view-data.js';

export type Side = 'a' | 'b';

/** An event explained: its detail and call stack, the run's sites for the stack's frames, the run's end in words. */
export interface Explained {
  detail: EventDetail;
  stack: StackEntry[];
  run: Pick<Model, 'sites' | 'program'>;
  end: string;
}

export interface Run {
  side: Side;
  info: SessionInfo;
  /** Whole mode: the trace decoded; null for a run drawn from its index. */
  view: ViewData | null;
  indexed: IndexChartData | null;
  data: ChartData;
  kinds: Uint8Array;
  facts: { events: number; peakHeap: number; peakStack: number; statics: number };
  /** Its source files (the server's, under its checks; or those the report carries). */
  source(file: string): Promise<SourceResult>;
  /** Event `e` explained (decoded in the page, or asked of the host's index). */
  explain(e: number): Promise<Explained>;
}

/** Whether the page is a compare report, its runs in its own blocks. */
export function isReport(): boolean {
  return document.getElementById(EMBEDDED_RUN_IDS.a.session) !== null;
}

/** One run from the server: its session, its trace decoded (or its index's summaries), its chart columns. */
export async function serverRun(side: Side): Promise<Run> {
  const info = (await (await api(`./api/session?run=${side}`)).json()) as SessionInfo;
  const source = async (file: string): Promise<SourceResult> =>
    (await fetch(`./api/source?run=${side}&file=${encodeURIComponent(file)}`, { headers: { 'x-cc-memwrap': '1' } })).json() as Promise<SourceResult>;
  if (info.mode === 'index') return indexedRun(side, info, source);
  const bytes = await (await api(`./api/trace?run=${side}`)).arrayBuffer();
  return wholeRun(side, info, bytes, source);
}

/** One run from the blocks of a compare report: its session, its sources, its trace decoded. */
export async function reportRun(side: Side): Promise<Run> {
  const ids = EMBEDDED_RUN_IDS[side];
  const take = (id: string): string => {
    const block = document.getElementById(id);
    if (block === null) throw new Error(`this report has no block ${id}`);
    block.remove(); // read once: the page does not keep the trace twice
    return (block.textContent ?? '').trim();
  };
  const embedded = JSON.parse(take(ids.session)) as EmbeddedSession;
  const bytes = fromBase64(take(ids.trace));
  const sources = new Map(Object.entries(embedded.sources));
  const source = async (file: string): Promise<SourceResult> => sources.get(file) ?? { ok: false, file, reason: 'not-named', message: `${file}: not a source file of this trace` };
  return wholeRun(side, { ...embedded.session, recent: [] }, bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer, source);
}

async function wholeRun(side: Side, info: SessionInfo, bytes: ArrayBuffer, source: Run['source']): Promise<Run> {
  const view = await decodeInWorker(bytes, info.budgets, (phase, fraction) => progress(`${side.toUpperCase()}: ${phase}`, fraction));
  const m = view.model;
  const s = view.summary;
  return {
    side,
    info,
    view,
    indexed: null,
    data: chartData(chartSeries(m, null, view.statics, m.events.heapRequested), eventClassMasks(m), view.times),
    kinds: m.events.kind,
    facts: { events: s.events, peakHeap: s.peakHeap.requested.bytes, peakStack: s.peakStack.bytes, statics: s.static.bytes },
    source,
    explain: async (e) => ({ detail: eventDetail(m, e, view.statics, view.orphanedBy), stack: callStackAt(m, e), run: m, end: s.end.description }),
  };
}

/** A run the host opened through its index: waits while the host builds the chart's summaries, then draws from them. */
async function indexedRun(side: Side, info: SessionInfo, source: Run['source']): Promise<Run> {
  const ixApi: IndexApi = serverIndexApi(side === 'b' ? 'run=b' : '');
  const status = await summariesBuilt(ixApi.status, (phase, fraction) => progress(`${side.toUpperCase()}: indexing ${info.trace.name}: ${phase}`, fraction));
  if (status.state === 'failed') throw new Error(`${info.trace.name}: ${status.message}`);
  const meta = status.meta;
  const indexed = new IndexChartData(meta, new Float64Array(await ixApi.summary()), ixApi);
  const run = { sites: siteTableOf(meta), program: meta.program };
  return {
    side,
    info,
    view: null,
    indexed,
    data: indexed.data,
    kinds: indexed.kinds,
    facts: { events: meta.events, peakHeap: meta.maxHeap, peakStack: meta.maxStack, statics: meta.staticBytes },
    source,
    explain: async (e) => {
      const r = await ixApi.detail(e);
      return { detail: r.detail, stack: r.stack, run, end: describeEnd(meta.end.how, meta.end.code, meta.end.complete) };
    },
  };
}

