// What a viewer host tells the renderer, as plain JSON types: no Node imports, so the renderer (a browser bundle) shares them.
import type { Budgets } from '../analysis/budgets.js';
import type { StackUnit } from '../analysis/worst-stack.js';
import type { EventDetail, StackEntry } from '../analysis/event-detail.js';
import type { IndexMeta } from '../analysis/event-index.js';
import type { IndexPanels } from '../analysis/panel-data.js';
import type { BudgetKind } from '../analysis/budgets.js';
import type { Comparison } from '../analysis/compare.js';
import type { RamMap } from '../analysis/ram-map.js';

export interface RecentEntry {
  path: string;
  name: string;
}

/** The open trace. */
export interface SessionInfo {
  trace: { name: string; path: string; bytes: number };
  /** Where sources are read from. */
  sourceRoot: string;
  budgets: Budgets | null;
  /** The memwrap.json the budgets came from, or "--budget". */
  budgetSource: string | null;
  /** A memwrap.json that could not be used, said plainly; null if none. */
  budgetProblem: string | null;
  /**
   * The traced program's frame sizes and call graph (its .mw_stack section), which only the host can read: the
   * renderer hands them to analysis/stack-report.ts for the worst-case stack panel.
   */
  stack: StackInfo;
  /**
   * A firmware's RAM map (its ELF file's regions and budgets against the run: analysis/ram-map.ts), computed by the
   * host as `cc-memwrap report` computes it; absent for a host's trace.
   */
  ramMap?: RamMap;
  /**
   * 'index': the trace is too large to hand over whole (or the host was told to use its index): the page asks the
   * host for summaries, ranges of events and details (IndexStatusReply, `/api/index/…`). Absent: whole mode.
   */
  mode?: 'index';
}

/** How far a build is: building (with progress), ready, failed. */
export type BuildState = { state: 'building'; fraction: number; phase: string; seconds: number } | { state: 'ready'; seconds: number } | { state: 'failed'; message: string };

/**
 * The index of an index-mode session as the host tells it: its summaries building (with progress), ready (with its
 * facts, and how far its events are: until they are ready, requests for events are refused with "events: building
 * N%"), failed.
 */
export type IndexStatusReply =
  | { state: 'building'; fraction: number; phase: string; seconds: number }
  | { state: 'failed'; message: string }
  | { state: 'ready'; seconds: number; meta: IndexMeta; events: BuildState };

/** The report of index mode's panel, computed by the host in the background. */
export type IndexReportReply = { state: 'waiting' } | { state: 'ready'; text: string } | { state: 'failed'; message: string };

/**
 * The panels' data of an index-mode session (analysis/panel-data.ts), computed by the host once the page first asks:
 * waiting (for the chart's summaries, which are built first), computing (with progress), ready, failed.
 */
export type IndexPanelsReply =
  | { state: 'waiting'; for?: string }
  | { state: 'computing'; fraction: number; phase: string }
  | { state: 'ready'; panels: IndexPanels; /** Computed in the page's worker (a trace it holds whole): how long its decoding and its tables took. */ timing?: { decodeMs: number; tablesMs: number } }
  | { state: 'failed'; message: string };

/** An event's detail from the host (index mode): what eventDetail and callStackAt give for a decoded model. */
export interface IndexDetailReply {
  detail: EventDetail;
  stack: StackEntry[];
}

/** What `host/stack-info.ts` found in the traced program. */
export interface StackInfo {
  program: string | null;
  units: StackUnit[] | null;
  /** Why there are no units (null when there are). */
  missing: string | null;
}

/** SessionInfo with the recent list, as the API answers. */
export type SessionReply = SessionInfo & { recent: RecentEntry[] };

/**
 * Why a source file is not shown. `changed`: its content is not what the build recorded; `unverified`: the trace
 * records no content hash for it and the user named no source root (host/source-access.ts).
 */
export type SourceRefusal = 'not-named' | 'outside-root' | 'missing' | 'not-a-file' | 'too-large' | 'unreadable' | 'changed' | 'unverified';

export type SourceResult =
  /** `note`: shown above the text (a file that changed since the build, served from a root the user named). */
  | { ok: true; file: string; path: string; text: string; note?: string }
  | { ok: false; file: string; reason: SourceRefusal; message: string };

/**
 * The traces of `view A B C…`, one lane each, as /api/lanes answers; `mode` 'index': the lane is drawn from its
 * index (`/api/index…?lane=i`, as a session's), its trace never served whole.
 */
export interface LanesReply {
  lanes: { name: string; path: string; bytes: number; mode?: 'index' }[];
}

/** A run's budget lines as the compare page's chart draws them: each limit, the ranges above it (the first ones), how many there are. */
export type CompareBudgetLines = { kind: BudgetKind; limitBytes: number; ranges: [number, number][]; rangeCount: number }[];

/**
 * The differences of `view A --compare B` as the host computes them (host/compare-runs.ts, `/api/compare`): computing
 * (with progress), ready (B - A, and each run's budget lines), failed.
 */
export type CompareReply =
  | { state: 'computing'; fraction: number; phase: string }
  | { state: 'ready'; comparison: Comparison; budgets: [CompareBudgetLines, CompareBudgetLines] }
  | { state: 'failed'; message: string };
