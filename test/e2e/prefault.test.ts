// The pre-fault thread (runtime/mw-prefault.c): once a trace passes a few megabytes, chunks come from mappings another
// thread of the runtime faulted in. The same deterministic program recorded with it and without it
// (MEMWRAP_PREFAULT=0) must give the same report, alone, with threads, across fork and when SIGKILLed.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildInstrumented, programsDir, reportJson, runTraced, scratch } from '../support/programs.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

let exe = '';

beforeAll(() => {
  const dir = scratch('prefault');
  exe = path.join(dir, 'prefault');
  buildInstrumented('gcc', ['-O0', '-g', '-pthread', '-Wall', '-Wextra', '-Werror'], [path.join(programsDir, 'prefault.c')], exe);
});

/** Runs `mode` with the pre-fault thread on or off; the reports of its traces, the parent's first. */
function record(mode: string, on: boolean): { stdout: string; status: number | null; signal: string | null; reports: Json[] } {
  const dir = scratch(`prefault-${mode}-${on ? 'on' : 'off'}`);
  // The trace file's own sink, the one with a pre-fault thread (the encoder thread's faults the file in itself).
  const ran = runTraced(exe, [mode], dir, { env: { MEMWRAP_PREFAULT: on ? '1' : '0', MEMWRAP_ENCODER: 'inline' } });
  const traces = readdirSync(dir)
    .filter((f) => f.endsWith('.mwtrace'))
    .sort((a, b) => (a === `${ran.pid}.mwtrace` ? -1 : b === `${ran.pid}.mwtrace` ? 1 : 0));
  return { stdout: ran.stdout, status: ran.status, signal: ran.signal, reports: traces.map((t) => comparable(reportJson(path.join(dir, t)))) };
}

/** The report without what differs between any two runs: file name, pids, start time, OS thread ids. */
function comparable(report: Json): Json {
  const copy = structuredClone(report);
  delete copy.file;
  delete copy.process.pid;
  delete copy.process.ppid;
  delete copy.process.startTimeNs;
  for (const t of copy.threads) delete t.osTid;
  return copy;
}

describe('the pre-fault thread', () => {
  it('one thread: it runs, and the report is the one recorded without it', () => {
    const on = record('plain', true);
    const off = record('plain', false);
    expect(on.stdout).toMatch(/prefault thread: yes/);
    expect(off.stdout).toMatch(/prefault thread: no/);
    // a thread of its own, not glibc's: the program's allocator keeps its single-threaded paths
    expect(on.stdout).toMatch(/glibc single-threaded: yes/);
    expect(on.reports).toHaveLength(1);
    expect(on.reports[0]!.problems).toMatchObject({ errors: 0, warnings: 0 });
    expect(on.reports[0]!.events).toBeGreaterThan(1_000_000);
    expect(on.reports).toEqual(off.reports);
  });

  it('three threads at once: every thread has all its events', () => {
    const on = record('threads', true);
    const off = record('threads', false);
    expect(on.stdout).toMatch(/prefault thread: yes, glibc single-threaded: no/);
    const summary = (r: Json) => ({
      events: r.events,
      allocations: r.allocations,
      frees: r.frees,
      valgrind: r.valgrind,
      threads: r.threads.map((t: Json) => t.events).sort(),
      problems: r.problems,
      end: r.end,
    });
    expect(on.reports.map(summary)).toEqual(off.reports.map(summary));
    expect(summary(on.reports[0]!).threads).toHaveLength(4);
  });

  it('fork: the child records its own trace, with a pre-fault thread of its own', () => {
    const on = record('fork', true);
    const off = record('fork', false);
    expect(on.stdout).toMatch(/child sum \d+, prefault thread: yes/);
    expect(on.reports).toHaveLength(2);
    for (const r of on.reports) expect(r.problems).toMatchObject({ errors: 0, warnings: 0 });
    expect(on.reports).toEqual(off.reports);
  });

  it('SIGKILL: everything recorded before the kill is in the trace', () => {
    const on = record('kill', true);
    const off = record('kill', false);
    expect(on.signal).toBe('SIGKILL');
    expect(on.stdout).toMatch(/prefault thread: yes/);
    expect(on.reports[0]!.end.complete).toBe(false);
    expect(on.reports).toEqual(off.reports);
  });
});
