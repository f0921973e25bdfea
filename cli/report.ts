// `cc-memwrap report <trace>`: decode a trace and print what the run allocated, freed, leaked and peaked at, as text or JSON.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { summarize, SUMMARY_SCHEMA } from '../analysis/summary.js';
import {
  renderAttribution,
  renderBudgets,
  renderCalls,
  renderIntervals,
  renderLeaks,
  renderLinked,
  renderPeaks,
  renderReport,
  renderTemporaries,
} from '../analysis/report-text.js';
import { checkBudgets, type BudgetCheck, type Budgets } from '../analysis/budgets.js';
import { DEFAULT_TEMPORARY_WITHIN, temporaries, type Temporaries } from '../analysis/temporaries.js';
import { perCall, type PerCall } from '../analysis/per-call.js';
import { IntervalError, intervalSeries, type IntervalSeries, type IntervalSpec } from '../analysis/timeline.js';
import type { Model } from '../analysis/model.js';
import { parseInterval } from './export.js';
import { limitSnapshot, peaks, sourceLineText } from '../analysis/peak.js';
import { linkedFrees, orphanedLeaks } from '../analysis/linked.js';
import { leaksAtExit, type LeaksAtExit } from '../analysis/leaks.js';
import { attribution, ATTRIBUTION_BY, ATTRIBUTION_MODES, type AttributionBy, type AttributionMode } from '../analysis/attribution.js';
import { describeReadError } from '../host/read-errors.js';
import { processIo, progressLine, type CliIo } from './io.js';
import { renderStack, stackReport, type StackReport } from '../analysis/stack-report.js';
import { BUDGET_KIND_OPTIONS, budgetsFromFlags } from './budget-flags.js';
import { leakCauses, LEAK_CAUSES_SCHEMA, type LeakCauses } from '../analysis/leak-causes.js';
import { renderLeakCauses } from '../analysis/leak-causes-text.js';
import { formatBytes } from '../analysis/units.js';
import { HtmlReportError, writeHtmlReport } from '../host/html-report.js';
import { TraceFile } from '../host/trace-file.js';
import { TraceSession } from '../host/trace-session.js';

export const REPORT_HELP = `Usage: cc-memwrap report <trace> [--top N] [--json] [--peak] [--linked] [--leaks]
                          [--by function|site|file|thread|library [--attribute MODE]]
                          [--budget SPEC] [--budget-heap|-stack|-static|-total SIZE]
                          [--temporary [N]] [--calls FUNCTION]
                          [--interval N|TIME] [--leak-causes] [--stack]
                          [--fail-on budget|leaks] [--html FILE]

Reads a trace (.mwtrace) an instrumented program wrote and prints how the run
ended, threads, events, allocations and frees, bytes allocated (requested and
usable), peak heap and stack, static memory, blocks leaked at exit, the
Valgrind-style totals, and the top allocation sites with file:line.

Options:
  --top N    list the N allocation sites with the most bytes (default 10);
             also limits the --by, --peak and --linked tables
  --json     print the same numbers as one JSON object (schema: analysis/README.md)
  --by G     also print heap bytes and allocator calls grouped by G: function,
             site (allocation or free site), file, thread or library (the
             shared object that called malloc & co. through the interposed
             allocator; calls at instrumented sites are one "(instrumented
             code)" row). Each row: net
             bytes (allocated - freed by its calls; negative when it frees
             what others allocated), min and max of that over the run, and
             the malloc, calloc, realloc, free, aligned and strdup calls
  --attribute MODE
             which function on the call path a heap call is charged to, for
             --by function and --by file: innermost (default), outermost
             (the one called from main), inclusive (every function on it)
  --peak     also print the heap blocks live at the heap peak and at the
             total peak (heap + stack + static), by allocation site (with
             the source line of each site) and by function, with their share
             of the peak
  --linked   also print every free whose freed block still pointed to live
             blocks: the free's site, the freed block's allocation site and
             each linked block's, marked "orphaned" where that free left it
             unreachable for good (never freed afterwards)
  --budget SPEC
             check memory budgets, e.g. heap=64K,stack=8K,static=1K,total=80K
             (sizes in bytes or with B, K/KiB, M/MiB, G/GiB; heap: live bytes
             requested, stack: all threads, total: heap + stack + static):
             each range of events above a budget, with the heap blocks live
             when it began by function and allocation site. Without
             --budget, the budgets of a memwrap.json beside the program
             ({ "budgets": { "heap": "64K", "stack": 8192 } }) if there is one
  --budget-heap SIZE, --budget-stack SIZE, --budget-static SIZE,
  --budget-total SIZE
             one budget each, the same as --budget KIND=SIZE (they add up
             with --budget; a kind given twice is an error)
  --temporary [N]
             blocks freed within N events of their allocation (default 16),
             per allocation site: count, bytes, share of the site's blocks
  --calls FUNCTION
             each call of FUNCTION: heap allocated - freed by it and its
             callees (net), the peak of that running net, and totals
  --interval N|TIME
             heap, stack and static at the end of each interval of N events
             or of wall time (500ns, 20us, 10ms, 1.5s), and the max heap in it
  --stack    the static worst-case stack from main (the frame sizes and
             call graph the compiler gave when cc-memwrap built the
             program) beside the deepest stack the run reached, each with
             its call path; recursion (unbounded), calls through function
             pointers and run-time-sized frames (unknown) are named
  --leaks    blocks live at exit as the runtime classified them: direct
             leaks, indirect leaks (reachable only from other leaks), still
             reachable (from static memory or the stack); by allocation site,
             with the free that orphaned them
  --leak-causes
             why sites leak: for each allocation site some of whose blocks
             were freed and some not (suspect), freed N / leaked M, the
             lowest function common to allocation and free, and the step
             that separates the leaking paths (allocation -> that function's
             exit) from the freeing ones: a branch with its file:line and
             direction when the program was built with
             cc-memwrap --mw-branches, else a function entry or exit; with
             one freeing and one leaking path. Sites never freed are listed
             apart (a plain leak or a cache), not as suspect. JSON shape in
             analysis/README.md
  --fail-on budget|leaks
             exit 1 when a budget is exceeded (budget), or when the run
             leaked (leaks: direct or indirect leaks; where the run was not
             classified, any block live at the end); repeatable, or
             comma-separated
  --html FILE
             also write the viewer as one self-contained HTML file: the
             interactive chart (click a bar for its source), the tables,
             budgets, leak causes and the worst-case stack, with the trace
             and the source files it names (only those under the run's
             working directory) inside it; it opens from disk in a browser
             without network or server
  -h, --help this text

Problems found in the trace are printed on stderr as warnings; the report is
still printed (exit 0, or 1 for a --fail-on condition). Bad arguments, a file
that cannot be read or is not a trace, a bad memwrap.json: exit 2.`;

const FAIL_ON = ['budget', 'leaks'] as const;
type FailOn = (typeof FAIL_ON)[number];

/** `--temporary` takes an optional count: without a following number it means `--temporary=16`. */
function normalizeArgs(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      out.push(...args.slice(i));
      break;
    }
    if (a === '--temporary') {
      const next = args[i + 1];
      if (next !== undefined && /^\d+$/.test(next)) {
        out.push(`--temporary=${next}`);
        i++;
      } else out.push(`--temporary=${DEFAULT_TEMPORARY_WITHIN}`);
    } else out.push(a);
  }
  return out;
}

export async function runReport(args: string[], io: CliIo = processIo()): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: normalizeArgs(args),
      allowPositionals: true,
      options: {
        top: { type: 'string' },
        json: { type: 'boolean' },
        by: { type: 'string' },
        attribute: { type: 'string' },
        peak: { type: 'boolean' },
        linked: { type: 'boolean' },
        leaks: { type: 'boolean' },
        budget: { type: 'string' },
        ...BUDGET_KIND_OPTIONS,
        temporary: { type: 'string' },
        calls: { type: 'string' },
        interval: { type: 'string' },
        stack: { type: 'boolean' },
        'leak-causes': { type: 'boolean' },
        'fail-on': { type: 'string', multiple: true },
        html: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (e) {
    io.err(`cc-memwrap report: ${(e as Error).message}\nTry 'cc-memwrap report --help'.\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.out(REPORT_HELP + '\n');
    await io.flush();
    return 0;
  }
  if (positionals.length !== 1) {
    io.err(`cc-memwrap report: expected one trace file, got ${positionals.length}\nTry 'cc-memwrap report --help'.\n`);
    return 2;
  }
  let top = 10;
  if (values.top !== undefined) {
    top = Number(values.top);
    if (!/^\d+$/.test(values.top) || !Number.isSafeInteger(top)) {
      io.err(`cc-memwrap report: --top wants a whole number, got '${values.top}'\n`);
      return 2;
    }
  }
  let by: AttributionBy | null = null;
  if (values.by !== undefined) {
    if (!(ATTRIBUTION_BY as readonly string[]).includes(values.by)) {
      io.err(`cc-memwrap report: --by wants ${ATTRIBUTION_BY.join(', ')}, got '${values.by}'\n`);
      return 2;
    }
    by = values.by as AttributionBy;
  }
  let mode: AttributionMode = 'innermost';
  if (values.attribute !== undefined) {
    if (!(ATTRIBUTION_MODES as readonly string[]).includes(values.attribute)) {
      io.err(`cc-memwrap report: --attribute wants ${ATTRIBUTION_MODES.join(', ')}, got '${values.attribute}'\n`);
      return 2;
    }
    if (by === null) {
      io.err(`cc-memwrap report: --attribute needs --by function or --by file\n`);
      return 2;
    }
    mode = values.attribute as AttributionMode;
  }
  let budgets: Budgets | null;
  try {
    budgets = budgetsFromFlags(values);
  } catch (e) {
    io.err(`cc-memwrap report: ${(e as Error).message}\n`);
    return 2;
  }
  let within: number | null = null;
  if (values.temporary !== undefined) {
    within = Number(values.temporary);
    if (!/^\d+$/.test(values.temporary) || !Number.isSafeInteger(within)) {
      io.err(`cc-memwrap report: --temporary wants a whole number of events, got '${values.temporary}'\n`);
      return 2;
    }
  }
  if (values.calls !== undefined && values.calls.trim() === '') {
    io.err(`cc-memwrap report: --calls wants a function name\n`);
    return 2;
  }
  let spec: IntervalSpec | null = null;
  if (values.interval !== undefined) {
    spec = parseInterval(values.interval);
    if (spec === null) {
      io.err(`cc-memwrap report: --interval wants a number of events (1000) or a time (500ns, 20us, 10ms, 1.5s), got '${values.interval}'\n`);
      return 2;
    }
  }
  const failOn = new Set<FailOn>();
  for (const v of (values['fail-on'] ?? []).flatMap((x) => x.split(','))) {
    if (!(FAIL_ON as readonly string[]).includes(v)) {
      io.err(`cc-memwrap report: --fail-on wants ${FAIL_ON.join(' or ')}, got '${v}'\n`);
      return 2;
    }
    failOn.add(v as FailOn);
  }
  const file = positionals[0]!;
  const progress = progressLine(io, file);
  let summary;
  let attributed = null;
  let peak = null;
  let linked = null;
  let leaks = null;
  let atExit: LeaksAtExit | null = null;
  let budgetSource: string | null = budgets === null ? null : '--budget';
  let checks: BudgetCheck[] | null = null;
  let temps: Temporaries | null = null;
  let calls: PerCall | null = null;
  let intervals: IntervalSeries | null = null;
  let stack: StackReport | null = null;
  let causes: LeakCauses | null = null;
  let model: Model;
  let trace: TraceFile;
  try {
    trace = await TraceFile.read(file);
    model = trace.decode({ onProgress: progress.update });
  } catch (e) {
    progress.done();
    io.err(`cc-memwrap report: ${describeReadError(file, e)}\n`);
    return 2;
  }
  if (budgets === null) {
    const config = trace.budgetConfig();
    if (config.problem !== null) {
      progress.done();
      io.err(`cc-memwrap report: ${config.problem.replace(/\s*\n\s*/g, ' ')}\n`);
      return 2;
    }
    budgets = config.budgets;
    budgetSource = config.source;
  }
  try {
    summary = summarize(model, { top });
    if (by !== null) attributed = attribution(model, { by, mode });
    if (values.peak) {
      const p = peaks(model);
      peak = { heap: limitSnapshot(p.heap, top), total: limitSnapshot(p.total, top) };
    }
    if (values.linked) {
      linked = linkedFrees(model);
      leaks = orphanedLeaks(model);
    }
    if (values.leaks || failOn.has('leaks')) atExit = leaksAtExit(model);
    if (budgets !== null) checks = checkBudgets(model, budgets);
    if (within !== null) temps = temporaries(model, { within });
    if (values.calls !== undefined) calls = perCall(model, values.calls);
    if (spec !== null) intervals = intervalSeries(model, spec);
    if (values.stack) {
      const info = trace.stackInfo();
      stack = stackReport(model, info.program, info.units, info.missing);
    }
    if (values['leak-causes']) causes = leakCauses(model);
  } catch (e) {
    if (e instanceof IntervalError) {
      progress.done();
      io.err(`cc-memwrap report: --interval ${values.interval}: ${e.message}\n`);
      return 2;
    }
    progress.done();
    io.err(`cc-memwrap report: ${describeReadError(file, e)}\n`);
    return 2;
  }
  progress.done();
  if (values.html !== undefined) {
    const problem = writeHtml(trace, values.html, budgetSource === '--budget' ? budgets : null, io);
    if (problem !== null) {
      io.err(`cc-memwrap report: --html ${values.html}: ${problem}\n`);
      return 2;
    }
  }
  const budgetFailed = checks !== null && checks.some((c) => c.exceeded);
  // With the runtime's classification, still-reachable blocks are not leaks
  // (as in LeakSanitizer); without it, every block live at the end is.
  const leaked =
    atExit !== null && atExit.present
      ? atExit.classes.filter((c) => c.class !== 'reachable').reduce((n, c) => n + c.count, 0) + atExit.unclassified
      : summary.leaked.blocks;
  const failed = { budget: failOn.has('budget') && budgetFailed, leaks: failOn.has('leaks') && leaked > 0 };
  if (failOn.has('budget') && checks === null) io.err(`cc-memwrap report: --fail-on budget: no budgets (give --budget or a memwrap.json beside the program)\n`);
  for (const p of summary.problems.list) io.err(`cc-memwrap report: ${file}: ${p.severity}: ${p.message}\n`);
  if (values.json) {
    const extra =
      attributed === null
        ? {}
        : { attribution: { by: attributed.by, mode: attributed.mode, groups: attributed.rows.length, rows: attributed.rows.slice(0, top) } };
    const linkedExtra =
      linked === null || leaks === null
        ? {}
        : {
            linked: {
              frees: linked.length,
              orphanedBlocks: leaks.length,
              rows: linked.slice(0, Math.max(0, top)),
              orphanedLeaks: leaks.slice(0, Math.max(0, top)),
            },
          };
    const more = {
      ...(checks === null
        ? {}
        : { budgets: { source: budgetSource, exceeded: budgetFailed, checks: checks.map((c) => ({ ...c, rangeCount: c.ranges.length, ranges: c.ranges.slice(0, Math.max(0, top)) })) } }),
      ...(temps === null ? {} : { temporaries: { ...temps, siteCount: temps.sites.length, sites: temps.sites.slice(0, Math.max(0, top)) } }),
      ...(calls === null ? {} : { calls: { ...calls, invocations: calls.invocations.slice(0, Math.max(0, top)) } }),
      ...(intervals === null ? {} : { intervals: intervalsJson(intervals) }),
      ...(stack === null ? {} : { stack }),
      ...(atExit === null || !values.leaks ? {} : { leaks: leaksJson(atExit, top) }),
      ...(causes === null ? {} : { leakCauses: { schema: LEAK_CAUSES_SCHEMA, ...causes } }),
      ...(failOn.size === 0 ? {} : { failOn: { conditions: [...failOn], failed: FAIL_ON.filter((f) => failed[f]) } }),
    };
    io.out(JSON.stringify({ schema: SUMMARY_SCHEMA, file, ...summary, ...extra, ...(peak === null ? {} : { peak }), ...linkedExtra, ...more }, null, 2) + '\n');
  } else {
    io.out(
      renderReport(summary, file) +
        (attributed === null ? '' : renderAttribution(attributed, top)) +
        (peak === null ? '' : renderPeaks(peak, sourceReader())) +
        (linked === null ? '' : renderLinked(linked, top)) +
        (checks === null ? '' : renderBudgets(checks, top, budgetSource, sourceReader())) +
        (temps === null ? '' : renderTemporaries(temps, top)) +
        (calls === null ? '' : renderCalls(calls, top)) +
        (intervals === null ? '' : renderIntervals(intervals)) +
        (stack === null ? '' : renderStack(stack, model.program?.cwd || null)) +
        (atExit === null || !values.leaks ? '' : renderLeaks(atExit, top)) +
        (causes === null ? '' : renderLeakCauses(causes, top, sourceReader(), model.program?.cwd ?? null)),
    );
  }
  await io.flush();
  return failed.budget || failed.leaks ? 1 : 0;
}

/** Writes the HTML report of `trace` (as read for the report) to `out` and says where on stderr; returns why it could not, or null. */
function writeHtml(trace: TraceFile, out: string, budgets: Budgets | null, io: CliIo): string | null {
  if (out === '') return 'wants a file name';
  try {
    const session = TraceSession.of(trace, budgets === null ? {} : { budgets });
    const size = writeHtmlReport(session, out);
    io.err(`cc-memwrap report: wrote ${out} (${formatBytes(size)}): open it in a browser, no server needed\n`);
    return null;
  } catch (e) {
    if (e instanceof HtmlReportError) return e.message;
    throw e;
  }
}

/** The interval table as JSON rows. */
function intervalsJson(s: IntervalSeries): { spec: IntervalSpec; count: number; rows: object[] } {
  const rows: object[] = [];
  for (let k = 0; k < s.count; k++) {
    rows.push({
      startEvent: s.startEvent[k]!,
      endEvent: s.endEvent[k]!,
      startTimeNs: s.startTime[k]!,
      endTimeNs: s.endTime[k]!,
      heapRequested: s.heapRequested[k]!,
      heapUsable: s.heapUsable[k]!,
      stack: s.stack[k]!,
      static: s.static[k]!,
      maxHeapRequested: s.maxHeapRequested[k]!,
      maxHeapUsable: s.maxHeapUsable[k]!,
      maxStack: s.maxStack[k]!,
    });
  }
  return { spec: s.spec, count: s.count, rows };
}

/** Source lines for the --peak tables: reads each file once with node:fs; null (never a throw) when it cannot. */
function sourceReader(): (file: string, line: number) => string | null {
  const cache = new Map<string, string | null>();
  const read = (f: string): string | null => {
    let text = cache.get(f);
    if (text === undefined) {
      try {
        text = readFileSync(f, 'utf8');
      } catch {
        text = null;
      }
      cache.set(f, text);
    }
    return text;
  };
  return (file, line) => sourceLineText(read, file, line);
}

/** The leaks for --json: every class with its first --top sites. */
function leaksJson(leaks: LeaksAtExit, top: number): unknown {
  return {
    ...leaks,
    classes: leaks.classes.map((c) => ({ ...c, siteCount: c.sites.length, sites: c.sites.slice(0, Math.max(0, top)) })),
  };
}
