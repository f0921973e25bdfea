// `cc-memwrap report <trace>`: decode a trace and print what the run allocated, freed, leaked and peaked at, as text or JSON.
import { parseArgs } from 'node:util';
import { readTraceFile } from '../analysis/trace/read-file.js';
import { summarize, SUMMARY_SCHEMA } from '../analysis/summary.js';
import { renderReport } from '../analysis/report-text.js';
import { describeReadError, processIo, progressLine, type CliIo } from './io.js';

export const REPORT_HELP = `Usage: cc-memwrap report <trace> [--top N] [--json]

Reads a trace (.mwtrace) an instrumented program wrote and prints how the run
ended, threads, events, allocations and frees, bytes allocated (requested and
usable), peak heap and stack, static memory, blocks leaked at exit, the
Valgrind-style totals, and the top allocation sites with file:line.

Options:
  --top N    list the N allocation sites with the most bytes (default 10)
  --json     print the same numbers as one JSON object (schema: analysis/README.md)
  -h, --help this text

Problems found in the trace are printed on stderr as warnings; the report is
still printed (exit 0). A file that cannot be read or is not a trace: exit 2.`;

export async function runReport(args: string[], io: CliIo = processIo()): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: { top: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
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
  const file = positionals[0]!;
  const progress = progressLine(io, file);
  let summary;
  try {
    summary = summarize(await readTraceFile(file, { onProgress: progress.update }), { top });
  } catch (e) {
    progress.done();
    io.err(`cc-memwrap report: ${describeReadError(file, e)}\n`);
    return 2;
  }
  progress.done();
  for (const p of summary.problems.list) io.err(`cc-memwrap report: ${file}: ${p.severity}: ${p.message}\n`);
  if (values.json) io.out(JSON.stringify({ schema: SUMMARY_SCHEMA, file, ...summary }, null, 2) + '\n');
  else io.out(renderReport(summary, file));
  await io.flush();
  return 0;
}
