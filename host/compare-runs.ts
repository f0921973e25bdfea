// The differences of `view A --compare B` computed on the host: each run's report for the comparison
// (analysis/compare.ts's compareReport, as `report A --compare B` computes it) as a fold over its trace streamed a
// window at a time, holding sites, functions and budget ranges, never the events; in a worker thread, so the server
// keeps answering; handed to the page as JSON text with each run's budget lines (what the charts draw of them).
import { compareReport, compareReports } from '../analysis/compare.js';
import type { ReportInputs, ReportResult } from '../analysis/report.js';
import { FileSource } from '../analysis/trace/file-source.js';
import { streamSource } from '../analysis/trace/resolve-stream.js';
import { fileSymbolNamer } from './library-symbols.js';
import { describeReadError } from './read-errors.js';
import { jsonInWorker } from './json-task.js';
import type { CompareBudgetLines, CompareReply } from './session-types.js';
import type { TraceSession } from './trace-session.js';

/** Ranges above a budget's limit handed to the page per budget at most (the chart shades them); the rest are counted. */
export const MAX_BUDGET_RANGES = 4096;

/** One run to compare: its trace, the name it is shown by, its budgets. */
export interface CompareInput {
  trace: string;
  name: string;
  budgets: ReportInputs['budgets'];
}

/** How far the comparison is: the fraction of both runs' passes done and what it is doing. */
export interface CompareProgress {
  fraction: number;
  phase: string;
}

/** The budget lines of a run's report: limits and the ranges above them (the first MAX_BUDGET_RANGES). */
function budgetLines(r: ReportResult): CompareBudgetLines {
  return (r.budgets?.checks ?? []).map((c) => ({
    kind: c.kind,
    limitBytes: c.limitBytes,
    ranges: c.ranges.slice(0, MAX_BUDGET_RANGES).map((x) => [x.startEvent, x.endEvent] as [number, number]),
    rangeCount: c.rangeCount,
  }));
}

/**
 * B - A of two traces, each streamed in turn (synchronous: the server runs it in a worker, compareInWorker), as the
 * JSON text of CompareReply's ready state without its `state`: `{"comparison":…,"budgets":[A's, B's]}`.
 */
export function compareTracesJson(runs: [CompareInput, CompareInput], onProgress?: (p: CompareProgress) => void): string {
  const reports = runs.map((r, i) => {
    let file: FileSource;
    try {
      file = FileSource.open(r.trace);
    } catch (e) {
      throw new Error(describeReadError(r.trace, e));
    }
    try {
      const source = streamSource(file.clone(), { symbols: fileSymbolNamer, onProgress: (f, phase) => onProgress?.({ fraction: (i + f) / 2, phase: `${i === 0 ? 'A' : 'B'}: ${phase}` }) });
      return compareReport({ source, file: r.name, inputs: { budgets: r.budgets, frameSizes: null } });
    } catch (e) {
      throw new Error(describeReadError(r.trace, e));
    } finally {
      file.close();
    }
  });
  const [a, b] = reports as [ReportResult, ReportResult];
  return JSON.stringify({ comparison: compareReports(a, b), budgets: [budgetLines(a), budgetLines(b)] });
}

/** compareTracesJson in a worker thread when the compiled worker is there. */
export function compareInWorker(runs: [CompareInput, CompareInput], onProgress?: (p: CompareProgress) => void): Promise<string> {
  return jsonInWorker({ task: 'compare', runs }, (progress) => compareTracesJson(runs, progress), onProgress);
}

/** A session's run as the comparison takes it: its trace, its name, the budgets the viewer shows for it. */
function inputOf(s: TraceSession): CompareInput {
  const i = s.info;
  return { trace: s.path, name: i.trace.name, budgets: i.budgets === null ? null : { limits: i.budgets, source: i.budgetSource } };
}

/** The comparison of the server's two sessions, computed once on the first request; every request is told how far it is. */
export class SessionComparison {
  private state: { state: 'computing'; fraction: number; phase: string } | { state: 'ready'; json: string } | { state: 'failed'; message: string } | null = null;

  constructor(
    private readonly a: TraceSession,
    private readonly b: TraceSession,
  ) {}

  /** CompareReply as JSON text (the ready one as the worker wrote it, not parsed and written again). */
  replyText(): string {
    if (this.state === null) {
      this.state = { state: 'computing', fraction: 0, phase: 'starting' };
      compareInWorker([inputOf(this.a), inputOf(this.b)], (p) => {
        if (this.state?.state === 'computing') this.state = { state: 'computing', ...p };
      }).then(
        (json) => (this.state = { state: 'ready', json }),
        (e: unknown) => (this.state = { state: 'failed', message: (e as Error).message }),
      );
    }
    const s = this.state;
    if (s.state === 'ready') return `{"state":"ready",${s.json.slice(1)}`;
    const reply: CompareReply = s;
    return JSON.stringify(reply);
  }
}
