// What the decoding worker hands the page: the model (its typed arrays transferred, not copied) and the analysis package's tables, computed off the UI thread.
import type { Attribution } from '../../../analysis/attribution.js';
import type { BudgetCheck, Budgets } from '../../../analysis/budgets.js';
import type { LeaksAtExit } from '../../../analysis/leaks.js';
import type { LinkedFree } from '../../../analysis/linked.js';
import type { Model } from '../../../analysis/model.js';
import type { Peaks } from '../../../analysis/peak.js';
import type { Summary } from '../../../analysis/summary.js';

export interface ViewData {
  model: Model;
  /** `staticSeries`, `monotonicTimes`, `orphaningEvents` of the model. */
  statics: Float64Array;
  times: Float64Array;
  orphanedBy: Int32Array;
  summary: Summary;
  tables: { function: Attribution; site: Attribution; thread: Attribution; library: Attribution };
  peaks: Peaks;
  leaks: LeaksAtExit;
  budgets: BudgetCheck[];
  linked: LinkedFree[];
  /** Rows beyond these limits are counted, not sent (the tables say so). */
  linkedTotal: number;
  /** Milliseconds spent decoding and computing the tables. */
  decodeMs: number;
  tablesMs: number;
}

/** Page → worker. */
export interface DecodeRequest {
  bytes: ArrayBuffer;
  budgets: Budgets | null;
}

/** Worker → page. */
export type WorkerMessage =
  | { type: 'progress'; fraction: number; phase: string }
  | { type: 'done'; data: ViewData }
  | { type: 'error'; message: string };

export const TABLE_ROWS = 500;
