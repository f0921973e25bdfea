// Instrumented programs under Valgrind. Memcheck must report the program's own errors and none of the runtime's
// (its linked and leak scans read heap words the program never wrote, on purpose); the runtime says once on stderr
// that Valgrind's allocator hides the heap from it, and the trace header says malloc was not interposed. Helgrind,
// which takes the runtime's spin locks for races, is quiet with the suppressions cc-memwrap ships. A tool that leaves
// malloc alone (none) changes nothing.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Model } from '../../analysis/model.js';
import { siteInfo } from '../../analysis/sites.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { packageRoot } from '../../package-root.js';
import { haveCommand, skipAllWhen } from '../support/machine.js';
import { buildInstrumented, buildPlain, must, programsDir, run, scratch, traceOf, wrapper } from '../support/programs.js';

const ERRORS = 99; // --error-exitcode: the run's status when Valgrind reported any error
const NOTICE = /^cc-memwrap: running under Valgrind, whose allocator replaces malloc: .*$/gm;

/** Why this machine cannot run a plain program under Valgrind, or null when it can. */
function cannotValgrind(): string | null {
  if (!haveCommand('valgrind')) return 'valgrind is not installed';
  const probe = run('valgrind', ['-q', '--error-exitcode=1', 'true']);
  return probe.status === 0 ? null : `valgrind does not run a program here: ${probe.stderr.trim().split('\n')[0] ?? probe.signal}`;
}

interface Checked {
  status: number | null;
  stdout: string;
  /** The program's stderr (Valgrind's own output goes to its log). */
  stderr: string;
  /** Valgrind's error reports, each as its lines ("Conditional jump …", "at 0x…: main (x.c:41)", …). */
  errors: string[][];
  /** The count in Valgrind's ERROR SUMMARY. */
  summary: number;
  model: Model;
  trace: string;
}

/** Builds `source` plain and instrumented; runs the instrumented one under `valgrind --tool=<tool> options…`. */
function underValgrind(name: string, source: string, tool: string, options: string[] = []): Checked & { plainStdout: string } {
  const dir = scratch(`valgrind-${name}-${tool}`);
  const plain = path.join(dir, 'plain');
  const exe = path.join(dir, 'prog');
  buildPlain('gcc', ['-O0', '-g', '-pthread'], [source], plain);
  buildInstrumented('gcc', ['-O0', '-g', '-pthread'], [source], exe);
  const plainStdout = must(plain, []).stdout;
  const log = path.join(dir, 'valgrind.log');
  const traces = path.join(dir, 'traces');
  must('mkdir', ['-p', traces]);
  const ran = run('valgrind', [`--tool=${tool}`, `--error-exitcode=${ERRORS}`, `--log-file=${log}`, ...options, exe], {
    env: { ...process.env, MEMWRAP_TRACE: path.join(traces, '%p.mwtrace') },
  });
  if (!existsSync(log)) throw new Error(`valgrind wrote no log (status ${ran.status}):\n${ran.stderr}`);
  const text = readFileSync(log, 'utf8').replace(/^==\d+== ?/gm, '');
  const summary = /^ERROR SUMMARY: (\d+) errors/m.exec(text);
  // a report is a paragraph whose second line is its first frame
  const errors = text
    .split(/\n\s*\n/)
    .map((para) => para.split('\n').map((line) => line.trim()).filter((line) => line !== ''))
    .filter((lines) => lines.length > 1 && /^at 0x[0-9A-Fa-f]+: /.test(lines[1]!));
  const trace = traceOf(traces, ran.pid);
  return {
    status: ran.status,
    stdout: ran.stdout,
    stderr: ran.stderr,
    errors,
    summary: summary ? Number(summary[1]) : -1,
    model: decodeTrace(readFileSync(trace)),
    trace,
    plainStdout,
  };
}

/** Frames in the runtime's code (mw_…, __mw_…) among the error reports. */
function runtimeFrames(errors: string[][]): string[] {
  return errors.flat().filter((line) => /^(at|by) 0x[0-9A-Fa-f]+: (__)?mw_/.test(line));
}

function blocksAt(model: Model, file: string, line: number): number {
  let n = 0;
  for (let b = 0; b < model.blocks.count; b++) {
    const info = siteInfo(model, model.blocks.site[b]!);
    if (info?.file?.endsWith(file) && info.line === line) n++;
  }
  return n;
}

describe('instrumented programs under memcheck', () => {
  skipAllWhen(cannotValgrind());

  it("a list freed node by node, a node kept to the end: only the program's own uninitialised read is reported, at its line", () => {
    const r = underValgrind('uninitialised', path.join(programsDir, 'uninitialised.c'), 'memcheck');
    expect(runtimeFrames(r.errors)).toEqual([]);
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]![0]).toBe('Conditional jump or move depends on uninitialised value(s)');
    expect(r.errors[0]![1]).toMatch(/: main \(uninitialised\.c:46\)$/);
    expect(r.summary).toBe(1);
    expect(r.status).toBe(ERRORS);
    expect(r.stdout).toBe(r.plainStdout);
    expect(r.stdout).toBe('sum 20100\n');
    expect(r.stderr.match(NOTICE)).toHaveLength(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    // what the notice promises: the instrumented code's allocations, and the header says malloc was not interposed
    expect(r.model.problems.filter((p) => p.severity === 'error')).toEqual([]);
    expect(r.model.header.interposed).toBe(false);
    expect(blocksAt(r.model, 'uninitialised.c', 24)).toBe(201);
    expect(blocksAt(r.model, 'uninitialised.c', 44)).toBe(1);
    expect(Array.from(r.model.blocks.interposed).filter((x) => x === 1)).toEqual([]);
    // the scans still ran with Valgrind's reporting off: each free but the last links the nodes after it (at most 16)
    const { linked } = r.model;
    const sizes = [...Array(linked.count).keys()].map((i) => linked.start[i + 1]! - linked.start[i]!);
    expect(sizes.filter((n) => n > 0)).toHaveLength(199);
    expect(sizes[0]).toBe(16);
    // and the leak scan at exit: the kept node is still reachable, from a static
    expect(r.model.leakScan).toEqual({ present: true, partial: false });
    expect(Array.from(r.model.blocks.leakClass).filter((c) => c !== 255)).toEqual([2]);
    const report = must(process.execPath, [wrapper, 'report', r.trace]).stdout;
    expect(report).toMatch(/^Recorded +allocations by instrumented code only: malloc was not interposed$/m);
  });

  it('eight threads allocating and freeing: no error at all, the notice once, the output unchanged', () => {
    const r = underValgrind('threads', path.join(programsDir, 'threads.c'), 'memcheck');
    expect(runtimeFrames(r.errors)).toEqual([]);
    expectCleanRun(r);
    expect(r.model.header.interposed).toBe(false);
    expect(r.model.threads).toHaveLength(9);
    expect(r.model.lostRecords).toBe(0);
    expect(blocksAt(r.model, 'threads.c', 23)).toBe(800_000);
  });
});

/** No error at all, a zero summary and exit status, the plain build's output, and only the notice on stderr, once. */
function expectCleanRun(r: ReturnType<typeof underValgrind>): void {
  expect(r.errors).toEqual([]);
  expect(r.summary).toBe(0);
  expect(r.status).toBe(0);
  expect(r.stdout).toBe(r.plainStdout);
  expect(r.stderr.match(NOTICE)).toHaveLength(1);
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
}

describe('a program with threads under helgrind', () => {
  skipAllWhen(cannotValgrind());

  it('with runtime/valgrind/cc-memwrap.supp: no race reported, the notice once, the output unchanged', () => {
    const suppressions = path.join(packageRoot, 'runtime', 'valgrind', 'cc-memwrap.supp');
    const r = underValgrind('threads', path.join(programsDir, 'threads.c'), 'helgrind', [`--suppressions=${suppressions}`]);
    expectCleanRun(r);
    expect(blocksAt(r.model, 'threads.c', 23)).toBe(800_000);
  });
});

describe('an instrumented program under a Valgrind tool that leaves malloc alone', () => {
  skipAllWhen(cannotValgrind());

  it('--tool=none: no notice, malloc interposed, libc allocations recorded as usual', () => {
    const r = underValgrind('uninitialised', path.join(programsDir, 'uninitialised.c'), 'none');
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(r.plainStdout);
    expect(r.stderr).toBe('');
    expect(r.model.header.interposed).toBe(true);
    expect(blocksAt(r.model, 'uninitialised.c', 24)).toBe(201);
    // stdout's buffer, allocated inside libc by printf, is seen through the interposed malloc
    expect(Array.from(r.model.blocks.interposed).filter((x) => x === 1).length).toBeGreaterThanOrEqual(1);
  });
});
