// How the trace readers scale: `report` and `export` on a binary-trees trace of at least 10^8 events, and `report` on
// one of at least 10^9 (a longer run of the same program, made here and deleted after: several gigabytes). Each
// command's wall time and peak resident memory come from GNU time, one run each.
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../package-root.js';
import { withFileSource } from '../analysis/trace/file-source.js';
import { streamSource } from '../analysis/trace/resolve-stream.js';
import { sh } from './measure.js';

const wrapper = path.join(packageRoot, 'bin', 'cc-memwrap');

/** Binary-trees depths whose traces hold at least 10^8 and 10^9 events (about 1.2·10^8 and 1.2·10^9 at -O2). */
const DEPTH_1E8 = 16;
const DEPTH_1E9 = 19;

interface Measured {
  seconds: number;
  mib: number;
}

/** One run of `cc-memwrap args…` under GNU time, output discarded. */
function measure(args: string[]): Measured {
  const result = spawnSync('/usr/bin/time', ['-f', '%e %M', process.execPath, wrapper, ...args], { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
  const m = /([\d.]+) (\d+)\s*$/.exec(result.stderr);
  if (result.status !== 0 || !m) throw new Error(`cc-memwrap ${args.join(' ')} failed:\n${result.stderr}`);
  return { seconds: Number(m[1]), mib: Number(m[2]) / 1024 };
}

/** Records binary-trees at `depth`; returns the trace, its size and its events (as the reader counts them). */
function record(exe: string, dir: string, depth: number): { trace: string; bytes: number; events: number } {
  const trace = path.join(dir, `binary-trees-${depth}.mwtrace`);
  console.error(`[scale] recording binary-trees ${depth}`);
  sh(exe, [String(depth)], { env: { ...process.env, MEMWRAP_TRACE: trace } });
  const events = withFileSource(trace, (s) => streamSource(s).run(() => []).events);
  return { trace, bytes: statSync(trace).size, events };
}

const row = (what: string, m: Measured): string => `| ${what} | ${m.seconds.toFixed(1)} s | ${m.mib.toFixed(0)} MiB |`;

export function scaleTable(work: string): void {
  const dir = path.join(work, 'scale');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const exe = path.join(dir, 'binary-trees');
  sh(wrapper, ['gcc', '-O2', path.join(packageRoot, 'bench', 'workloads', 'binary-trees.c'), '-o', exe]);
  const rows: string[] = [];
  const big = record(exe, dir, DEPTH_1E8);
  const name = `binary-trees ${DEPTH_1E8}: ${big.events.toLocaleString('en-US')} events, ${(big.bytes / 2 ** 20).toFixed(0)} MiB`;
  for (const [what, args] of [
    ['report', ['report', big.trace]],
    ['report --leaks --peak --linked --by function', ['report', big.trace, '--leaks', '--peak', '--linked', '--by', 'function']],
    ['export --format massif', ['export', big.trace, '--format', 'massif', '-o', path.join(dir, 'massif.out')]],
  ] as const) {
    console.error(`[scale] ${what}`);
    rows.push(row(`${name}: \`${what}\``, measure([...args])));
  }
  rmSync(big.trace);
  const huge = record(exe, dir, DEPTH_1E9);
  console.error(`[scale] report on ${huge.events.toLocaleString('en-US')} events`);
  rows.push(row(`binary-trees ${DEPTH_1E9}: ${huge.events.toLocaleString('en-US')} events, ${(huge.bytes / 2 ** 30).toFixed(1)} GiB: \`report\``, measure(['report', huge.trace])));
  rmSync(dir, { recursive: true, force: true });
  console.log('\n| trace and command (one run each) | wall time | peak resident memory |');
  console.log('| --- | --- | --- |');
  for (const r of rows) console.log(r);
}
