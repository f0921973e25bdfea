// The real-world suite's results: one row per project, written by the test
// file as each project finishes and printed as docs/tests.md's table at the end
// of the run (by the global setup's teardown, which sees every test file).
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../package-root.js';

// One folder per run (named by the global setup, inherited by the test
// workers), so two runs at once keep their rows apart.
const RUN_VARIABLE = 'MEMWRAP_REAL_RUN';
const resultsRoot = path.join(packageRoot, '.cache', 'real', 'results');
const resultsDir = () => path.join(resultsRoot, process.env[RUN_VARIABLE] ?? 'unnamed');

export interface Row {
  project: string;
  origin: string;
  linesOfC: number;
  /** "ok", "ok, 2 units uninstrumented (…)", or "failed: …". */
  build: string;
  /** UNIT records in the workload's trace: its program's instrumented units. */
  units: number | null;
  /** Distinct functions of the project's own files the workload entered. */
  functionsEntered: number | null;
  /** "21/21", or "failed: …" (not run when the build failed). */
  tests: string;
  /** Instrumented / plain median time of the workload, measured side by side. */
  ratio: number | null;
  plainMs: number | null;
  traceBytes: number | null;
  /** "= Valgrind" or what differed. */
  heap: string;
}

export function emptyRow(project: string, origin: string): Row {
  return { project, origin, linesOfC: 0, build: 'not run', units: null, functionsEntered: null, tests: 'not run', ratio: null, plainMs: null, traceBytes: null, heap: 'not run' };
}

/** Starts a run with no rows; returns the folder to remove at its end. */
export function startRun(): string {
  process.env[RUN_VARIABLE] = String(process.pid);
  rmSync(resultsDir(), { recursive: true, force: true });
  return resultsDir();
}

export function writeRow(row: Row): void {
  mkdirSync(resultsDir(), { recursive: true });
  writeFileSync(path.join(resultsDir(), `${row.project.replace(/[^\w.-]+/g, '_')}.json`), JSON.stringify(row));
}

export function readRows(): Row[] {
  if (!existsSync(resultsDir())) return [];
  return readdirSync(resultsDir())
    .filter((f) => f.endsWith('.json'))
    .map((f) => JSON.parse(readFileSync(path.join(resultsDir(), f), 'utf8')) as Row);
}

const kib = (bytes: number) => (bytes >= 1 << 20 ? `${(bytes / (1 << 20)).toFixed(1)} MiB` : `${(bytes / 1024).toFixed(0)} KiB`);

/** The Markdown table docs/tests.md shows, in the order of `order`. */
export function formatTable(rows: Row[], order: string[]): string {
  const sorted = [...rows].sort((a, b) => order.indexOf(a.project) - order.indexOf(b.project));
  const lines = [
    '| project | source | lines of C | build through cc-memwrap | workload: instrumented units, own functions entered | own tests, same output | heap totals | run-time ratio | plain run | trace size |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const r of sorted) {
    const cells = [
      r.project,
      r.origin,
      r.linesOfC.toLocaleString('en-US'),
      r.build,
      r.units === null ? '–' : `${r.units} unit${r.units === 1 ? '' : 's'}, ${r.functionsEntered ?? '–'} function${r.functionsEntered === 1 ? '' : 's'}`,
      r.tests,
      r.heap,
      r.ratio === null ? '–' : `${r.ratio.toFixed(2)}×`,
      r.plainMs === null ? '–' : `${r.plainMs.toFixed(0)} ms`,
      r.traceBytes === null ? '–' : kib(r.traceBytes),
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}
