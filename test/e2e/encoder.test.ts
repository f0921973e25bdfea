// The encoder thread (runtime/mw-ring.c): where a processor is free, threads store their records as words in a ring
// of the trace file and a thread of the runtime encodes them. Each workload recorded with it (MEMWRAP_ENCODER=thread)
// and with the program's threads encoding (inline) gives the same events, thread by thread, in the same order (with
// a clock that counts its calls instead of reading time, and addresses and thread ids masked: the encoder thread's
// creation takes a small block of the heap, so later blocks sit elsewhere). A SIGKILL at a random point loses nothing
// a thread stored before it: the words not yet encoded are read from the ring (MEMWRAP_KILL_RUNS runs, 8 by
// default; 100 for the full check). An abort's END is read from there too. Whether the encoder starts follows the
// processors the process may use.
import { createHash } from 'node:crypto';
import { spawn } from 'node:child_process';
import { accessSync, constants, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { dumpTrace } from '../../analysis/dump.js';
import { HeaderFlag } from '../../analysis/trace/format.js';
import { packageRoot } from '../../package-root.js';
import { chunkStructure } from '../support/dump-records.js';
import { buildInstrumented, must, programsDir, run, scratch } from '../support/programs.js';

const workloads = path.join(packageRoot, 'bench', 'workloads');
const KILL_RUNS = Number(process.env.MEMWRAP_KILL_RUNS ?? 8);

/** A clock_gettime that counts its calls: TIME records then hold the same values in any two runs of one thread. */
const COUNTING_CLOCK = `#define _GNU_SOURCE 1
#include <time.h>
static long long calls;
int clock_gettime(clockid_t id, struct timespec *ts)
{
  long long n = __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
  (void)id;
  ts->tv_sec = n / 1000;
  ts->tv_nsec = (n % 1000) * 1000000;
  return 0;
}
`;

interface Events {
  /** Per trace thread index: how many records and a hash of them in order. */
  threads: Record<number, { records: number; sha: string }>;
  /** The header's flag: the trace has raw segments (the encoder ran). */
  raw: boolean;
  marks: number;
}

/**
 * The records of a trace thread by thread, as `dump` prints them, without what two runs may differ in: addresses,
 * thread ids, with `maskTime` TIME values, and what `mask` matches.
 */
function eventsOf(trace: string, maskTime: boolean, mask?: RegExp): Events {
  const hashes = new Map<number, { records: number; hash: ReturnType<typeof createHash> }>();
  const bytes = new Uint8Array(readFileSync(trace));
  const raw = (bytes[17]! & HeaderFlag.RAW_SEGMENTS) !== 0;
  let marks = 0;
  dumpTrace(bytes, (line) => {
    const m = /^ +0x[0-9a-f]+ t(\d+) (.*)$/.exec(line);
    if (m === null) return;
    if (m[2]!.startsWith('EXT RAW_MARK')) {
      marks++;
      return;
    }
    if (chunkStructure(m[2]!)) return;
    let text = m[2]!.replace(/(addr|tid)=\w+/g, '$1=…');
    if (maskTime) text = text.replace(/^TIME .*/, 'TIME');
    if (mask) text = text.replace(mask, '…');
    const t = Number(m[1]);
    let h = hashes.get(t);
    if (h === undefined) hashes.set(t, (h = { records: 0, hash: createHash('sha256') }));
    h.records++;
    h.hash.update(text + '\n');
  });
  const threads: Events['threads'] = {};
  for (const [t, h] of hashes) threads[t] = { records: h.records, sha: h.hash.digest('hex') };
  return { threads, raw, marks };
}

describe('the encoder thread', () => {
  const dir = scratch('encoder');
  const clock = path.join(dir, 'counting-clock.so');
  const exe = (name: string) => path.join(dir, name);

  /** Runs `name` with `encoder`, its traces in a folder of their own; the traces, the parent's first, and the run. */
  const record = (name: string, args: string[], encoder: 'inline' | 'thread', extra: NodeJS.ProcessEnv = {}) => {
    const traces = scratch(`encoder-${name}-${encoder}`);
    const ran = run(exe(name), args, {
      env: { ...process.env, LD_PRELOAD: clock, MEMWRAP_ENCODER: encoder, MEMWRAP_TRACE: path.join(traces, '%p.mwtrace'), ...extra },
    });
    const files = readdirSync(traces)
      .filter((f) => f.endsWith('.mwtrace'))
      .sort((a, b) => (a === `${ran.pid}.mwtrace` ? -1 : b === `${ran.pid}.mwtrace` ? 1 : a.localeCompare(b)));
    return { ran, traces: files.map((f) => path.join(traces, f)) };
  };

  beforeAll(() => {
    writeFileSync(path.join(dir, 'counting-clock.c'), COUNTING_CLOCK);
    must('gcc', ['-O2', '-shared', '-fPIC', path.join(dir, 'counting-clock.c'), '-o', clock]);
    buildInstrumented('gcc', ['-O2'], [path.join(workloads, 'binary-trees.c')], exe('binary-trees'));
    // lzw's calls are all leaves, summarised: with every call recorded it is a workload for the encoder.
    buildInstrumented('gcc', ['-O2', '--mw-calls=all'], [path.join(workloads, 'lzw.c')], exe('lzw'));
    buildInstrumented('gcc', ['-O2'], [path.join(workloads, 'expr-eval.c')], exe('expr-eval'));
    buildInstrumented('gcc', ['-O2', '--mw-calls=all', '-pthread'], [path.join(programsDir, 'call-mix.c')], exe('call-mix'));
    buildInstrumented('gcc', ['-O2', '--mw-calls=all', '-pthread'], [path.join(programsDir, 'stress.c')], exe('stress'));
    buildInstrumented('gcc', ['-O0', '-pthread'], [path.join(programsDir, 'prefault.c')], exe('prefault'));
    buildInstrumented('gcc', ['-O2', '--mw-calls=all'], [path.join(programsDir, 'fork-lanes.c')], exe('fork-lanes'));
    buildInstrumented('gcc', ['-O2', '--mw-calls=all'], [path.join(programsDir, 'ring-kill.c')], exe('ring-kill'));
  }, 300_000);

  it.each([
    ['binary-trees', ['10'], false],
    ['lzw', ['300000'], false],
    ['expr-eval', ['20000'], false],
    ['call-mix', [], true],
    // A signal handler's frame sits below the kernel's signal frame, whose size follows the processor state the
    // thread has in use: its depths may differ between two runs by a few bytes.
    ['stress', ['signal'], false, / depth=\d+/],
    ['stress', ['longjmp'], false],
    ['stress', ['deep'], false],
    ['fork-lanes', [], false],
  ] as [string, string[], boolean, RegExp?][])('%s %s: the same events, thread by thread, as the program\'s threads encode them', (name, args, threads, mask) => {
    const inline = record(name, [...args], 'inline');
    const encoded = record(name, [...args], 'thread');
    expect(encoded.ran.stdout).toBe(inline.ran.stdout);
    expect(encoded.traces).toHaveLength(inline.traces.length);
    encoded.traces.forEach((trace, i) => {
      // Threads read the counting clock in turns no two runs repeat: their TIME values are left out.
      const a = eventsOf(inline.traces[i]!, threads, mask);
      const b = eventsOf(trace, threads, mask);
      expect([a.raw, a.marks]).toEqual([false, 0]);
      expect(b.raw).toBe(true); // the encoder ran: raw segments and marks
      expect(b.marks).toBeGreaterThan(2);
      expect(b.threads).toEqual(a.threads);
    });
  });

  it('three threads at once, each in a ring of its own: every thread has all its events', () => {
    // Threads draw heap numbers from one counter in turns no two runs repeat: the report's counts are compared.
    const summary = (trace: string) => {
      const r = JSON.parse(must(process.execPath, [path.join(packageRoot, 'bin', 'cc-memwrap'), 'report', '--json', trace]).stdout) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
      return { raw: (readFileSync(trace)[17]! & HeaderFlag.RAW_SEGMENTS) !== 0, events: r.events, allocations: r.allocations, frees: r.frees, threads: r.threads.map((t: { events: number }) => t.events).sort(), problems: r.problems.list, end: r.end };
    };
    const inline = summary(record('prefault', ['threads'], 'inline').traces[0]!);
    const encoded = summary(record('prefault', ['threads'], 'thread').traces[0]!);
    expect([inline.raw, encoded.raw]).toEqual([false, true]);
    expect({ ...encoded, raw: false }).toEqual(inline);
    expect(encoded.threads).toHaveLength(4);
  });

  it('an abort: END is read from the ring, after the records the encoder had not written', () => {
    const { ran, traces } = record('ring-kill', ['60000', 'abort'], 'thread');
    expect(ran.signal).toBe('SIGABRT');
    const dump = must(process.execPath, [path.join(packageRoot, 'bin', 'cc-memwrap'), 'dump', traces[0]!]).stdout;
    expect(dump).toMatch(/^raw tail thread=0 from segment=\d+ word=\d+/m);
    expect(dump.slice(dump.lastIndexOf('raw tail'))).toMatch(/ END signal 6 \(SIGABRT\)\nend: /);
    expect(dump).toMatch(/^problems: none$/m);
  });

  it(`SIGKILL at ${KILL_RUNS} random points: every step printed before the kill is in the trace, and what is there is the start of a whole run`, async () => {
    const steps = 100_000;
    const whole = record('ring-kill', [String(steps)], 'thread');
    const full = eventsOf(whole.traces[0]!, false);
    // The run's length, to kill inside it: how long the whole run took, from a second run timed here.
    const started = Date.now();
    record('ring-kill', [String(steps)], 'thread');
    const span = Date.now() - started;
    for (let k = 0; k < KILL_RUNS; k++) {
      const traces = scratch(`encoder-kill-${k}`);
      const child = spawn(exe('ring-kill'), [String(steps)], {
        env: { ...process.env, LD_PRELOAD: clock, MEMWRAP_ENCODER: 'thread', MEMWRAP_TRACE: path.join(traces, 'killed.mwtrace') },
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      const ended = new Promise<void>((resolve) => child.on('close', () => resolve()));
      await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * span));
      child.kill('SIGKILL');
      await ended;
      const printed = out.trimEnd().split('\n');
      const last = Number(printed[printed.length - 1] ?? 0);
      const trace = path.join(traces, 'killed.mwtrace');
      const got = eventsOf(trace, false);
      if (last >= steps) continue; // it finished before the kill
      // Each step allocates once before it prints: the steps printed have their blocks in the trace.
      const allocs = Number(/Allocations +([\d,]+)/.exec(must(process.execPath, [path.join(packageRoot, 'bin', 'cc-memwrap'), 'report', trace]).stdout)![1]!.replace(/,/g, ''));
      expect(allocs).toBeGreaterThanOrEqual(last);
      // No record corrupted or out of place: the killed trace's records are the first ones of the whole run's.
      const prefix = eventsOfPrefix(whole.traces[0]!, got.threads[0]!.records);
      expect(got.threads[0]!.sha).toBe(prefix);
    }
    expect(full.threads[0]!.records).toBeGreaterThan(1_000_000);
  }, 600_000);

  // A cgroup (v1's cpu controller, as this machine and most containers mount it) with a quota of q processors: the
  // encoder starts with 2 and not with 1, on the same processors.
  it.skipIf(!cgroupWritable())('starts only where the cgroup\'s CPU quota leaves a processor free', () => {
    const inQuota = (cpus: number) => {
      const group = path.join(CPU_CGROUP, `cc-memwrap-encoder-${process.pid}-${cpus}`);
      mkdirSync(group);
      try {
        writeFileSync(path.join(group, 'cpu.cfs_period_us'), '100000');
        writeFileSync(path.join(group, 'cpu.cfs_quota_us'), String(cpus * 100000));
        const trace = path.join(dir, `quota-${cpus}.mwtrace`);
        const ran = run('sh', ['-c', `echo $$ > ${group}/cgroup.procs && exec "$0" 60000`, exe('ring-kill')], {
          env: { ...process.env, MEMWRAP_ENCODER: 'auto', MEMWRAP_TRACE: trace },
        });
        expect(ran.status).toBe(0);
        return eventsOf(trace, false).raw;
      } finally {
        rmdirSync(group);
      }
    };
    expect([inQuota(1), inQuota(2)]).toEqual([false, true]);
  });

  it('starts only where a processor is free: on one processor the program\'s threads encode', () => {
    const one = run('taskset', ['-c', '0', exe('ring-kill'), '60000'], {
      env: { ...process.env, MEMWRAP_ENCODER: 'auto', MEMWRAP_TRACE: path.join(dir, 'one.mwtrace') },
    });
    expect(one.status).toBe(0);
    expect(eventsOf(path.join(dir, 'one.mwtrace'), false).raw).toBe(false);
    const bad = record('ring-kill', ['10'], 'inline', { MEMWRAP_ENCODER: 'sometimes' });
    expect(bad.ran.stderr).toBe('cc-memwrap: MEMWRAP_ENCODER=sometimes: use inline, thread or auto; inline is used\n');
  });

  // The encoder thread is asked for, never the default: on two processors it cost more than it saved (the bench).
  it.skipIf(availableParallelism() < 2)('is not started unless asked for: by default the program\'s threads encode, wherever a processor is free', () => {
    const env: NodeJS.ProcessEnv = { ...process.env, MEMWRAP_TRACE: path.join(dir, 'default.mwtrace') };
    delete env.MEMWRAP_ENCODER;
    const ran = run(exe('ring-kill'), ['60000'], { env });
    expect(ran.status).toBe(0);
    expect(eventsOf(path.join(dir, 'default.mwtrace'), false).raw).toBe(false);
  });
});

/** Where cgroup v1 mounts its cpu controller. */
const CPU_CGROUP = '/sys/fs/cgroup/cpu';

/** Whether this process may make a group under CPU_CGROUP (root, cgroup v1 mounted writable); else that test is skipped. */
function cgroupWritable(): boolean {
  try {
    accessSync(path.join(CPU_CGROUP, 'cgroup.procs'), constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** The hash of the first `records` records of a trace's thread 0, as eventsOf hashes them. */
function eventsOfPrefix(trace: string, records: number): string {
  const hash = createHash('sha256');
  let n = 0;
  dumpTrace(new Uint8Array(readFileSync(trace)), (line) => {
    const m = /^ +0x[0-9a-f]+ t0 (.*)$/.exec(line);
    if (m === null || chunkStructure(m[1]!) || n >= records) return;
    n++;
    hash.update(m[1]!.replace(/(addr|tid)=\w+/g, '$1=…') + '\n');
  });
  return hash.digest('hex');
}
