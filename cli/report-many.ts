// `cc-memwrap report A B C…` or `report <folder>`: the traces of several processes, read one at a time (memory holds
// one trace's live blocks and the rows so far, never all of them), as one row per process with totals, and `--by`
// tables summed over the processes and per process (analysis/processes.ts).
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Summary } from '../analysis/summary.js';
import type { Attribution } from '../analysis/attribution.js';
import { computeReport, summaryRequest, type ReportInputs } from '../analysis/report.js';
import { ProcessesBuilder, type ProcessesReport } from '../analysis/processes.js';
import { renderProcesses } from '../analysis/processes-text.js';
import { describeReadError } from '../host/read-errors.js';
import { TraceFile } from '../host/trace-file.js';
import { progressLine, type CliIo } from './io.js';
import type { ReportArgs } from './report-args.js';
import { recordWorker } from '../analysis/trace/record-worker.js';

/** The named traces, each folder replaced by its `.mwtrace` files in name order. Throws the message to print. */
export function traceFiles(named: string[]): string[] {
  return named.flatMap((n) => {
    let isDir = false;
    try {
      isDir = statSync(n).isDirectory();
    } catch {
      return [n]; // reading it will say what is wrong
    }
    if (!isDir) return [n];
    const found = readdirSync(n).filter((f) => f.endsWith('.mwtrace')).sort().map((f) => path.join(n, f));
    if (found.length === 0) throw new Error(`${n}: a folder with no .mwtrace files`);
    return found;
  });
}

/** Whether the named paths mean several traces: more than one, or a folder. */
export function namesSeveral(named: string[]): boolean {
  return named.length > 1 || named.some((n) => statSync(n, { throwIfNoEntry: false })?.isDirectory() === true);
}

export async function runReportMany(a: ReportArgs, io: CliIo): Promise<number> {
  let files: string[];
  try {
    files = traceFiles(a.files);
  } catch (e) {
    io.err(`cc-memwrap report: ${(e as Error).message}\n`);
    return 2;
  }
  const builder = new ProcessesBuilder();
  let cwd: string | null = null;
  for (const [i, file] of files.entries()) {
    try {
      const one = await readOne(file, `${file} (${i + 1} of ${files.length})`, a, io);
      cwd ??= one.cwd;
      builder.add(file, one.summary, one.attribution);
    } catch (e) {
      io.err(`cc-memwrap report: ${describeReadError(file, e)}\n`);
      return 2;
    }
  }
  const result = builder.result();
  io.out(a.json ? JSON.stringify(processesJson(result), null, 2) + '\n' : renderProcesses(result, { top: a.request.top, source: null, relativeTo: cwd }));
  await io.flush();
  return 0;
}

/**
 * One trace read and reduced to what the report keeps of it: its summary and `--by` table, streamed (the report's
 * folds, analysis/report.ts). A function of its own, so that nothing of the trace outlives it in a frame that the loop
 * over the traces keeps.
 */
async function readOne(file: string, label: string, a: ReportArgs, io: CliIo): Promise<{ summary: Summary; attribution: Attribution | null; cwd: string | null }> {
  const request = summaryRequest(0, a.request.by);
  const inputs: ReportInputs = { budgets: null, frameSizes: null };
  const trace = await TraceFile.read(file);
  const progress = progressLine(io, label, trace.size);
  try {
    const result = computeReport(trace.stream({ onProgress: progress.update, reader: recordWorker }), file, request, inputs);
    progress.done();
    for (const p of result.summary.problems.list) io.err(`cc-memwrap report: ${file}: ${p.severity}: ${p.message}\n`);
    return { summary: result.summary, attribution: result.attribution, cwd: result.cwd };
  } finally {
    progress.done();
    trace.close();
  }
}

function processesJson(p: ProcessesReport): object {
  return { schema: 'cc-memwrap.processes/1', ...p };
}
