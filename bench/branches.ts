// What --mw-branches costs: each workload built through cc-memwrap gcc with and without branch recording, run
// alternately (plain, without, with, …); ratios of medians to the plain run and of with to without, and how many
// BRANCH records a run writes beside its events.
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { Kind } from '../analysis/trace/format.js';
import { countEvents } from '../analysis/trace/count.js';
import { median, timeRun } from './measure.js';
import type { Workload } from './workloads.js';

/** Prints the table: per workload, plain median, cc-memwrap and cc-memwrap --mw-branches ratios, with/without. */
export function branchesTable(workloads: Workload[], wrapper: string, runs: number, work: string): void {
  const rows = workloads.map((w) => measureWorkload(w, wrapper, runs, path.join(work, `branches-${w.name}`)));
  console.log('\n| workload | plain (median) | cc-memwrap | cc-memwrap --mw-branches | with / without branches | events | branch records | trace bytes, with / without |');
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const r of rows) console.log(r);
}

function measureWorkload(w: Workload, wrapper: string, runs: number, dir: string): string {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const exe = { plain: path.join(dir, 'plain'), without: path.join(dir, 'without'), with: path.join(dir, 'with') };
  console.error(`[branches ${w.name}] building plain, instrumented, instrumented with branches`);
  w.build(['gcc'], exe.plain);
  w.build([wrapper, 'gcc'], exe.without);
  w.build([wrapper, '--mw-branches', 'gcc'], exe.with);
  const times = { plain: [] as number[], without: [] as number[], with: [] as number[] };
  const traces = { without: path.join(dir, 'traces-without'), with: path.join(dir, 'traces-with') };
  for (let r = 0; r < runs; r++) {
    console.error(`[branches ${w.name}] round ${r + 1}/${runs}`);
    times.plain.push(timeRun([exe.plain, ...w.args], { stdin: w.stdin, cwd: dir }));
    for (const kind of ['without', 'with'] as const) {
      rmSync(traces[kind], { recursive: true, force: true });
      mkdirSync(traces[kind]);
      const env = { ...process.env, MEMWRAP_TRACE: path.join(traces[kind], '%p.mwtrace') };
      times[kind].push(timeRun([exe[kind], ...w.args], { stdin: w.stdin, env, cwd: dir }));
    }
  }
  const base = median(times.plain);
  const ratio = (xs: number[]): string => `${(median(xs) / base).toFixed(2)}×`;
  const withStats = traceStats(traces.with);
  const withoutStats = traceStats(traces.without);
  // The workloads are deterministic: the other EXT records (LEAKS, LIBRARY, CALLER) are the same in both runs.
  const branches = withStats.ext - withoutStats.ext;
  return (
    `| ${w.name} | ${(base * 1000).toFixed(0)} ms | ${ratio(times.without)} | ${ratio(times.with)} | ${(median(times.with) / median(times.without)).toFixed(2)}× | ` +
    `${withoutStats.events.toLocaleString('en-US')} | ${branches.toLocaleString('en-US')} | ${(withStats.bytes / Math.max(1, withoutStats.bytes)).toFixed(2)}× |`
  );
}

/** Bytes, events and EXT records of the traces in `dir`, in one streaming pass each. */
function traceStats(dir: string): { bytes: number; events: number; ext: number } {
  let bytes = 0;
  let events = 0;
  let ext = 0;
  for (const t of readdirSync(dir).filter((f) => f.endsWith('.mwtrace'))) {
    const file = path.join(dir, t);
    const counts = countEvents(readFileSync(file));
    bytes += statSync(file).size;
    events += counts.events;
    ext += counts.byKind.get(Kind.EXT) ?? 0;
  }
  return { bytes, events, ext };
}
