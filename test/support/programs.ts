// Builds C programs plainly and through cc-memwrap, runs them, finds their
// traces and asks Valgrind for its heap totals: the shared machinery of the
// end-to-end suites.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { packageRoot } from '../../package-root.js';

export const wrapper = path.join(packageRoot, 'bin', 'cc-memwrap');
export const samplesDir = path.join(packageRoot, 'samples');
export const programsDir = path.join(packageRoot, 'test', 'programs');

/** The scratch directories this test file made, for test/support/scratch-cleanup.ts to remove after its tests. */
const made: string[] = [];

/** A fresh scratch directory under the system temp dir. */
export function scratch(name: string): string {
  const base = path.join(os.tmpdir(), 'cc-memwrap-tests');
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(path.join(base, `${name}-`));
  made.push(dir);
  return dir;
}

/** Removes the scratch directories made so far: a full run writes gigabytes of programs and traces there. */
export function removeScratch(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export interface Ran {
  stdout: string;
  stderr: string;
  status: number | null;
  signal: NodeJS.Signals | null;
  pid: number;
}

function ran(result: SpawnSyncReturns<string>): Ran {
  if (result.error) throw result.error;
  return { stdout: result.stdout, stderr: result.stderr, status: result.status, signal: result.signal, pid: result.pid ?? 0 };
}

/** Runs a command, returning its output; never throws on a non-zero status. */
export function run(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string; timeout?: number } = {}): Ran {
  return ran(
    spawnSync(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      input: options.input,
      encoding: 'utf8',
      timeout: options.timeout ?? 300_000,
      maxBuffer: 1 << 28,
    }),
  );
}

/** Runs a command that must succeed; its stderr is in the error otherwise. */
export function must(command: string, args: string[], options: Parameters<typeof run>[2] = {}): Ran {
  const result = run(command, args, options);
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} exited ${result.status ?? result.signal}:\n${result.stderr}${result.stdout}`);
  }
  return result;
}

/** Compiles with the plain compiler: `cc flags… sources… -o out`. */
export function buildPlain(cc: string, flags: string[], sources: string[], out: string, cwd?: string): Ran {
  return must(cc, [...flags, ...sources, '-o', out], { cwd });
}

/** Compiles the same through cc-memwrap, strict (an instrumented unit that
 *  does not compile is an error, not a silent fallback). */
export function buildInstrumented(cc: string, flags: string[], sources: string[], out: string, cwd?: string): Ran {
  return must(wrapper, ['--mw-strict', cc, ...flags, ...sources, '-o', out], { cwd });
}

/** Runs an instrumented program with its traces going to `traceDir`. */
export function runTraced(exe: string, args: string[], traceDir: string, options: { input?: string; cwd?: string; env?: NodeJS.ProcessEnv } = {}): Ran {
  mkdirSync(traceDir, { recursive: true });
  return run(exe, args, { ...options, env: { ...process.env, ...options.env, MEMWRAP_TRACE: path.join(traceDir, '%p.mwtrace') } });
}

/** The trace file a process wrote into `traceDir`. */
export function traceOf(traceDir: string, pid: number): string {
  const name = readdirSync(traceDir).find((f) => f === `${pid}.mwtrace`);
  if (!name) throw new Error(`no trace for pid ${pid} in ${traceDir}: ${readdirSync(traceDir).join(', ')}`);
  return path.join(traceDir, name);
}

export interface HeapTotals {
  allocs: number;
  frees: number;
  bytes: number;
}

/**
 * The heap numbers of `report --json --linked --leaks` (and of the budgets `budget` asks for, e.g. `heap=2K`), with
 * what differs between two builds of one program taken out: pid, file, clock, event numbers and site ids (fewer calls
 * recorded, fewer events come before each and fewer sites are numbered), so that what they name can be compared.
 */
export function heapNumbers(trace: string, budget?: string): Record<string, unknown> {
  const args = ['report', '--json', '--linked', '--leaks', ...(budget === undefined ? [] : ['--budget', budget]), trace];
  const r = JSON.parse(must(process.execPath, [wrapper, ...args]).stdout) as Record<string, unknown>;
  const pick = (o: Record<string, unknown>, keys: string[]): Record<string, unknown> => Object.fromEntries(keys.map((k) => [k, o[k]]));
  const strip = (value: unknown): unknown =>
    JSON.parse(JSON.stringify(value ?? null), (k, v) => (['site', 'event', 'events', 'file', 'pid', 'id', 'key'].includes(k) || /Event$|TimeNs$/.test(k) ? '…' : v));
  return {
    ...pick(r, ['allocations', 'frees', 'untrackedFrees', 'bytesAllocated', 'leaked', 'valgrind', 'static']),
    peakHeapBytes: (r.peakHeap as { requested: { bytes: number } }).requested.bytes,
    linked: strip(r.linked),
    leaks: strip(r.leaks),
    ...(budget === undefined ? {} : { budgets: strip(r.budgets) }),
  };
}

/** `cc-memwrap report --json` of a trace. */
export function reportJson(trace: string): Record<string, unknown> {
  const result = must(process.execPath, [wrapper, 'report', '--json', trace]);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

/** Valgrind's "total heap usage" of each process of one run of the plain
 *  program, by pid. `freeres: false` stops Valgrind from making glibc free
 *  its own buffers at exit (which plain runs never do). */
export function valgrindTotals(exe: string, args: string[], options: { freeres: boolean; input?: string; cwd?: string }): { run: Ran; totals: Map<number, HeapTotals> } {
  const logDir = scratch('valgrind');
  const result = run(
    'valgrind',
    [`--run-libc-freeres=${options.freeres ? 'yes' : 'no'}`, '--trace-children=yes', `--log-file=${logDir}/%p.log`, exe, ...args],
    { input: options.input, cwd: options.cwd },
  );
  const totals = new Map<number, HeapTotals>();
  for (const file of readdirSync(logDir)) {
    const text = readFileSync(path.join(logDir, file), 'utf8');
    const m = /total heap usage: ([\d,]+) allocs, ([\d,]+) frees, ([\d,]+) bytes allocated/.exec(text);
    if (!m) continue;
    const n = (s: string) => Number(s.replaceAll(',', ''));
    totals.set(Number(path.basename(file, '.log')), { allocs: n(m[1]!), frees: n(m[2]!), bytes: n(m[3]!) });
  }
  return { run: result, totals };
}
