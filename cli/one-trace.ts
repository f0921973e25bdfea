// One trace out of several named where a command reads one: a shell pattern such as `ring.*.mwtrace` names every run
// of `./ring` in the folder, and a lesson typed twice (or a program run again after a change) leaves more than one.
// When the traces named are runs of one program one after another — the same program, distinct processes, none the
// parent of another, no MPI rank — the newest is the one meant, and the command says which it read. Traces of one job
// (MPI ranks, a program and the children it forked) or of different programs stay refused.
import path from 'node:path';
import { describeReadError } from '../host/read-errors.js';
import { TraceFile } from '../host/trace-file.js';

/** The trace to read and, when it was chosen among several, the line that says so; or the message of a refusal. */
export type OneTrace = { file: string; note: string | null } | { refused: string };

interface Run {
  file: string;
  program: string | null;
  rank: number | null;
  pid: number;
  ppid: number;
  start: bigint;
}

async function runOf(file: string): Promise<Run> {
  const trace = await TraceFile.read(file);
  try {
    const h = trace.header;
    return { file, program: trace.program(), rank: trace.rank(), pid: h.pid, ppid: h.ppid, start: h.startTimeNs };
  } finally {
    trace.close();
  }
}

/** Why `runs` are not runs of one program one after another, or null when they are. */
function notSuccessive(runs: readonly Run[]): string | null {
  const program = runs[0]!.program;
  if (program === null || runs.some((r) => r.program !== program)) return 'they are not all runs of one program';
  if (runs.some((r) => r.rank !== null)) return 'they are the ranks of an MPI job';
  const pids = new Set(runs.map((r) => r.pid));
  if (pids.size < runs.length) return 'some are one process named twice';
  if (runs.some((r) => pids.has(r.ppid))) return 'they are a program and the children it started';
  return null;
}

/**
 * The trace `files` mean for a command that reads one (`what` names it in messages: "--fail-on", "--compare's B"):
 * the only one, or the newest of runs of one program one after another. A file that cannot be read as a trace is
 * left for the command to name when it opens it.
 */
export async function oneTrace(files: readonly string[], what: string, refusal: (count: number) => string): Promise<OneTrace> {
  if (files.length === 1) return { file: files[0]!, note: null };
  const runs: Run[] = [];
  for (const file of files) {
    try {
      runs.push(await runOf(file));
    } catch (e) {
      return { refused: describeReadError(file, e) };
    }
  }
  const why = notSuccessive(runs);
  if (why !== null) return { refused: `${refusal(files.length)}: ${why}` };
  const newest = runs.reduce((best, r) => (r.start > best.start ? r : best));
  const others = runs.filter((r) => r !== newest).map((r) => r.file);
  const name = path.basename(newest.program!);
  return {
    file: newest.file,
    note: `${what} reads one trace: ${newest.file}, the newest of the ${runs.length} runs of ${name} named (left out: ${others.join(', ')})`,
  };
}
