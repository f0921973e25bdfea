// One open trace as a viewer host holds it: its bytes, the source files it names and the root they are served from, the budgets of a memwrap.json beside the traced program and the program's frame sizes (all read by trace-file.ts). Shared by the Electron main process, the local server and `report --html`.
import { rmSync } from 'node:fs';
import path from 'node:path';
import type { Budgets } from '../analysis/budgets.js';
import { describeReadError } from './read-errors.js';
import type { BuildState, SessionInfo } from './session-types.js';
import { SourceAccess, type SourceResult } from './source-access.js';
import { TraceFile } from './trace-file.js';
import { cachedIndexPanels } from './index-panels.js';
import { cacheDirFor, cacheFiles, cachedIndexReport, openTraceIndex, openTraceIndexStaged, useIndex, type BuildProgress, type StagedIndex, type TraceIndex } from './index-cache.js';
import { viewerRamMap } from './firmware-info.js';

export type { SessionInfo };

export interface SessionOptions {
  /**
   * Serve sources from here instead of the run's recorded working directory; the user named it, so files under it are
   * shown also when the trace records no content hash for them, or when they changed since the build (with a note).
   */
  sourceRoot?: string;
  /** Budgets given on the command line (they win over a memwrap.json). */
  budgets?: Budgets;
  /**
   * Open through the trace's index (host/index-cache.ts) instead of reading every byte: by default when the trace is
   * larger than INDEX_THRESHOLD or MEMWRAP_VIEW_INDEX=1 says so (useIndex).
   */
  index?: boolean;
  /** The folder the index and what goes with it are kept in (default: cacheDirFor(trace)). */
  cacheDir?: string;
  /** Tests: holds the index's second stage (its events) until it resolves. */
  beforeIndexEvents?: () => Promise<void>;
  /**
   * Index mode: compute the panel's report only when a page first asks for it (startReport), not as soon as the index
   * is ready: a lane of the lanes page, which draws the chart only, until it is opened in the viewer.
   */
  deferReport?: boolean;
  /**
   * Index mode: the summaries built first carry the buckets' times (a lane of the lanes page, drawn on a wall-time axis
   * from them without waiting for the events).
   */
  timedSummaries?: boolean;
}

/** How far the index of an index-mode session is: its summaries (indexState), and its events (eventsState). */
export type IndexState = BuildState;

/** How far the panels' data of an index-mode session is; when ready, its JSON text (analysis/panel-data.ts). */
export type PanelsState = { state: 'waiting'; for?: string } | { state: 'computing'; fraction: number; phase: string } | { state: 'ready'; json: string } | { state: 'failed'; message: string };

/** A trace that cannot be opened: the message is one line naming the file. */
export class TraceOpenError extends Error {
  override name = 'TraceOpenError';
}

export class TraceSession {
  private staged: StagedIndex | null = null;
  /** The summaries' progress (index mode): what the page is told while it waits for its first chart. */
  indexState: IndexState = { state: 'building', fraction: 0, phase: 'starting', seconds: 0 };
  /** The events' progress (index mode): ready once the whole index is; until then requests for events are refused in words. */
  eventsState: IndexState = { state: 'building', fraction: 0, phase: 'waiting for the summaries', seconds: 0 };
  /** Index mode: the report of index mode's panel, computed in the background once the index is ready (and kept beside it). */
  reportState: { state: 'waiting' } | { state: 'ready'; text: string } | { state: 'failed'; message: string } = { state: 'waiting' };
  /** Index mode: the panels' data (host/index-panels.ts), computed once the page first asks, after the chart's summaries. */
  panelsState: PanelsState = { state: 'waiting' };
  private panelsStarted = false;
  private reportStarted = false;
  /** Told each step of the index's build (the terminal's progress line). */
  readonly indexListeners = new Set<(p: BuildProgress) => void>();
  /** What the cache said of itself (a file made for something else or damaged, built again), in order; and who is told. */
  readonly notes: string[] = [];
  readonly noteListeners = new Set<(note: string) => void>();

  private access: SourceAccess | null = null;

  private constructor(
    readonly path: string,
    private readonly trace: TraceFile,
    readonly info: SessionInfo,
    /** Index mode: the cache folder (index-cache.ts); null in whole mode. */
    private readonly cacheDir: string | null,
    private readonly beforeIndexEvents?: () => Promise<void>,
    private readonly deferReport = false,
    private readonly timedSummaries = false,
    /** The user named the source root (--source-root). */
    private readonly chosenRoot = false,
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
    // The run's directory from the trace's first records; only when they lack it, from a walk of every record (which
    // the list of source files needs anyway, and is otherwise left until a source is first asked for: see `sources`).
    const root = path.resolve(options.sourceRoot ?? trace.earlyCwd() ?? trace.sources().cwd ?? path.dirname(trace.path));
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
    const ramMap = trace.isFirmware ? viewerRamMap(trace.stream(), trace.path, trace.firmware(), fromConfig) : null;
    if (ramMap !== null) info.ramMap = ramMap;
    const cacheDir = index ? (options.cacheDir ?? cacheDirFor(trace.path)) : null;
    return new TraceSession(trace.path, trace, info, cacheDir, options.beforeIndexEvents, options.deferReport, options.timedSummaries, options.sourceRoot !== undefined);
  }

  /** Every byte of the trace (whole mode: the page decodes them). An index-mode session never reads them whole. */
  get bytes(): Uint8Array {
    if (this.cacheDir !== null) throw new Error(`${this.info.trace.name} is opened through its index: its bytes are not served whole`);
    return this.trace.bytes;
  }

  /**
   * Index mode: the session's whole index, events and all (later calls share it). Opened from the cache, or built
   * after the summaries when summaries() started the build, else built at once (`report --html` needs the events).
   */
  index(): Promise<TraceIndex> {
    return this.stages(false).index;
  }

  /**
   * Index mode: what the chart draws (the whole index when cached, else its summaries file, cached or built first in
   * one light pass); the events are built after them, in the background (eventsState, then index()).
   */
  summaries(): Promise<TraceIndex> {
    return this.stages(true).summaries;
  }

  private stages(summariesFirst: boolean): StagedIndex {
    if (this.cacheDir === null) {
      const refused = Promise.reject(new Error(`${this.info.trace.name} is not opened through an index`));
      return { summaries: refused, index: refused };
    }
    if (this.staged === null) {
      const t0 = Date.now();
      const seconds = (): number => (Date.now() - t0) / 1000;
      const onProgress = (p: BuildProgress): void => {
        if (p.note !== undefined) return this.tell(p.note);
        const s = { state: 'building' as const, fraction: p.fraction, phase: p.phase, seconds: p.seconds };
        if (p.stage === 'summaries' || !summariesFirst) this.indexState = s;
        if (p.stage === 'events') this.eventsState = s;
        for (const l of this.indexListeners) l(p);
      };
      const whole = summariesFirst ? null : openTraceIndex(this.path, onProgress, this.cacheDir);
      const staged = whole === null ? openTraceIndexStaged(this.path, onProgress, this.cacheDir, this.beforeIndexEvents, this.timedSummaries) : { summaries: whole, index: whole };
      const failed = (e: unknown): never => {
        const message = (e as Error).message;
        if (this.indexState.state !== 'ready') this.indexState = { state: 'failed', message };
        this.eventsState = { state: 'failed', message };
        throw e;
      };
      const summaries = staged.summaries.then((ix) => {
        this.indexState = { state: 'ready', seconds: seconds() };
        if (!ix.events && this.eventsState.state === 'building') this.eventsState = { state: 'building', fraction: 0, phase: 'starting', seconds: 0 };
        return ix;
      }, failed);
      const index = staged.index.then((ix) => {
        this.indexState = this.indexState.state === 'ready' ? this.indexState : { state: 'ready', seconds: seconds() };
        this.eventsState = { state: 'ready', seconds: seconds() };
        // The whole index stands in for the summaries from now on; their file is closed once requests under way with it are done.
        if (this.staged !== null) this.staged = { summaries: Promise.resolve(ix), index: this.staged.index };
        void summaries.then(
          (s) => {
            if (s !== ix) setTimeout(() => s.close(), 1000).unref();
          },
          () => {},
        );
        // Then the panel's report, in another pass on another thread: the chart does not wait for it.
        if (!this.deferReport) this.startReport();
        return ix;
      }, failed);
      // A failure is told through the states and to whoever awaits; no unhandled rejection meanwhile.
      summaries.catch(() => {});
      index.catch(() => {});
      this.staged = { summaries, index };
    }
    return this.staged;
  }

  /** A note of the cache's (why a file is built again), kept and told. */
  private tell(note: string): void {
    this.notes.push(note);
    for (const l of this.noteListeners) l(note);
  }

  /**
   * Index mode: the index turned out damaged while it was read (a bucket, a block of it that did not match its
   * checksum): it is closed and removed, and built again at once. Returns what happened, in words.
   */
  indexDamaged(e: Error): string {
    const staged = this.staged;
    this.staged = null;
    this.indexState = { state: 'building', fraction: 0, phase: 'starting', seconds: 0 };
    this.eventsState = { state: 'building', fraction: 0, phase: 'waiting for the summaries', seconds: 0 };
    const note = `${e.message}; it is built again`;
    this.tell(note);
    // Removed now, so the build about to start cannot take it up again; the open file is closed once requests under way are done.
    if (this.cacheDir !== null) rmSync(cacheFiles(this.cacheDir).index, { force: true });
    void staged?.index.then(
      (ix) => setTimeout(() => ix.close(), 1000).unref(),
      () => {},
    );
    // The build starts now, summaries first, so that the page's next request finds it under way.
    this.summaries().catch(() => {});
    return note;
  }

  /**
   * Index mode: computes the panel's report (reportState) once the index is ready, on the first call; called as the
   * index becomes ready, or for a session that defers it (deferReport) when a page first asks.
   */
  startReport(): void {
    if (this.reportStarted || this.cacheDir === null) return;
    this.reportStarted = true;
    const dir = this.cacheDir;
    this.index().then(
      () =>
        cachedIndexReport(this.path, dir, (note) => this.tell(note)).then(
          (text) => (this.reportState = { state: 'ready', text }),
          (e: unknown) => (this.reportState = { state: 'failed', message: (e as Error).message }),
        ),
      () => {},
    );
  }

  /** Index mode: the whole index if its events are built, else null (eventsState says how far they are). */
  eventsIndex(): Promise<TraceIndex> | null {
    return this.eventsState.state === 'ready' ? this.index() : null;
  }

  /**
   * Index mode: starts computing the panels' data (in a worker; kept beside the index as `<index>.panels`) on the first
   * call; every call returns how far it is. The panels' passes read the trace only, not the index: they start once the
   * chart's summaries are ready (not beside their build, which the first chart waits for) and run while the events are
   * indexed.
   */
  panels(): PanelsState {
    if (!this.panelsStarted) {
      this.panelsStarted = true;
      const inputs = { budgets: this.info.budgets, frameSizes: this.info.stack };
      if (this.indexState.state !== 'ready') this.panelsState = { state: 'waiting', for: "the chart's summaries" };
      this.summaries()
        .then(() => {
          this.panelsState = { state: 'computing', fraction: 0, phase: 'starting' };
          return cachedIndexPanels(this.path, this.cacheDir!, inputs, (p) => (this.panelsState = { state: 'computing', ...p }), (note) => this.tell(note)).then((json) => (this.panelsState = { state: 'ready', json }));
        })
        .catch((e: unknown) => (this.panelsState = { state: 'failed', message: (e as Error).message }));
    }
    return this.panelsState;
  }

  /**
   * Which source files may be read: those the trace names, under the source root, as the build recorded them (or
   * under a root the user chose). Made on first use: naming them
   * walks every record of the trace (seconds on a trace of a hundred million events), which a page that draws only
   * the chart (a lane, a compared run) never needs.
   */
  get sources(): SourceAccess {
    return (this.access ??= new SourceAccess(this.trace.sources(), this.info.sourceRoot, this.chosenRoot));
  }

  source(file: string): SourceResult {
    return this.sources.read(file);
  }

  /** Every source file the trace names, each read or refused as source() would. */
  allSources(): Record<string, SourceResult> {
    return Object.fromEntries(this.sources.names().map((f) => [f, this.sources.read(f)]));
  }
}
