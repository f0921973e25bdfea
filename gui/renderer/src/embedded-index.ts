// The index API (backend.ts IndexApi) of a report of a large trace (`cc-memwrap report --html` in index mode,
// host/report-window.ts): answered in the page from its data blocks, as the host answers it (host/index-api.ts) —
// the summaries for the whole run, the events, details and call stacks of the one window the report holds, read
// back by the same IndexReader from the index's own buckets, and the panels' data of the whole run the host computed
// as `view`'s host does. Outside the window every answer is an error saying which events the report holds and that
// `cc-memwrap view` shows the rest.
import { eventClassBit, EVENT_CLASSES, type EventClass } from '../../../analysis/event-detail.js';
import { encodeRange, IndexBucket, IndexReader, NOT_FREED, S, SUMMARY_FIELDS } from '../../../analysis/event-index.js';
import { EMBEDDED_BUCKETS_ID, EMBEDDED_INDEX_ID, EMBEDDED_PANELS_ID, EMBEDDED_SUMMARY_ID, type EmbeddedIndex } from '../../../host/embedded-types.js';
import type { IndexPanels } from '../../../analysis/panel-data.js';
import { NO_EVENTS_OF, type IndexApi } from './backend.js';

/** An event the report does not hold: the message says which it holds and how to see the rest. */
export class OutsideWindowError extends Error {
  override name = 'OutsideWindowError';
}

/**
 * Stand-ins for buckets outside the window: only the frames and event places the window's answers reach, where
 * IndexReader reads them (frameSite… by frame row from frameStart, place and flags by event from first).
 */
type Partial_ = Pick<IndexBucket, 'first' | 'frameStart' | 'frameSite' | 'frameDepth' | 'frameEnter' | 'frameParent'> & { place: number[]; flags: number[] };

class WindowReader extends IndexReader {
  /** Off while a walk over events (nextOfClass) runs: a stand-in holds no events. */
  partialsServed = true;

  constructor(
    private readonly embedded: EmbeddedIndex,
    summary: Float64Array,
    bytes: Uint8Array,
    private readonly partial: Map<number, Partial_>,
    private readonly outside: (what: string) => OutsideWindowError,
  ) {
    const frees = new Map<number, number>();
    embedded.frees.rows.forEach((row, i) => frees.set(row, embedded.frees.events[i]!));
    const base = summary[SUMMARY_FIELDS * embedded.window.firstBucket + S.OFFSET]!;
    super(embedded.meta, summary, {
      fineRows: () => {
        throw outside('fine summaries');
      },
      bucketBytes: (offset, length) => bytes.subarray(offset - base, offset - base + length),
      freeOf: (row) => {
        const f = frees.get(row);
        if (f === undefined) throw this.outside(`block ${row}`);
        return f === -1 ? NOT_FREED : f;
      },
    });
  }

  override bucket(k: number): IndexBucket {
    const w = this.embedded.window;
    if (k >= w.firstBucket && k < w.firstBucket + w.buckets) return super.bucket(k);
    const p = this.partial.get(k);
    if (p !== undefined && this.partialsServed) return p as unknown as IndexBucket;
    throw this.outside(`events ${k * this.meta.bucketSize}…`);
  }
}

/** `panels`: the panels' data the report carries (null: a report without them, which shows the report's text). */
export function embeddedIndexApi(embedded: EmbeddedIndex, summaryBytes: Uint8Array, bucketBytes: Uint8Array, panels: IndexPanels | null = null): IndexApi {
  const { first, end } = embedded.window;
  const n = (v: number): string => v.toLocaleString('en-US');
  const holds = end > first ? `events ${n(first)}–${n(end - 1)} one by one` : 'no events one by one';
  const outside = (what: string): OutsideWindowError =>
    new OutsideWindowError(`${what} is outside this report, which holds ${holds} (and the summaries of all ${n(embedded.meta.events)}); cc-memwrap view shows the rest`);
  const summary = new Float64Array(summaryBytes.buffer.slice(summaryBytes.byteOffset, summaryBytes.byteOffset + summaryBytes.byteLength));
  const B = embedded.meta.bucketSize;
  const partial = new Map<number, Partial_>();
  const partOf = (k: number): Partial_ => {
    let p = partial.get(k);
    if (p === undefined) {
      p = { first: k * B, frameStart: summary[SUMMARY_FIELDS * k + S.FRAME_START]!, frameSite: [], frameDepth: [], frameEnter: [], frameParent: [], place: [], flags: [] };
      partial.set(k, p);
    }
    return p;
  };
  const fr = embedded.frames;
  fr.row.forEach((f, i) => {
    // The bucket a frame was entered in: the last whose frames start at or before it.
    let k = 0;
    for (let lo = 0, hi = embedded.meta.buckets - 1; lo <= hi; ) {
      const mid = (lo + hi) >>> 1;
      if (summary[SUMMARY_FIELDS * mid + S.FRAME_START]! <= f) [k, lo] = [mid, mid + 1];
      else hi = mid - 1;
    }
    const p = partOf(k);
    const j = f - p.frameStart;
    p.frameSite[j] = fr.site[i]!;
    p.frameDepth[j] = fr.depth[i]!;
    p.frameEnter[j] = fr.enter[i]!;
    p.frameParent[j] = fr.parent[i]!;
  });
  embedded.places.event.forEach((e, i) => {
    const p = partOf(Math.floor(e / B));
    p.place[e - p.first] = embedded.places.place[i]!;
    p.flags[e - p.first] = embedded.places.flags[i]!;
  });
  const reader = new WindowReader(embedded, summary, bucketBytes, partial, outside);
  const inWindow = (e: number): boolean => e >= first && e < end;
  return {
    status: async () => ({ state: 'ready', seconds: 0, meta: embedded.meta, events: { state: 'ready', seconds: 0 } }),
    summary: async () => summary.buffer.slice(0) as ArrayBuffer,
    async events(from, to) {
      const a = Math.max(from, first);
      const b = Math.min(to, end);
      if (b <= a) throw outside(`events ${n(from)}–${n(Math.max(from, to - 1))}`);
      const bytes = encodeRange(reader.range(a, b));
      return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
    },
    // The report keeps no fine rows: the bucket summaries stand in outside its window of events.
    fine: async () => null,
    async detail(e) {
      if (!inWindow(e)) throw outside(`event ${n(e)}`);
      return { detail: reader.detail(e), stack: reader.callStack(e) };
    },
    async next(from, direction, cls, thread) {
      if (!EVENT_CLASSES.includes(cls as EventClass)) throw new Error(`no class of event ${cls}`);
      const bit = eventClassBit(cls as EventClass);
      // The reader walks from `from` as the host's does; a bucket outside the window it would have to read throws.
      const what = `the ${direction === 1 ? 'next' : 'previous'} ${cls} event`;
      let found: number | null;
      reader.partialsServed = false;
      try {
        found = reader.nextOfClass(from, direction, bit, thread);
      } catch (e) {
        throw e instanceof OutsideWindowError ? outside(what) : e;
      } finally {
        reader.partialsServed = true;
      }
      if (found !== null && !inWindow(found)) throw outside(what);
      return found;
    },
    report: async () => ({ state: 'ready', text: embedded.report }),
    panels: async () =>
      panels !== null ? { state: 'ready', panels } : { state: 'failed', message: 'this report file carries the text report only; cc-memwrap view shows the interactive panels' },
    eventsOf: async () => NO_EVENTS_OF,
  };
}

function takeBlock(id: string): string | null {
  const block = document.getElementById(id);
  if (block === null) return null;
  const text = block.textContent ?? '';
  block.remove();
  return text;
}

/**
 * The index API of this report page when it carries an index (EMBEDDED_INDEX_ID), else null; its blocks are read
 * once and dropped from the DOM, and the page says at its top what the report left out.
 */
export function embeddedIndex(fromBase64: (text: string) => Uint8Array): IndexApi | null {
  const json = takeBlock(EMBEDDED_INDEX_ID);
  if (json === null) return null;
  const embedded = JSON.parse(json) as EmbeddedIndex;
  const summary = fromBase64((takeBlock(EMBEDDED_SUMMARY_ID) ?? '').trim());
  const buckets = fromBase64((takeBlock(EMBEDDED_BUCKETS_ID) ?? '').trim());
  const panels = takeBlock(EMBEDDED_PANELS_ID);
  const notice = document.createElement('div');
  notice.id = 'report-notice';
  notice.className = 'report-notice';
  notice.setAttribute('role', 'note');
  notice.textContent = embedded.leftOut;
  document.getElementById('error')?.before(notice);
  return embeddedIndexApi(embedded, summary, buckets, panels === null ? null : (JSON.parse(panels) as IndexPanels));
}
