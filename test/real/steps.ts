// Running a project's steps in one of its two trees (plain, or built through
// cc-memwrap), timing a workload side by side, and counting its lines of C.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../package-root.js';
import { run, type Ran } from '../support/programs.js';
import type { Step } from './projects.js';
import { median } from '../../bench/measure.js';

/** The environment of a recorded run: every instrumented process writes its
 *  trace into `traceDir`. PATH stays as it is (tcc's tests print it). */
export function tracedEnv(traceDir: string): NodeJS.ProcessEnv {
  // The runtime opens the trace file; it does not make folders.
  mkdirSync(traceDir, { recursive: true });
  return { ...process.env, MEMWRAP_TRACE: path.join(traceDir, '%p.mwtrace') };
}

/** The environment of the build through cc-memwrap: it on PATH, and the
 *  programs the build itself runs (tcc building its runtime library with
 *  itself, configure's run tests) recorded into `traceDir`. */
export function buildEnv(traceDir: string): NodeJS.ProcessEnv {
  const env = tracedEnv(traceDir);
  return { ...env, PATH: `${path.join(packageRoot, 'bin')}:${env.PATH ?? ''}` };
}

/** A step's program: a path with a slash is the tree's, else found on PATH. */
export function programOf(step: Step, tree: string): string {
  return step.command.includes('/') ? path.resolve(tree, step.command) : step.command;
}

export function runStep(step: Step, tree: string, env: NodeJS.ProcessEnv): Ran {
  return run(programOf(step, tree), step.args, { cwd: path.join(tree, step.cwd ?? ''), env, input: step.input, timeout: 900_000 });
}

/** Output with the tree's own path replaced, so the two trees compare. */
export function normalised(text: string, tree: string): string {
  return text.split(tree).join('<tree>');
}

/** Runs build steps in order; the first failure is returned with its output. */
export function runBuild(steps: Step[], tree: string, env: NodeJS.ProcessEnv): { ok: boolean; output: string } {
  let output = '';
  for (const step of steps) {
    const result = runStep(step, tree, env);
    output += result.stdout + result.stderr;
    if (result.status !== 0) return { ok: false, output: `${output}\n${step.command} ${step.args.join(' ')} exited ${result.status ?? result.signal}` };
  }
  return { ok: true, output };
}

/** Medians of alternating runs, plain then instrumented, in milliseconds,
 *  and how many instrumented runs wrote a trace (into `traceDir`). */
export function timeSideBySide(
  step: Step,
  trees: { plain: string; inst: string },
  envs: { plain: NodeJS.ProcessEnv; inst: NodeJS.ProcessEnv },
  traceDir: string,
  rounds: number,
): { plainMs: number; instMs: number; traced: number } {
  const plain: number[] = [];
  const inst: number[] = [];
  let traced = 0;
  for (let i = 0; i < rounds; i++) {
    plain.push(timed(() => runStep(step, trees.plain, envs.plain)));
    inst.push(timed(() => runStep(step, trees.inst, envs.inst)));
    for (const trace of existsSync(traceDir) ? readdirSync(traceDir).filter((f) => f.endsWith('.mwtrace')) : []) {
      traced++;
      rmSync(path.join(traceDir, trace));
    }
  }
  return { plainMs: median(plain), instMs: median(inst), traced };
}

function timed(f: () => Ran): number {
  const start = process.hrtime.bigint();
  const result = f();
  if (result.status !== 0) throw new Error(`timed run exited ${result.status ?? result.signal}:\n${result.stderr}`);
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** Lines of the project's .c and .h files (as `wc -l` counts them). */
export function linesOfC(dir: string): number {
  let lines = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) lines += linesOfC(full);
    else if (entry.isFile() && /\.[ch]$/.test(entry.name) && statSync(full).size > 0) {
      lines += readFileSync(full).reduce((n, byte) => n + (byte === 10 ? 1 : 0), 0);
    }
  }
  return lines;
}
