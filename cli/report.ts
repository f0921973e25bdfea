// `cc-memwrap report <trace>`: decode a trace and print what the run allocated, freed, leaked and peaked at, as text or
// JSON. Arguments become a request (report-args.ts), the analyses one result (analysis/report.ts), and that result
// text or JSON (analysis/report-text.ts, analysis/report-json.ts); this file reads what they need from disk.
import path from 'node:path';
import { reportText, type SourceLines } from '../analysis/report-text.js';
import { reportJson } from '../analysis/report-json.js';
import { compareReport, compareReports, type Comparison } from '../analysis/compare.js';
import { compareJson, compareText } from '../analysis/compare-text.js';
import { computeReport, type ReportInputs, type ReportResult } from '../analysis/report.js';
import type { Budgets } from '../analysis/budgets.js';
import { IntervalError } from '../analysis/timeline.js';
import { sourceLineText } from '../analysis/peak.js';
import { describeReadError } from '../host/read-errors.js';
import { processIo, progressLine, type CliIo } from './io.js';
import { formatBytes } from '../analysis/units.js';
import { HtmlReportError, writeCompareReport, writeSessionReport } from '../host/html-report.js';
import { useIndex } from '../host/index-cache.js';
import { TraceFile } from '../host/trace-file.js';
import { TraceSession } from '../host/trace-session.js';
import { SourceAccess } from '../host/source-access.js';
import { INDEX_WORKERS, workersDoNotFit } from '../host/address-space.js';
import { compareSideRefuse, parseReportArgs, REPORT_HELP, severalRefuse, type ReportArgs } from './report-args.js';
import { namesSeveral, runReportMany, traceFiles } from './report-many.js';
import { oneTrace } from './one-trace.js';
import { isOnlineTablesFile, runOnlineReport } from './online-report.js';
import { recordWorker } from '../analysis/trace/record-worker.js';

export { REPORT_HELP };

/** Thrown with the message to print (after the command's name) and exit 2. */
class ReportFailure extends Error {}

export async function runReport(args: string[], io: CliIo = processIo()): Promise<number> {
  const parsed = parseReportArgs(args);
  if (parsed.kind === 'help') {
    io.out(REPORT_HELP + '\n');
    await io.flush();
    return 0;
  }
  if (parsed.kind === 'error') {
    io.err(`cc-memwrap report: ${parsed.message}\n${parsed.usage ? "Try 'cc-memwrap report --help'.\n" : ''}`);
    return 2;
  }
  // An online-mode file is told from a trace by its magic: looked for up front only where no trace is opened first,
  // and otherwise when the trace reader refuses the file, so that a trace is opened once.
  if (parsed.compare !== null && isOnlineTablesFile(parsed.file)) return runOnlineReport(parsed, io);
  if (parsed.compare !== null) return runCompare(parsed, io);
  if (namesSeveral(parsed.files)) {
    if (parsed.singleOnly === null) return runReportMany(parsed, io);
    const one = await chosen(parsed.files, `--${parsed.singleOnly}`, (n) => severalRefuse(parsed.singleOnly!, n), io);
    if (one === null) return 2;
    parsed.file = one;
  }
  let result: ReportResult;
  let trace: TraceFile;
  try {
    trace = await open(parsed.file);
    result = compute(trace, parsed, io);
    if (parsed.html !== null) await writeHtml(trace, parsed, result, io);
  } catch (e) {
    if (!(e instanceof ReportFailure)) throw e;
    if (isOnlineTablesFile(parsed.file)) return runOnlineReport(parsed, io);
    io.err(`cc-memwrap report: ${e.message}\n`);
    return 2;
  }
  if (result.failOn?.conditions.includes('budget') && result.budgets === null) {
    io.err(`cc-memwrap report: --fail-on budget: no budgets (give --budget or a memwrap.json beside the program)\n`);
  }
  for (const p of result.summary.problems.list) io.err(`cc-memwrap report: ${parsed.file}: ${p.severity}: ${p.message}\n`);
  io.out(parsed.json ? JSON.stringify(reportJson(result), null, 2) + '\n' : reportText(result, sourceReader(trace, parsed.sourceRoot)));
  await io.flush();
  return result.failOn !== null && result.failOn.failed.length > 0 ? 1 : 0;
}

/**
 * The one trace that `named` (files or folders) means for `what`, its choice said on stderr when it was made among
 * several (cli/one-trace.ts); null when refused, after saying why.
 */
async function chosen(named: string[], what: string, refusal: (n: number) => string, io: CliIo): Promise<string | null> {
  let files: string[];
  try {
    files = traceFiles(named);
  } catch (e) {
    io.err(`cc-memwrap report: ${(e as Error).message}\n`);
    return null;
  }
  const one = await oneTrace(files, what, refusal);
  if ('refused' in one) {
    io.err(`cc-memwrap report: ${one.refused}\n`);
    return null;
  }
  if (one.note !== null) io.err(`cc-memwrap report: ${one.note}\n`);
  return one.file;
}

/** `report A --compare B`: both traces streamed, one after the other, each with its own budgets, and B - A printed. */
async function runCompare(a: ReportArgs, io: CliIo): Promise<number> {
  const fileA = await chosen(a.files, "--compare's A", (n) => compareSideRefuse('A', n), io);
  const fileB = fileA === null ? null : await chosen(a.compareFiles, "--compare's B", (n) => compareSideRefuse('B', n), io);
  if (fileA === null || fileB === null) return 2;
  let comparison: Comparison;
  const traces: TraceFile[] = [];
  try {
    const reports: ReportResult[] = [];
    for (const file of [fileA, fileB]) {
      const trace = await open(file);
      traces.push(trace);
      const progress = progressLine(io, file, trace.size);
      let report: ReportResult;
      try {
        const source = trace.stream({ onProgress: progress.update, reader: recordWorker });
        report = compareReport({ source, file, inputs: { budgets: budgetsFor(a.budgets, trace), frameSizes: null } });
      } catch (e) {
        if (e instanceof ReportFailure) throw e;
        throw new ReportFailure(describeReadError(file, e));
      } finally {
        progress.done();
      }
      reports.push(report);
      for (const p of report.summary.problems.list) io.err(`cc-memwrap report: ${file}: ${p.severity}: ${p.message}\n`);
    }
    comparison = compareReports(reports[0]!, reports[1]!);
    if (a.html !== null) writeCompareHtml(traces[0]!, traces[1]!, a, io);
  } catch (e) {
    if (!(e instanceof ReportFailure)) throw e;
    io.err(`cc-memwrap report: ${e.message}\n`);
    return 2;
  }
  const top = a.request.top;
  io.out(a.json ? JSON.stringify(compareJson(comparison, top), null, 2) + '\n' : compareText(comparison, top));
  await io.flush();
  return 0;
}

/**
 * `report A --compare B --html FILE`: the compare page with both traces whole in one file (host/html-report.ts), said
 * on stderr. A trace the viewer would open through its index (over 4 MiB) is refused: the file would hold it whole.
 */
function writeCompareHtml(a: TraceFile, b: TraceFile, args: ReportArgs, io: CliIo): void {
  const out = args.html!;
  if (out === '') throw new ReportFailure(`--html ${out}: wants a file name`);
  for (const t of [a, b]) {
    if (useIndex(t.size)) throw new ReportFailure(`--html with --compare: ${path.basename(t.path)} is ${formatBytes(t.size)}, larger than a compare report holds whole (the viewer opens it through its index); cc-memwrap view A --compare B shows both`);
  }
  const sessions = [a, b].map((t) => TraceSession.of(t, { ...(args.budgets === null ? {} : { budgets: args.budgets }), index: false }));
  try {
    const size = writeCompareReport(sessions[0]!, sessions[1]!, out);
    io.err(`cc-memwrap report: wrote ${out} (${formatBytes(size)}): open it in a browser, no server needed\n`);
  } catch (e) {
    if (e instanceof HtmlReportError) throw new ReportFailure(`--html ${out}: ${e.message}`);
    throw e;
  }
}

/** Opens the trace and checks its header. */
async function open(file: string): Promise<TraceFile> {
  try {
    return await TraceFile.read(file);
  } catch (e) {
    throw new ReportFailure(describeReadError(file, e));
  }
}

/**
 * The report, with what the request needs beside the trace (budgets, frame sizes) read once, streamed through the
 * trace a window at a time, in memory that grows with live blocks and sites, not with events. An HTML report beside
 * it embeds the trace (or its index) and needs no decoded model here.
 */
function compute(trace: TraceFile, a: ReportArgs, io: CliIo): ReportResult {
  const budgets = budgetsFor(a.budgets, trace);
  const firmware = trace.firmware();
  if (firmware.image === null && trace.isFirmware) io.err(`cc-memwrap report: ${a.file}: no RAM map or linker-script budgets: ${firmware.missing}\n`);
  const inputs: ReportInputs = {
    budgets,
    frameSizes: a.request.stack ? trace.stackInfo() : null,
    firmware: firmware.image === null ? null : { program: firmware.program, image: firmware.image },
  };
  const progress = progressLine(io, a.file, trace.size);
  try {
    return computeReport(trace.stream({ onProgress: progress.update, reader: recordWorker }), a.file, a.request, inputs);
  } catch (e) {
    if (e instanceof IntervalError) throw new ReportFailure(`--interval ${a.interval}: ${e.message}`);
    throw new ReportFailure(describeReadError(a.file, e));
  } finally {
    progress.done();
  }
}

/** The command line's budgets, else those of a memwrap.json beside the traced program, else none. */
function budgetsFor(flags: Budgets | null, trace: TraceFile): ReportInputs['budgets'] {
  if (flags !== null) return { limits: flags, source: '--budget' };
  const config = trace.budgetConfig();
  if (config.problem !== null) throw new ReportFailure(config.problem.replace(/\s*\n\s*/g, ' '));
  return config.budgets === null ? null : { limits: config.budgets, source: config.source };
}

/**
 * Writes the HTML report of the trace as read for the report, and says where on stderr. --budget's budgets go into
 * it; a memwrap.json's the session finds itself. A trace the viewer opens through its index (over 4 MiB, or
 * MEMWRAP_VIEW_INDEX=1) gets a report of bounded size built from that index (host/report-window.ts) and the panels'
 * data `view` shows (host/index-panels.ts), which it builds in the trace's cache folder, with progress, or reuses.
 */
async function writeHtml(trace: TraceFile, a: ReportArgs, result: ReportResult, io: CliIo): Promise<void> {
  const out = a.html!;
  if (out === '') throw new ReportFailure(`--html ${out}: wants a file name`);
  const budgets = result.budgets?.source === '--budget' ? a.budgets : null;
  const index = useIndex(trace.size);
  // Through the index: the index's build, the panels' passes and the panel's report each run in a worker thread.
  const tooTight = index ? workersDoNotFit(INDEX_WORKERS, `--html ${out} (through the trace's index)`) : null;
  if (tooTight !== null) throw new ReportFailure(tooTight);
  const session = TraceSession.of(trace, { ...(budgets === null ? {} : { budgets }), ...(a.sourceRoot === null ? {} : { sourceRoot: a.sourceRoot }), index });
  const progress = index ? progressLine(io, `${a.file} (index)`, trace.size) : null;
  if (progress !== null) session.indexListeners.add((p) => progress.update(p.fraction, p.phase));
  session.noteListeners.add((note) => {
    progress?.done();
    io.err(`cc-memwrap report: ${a.file}: ${note}\n`);
  });
  // The panels' passes over the trace, once the index is ready: a line of their own (several passes: no rate).
  const panels = index ? progressLine(io, `${a.file} (panels)`) : null;
  try {
    const size = await writeSessionReport(session, out, undefined, { onPanelsProgress: (p) => panels?.update(p.fraction, p.phase) });
    progress?.done();
    panels?.done();
    io.err(`cc-memwrap report: wrote ${out} (${formatBytes(size)}): open it in a browser, no server needed\n`);
  } catch (e) {
    progress?.done();
    panels?.done();
    if (e instanceof HtmlReportError) throw new ReportFailure(`--html ${out}: ${e.message}`);
    if (index) throw new ReportFailure(`--html ${out}: ${(e as Error).message}`);
    throw e;
  }
}

/**
 * Source lines for the --peak and leak-cause tables, through the viewer's checks (host/source-access.ts): a file only
 * as the build recorded it, or under the --source-root the user gave; null (never a throw) otherwise. The files the
 * trace names are found (a walk of its records) on the first line asked for; each file is read once.
 */
function sourceReader(trace: TraceFile, sourceRoot: string | null): SourceLines {
  let access: SourceAccess | null = null;
  const cache = new Map<string, string | null>();
  const read = (f: string): string | null => {
    let text = cache.get(f);
    if (text === undefined) {
      access ??= new SourceAccess(trace.sources(), sourceRoot ?? '/', sourceRoot !== null);
      const r = access.read(f);
      text = r.ok ? r.text : null;
      cache.set(f, text);
    }
    return text;
  };
  return (file, line) => sourceLineText(read, file, line);
}
