// One open trace as a viewer host holds it: its bytes, the source files it names and the root they are served from, the budgets of a memwrap.json beside the traced program and the program's frame sizes (all read by trace-file.ts). Shared by the Electron main process, the local server and `report --html`.
import path from 'node:path';
import type { Budgets } from '../analysis/budgets.js';
import { describeReadError } from './read-errors.js';
import type { SessionInfo } from './session-types.js';
import { SourceAccess, type SourceResult } from './source-access.js';
import { TraceFile } from './trace-file.js';
import { cachedIndexPanels } from './index-panels.js';
import { cachedIndexReport, indexPathFor, openTraceIndex, useIndex, type BuildProgress, type TraceIndex } from './trace-index.js';

export type { SessionInfo };

export interface SessionOptions {
  /** Serve sources from here instead of the run's recorded working directory. */
  sourceRoot?: string;
  /** Budgets given on the command line (they win over a memwrap.json). */
  budgets?: Budgets;
  /**
   * Open through the trace's index (host/trace-index.ts) instead of reading every byte: by default when the trace is
   * larger than INDEX_THRESHOLD or MEMWRAP_VIEW_INDEX=1 says so (useIndex).
   */
  index?: boolean;
  /** Where the index is kept (default: indexPathFor(trace)). */
  indexFile?: string;
}

/** How far the index of an index-mode session is. */
export type IndexState =
  | { state: 'building'; fraction: number; phase: string; seconds: number }
  | { state: 'ready'; seconds: number }
  | { state: 'failed'; message: string };

/** How far the panels' data of an index-mode session is; when ready, its JSON text (analysis/panel-data.ts). */
export type PanelsState = { state: 'waiting' } | { state: 'computing'; fraction: number; phase: string } | { state: 'ready'; json: string } | { state: 'failed'; message: string };

/** A trace that cannot be opened: the message is one line naming the file. */
export class TraceOpenError extends Error {
  override name = 'TraceOpenError';
}

export class TraceSession {
  private indexed: Promise<TraceIndex> | null = null;
  /** The index's progress (index mode): what the page is told while it waits. */
  indexState: IndexState = { state: 'building', fraction: 0, phase: 'starting', seconds: 0 };
  /** Index mode: the report of index mode's panel, computed in the background once the index is ready (and kept beside it). */
  reportState: { state: 'waiting' } | { state: 'ready'; text: string } | { state: 'failed'; message: string } = { state: 'waiting' };
  /** Index mode: the panels' data (host/index-panels.ts), computed once the page first asks, after the index. */
  panelsState: PanelsState = { state: 'waiting' };
  private panelsStarted = false;
  /** Told each step of the index's build (the terminal's progress line). */
  readonly indexListeners = new Set<(p: BuildProgress) => void>();

  private constructor(
    readonly path: string,
    private readonly trace: TraceFile,
    readonly sources: SourceAccess,
    readonly info: SessionInfo,
    private readonly indexFile: string | null,
  ) {}

  /** Reads and checks a trace (header only; damage later in the file is the decoder's to report). */
  static async open(tracePath: string, options: SessionOptions = {}): Promise<TraceSession> {
    let trace: TraceFile;
    try {
      trace = await TraceFile.read(tracePath);
    } catch (e) {
      throw new TraceOpenError(describeReadError(tracePath, e));
    }
    return TraceSession.of(trace, { ...options, index: options.index ?? useIndex(trace.size) });
  }

  /**
   * The session of a trace already read: what `trace` has read beside it (budgets, frame sizes) is not read again.
   * Whole mode unless `options.index`.
   */
  static of(trace: TraceFile, options: SessionOptions = {}): TraceSession {
    const named = trace.sources();
    const root = path.resolve(options.sourceRoot ?? named.cwd ?? path.dirname(trace.path));
    const fromConfig = options.budgets ? { budgets: options.budgets, source: '--budget', problem: null } : trace.budgetConfig();
    const index = options.index === true;
    const info: SessionInfo = {
      trace: { name: path.basename(trace.path), path: trace.path, bytes: trace.size },
      sourceRoot: root,
      budgets: fromConfig.budgets,
      budgetSource: fromConfig.source,
      budgetProblem: fromConfig.problem,
      stack: trace.stackInfo(),
      ...(index ? { mode: 'index' as const } : {}),
    };
    return new TraceSession(trace.path, trace, new SourceAccess(named.files, root), info, index ? (options.indexFile ?? indexPathFor(trace.path)) : null);
  }

  /** Every byte of the trace (whole mode: the page decodes them). An index-mode session never reads them whole. */
  get bytes(): Uint8Array {
    if (this.indexFile !== null) throw new Error(`${this.info.trace.name} is opened through its index: its bytes are not served whole`);
    return this.trace.bytes;
  }

  /** Index mode: the session's index, opened from the cache or built on the first call (later calls share it). */
  index(): Promise<TraceIndex> {
    if (this.indexFile === null) return Promise.reject(new Error(`${this.info.trace.name} is not opened through an index`));
    if (this.indexed === null) {
      const t0 = Date.now();
      this.indexed = openTraceIndex(
        this.path,
        (p) => {
          this.indexState = { state: 'building', fraction: p.fraction, phase: p.phase, seconds: p.seconds };
          for (const l of this.indexListeners) l(p);
        },
        this.indexFile,
      ).then(
        (ix) => {
          this.indexState = { state: 'ready', seconds: (Date.now() - t0) / 1000 };
          // Then the panel's report, in another pass on another thread: the chart does not wait for it.
          cachedIndexReport(this.path, ix.file).then(
            (text) => (this.reportState = { state: 'ready', text }),
            (e: unknown) => (this.reportState = { state: 'failed', message: (e as Error).message }),
          );
          return ix;
        },
        (e: unknown) => {
          this.indexState = { state: 'failed', message: (e as Error).message };
          throw e;
        },
      );
      // A failure is told through indexState and to whoever awaits; no unhandled rejection meanwhile.
      this.indexed.catch(() => {});
    }
    return this.indexed;
  }

  /**
   * Index mode: starts computing the panels' data (in a worker, once the index is ready; kept beside the index) on the
   * first call; every call returns how far it is.
   */
  panels(): PanelsState {
    if (!this.panelsStarted) {
      this.panelsStarted = true;
      const inputs = { budgets: this.info.budgets, frameSizes: this.info.stack };
      this.index().then(
        (ix) => {
          this.panelsState = { state: 'computing', fraction: 0, phase: 'starting' };
          return cachedIndexPanels(this.path, ix.file, inputs, (p) => (this.panelsState = { state: 'computing', ...p })).then((json) => (this.panelsState = { state: 'ready', json }));
        },
      ).catch((e: unknown) => (this.panelsState = { state: 'failed', message: (e as Error).message }));
    }
    return this.panelsState;
  }

  source(file: string): SourceResult {
    return this.sources.read(file);
  }

  /** Every source file the trace names, each read or refused as source() would. */
  allSources(): Record<string, SourceResult> {
    return Object.fromEntries(this.sources.names().map((f) => [f, this.sources.read(f)]));
  }
}
