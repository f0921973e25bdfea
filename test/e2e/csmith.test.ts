// Differential fuzzing of the rewrite: random C programs from Csmith (Debian
// packages csmith and libcsmith-dev), built plainly and through cc-memwrap
// --mw-strict, must print the same checksum and exit the same. Seeds are
// fixed, so a failure names the program to reproduce:
//   csmith --seed S -o p.c && cc-memwrap --mw-strict gcc -O1 -w -I/usr/include/csmith p.c
// (shrink it with creduce and keep it under test/programs/ as a regression
// test). MEMWRAP_CSMITH_PROGRAMS=1000 runs more.
// (csmith writes platform.info into its working directory: it never runs in
// the repository.)
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { scratch, wrapper } from '../support/programs.js';

const CSMITH_INCLUDE = '/usr/include/csmith';
const PROGRAMS = Math.max(1, Number(process.env.MEMWRAP_CSMITH_PROGRAMS ?? 200) || 200);
/** Sources per cc-memwrap call: one Node start-up for many rewrites. */
const BATCH = 20;
/** A plain run that takes more processor time than this is left out: Csmith
 *  writes endless loops, and a recorded endless loop of calls fills the disk.
 *  Processor time, not the clock: what is left out must not depend on how
 *  busy the machine is (the share of programs compared is asserted below). */
const PLAIN_CPU_SECONDS = 2;
/** The clock's limit on a plain run, far above PLAIN_CPU_SECONDS: only a stopped program reaches it. */
const PLAIN_WALL_MS = 120_000;
const FLAGS = ['-O1', '-w', `-I${CSMITH_INCLUDE}`];

interface Outcome {
  stdout: string;
  status: number | null;
  signal: string | null;
  ms: number;
}

function exec(command: string, args: string[], options: { timeoutMs: number; env?: NodeJS.ProcessEnv; cwd?: string }): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, args, { env: options.env ?? process.env, cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('error', reject);
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ stdout: stdout + (stderr ? `\n[stderr] ${stderr}` : ''), status, signal, ms: performance.now() - started });
    });
  });
}

/** Runs the jobs two at a time (the CI machines have two cores). */
async function twoAtATime<T>(jobs: Array<() => Promise<T>>): Promise<T[]> {
  const results: T[] = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++;
      results[i] = await jobs[i]!();
    }
  };
  await Promise.all([worker(), worker()]);
  return results;
}

const haveCsmith = spawnSync('csmith', ['--version'], { cwd: os.tmpdir() }).status === 0 && existsSync(path.join(CSMITH_INCLUDE, 'csmith.h'));

describe('Csmith programs, plain and instrumented', () => {
  it(`${PROGRAMS} programs print the same checksum`, async () => {
    expect(haveCsmith, 'csmith is not installed: apt-get install csmith libcsmith-dev (test/run-all.sh does)').toBe(true);
    const dir = scratch('csmith');
    const seeds = Array.from({ length: PROGRAMS }, (_, i) => i + 1);
    const source = (s: number) => path.join(dir, `p${s}.c`);

    await twoAtATime(seeds.map((s) => () => exec('csmith', ['--seed', String(s), '--output', source(s)], { timeoutMs: 60_000, cwd: dir })));
    await twoAtATime(seeds.map((s) => () => exec('gcc', [...FLAGS, source(s), '-o', path.join(dir, `p${s}.plain`)], { timeoutMs: 120_000 })));
    const batches: number[][] = [];
    for (let i = 0; i < seeds.length; i += BATCH) batches.push(seeds.slice(i, i + BATCH));
    const compiled = await twoAtATime(batches.map((b) => () => exec(wrapper, ['--mw-strict', 'gcc', ...FLAGS, '-c', ...b.map(source)], { timeoutMs: 600_000, cwd: dir })));
    for (const c of compiled) expect(c.status, c.stdout).toBe(0);
    // The objects carry the runtime: the plain compiler links them.
    await twoAtATime(seeds.map((s) => () => exec('gcc', [path.join(dir, `p${s}.o`), '-o', path.join(dir, `p${s}.inst`)], { timeoutMs: 60_000 })));

    const compared = await twoAtATime(
      seeds.map((s) => async () => {
        // Under a processor-time limit (ulimit -t): past it the kernel sends SIGXCPU (then SIGKILL).
        const plain = await exec('/bin/sh', ['-c', `ulimit -t ${PLAIN_CPU_SECONDS}; exec "$0"`, path.join(dir, `p${s}.plain`)], { timeoutMs: PLAIN_WALL_MS });
        if (plain.signal === 'SIGXCPU' || plain.signal === 'SIGKILL') return { seed: s, skipped: true as const };
        const trace = path.join(dir, `p${s}.mwtrace`);
        const inst = await exec(path.join(dir, `p${s}.inst`), [], { timeoutMs: Math.max(20_000, plain.ms * 100), env: { ...process.env, MEMWRAP_TRACE: trace } });
        const recorded = existsSync(trace) && readFileSync(trace).subarray(0, 8).toString('latin1') === 'MWTRACE\0';
        rmSync(trace, { force: true });
        return { seed: s, skipped: false as const, same: inst.stdout === plain.stdout && inst.status === plain.status && inst.signal === plain.signal, recorded, plain, inst };
      }),
    );
    const ran = compared.filter((c) => !c.skipped);
    const differing = ran.filter((c) => !c.same || !c.recorded).map((c) => ({ seed: c.seed, plain: c.plain.stdout.slice(0, 200), instrumented: c.inst.stdout.slice(0, 200), recorded: c.recorded }));
    console.log(`csmith: ${ran.length} programs compared, ${compared.length - ran.length} left out (plain run over ${PLAIN_CPU_SECONDS} s of processor time)`);
    expect(differing).toEqual([]);
    // Most programs finish quickly; if most were left out, nothing was tested.
    expect(ran.length).toBeGreaterThan(PROGRAMS * 0.7);
    expect(ran.every((c) => /checksum = [0-9A-F]+/.test(c.plain.stdout))).toBe(true);
  }, 1_800_000);
});
