// Running and timing commands for the benchmarks. Runs alternate (A B A B …)
// on these noisy machines and every figure is a ratio of medians.
import { spawnSync } from 'node:child_process';

export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  input?: string;
}

/** Runs a command to completion; its stderr is in the error if it fails. */
export function sh(command: string, args: string[], options: RunOptions = {}): string {
  const result = spawnSync(command, args, { stdio: [options.input ? 'pipe' : 'ignore', 'ignore', 'pipe'], input: options.input, cwd: options.cwd, env: options.env ?? process.env, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed:\n${result.stderr}`);
  return result.stderr;
}

/** Wall-clock seconds of one run, output discarded. */
export function timeRun(argv: string[], options: { stdin?: string; env?: NodeJS.ProcessEnv; cwd: string }): number {
  const start = process.hrtime.bigint();
  const result = spawnSync(argv[0]!, argv.slice(1), { stdio: [options.stdin ? 'pipe' : 'ignore', 'ignore', 'pipe'], input: options.stdin, env: options.env ?? process.env, cwd: options.cwd });
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  if (result.status !== 0) throw new Error(`${argv.join(' ')} exited ${result.status}: ${result.stderr}`);
  return seconds;
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
