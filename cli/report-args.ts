// The arguments of `cc-memwrap report`, checked: the trace, what the report should compute (a ReportRequest) and how
// to show it; or the one message that says what is wrong with them.
import { statSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ATTRIBUTION_BY, ATTRIBUTION_MODES, type AttributionBy, type AttributionMode } from '../analysis/attribution.js';
import type { Budgets } from '../analysis/budgets.js';
import { FAIL_ON, type FailOn, type ReportRequest } from '../analysis/report.js';
import { DEFAULT_TEMPORARY_WITHIN } from '../analysis/temporaries.js';
import type { IntervalSpec } from '../analysis/timeline.js';
import { BUDGET_KIND_OPTIONS, budgetsFromFlags } from './budget-flags.js';
import { parseInterval } from './export.js';

export const REPORT_HELP = `Usage: cc-memwrap report <trace> [--top N] [--json] [--peak] [--linked] [--leaks]
                          [--by function|site|file|thread|library|entry|library-function
                           [--attribute MODE]]
                          [--budget SPEC] [--budget-heap|-stack|-static|-total SIZE]
                          [--temporary [N]] [--calls FUNCTION]
                          [--interval N|TIME] [--leak-causes] [--stack]
                          [--fail-on budget|leaks] [--html FILE]
                          [--source-root DIR]
       cc-memwrap report <trace A> --compare <trace B> [--top N] [--json]
                          [--budget SPEC] [--budget-heap|-stack|-static|-total SIZE]
                          [--html FILE]
       cc-memwrap report <trace> <trace>… | <folder> [--by G] [--top N] [--json]

Reads a trace (.mwtrace) an instrumented program wrote and prints how the run
ended, threads, events, allocations and frees, bytes allocated (requested and
usable), peak heap and stack, static memory, blocks leaked at exit, the
Valgrind-style totals, and the top allocation sites with file:line.

Given several traces (or a folder of them: MPI ranks, a program and the
children it forked, the programs of a test suite), it prints one row per
process and their totals, and --by tables summed over the processes and then
per process. The traces are read one at a time. An option that reads one
trace (--peak, --leaks, --fail-on, --html, a side of --compare …) refuses
several, but for runs of one program one after another (ring.*.mwtrace
after ./ring ran twice), of which it reads the newest and says which.

Options:
  --top N    list the N allocation sites with the most bytes (default 10);
             also limits the --by, --peak and --linked tables
  --json     print the same numbers as one JSON object (schema: analysis/README.md)
  --by G     also print heap bytes and allocator calls grouped by G: function,
             site (allocation or free site), file, thread or library (the
             shared object that called malloc & co. through the interposed
             allocator; calls at instrumented sites are one "(instrumented
             code)" row), entry (the library function the program called:
             MPI_Init, printf…, for calls made inside shared objects) or
             library-function (the innermost named function inside them);
             these two name the addresses the runtime recorded from the
             objects' symbol tables on this machine, and add the bytes
             allocated and freed. Each row: net
             bytes (allocated - freed by its calls; negative when it frees
             what others allocated), min and max of that over the run, and
             the allocations and frees (blocks made and ended: a realloc
             that gets a block ends one and makes one) and realloc calls,
             in the viewer's words; for entry and library-function, the
             malloc, calloc, realloc, free, aligned and strdup calls
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
             and the source files it names inside it (only those under the
             run's working directory whose content is what the build
             recorded; see --source-root); it opens from disk in a browser
             without network or server. A trace over 4 MiB (or any, with
             MEMWRAP_VIEW_INDEX=1) is written from the viewer's index of it
             instead (built beside it, or reused): every event's summary,
             the panels of the whole run as view shows them (computed in
             passes over the trace, with progress, kept beside the index),
             and the events themselves only for 200,000 around the total
             peak, in a file of bounded size (docs/viewer.md)
  --source-root DIR
             read the source files the trace names from DIR (for --html and
             the source lines of --peak and --leak-causes). Without it a
             file is shown only when its content is what the build recorded
             (a trace someone sends you cannot show you your own files);
             with it, files under DIR are shown also when the trace records
             no content hash for them (an older cc-memwrap's trace) or when
             they changed since the build, which the viewer then says
  --compare B
             compare this run (A) with the trace B, e.g. before and after a
             fix: events, allocations, frees, heap requested, peak heap,
             peak stack, static and leaked bytes side by side with B - A;
             then allocation sites and functions with their allocations,
             bytes requested and bytes live at the end, largest change
             first; then each budget's largest usage and verdict in both.
             Sites are matched by file, function and allocator, in line
             order (a site whose line moved is one row, "(line N in A)");
             a site of one run only is marked "(only in A)" or "(only in
             B)". Goes
             with --top, --json and the budget options (and each run's
             memwrap.json), not with the other sections; with --html FILE,
             also writes the compare page of view A --compare B as one
             self-contained file (both charts, tooltips, a click's source
             and detail, the differences; both traces whole inside it, so
             each at most 4 MiB)
  -h, --help this text

Problems found in the trace are printed on stderr as warnings; the report is
still printed (exit 0, or 1 for a --fail-on condition). Bad arguments, a file
that cannot be read or is not a trace, a bad memwrap.json: exit 2.`;

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

/** A report to make: the trace, the request, budgets given on the command line, and the output's form. */
export interface ReportArgs {
  /** The first trace named; with several (`files`), the report is one per process with totals (report-many.ts). */
  file: string;
  /** Every trace or folder named, in order. */
  files: string[];
  /** The first option given that reads one trace only (with several: the newest of runs of one program, else refused), or null. */
  singleOnly: string | null;
  request: ReportRequest;
  /** Budgets from --budget and --budget-KIND, or null (then a memwrap.json beside the program may give some). */
  budgets: Budgets | null;
  json: boolean;
  /** --html's file, or null. */
  html: string | null;
  /** --source-root's folder (absolute, checked to exist), or null. */
  sourceRoot: string | null;
  /** The text of --interval, to name it in an error found while computing. */
  interval: string | null;
  /** --compare's trace (B), or null. */
  compare: string | null;
  /** Every trace named for B: --compare's and the names after it (a shell pattern's); [] without --compare. */
  compareFiles: string[];
}

/** `help`: print REPORT_HELP; `error`: the message (without the command's name), with `usage` when --help would help. */
export type ParsedReportArgs = { kind: 'help' } | { kind: 'error'; message: string; usage: boolean } | ({ kind: 'report' } & ReportArgs);

class ArgError extends Error {}

const SINGLE_TRACE_OPTIONS = ['peak', 'linked', 'leaks', 'temporary', 'calls', 'interval', 'stack', 'leak-causes', 'fail-on', 'html', 'source-root', 'budget', ...Object.keys(BUDGET_KIND_OPTIONS)];

/** Why `option` cannot go with `traces` traces. */
export function severalRefuse(option: string, traces: number): string {
  return `--${option} reads one trace; got ${traces} (report them one at a time, or leave --${option} out)`;
}

/** Why one side of --compare cannot take `traces` traces. */
export function compareSideRefuse(side: 'A' | 'B', traces: number): string {
  return `--compare compares one trace (A) with another (B); got ${traces} for ${side} (name one trace on each side)`;
}

export function parseReportArgs(args: string[]): ParsedReportArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: normalizeArgs(args),
      allowPositionals: true,
      tokens: true,
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
        'source-root': { type: 'string' },
        compare: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (e) {
    return { kind: 'error', message: (e as Error).message, usage: true };
  }
  const { values, tokens } = parsed;
  if (values.help) return { kind: 'help' };
  // The names before --compare are A's; those after its value are B's too (a shell pattern names several).
  const compareAt = tokens.find((t) => t.kind === 'option' && t.name === 'compare')?.index ?? Infinity;
  const positionals = tokens.flatMap((t) => (t.kind === 'positional' && t.index < compareAt ? [t.value] : []));
  const moreB = tokens.flatMap((t) => (t.kind === 'positional' && t.index > compareAt ? [t.value] : []));
  if (positionals.length === 0) return { kind: 'error', message: 'expected a trace file (or several, or a folder of them)', usage: true };
  // One table per process and totals: the options that read one run's events in order do not add up across runs.
  // With several traces named they are refused when the traces are run (cli/one-trace.ts), unless the traces are
  // runs of one program one after another, of which they read the newest.
  const singleOnly = SINGLE_TRACE_OPTIONS.find((o) => (values as Record<string, unknown>)[o] !== undefined) ?? null;
  try {
    // Checked in the order the options are documented, so the first mistake is the one named.
    const top = wholeNumber(values.top, 10, '--top wants a whole number');
    const by = attributionOf(values.by, values.attribute);
    const budgets = budgetsFromFlags(values);
    const temporaryWithin = values.temporary === undefined ? null : wholeNumber(values.temporary, 0, '--temporary wants a whole number of events');
    const calls = callsOf(values.calls);
    const interval = intervalOf(values.interval);
    const failOn = failOnOf(values['fail-on'] ?? []);
    const compare = compareOf(values);
    const request: ReportRequest = {
      top,
      by,
      peak: values.peak === true,
      linked: values.linked === true,
      leaks: values.leaks === true,
      temporaryWithin,
      calls,
      interval,
      stack: values.stack === true,
      leakCauses: values['leak-causes'] === true,
      failOn,
    };
    return {
      kind: 'report',
      file: positionals[0]!,
      files: positionals,
      singleOnly,
      request,
      budgets,
      json: values.json === true,
      html: values.html ?? null,
      sourceRoot: sourceRootOf(values['source-root']),
      interval: values.interval ?? null,
      compare,
      compareFiles: compare === null ? [] : [compare, ...moreB],
    };
  } catch (e) {
    return { kind: 'error', message: (e as Error).message, usage: false };
  }
}

/** `text` as a whole number (`fallback` when absent); throws `complaint, got 'text'` otherwise. */
function wholeNumber(text: string | undefined, fallback: number, complaint: string): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n)) throw new ArgError(`${complaint}, got '${text}'`);
  return n;
}

function attributionOf(by: string | undefined, attribute: string | undefined): ReportRequest['by'] {
  if (by !== undefined && !(ATTRIBUTION_BY as readonly string[]).includes(by)) {
    throw new ArgError(`--by wants ${ATTRIBUTION_BY.join(', ')}, got '${by}'`);
  }
  let mode: AttributionMode = 'innermost';
  if (attribute !== undefined) {
    if (!(ATTRIBUTION_MODES as readonly string[]).includes(attribute)) {
      throw new ArgError(`--attribute wants ${ATTRIBUTION_MODES.join(', ')}, got '${attribute}'`);
    }
    if (by === undefined) throw new ArgError(`--attribute needs --by function or --by file`);
    mode = attribute as AttributionMode;
  }
  return by === undefined ? null : { by: by as AttributionBy, mode };
}

function callsOf(calls: string | undefined): string | null {
  if (calls !== undefined && calls.trim() === '') throw new ArgError(`--calls wants a function name`);
  return calls ?? null;
}

function intervalOf(text: string | undefined): IntervalSpec | null {
  if (text === undefined) return null;
  const spec = parseInterval(text);
  if (spec === null) throw new ArgError(`--interval wants a number of events (1000) or a time (500ns, 20us, 10ms, 1.5s), got '${text}'`);
  return spec;
}

/** The options a comparison shows; any other section is refused beside --compare. */
const COMPARE_GOES_WITH = new Set(['compare', 'top', 'json', 'html', 'budget', ...Object.keys(BUDGET_KIND_OPTIONS), 'help']);

/** --compare's trace, or null; throws when an option it cannot show is given with it. */
function compareOf(values: Record<string, unknown>): string | null {
  const b = values.compare;
  if (typeof b !== 'string') return null;
  if (b === '') throw new ArgError('--compare wants a second trace file');
  const other = Object.keys(values).find((k) => values[k] !== undefined && !COMPARE_GOES_WITH.has(k));
  if (other !== undefined) throw new ArgError(`--compare cannot be combined with --${other} (it shows totals, sites, functions and budgets; --top, --json, --html and budgets go with it)`);
  return b;
}

/** --source-root's folder, absolute; throws when it is not a folder. */
function sourceRootOf(dir: string | undefined): string | null {
  if (dir === undefined) return null;
  const abs = path.resolve(dir);
  if (!statSync(abs, { throwIfNoEntry: false })?.isDirectory()) throw new ArgError(`--source-root ${dir}: no such folder`);
  return abs;
}

/** --fail-on's values, repeatable and comma-separated. */
function failOnOf(values: string[]): Set<FailOn> {
  const failOn = new Set<FailOn>();
  for (const v of values.flatMap((x) => x.split(','))) {
    if (!(FAIL_ON as readonly string[]).includes(v)) throw new ArgError(`--fail-on wants ${FAIL_ON.join(' or ')}, got '${v}'`);
    failOn.add(v as FailOn);
  }
  return failOn;
}
