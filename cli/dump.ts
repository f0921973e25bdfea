// `cc-memwrap dump <trace>`: every record of a trace as one line of text, in file order, then the problems found.
import { parseArgs } from 'node:util';
import { dumpTrace } from '../analysis/dump.js';
import { describeReadError } from '../host/read-errors.js';
import { withFileSource } from '../analysis/trace/file-source.js';
import { processIo, progressLine, type CliIo } from './io.js';

export const DUMP_HELP = `Usage: cc-memwrap dump <trace>

Prints the header, then every chunk and record of a trace (.mwtrace) in file
order, one line each: offset, thread, kind and decoded fields (sequence numbers,
block ids and addresses absolute, in hex), then the problems found. Stable text:
tests compare it with golden files.

Options:
  -h, --help this text`;

export async function runDump(args: string[], io: CliIo = processIo()): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args, allowPositionals: true, options: { help: { type: 'boolean', short: 'h' } } });
  } catch (e) {
    io.err(`cc-memwrap dump: ${(e as Error).message}\nTry 'cc-memwrap dump --help'.\n`);
    return 2;
  }
  if (parsed.values.help) {
    io.out(DUMP_HELP + '\n');
    await io.flush();
    return 0;
  }
  if (parsed.positionals.length !== 1) {
    io.err(`cc-memwrap dump: expected one trace file, got ${parsed.positionals.length}\nTry 'cc-memwrap dump --help'.\n`);
    return 2;
  }
  const file = parsed.positionals[0]!;
  // Progress only when the lines go elsewhere than the terminal (a file, a pipe): there they show how far it is.
  const progressIo = io.outIsTTY === true ? { ...io, errIsTTY: false } : io;
  let progress = progressLine(progressIo, file);
  try {
    // Read a window at a time and written as it goes: a dump is many times the trace's size.
    withFileSource(file, (source) => {
      progress = progressLine(progressIo, file, source.size);
      dumpTrace(source, (line) => io.out(line + '\n'), { onProgress: progress.update });
    });
  } catch (e) {
    progress.done();
    await io.flush();
    io.err(`cc-memwrap dump: ${describeReadError(file, e)}\n`);
    return 2;
  }
  progress.done();
  await io.flush();
  return 0;
}
