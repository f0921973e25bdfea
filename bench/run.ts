// The benchmark: instrumented vs. plain run time on allocation-, call- and
// compute-heavy workloads and on SQLite, beside Valgrind Massif and heaptrack
// on the same workloads; cc-memwrap gcc vs. gcc build time on sqlite3.c; and
// trace bytes per event; how the readers scale to traces of 10^8 and 10^9
// events (scale.ts); a firmware's cost in QEMU's instructions (firmware.ts); and the readers' and rewriter's speed as ratios to a
// linear baseline (readers.ts: what the tests no longer time). Runs alternate (A B A B …) on this noisy machine and
// every figure is a ratio of medians measured in this one run.
import { spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { countEvents } from '../analysis/trace/count.js';
import { HeaderFlag } from '../analysis/trace/format.js';
import { packageRoot } from '../package-root.js';
import { branchesTable } from './branches.js';
import { firmwareTable } from './firmware.js';
import { floorTable } from './floor.js';
import { scaleTable } from './scale.js';
import { readersTable } from './readers.js';
import { median, sh, timeRun } from './measure.js';
import { sqliteAmalgamation } from './sources.js';
import { workloads } from './workloads.js';

const HELP = `npm run bench [-- --runs N --peer-runs N --build-runs N --cpus LIST --only workloads|binary-trees|lzw|expr-eval|sort|sqlite|build|report|floor|branches|scale|firmware|readers]

Runs each workload plain and recorded, alternating, N times (--runs, 5), Massif and heaptrack --peer-runs times (2),
and prints every figure as a ratio to the plain run's median in this one run:
  cc-memwrap          the default build (-O2, --mw-calls=heap: leaf call trees summarised, and a recorded call
                      written only with heap work inside or at a new depth), the program's threads encoding
  leaves              --mw-calls=leaves: leaf call trees summarised, every call of a recorded function written
  encoder thread      the same build with the encoder thread where a processor is free (MEMWRAP_ENCODER=auto, not
                      the default: on the 2-processor machine measured it cost more than it saved)
  every call, inline  --mw-calls=all and MEMWRAP_ENCODER=inline: the recorder before both parts, with its events and
                      trace bytes per event
  online mode, calls left out (expr-eval), Massif, heaptrack, events and trace bytes per event of the default run
then a line per workload saying what each part is worth (every call -> summarised -> pending calls -> encoder
thread).

Speed needs an idle machine (uptime's load average below 0.5). The two runs that give the figures:
  npm run bench                    all processors: the encoder thread's column starts it where one is free
  npm run bench -- --cpus 0        every run under taskset -c 0, a machine of one processor: no encoder thread,
                                   so cc-memwrap and the encoder thread's column should match`;

const wrapper = path.join(packageRoot, 'bin', 'cc-memwrap');
const work = path.join(packageRoot, '.cache', 'bench');

/** Trace size and event count of the last instrumented run (counted in one
 *  streaming pass: these traces can hold hundreds of millions of events). */
function traceStats(dir: string): { bytes: number; events: number } {
  let bytes = 0;
  let events = 0;
  for (const t of readdirSync(dir).filter((f) => f.endsWith('.mwtrace'))) {
    const file = path.join(dir, t);
    bytes += statSync(file).size;
    events += countEvents(readFileSync(file)).events;
  }
  return { bytes, events };
}

function main(): void {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '5' },
      'peer-runs': { type: 'string', default: '2' },
      'build-runs': { type: 'string', default: '1' },
      only: { type: 'string' },
      // Every run on these processors only (`taskset -c LIST`): `--cpus 0` is a one-core machine.
      cpus: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(HELP);
    return;
  }
  const runs = Number(values.runs);
  const peerRuns = Number(values['peer-runs']);
  const on = values.cpus === undefined ? [] : ['taskset', '-c', values.cpus];
  if (on.length > 0) console.log(`\nEvery run below on processor(s) ${values.cpus} only (taskset -c ${values.cpus}).`);
  const haveHeaptrack = spawnSync('heaptrack', ['--version']).status === 0;
  mkdirSync(work, { recursive: true });
  const rows: string[] = [];
  const legend: string[] = [];
  const owes: string[] = [];
  // `--only workloads`: the programs' table alone, without the build, report, floor and other tables.
  for (const w of workloads().filter((w) => !values.only || values.only === 'workloads' || w.name === values.only)) {
    const dir = path.join(work, w.name);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const plain = path.join(dir, 'plain');
    const inst = path.join(dir, 'instrumented');
    console.error(`[${w.name}] building plain and instrumented`);
    w.build(['gcc'], plain);
    w.build([wrapper, 'gcc'], inst);
    // Every call recorded (no leaf call tree summarised): what the summaries are worth.
    const everyCall = path.join(dir, 'every-call');
    w.build([wrapper, '--mw-calls=all', 'gcc'], everyCall);
    // Leaf call trees summarised, every call of a recorded function written: what the pending calls are worth.
    const leavesBuild = path.join(dir, 'leaves');
    w.build([wrapper, '--mw-calls=leaves', 'gcc'], leavesBuild);
    const leavesTrace = path.join(dir, 'leaves.mwtrace');
    const everyCallTrace = path.join(dir, 'every-call.mwtrace');
    // The same with the workload's tiniest functions left out of call recording, where it names them.
    const left = path.join(dir, 'calls-left-out');
    if (w.noCalls !== undefined) w.build([wrapper, `--mw-no-calls=${w.noCalls}`, 'gcc'], left);
    const leftTrace = path.join(dir, 'left.mwtrace');
    const traceDir = path.join(dir, 'traces');
    mkdirSync(traceDir);
    const instEnv = { ...process.env, MEMWRAP_TRACE: path.join(traceDir, '%p.mwtrace') };
    // Online mode: the same program keeping only the --by tables (one small file, replaced each round).
    const onlineFile = path.join(dir, 'online.mwtrace');
    const onlineEnv = { ...process.env, MEMWRAP_MODE: 'online', MEMWRAP_TRACE: onlineFile };
    // The two parts apart: the default build with the encoder thread where a processor is free, and every call
    // recorded with the program's threads encoding (the recorder before either part).
    const encoderTrace = path.join(dir, 'encoder.mwtrace');
    const encoderEnv = { ...process.env, MEMWRAP_ENCODER: 'auto', MEMWRAP_TRACE: encoderTrace };
    const inlineEnv = { ...process.env, MEMWRAP_ENCODER: 'inline' };
    const times: Record<string, number[]> = { plain: [], inst: [], leaves: [], encoder: [], everyCall: [], online: [], left: [], massif: [], heaptrack: [] };
    const time = (argv: string[], env?: NodeJS.ProcessEnv) => timeRun([...on, ...argv, ...w.args], { stdin: w.stdin, env, cwd: dir });
    for (let r = 0; r < runs; r++) {
      console.error(`[${w.name}] round ${r + 1}/${runs}`);
      times.plain!.push(time([plain]));
      if (r > 0) rmSync(traceDir, { recursive: true, force: true }), mkdirSync(traceDir);
      times.inst!.push(time([inst], instEnv));
      rmSync(leavesTrace, { force: true });
      times.leaves!.push(time([leavesBuild], { ...process.env, MEMWRAP_TRACE: leavesTrace }));
      rmSync(encoderTrace, { force: true });
      times.encoder!.push(time([inst], encoderEnv));
      rmSync(everyCallTrace, { force: true });
      times.everyCall!.push(time([everyCall], { ...inlineEnv, MEMWRAP_TRACE: everyCallTrace }));
      rmSync(onlineFile, { force: true });
      times.online!.push(time([inst], onlineEnv));
      if (w.noCalls !== undefined) {
        rmSync(leftTrace, { force: true });
        times.left!.push(time([left], { ...process.env, MEMWRAP_TRACE: leftTrace }));
      }
      if (r < peerRuns) {
        times.massif!.push(time(['valgrind', '--tool=massif', '--massif-out-file=/dev/null', plain]));
        if (haveHeaptrack) times.heaptrack!.push(time(['heaptrack', '-o', path.join(dir, `heaptrack-${r}`), plain]));
      }
    }
    const base = median(times.plain!);
    const stats = traceStats(traceDir);
    const ratio = (xs: number[]) => (xs.length ? `${(median(xs) / base).toFixed(2)}×` : 'n/a');
    if (w.noCalls !== undefined) legend.push(`- calls left out, ${w.name}: \`--mw-no-calls=${w.noCalls}\``);
    const eventsOf = (trace: string) => {
      const events = countEvents(readFileSync(trace)).events;
      return `${events.toLocaleString('en-US')} events, ${(statSync(trace).size / Math.max(1, events)).toFixed(2)} B/event`;
    };
    const leftOut = w.noCalls === undefined ? '—' : `${ratio(times.left!)} (${eventsOf(leftTrace)})`;
    rows.push(
      `| ${w.name} | ${w.kind} | ${(base * 1000).toFixed(0)} ms | ${ratio(times.inst!)} | ${ratio(times.leaves!)} (${eventsOf(leavesTrace)}) | ${ratio(times.encoder!)} | ${ratio(times.everyCall!)} (${eventsOf(everyCallTrace)}) | ${ratio(times.online!)} | ${leftOut} | ${ratio(times.massif!)} | ${ratio(times.heaptrack!)} | ${stats.events.toLocaleString('en-US')} | ${(stats.bytes / Math.max(1, stats.events)).toFixed(2)} |`,
    );
    const inDefault = median(times.inst!) / base;
    owes.push(
      `- ${w.name}: ${owedTo(median(times.everyCall!) / base, median(times.leaves!) / base, inDefault, median(times.encoder!) / base, encoderRan(encoderTrace))}; ` +
        againstTarget(w.name, inDefault, times.heaptrack!.length ? median(times.heaptrack!) / base : null),
    );
  }
  if (rows.length > 0) {
    console.log('\n| workload | kind | plain (median) | cc-memwrap | leaves | encoder thread | every call, inline | online mode | calls left out | Massif | heaptrack | events | trace bytes/event |');
    console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
    for (const row of rows) console.log(row);
    console.log(
      '- cc-memwrap: the default build (`-O2`, `--mw-calls=heap`: leaf call trees summarised, a recorded call written only with heap work inside or at a new depth), encoded by the program\'s threads; ' +
        'leaves: `--mw-calls=leaves` (every call of a recorded function written); encoder thread: the default build, `MEMWRAP_ENCODER=auto`; every call, inline: `--mw-calls=all`, `MEMWRAP_ENCODER=inline`',
    );
    for (const line of legend) console.log(line);
    console.log('\nWhat each part is worth, ratios to plain:');
    for (const line of owes) console.log(line);
  }

  if (!values.only || values.only === 'build') buildTime(Number(values['build-runs']));
  if (!values.only || values.only === 'report') reportTime();
  if (!values.only || values.only === 'floor') floorTable(workloads(), runs, work);
  if (!values.only || values.only === 'branches') branchesTable(workloads(), wrapper, runs, work);
  if (!values.only || values.only === 'scale') scaleTable(work);
  if (!values.only || values.only === 'firmware') firmwareTable(work);
  if (!values.only || values.only === 'readers') readersTable(work, runs);
}

/** Whether a trace has raw segments (header flag bit 3): the encoder thread ran. */
function encoderRan(trace: string): boolean {
  const fd = openSync(trace, 'r');
  const b = Buffer.alloc(1);
  readSync(fd, b, 0, 1, 17);
  closeSync(fd);
  return (b[0]! & HeaderFlag.RAW_SEGMENTS) !== 0;
}

/** The default build's ratio each workload is to stay within (issue 33), and below heaptrack's in the same run. */
const TARGETS: Readonly<Record<string, number>> = { 'expr-eval': 3, 'binary-trees': 3, lzw: 1.5, sqlite: 2.5 };

/** Whether the default build's ratio is within the workload's target and below heaptrack's, in words. */
function againstTarget(name: string, ratio: number, heaptrack: number | null): string {
  const target = TARGETS[name];
  if (target === undefined) return 'no target';
  const within = ratio <= target ? 'within' : 'OVER';
  const peer = heaptrack === null ? 'heaptrack not run' : ratio < heaptrack ? `below heaptrack's ${heaptrack.toFixed(2)}×` : `NOT below heaptrack's ${heaptrack.toFixed(2)}×`;
  return `target ≤ ${target}×: ${within}, ${peer}`;
}

/** Which of the two parts a workload's figure owes what: the summaries (every call → leaves, the default) and the
 *  encoder thread (MEMWRAP_ENCODER=auto, beside the default). */
function owedTo(everyCall: number, leaves: number, pending: number, encoder: number, ran: boolean): string {
  const x = (v: number) => `${v.toFixed(2)}×`;
  const thread = ran ? `the encoder thread would make it ${x(encoder)}` : `no encoder thread (no processor free for it): ${x(encoder)}`;
  return `leaf call trees summarised ${x(everyCall)} → ${x(leaves)}, calls pending → ${x(pending)} (the default); ${thread}`;
}

/** How long `cc-memwrap report` takes on a trace of about 10 million events
 *  (lzw's calls), and its peak memory (GNU time's maximum resident set). */
function reportTime(): void {
  const dir = path.join(work, 'report');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const exe = path.join(dir, 'lzw');
  // Every call recorded: at -O2 lzw's calls are leaf call trees, summarised by default, which leaves 17 events.
  sh(wrapper, ['--mw-calls=all', 'gcc', '-O2', path.join(packageRoot, 'bench', 'workloads', 'lzw.c'), '-o', exe]);
  const trace = path.join(dir, 'lzw.mwtrace');
  sh(exe, ['700000'], { env: { ...process.env, MEMWRAP_TRACE: trace } });
  const events = countEvents(readFileSync(trace)).events;
  const runs: Array<{ seconds: number; kib: number }> = [];
  for (let r = 0; r < 3; r++) {
    const result = spawnSync('/usr/bin/time', ['-f', '%e %M', process.execPath, wrapper, 'report', trace], { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
    const m = /([\d.]+) (\d+)\s*$/.exec(result.stderr);
    if (result.status !== 0 || !m) throw new Error(`report failed: ${result.stderr}`);
    runs.push({ seconds: Number(m[1]), kib: Number(m[2]) });
  }
  console.log(`\n| report on a trace of ${events.toLocaleString('en-US')} events (${(statSync(trace).size / 2 ** 20).toFixed(1)} MiB) | median time | peak memory |`);
  console.log('| --- | --- | --- |');
  console.log(`| 3 runs | ${median(runs.map((r) => r.seconds)).toFixed(2)} s | ${(Math.max(...runs.map((r) => r.kib)) / 1024).toFixed(0)} MiB |`);
}

/** cc-memwrap gcc vs. gcc compiling sqlite3.c to an object at -O2. */
function buildTime(buildRuns: number): void {
  const sqlite = sqliteAmalgamation();
  const dir = path.join(work, 'build');
  mkdirSync(dir, { recursive: true });
  const args = ['-O2', '-DSQLITE_THREADSAFE=0', '-c', path.join(sqlite, 'sqlite3.c'), '-o', path.join(dir, 'sqlite3.o')];
  const gcc: number[] = [];
  const ours: number[] = [];
  // Build the runtime first so its one-time build is not counted.
  writeFileSync(path.join(dir, 'warm.c'), 'int main(void) { return 0; }\n');
  sh(wrapper, ['gcc', path.join(dir, 'warm.c'), '-o', path.join(dir, 'warm')]);
  for (let r = 0; r < buildRuns; r++) {
    console.error(`[build] round ${r + 1}/${buildRuns}`);
    gcc.push(timeRun(['gcc', ...args], { cwd: dir }));
    ours.push(timeRun([wrapper, 'gcc', ...args], { cwd: dir }));
  }
  console.log(`\n| build of sqlite3.c (-O2 -c) | gcc | cc-memwrap gcc | ratio |`);
  console.log('| --- | --- | --- | --- |');
  console.log(`| ${buildRuns} run(s), median | ${median(gcc).toFixed(1)} s | ${median(ours).toFixed(1)} s | ${(median(ours) / median(gcc)).toFixed(2)}× |`);
}

main();
