// What the decoding worker hands the page: the model (its typed arrays transferred, not copied) and what the first view shows (series, summary, budgets), computed off the UI thread. The other tables are computed when their panel is first opened (tables.ts).
import type { BudgetCheck, Budgets } from '../../../analysis/budgets.js';
import type { Model } from '../../../analysis/model.js';
import type { Summary } from '../../../analysis/summary.js';
import type { FlameTree } from '../../../analysis/call-paths.js';
import type { Consumed } from '../../../analysis/consumed.js';

export interface ViewData {
  model: Model;
  /** `staticSeries`, `monotonicTimes`, `orphaningEvents` of the model. */
  statics: Float64Array;
  times: Float64Array;
  orphanedBy: Int32Array;
  summary: Summary;
  budgets: BudgetCheck[];
  /**
   * Heap and stack by call path, and the live heap by top site over the run, folded over the streamed records (not
   * the model) after the rest is handed over (`extras`); a string says why there are none; null: not there yet.
   */
  flame: FlameTree | string | null;
  consumed: Consumed | string | null;
  /** Milliseconds spent decoding, and computing the rest. */
  decodeMs: number;
  tablesMs: number;
}

/**
 * What the panels read beside the tables: a decoded trace's ViewData, or in index mode the host's panels' data
 * (`hostSeconds`: how long the host took to compute them).
 */
export type PanelView = Pick<ViewData, 'summary' | 'budgets' | 'flame' | 'consumed' | 'decodeMs' | 'tablesMs'> & { hostSeconds?: number };

/** Page → worker. */
export interface DecodeRequest {
  bytes: ArrayBuffer;
  budgets: Budgets | null;
}

/** Worker → page. */
export type WorkerMessage =
  | { type: 'progress'; fraction: number; phase: string }
  | { type: 'done'; data: ViewData }
  | { type: 'extras'; flame: FlameTree | string; consumed: Consumed | string }
  | { type: 'error'; message: string };
