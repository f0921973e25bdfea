// What a self-contained HTML report carries for the renderer, as plain JSON types shared by the writer (host/html-report.ts) and the page (gui/renderer/src/backend.ts).
import type { IndexMeta } from '../analysis/event-index.js';
import type { SessionInfo, SourceResult } from './session-types.js';

/** The id of the JSON block holding an EmbeddedSession. */
export const EMBEDDED_SESSION_ID = 'mw-session';
/** The id of the block holding the trace bytes in base64. */
export const EMBEDDED_TRACE_ID = 'mw-trace';

export interface EmbeddedSession {
  session: SessionInfo;
  /** Every source file the trace names, read (or refused) by the writer under the same checks as the viewer's host. */
  sources: Record<string, SourceResult>;
}

/**
 * The compare report (`report A --compare B --html`): each run's EmbeddedSession and trace (base64), in blocks of
 * these ids.
 */
export const EMBEDDED_RUN_IDS = {
  a: { session: 'mw-session-a', trace: 'mw-trace-a' },
  b: { session: 'mw-session-b', trace: 'mw-trace-b' },
} as const;

/** Index mode (a large trace): the id of the JSON block holding an EmbeddedIndex, instead of the trace block. */
export const EMBEDDED_INDEX_ID = 'mw-index';
/** Index mode: the block holding the bucket summaries (Float64, SUMMARY_FIELDS per bucket) in base64. */
export const EMBEDDED_SUMMARY_ID = 'mw-index-summary';
/** Index mode: the block holding the index's encoded events of the buckets that cover the window, in base64. */
export const EMBEDDED_BUCKETS_ID = 'mw-index-buckets';
/**
 * Index mode: the JSON block holding the panels' data (analysis/panel-data.ts IndexPanels, as the viewer's host serves
 * it at /api/index/panels), computed from the whole trace as it streamed.
 */
export const EMBEDDED_PANELS_ID = 'mw-index-panels';

/**
 * What the report of a trace opened through its index carries besides the summaries: the index's facts, the host's
 * report text, and what the page needs to answer for the events of one window [first, end) as the host would —
 * the buckets that cover it (their bytes in EMBEDDED_BUCKETS_ID, from bucket `firstBucket` on), and the few facts
 * those buckets point at elsewhere in the trace: the event that freed each block they name, the frames open at
 * their events that were entered before them, the place of each event that orphaned a block they made.
 */
export interface EmbeddedIndex {
  /** The index's meta, its live blocks cut down to those the window names. */
  meta: IndexMeta;
  /** The events the report holds one by one: [first, end), around `peak`. */
  window: { first: number; end: number; peak: number; firstBucket: number; buckets: number };
  /** The report of index mode's panel (host/index-cache.ts INDEX_REPORT), computed when the report was written. */
  report: string;
  /** Block rows the window names and the event that freed each (-1: never). */
  frees: { rows: number[]; events: number[] };
  /** Frames outside the window's buckets that its events' call stacks reach: row, entry site, depth, entering event, parent row. */
  frames: { row: number[]; site: number[]; depth: number[]; enter: number[]; parent: number[] };
  /** Events outside the window's buckets that orphaned a block it names: the event, its place and flags. */
  places: { event: number[]; place: number[]; flags: number[] };
  /** What the report left out, in words (the page shows it). */
  leftOut: string;
}
