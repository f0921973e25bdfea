// `cc-memwrap report` as one computation: a checked request in, one result object out, with a section per option
// (null when not asked for). report-text.ts and report-json.ts each render that object; a new report section is one
// analysis, one member here and one entry in each renderer.
import type { Model } from './model.js';
import { summarize, type Summary } from './summary.js';
import { attribution, type Attribution, type AttributionBy, type AttributionMode } from './attribution.js';
import { limitSnapshot, peaks, type PeakSnapshot } from './peak.js';
import { linkedFrees, orphanedLeaks, type LinkedFree, type OrphanedLeak } from './linked.js';
import { leaksAtExit, type LeaksAtExit } from './leaks.js';
import { checkBudgets, type BudgetCheck, type Budgets } from './budgets.js';
import { temporaries, type Temporaries } from './temporaries.js';
import { perCall, type PerCall } from './per-call.js';
import { intervalSeries, type IntervalSeries, type IntervalSpec } from './timeline.js';
import { stackReport, type StackReport } from './stack-report.js';
import type { StackUnit } from './worst-stack.js';
import { leakCauses, type LeakCauses } from './leak-causes.js';

export const FAIL_ON = ['budget', 'leaks'] as const;
export type FailOn = (typeof FAIL_ON)[number];

/** What the report was asked for, its arguments already checked. */
export interface ReportRequest {
  /** Rows listed per table (sites, groups, ranges, calls). */
  top: number;
  by: { by: AttributionBy; mode: AttributionMode } | null;
  peak: boolean;
  linked: boolean;
  leaks: boolean;
  /** Blocks freed within this many events count as temporaries (--temporary), or null. */
  temporaryWithin: number | null;
  /** The function of --calls, or null. */
  calls: string | null;
  interval: IntervalSpec | null;
  stack: boolean;
  leakCauses: boolean;
  failOn: ReadonlySet<FailOn>;
}

/** What the computation needs from outside the trace: the host reads these (memwrap.json, the program's frame sizes). */
export interface ReportInputs {
  /** The budgets to check and where they came from (`--budget`, or a memwrap.json's path); null: none. */
  budgets: { limits: Budgets; source: string | null } | null;
  /** The program's `.mw_stack` units for --stack, or null with the reason. */
  frameSizes: { program: string | null; units: StackUnit[] | null; missing: string | null } | null;
}

export interface ReportResult {
  /** The trace as the user named it. */
  file: string;
  top: number;
  /** The run's working directory, to print file names relative to it. */
  cwd: string | null;
  summary: Summary;
  attribution: Attribution | null;
  peak: { heap: PeakSnapshot; total: PeakSnapshot } | null;
  linked: { frees: LinkedFree[]; orphanedLeaks: OrphanedLeak[] } | null;
  budgets: { source: string | null; checks: BudgetCheck[]; exceeded: boolean } | null;
  temporaries: Temporaries | null;
  calls: PerCall | null;
  intervals: IntervalSeries | null;
  stack: StackReport | null;
  /** Leaks at exit, shown with --leaks (also computed, not shown, for --fail-on leaks). */
  leaks: LeaksAtExit | null;
  leakCauses: LeakCauses | null;
  failOn: { conditions: FailOn[]; failed: FailOn[] } | null;
}

export function computeReport(model: Model, file: string, request: ReportRequest, inputs: ReportInputs): ReportResult {
  const { top } = request;
  const summary = summarize(model, { top });
  const p = request.peak ? peaks(model) : null;
  const checks = inputs.budgets === null ? null : checkBudgets(model, inputs.budgets.limits);
  const atExit = request.leaks || request.failOn.has('leaks') ? leaksAtExit(model) : null;
  const sizes = inputs.frameSizes;
  const result: ReportResult = {
    file,
    top,
    cwd: model.program?.cwd || null,
    summary,
    attribution: request.by === null ? null : attribution(model, request.by),
    peak: p === null ? null : { heap: limitSnapshot(p.heap, top), total: limitSnapshot(p.total, top) },
    linked: request.linked ? { frees: linkedFrees(model), orphanedLeaks: orphanedLeaks(model) } : null,
    budgets: checks === null ? null : { source: inputs.budgets!.source, checks, exceeded: checks.some((c) => c.exceeded) },
    temporaries: request.temporaryWithin === null ? null : temporaries(model, { within: request.temporaryWithin }),
    calls: request.calls === null ? null : perCall(model, request.calls),
    intervals: request.interval === null ? null : intervalSeries(model, request.interval),
    stack: request.stack && sizes !== null ? stackReport(model, sizes.program, sizes.units, sizes.missing) : null,
    leaks: request.leaks ? atExit : null,
    leakCauses: request.leakCauses ? leakCauses(model) : null,
    failOn: null,
  };
  if (request.failOn.size > 0) {
    const failed = {
      budget: result.budgets !== null && result.budgets.exceeded,
      leaks: leakedAtExit(summary, atExit) > 0,
    };
    result.failOn = { conditions: [...request.failOn], failed: FAIL_ON.filter((f) => request.failOn.has(f) && failed[f]) };
  }
  return result;
}

/**
 * Blocks that count as leaked for --fail-on leaks. With the runtime's classification, still-reachable blocks are not
 * leaks (as in LeakSanitizer); without it, every block live at the end is.
 */
function leakedAtExit(summary: Summary, atExit: LeaksAtExit | null): number {
  if (atExit === null || !atExit.present) return summary.leaked.blocks;
  return atExit.classes.filter((c) => c.class !== 'reachable').reduce((n, c) => n + c.count, 0) + atExit.unclassified;
}
