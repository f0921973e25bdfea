// What a host answers the page about an index-mode session (host/trace-session.ts), shared by the local server
// (`/api/index…`) and the Electron main process (its IPC channels): the index's state and facts, the bucket
// summaries, the fine summaries and the events of a range as compact bytes, one event's detail, the next event of a
// class, the panels' data. Arguments come from the page as strings and are checked here; a bad one is an IndexRequestError, said in one
// line.
import { eventClassBit, EVENT_CLASSES, type EventClass } from '../analysis/event-detail.js';
import { encodeFine, encodeRange, IndexDamagedError } from '../analysis/event-index.js';
import type { IndexDetailReply, IndexReportReply, IndexStatusReply } from './session-types.js';
import type { TraceIndex } from './index-cache.js';
import type { TraceSession } from './trace-session.js';

/** The most events one range request returns. */
export const MAX_RANGE_EVENTS = 1 << 20;

export class IndexRequestError extends Error {
  override name = 'IndexRequestError';
}

/**
 * A request that needs the events while only the summaries are built (the first stage of an index): its message
 * starts "events: building" and gives how far they are; the page asks again once they are ready (the server's 503).
 */
export class EventsBuildingError extends Error {
  override name = 'EventsBuildingError';
}

/**
 * The index turned out damaged as it was read (what did not match its checksum): the session builds it again, and the
 * request is refused as one for events still being built is (the server's 503), in a sentence saying why: the page
 * holds it and asks again once they are (index-events.ts).
 */
export class IndexRebuildingError extends Error {
  override name = 'IndexRebuildingError';
}

/** `read()` of the session's index; damage found on the way makes the session build it again (IndexRebuildingError). */
async function reading<T>(session: TraceSession, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (e) {
    if (e instanceof IndexDamagedError) throw new IndexRebuildingError(`events: building 0% (${session.indexDamaged(e)}; asked again once it is)`);
    throw e;
  }
}

/** The whole index when its events are built; else an EventsBuildingError (or the build's failure) in words. */
async function withEvents(session: TraceSession): Promise<TraceIndex> {
  await session.summaries();
  const ready = session.eventsIndex();
  if (ready !== null) return ready;
  const s = session.eventsState;
  if (s.state === 'failed') throw new Error(`the events could not be indexed: ${s.message}`);
  const pct = s.state === 'building' ? Math.floor(s.fraction * 100) : 100;
  throw new EventsBuildingError(`events: building ${pct}% (the chart's summaries are ready; the events are indexed after them, then this works)`);
}

function count(text: unknown, what: string): number {
  if (typeof text !== 'string' || !/^\d{1,15}$/.test(text)) throw new IndexRequestError(`${what} must be a whole number, got ${JSON.stringify(text)}`);
  return Number(text);
}

/**
 * The index's state; when its summaries are ready, its facts and how far its events are (starting the build, summaries
 * first, if no one has yet).
 */
export async function indexStatus(session: TraceSession): Promise<IndexStatusReply> {
  const ready = session.summaries();
  const s = session.indexState;
  if (s.state !== 'ready') return s;
  return { state: 'ready', seconds: s.seconds, meta: (await ready).meta, events: session.eventsState };
}

/** The summary table's bytes (Float64, SUMMARY_FIELDS per bucket). */
export async function indexSummary(session: TraceSession): Promise<Uint8Array> {
  const ix = await session.summaries();
  return new Uint8Array(ix.summary.buffer, ix.summary.byteOffset, ix.summary.byteLength);
}

/** Events [from, to) (at most MAX_RANGE_EVENTS) as encodeRange's bytes. */
export async function indexEvents(session: TraceSession, from: unknown, to: unknown): Promise<Uint8Array> {
  const a = count(from, 'from');
  const b = count(to, 'to');
  if (b < a) throw new IndexRequestError(`the range ${a}–${b} ends before it starts`);
  return reading(session, async () => encodeRange((await withEvents(session)).reader.range(a, b, MAX_RANGE_EVENTS)));
}

/** The most fine rows one request returns (8 MiB). */
export const MAX_FINE_ROWS = 1 << 18;

/** The fine summaries of events [from, to) (at most MAX_FINE_ROWS rows, from the one holding `from`) as encodeFine's bytes. */
export async function indexFine(session: TraceSession, from: unknown, to: unknown): Promise<Uint8Array> {
  const a = count(from, 'from');
  const b = count(to, 'to');
  if (b < a) throw new IndexRequestError(`the range ${a}–${b} ends before it starts`);
  return reading(session, async () => encodeFine((await session.summaries()).reader.fine(a, b, MAX_FINE_ROWS)));
}

/** Event `event`'s detail and call stack. */
export async function indexDetail(session: TraceSession, event: unknown): Promise<IndexDetailReply> {
  const e = count(event, 'event');
  return reading(session, async () => {
    const ix = await withEvents(session);
    if (e >= ix.meta.events) throw new IndexRequestError(`no event ${e.toLocaleString('en-US')}: the trace has ${ix.meta.events.toLocaleString('en-US')}`);
    return { detail: ix.reader.detail(e), stack: ix.reader.callStack(e) };
  });
}

/**
 * The nearest event after (direction "1") or before ("-1") `from` of class `cls` (alloc, free, call, return, other),
 * on thread row `thread` ("all": any); null when there is none.
 */
export async function indexNext(session: TraceSession, from: unknown, direction: unknown, cls: unknown, thread: unknown): Promise<{ event: number | null }> {
  if (direction !== '1' && direction !== '-1') throw new IndexRequestError(`direction must be 1 or -1, got ${JSON.stringify(direction)}`);
  if (typeof cls !== 'string' || !EVENT_CLASSES.includes(cls as EventClass)) throw new IndexRequestError(`class must be one of ${EVENT_CLASSES.join(', ')}, got ${JSON.stringify(cls)}`);
  // "from" may be -1 (before the first event).
  const start = from === '-1' ? -1 : count(from, 'from');
  const row = thread === 'all' ? null : count(thread, 'thread');
  return reading(session, async () => ({ event: (await withEvents(session)).reader.nextOfClass(start, direction === '1' ? 1 : -1, eventClassBit(cls as EventClass), row) }));
}

/** The report index mode's panel shows (summary, heap by function, peaks, leaks), once the host has computed it. */
export async function indexReportText(session: TraceSession): Promise<IndexReportReply> {
  void session.summaries();
  session.startReport();
  return session.reportState;
}

/**
 * The panels' data (IndexPanelsReply) as JSON text, started on the first call: the ready data is the host's JSON as
 * computed, not parsed and written again.
 */
export function indexPanelsText(session: TraceSession): string {
  const s = session.panels();
  if (s.state !== 'ready') return JSON.stringify(s);
  return `{"state":"ready","panels":${s.json}}`;
}
