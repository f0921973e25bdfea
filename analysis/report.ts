// `cc-memwrap report` as one computation: a checked request in, one result object out, with a section per option
// (null when not asked for). report-text.ts and report-json.ts each render that object; a new report section is one
// analysis, one member here and one entry in each renderer.
import type { EventFold, FoldSource, TraceStart } from './event-fold.js';
import { SummaryFold, type Summary } from './summary.js';
import { AttributionFold, type Attribution, type AttributionBy, type AttributionMode } from './attribution.js';
import { limitSnapshot, PeakFold, type PeakSnapshot } from './peak.js';
import { LinkedFold, OrphanFold, type LinkedSection } from './linked.js';
import { LeaksFold, type LeaksAtExit } from './leaks.js';
import { BudgetFold, type BudgetCheck, type Budgets } from './budgets.js';
import { TemporariesFold, type Temporaries } from './temporaries.js';
import { PerCallFold, type PerCall } from './per-call.js';
import { IntervalFold, type IntervalSeries, type IntervalSpec } from './timeline.js';
import { stackSection, worstCaseOf, type StackReport } from './stack-report.js';
import { DeepestStackFold } from './deepest-stack.js';
import type { StackUnit } from './worst-stack.js';
import { leakCausesAfter, LeakSitesFold, type LeakCauses } from './leak-causes.js';
import type { FirmwareImage } from './firmware-image.js';
import { ProgramStaticsFold, ramMap, type RamMap } from './ram-map.js';

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

/** A request for the summary (and a `--by` table) alone: no other section, no --fail-on. */
export function summaryRequest(top: number, by: ReportRequest['by'] = null): ReportRequest {
  return { top, by, peak: false, linked: false, leaks: false, temporaryWithin: null, calls: null, interval: null, stack: false, leakCauses: false, failOn: new Set() };
}

/** What the computation needs from outside the trace: the host reads these (memwrap.json, the program's frame sizes). */
export interface ReportInputs {
  /** The budgets to check and where they came from (`--budget`, or a memwrap.json's path); null: none. */
  budgets: { limits: Budgets; source: string | null } | null;
  /** The program's `.mw_stack` units for --stack, or null with the reason. */
  frameSizes: { program: string | null; units: StackUnit[] | null; missing: string | null } | null;
  /** A firmware's memory from its ELF file, for the RAM map; absent or null: the trace is not a firmware's. */
  firmware?: { program: string | null; image: FirmwareImage } | null;
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
  /** The first `top` frees with a linked set and orphaned leaks, and their counts. */
  linked: LinkedSection | null;
  budgets: { source: string | null; checks: BudgetCheck[]; exceeded: boolean } | null;
  temporaries: Temporaries | null;
  calls: PerCall | null;
  intervals: IntervalSeries | null;
  stack: StackReport | null;
  /** Leaks at exit, shown with --leaks (also computed, not shown, for --fail-on leaks). */
  leaks: LeaksAtExit | null;
  leakCauses: LeakCauses | null;
  failOn: { conditions: FailOn[]; failed: FailOn[] } | null;
  /** A firmware's RAM map (always, for a firmware whose ELF file was read); absent otherwise. */
  ramMap?: RamMap;
}

/**
 * The report: one pass over the events of `source` with the fold of every section asked for (summary, --peak,
 * --linked, --leaks, --by, --budget, --temporary, --calls, --interval, --stack, and the first pass of --leak-causes),
 * then --leak-causes's own passes when its suspect sites need them (leak-causes.ts).
 */
export function computeReport(source: FoldSource, file: string, request: ReportRequest, inputs: ReportInputs): ReportResult {
  const { top } = request;
  const wantLeaks = request.leaks || request.failOn.has('leaks');
  // A streaming source may build the folds twice (a second reading): the results are those of the last.
  let last: ReportFolds | undefined;
  const sizes = inputs.frameSizes;
  const worst = worstCaseOf(sizes?.units ?? null);
  source.run((start) => (last = reportFolds(start, request, inputs, wantLeaks, worst.mainFrame)).all);
  const { start, summaryFold, peakFold, linkedFold, leaksFold } = last!;
  const summary = summaryFold.result();
  const p = peakFold?.result() ?? null;
  const checks = last!.budgetFold?.result() ?? null;
  const atExit = leaksFold?.result() ?? null;
  const result: ReportResult = {
    file,
    top,
    cwd: start.program?.cwd || null,
    summary,
    attribution: last!.attributionFold?.result() ?? null,
    peak: p === null ? null : { heap: limitSnapshot(p.heap, top), total: limitSnapshot(p.total, top) },
    linked: linkedFold?.result() ?? null,
    budgets: checks === null ? null : { source: inputs.budgets!.source, checks, exceeded: checks.some((c) => c.exceeded) },
    temporaries: last!.temporariesFold?.result() ?? null,
    calls: last!.callsFold?.result() ?? null,
    intervals: last!.intervalFold?.result() ?? null,
    stack: last!.stackFold === null ? null : stackSection(last!.stackFold.result(), sizes!.program, sizes!.units, sizes!.missing, worst.worstCase),
    leaks: request.leaks ? atExit : null,
    leakCauses: last!.leakSitesFold === null ? null : leakCausesAfter(source, last!.leakSitesFold.result()),
    failOn: null,
  };
  const fw = inputs.firmware;
  if (fw && last!.staticsFold !== null) {
    result.ramMap = ramMap(fw.program, fw.image, summary, last!.staticsFold.sites, last!.budgetFold?.firstCrossing() ?? null, start.sites, top);
  }
  if (request.failOn.size > 0) {
    const failed = {
      budget: result.budgets !== null && result.budgets.exceeded,
      leaks: leakedAtExit(summary, atExit) > 0,
    };
    result.failOn = { conditions: [...request.failOn], failed: FAIL_ON.filter((f) => request.failOn.has(f) && failed[f]) };
  }
  return result;
}

/** The folds of the sections asked for that are folds, built from a run's start; `all` in the order they see the events. */
interface ReportFolds {
  start: TraceStart;
  summaryFold: SummaryFold;
  peakFold: PeakFold | null;
  linkedFold: LinkedFold | null;
  leaksFold: LeaksFold | null;
  attributionFold: AttributionFold | null;
  budgetFold: BudgetFold | null;
  temporariesFold: TemporariesFold | null;
  callsFold: PerCallFold | null;
  intervalFold: IntervalFold | null;
  stackFold: DeepestStackFold | null;
  leakSitesFold: LeakSitesFold | null;
  /** A firmware's: the statics the program registered, for the RAM map. */
  staticsFold: ProgramStaticsFold | null;
  all: EventFold[];
}

/** The folds of every section the request asks for that is one; lists keep the first `top` rows the report shows. */
function reportFolds(start: TraceStart, request: ReportRequest, inputs: ReportInputs, wantLeaks: boolean, mainFrame: number | null): ReportFolds {
  const { top } = request;
  const summaryFold = new SummaryFold(start, { top });
  const peakFold = request.peak ? new PeakFold(start) : null;
  const orphans = request.linked || wantLeaks ? new OrphanFold(start) : null;
  const linkedFold = request.linked ? new LinkedFold(start, orphans!, { keep: top }) : null;
  const leaksFold = wantLeaks ? new LeaksFold(start, orphans!) : null;
  const attributionFold = request.by === null ? null : new AttributionFold(start, request.by);
  const budgetFold = inputs.budgets === null ? null : new BudgetFold(start, inputs.budgets.limits, { keepRanges: Math.max(0, top) });
  const temporariesFold = request.temporaryWithin === null ? null : new TemporariesFold(start, { within: request.temporaryWithin });
  const callsFold = request.calls === null ? null : new PerCallFold(start, request.calls, { keepCalls: Math.max(0, top) });
  const intervalFold = request.interval === null ? null : new IntervalFold(start, request.interval);
  const stackFold = request.stack && inputs.frameSizes !== null ? new DeepestStackFold(start, mainFrame) : null;
  const leakSitesFold = request.leakCauses ? new LeakSitesFold(start) : null;
  const staticsFold = inputs.firmware ? new ProgramStaticsFold() : null;
  const all: EventFold[] = [summaryFold];
  for (const f of [orphans, peakFold, linkedFold, leaksFold, attributionFold, budgetFold, temporariesFold, callsFold, intervalFold, stackFold, leakSitesFold, staticsFold]) if (f !== null) all.push(f);
  return { start, summaryFold, peakFold, linkedFold, leaksFold, attributionFold, budgetFold, temporariesFold, callsFold, intervalFold, stackFold, leakSitesFold, staticsFold, all };
}

/**
 * Blocks that count as leaked for --fail-on leaks. With the runtime's classification, still-reachable blocks are not
 * leaks (as in LeakSanitizer); without it, every block live at the end is.
 */
function leakedAtExit(summary: Summary, atExit: LeaksAtExit | null): number {
  if (atExit === null || !atExit.present) return summary.leaked.blocks;
  return atExit.classes.filter((c) => c.class !== 'reachable').reduce((n, c) => n + c.count, 0) + atExit.unclassified;
}
