// Real C projects none of us wrote, built by their own build systems plainly
// and with cc-memwrap as the compiler: their own tests print the same and
// exit the same, a workload's trace has Valgrind's heap totals for the plain
// build, and the workload is timed side by side. Each project adds a row to
// the table printed at the end (test/real/print-table.ts).
import { statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { skipWhen } from '../support/machine.js';
import { reportJson, scratch, traceOf, valgrindTotals } from '../support/programs.js';
import { copyTree, projects, type Built, type Project } from './projects.js';
import { uninstrumentedUnits, type Fallback } from '../../instrumenter/fallback-messages.js';
import { functionEntries, ownFunctionsEntered } from './entries.js';
import { buildEnv, linesOfC, normalised, programOf, runBuild, runStep, timeSideBySide, tracedEnv } from './steps.js';
import { emptyRow, writeRow } from './table.js';

interface HeapReport {
  valgrind: { allocs: number; frees: number; bytesAllocated: number };
  end: { how: string; code: number | null };
  threads: unknown[];
}

describe.each(projects)('$name', (project) => {
  const dir = scratch(`real-${project.name.replace(/\W+/g, '-')}`);
  // Trees at paths of one length: a program that keeps its own path (Lua's
  // arg table) allocates by that length, and the counts must compare.
  const plain: Built = { dir: path.join(dir, 'plain'), cc: 'gcc' };
  const inst: Built = { dir: path.join(dir, 'mwrap'), cc: 'cc-memwrap gcc' };
  const plainEnv = process.env;
  const instEnv = (traces: string) => tracedEnv(path.join(dir, traces));
  const row = emptyRow(project.name, project.origin);
  let built = false;
  let fallbacks: Fallback[] = [];

  // A project whose source the registries do not serve here is skipped,
  // each test with the reason; any later failure is the project's or ours.
  let unfetched: string | null = null;
  beforeEach((ctx) => skipWhen(ctx, unfetched));

  beforeAll(() => {
    let source: ReturnType<Project['fetch']>;
    try {
      source = project.fetch((line) => process.stderr.write(`${project.name}: ${line}\n`));
    } catch (error) {
      unfetched = `the source of ${project.name} could not be fetched (${project.origin}): ${(error as Error).message}`;
      process.stderr.write(`${unfetched}\n`);
      row.build = 'not fetched';
      return;
    }
    row.origin = `${project.origin}, ${source.how}`;
    row.linesOfC = linesOfC(source.dir);
    copyTree(source.dir, plain.dir);
    copyTree(source.dir, inst.dir);
    const a = runBuild(project.build(plain), plain.dir, plainEnv);
    if (!a.ok) throw new Error(`the plain build of ${project.name} failed:\n${a.output.slice(-4000)}`);
    const b = runBuild(project.build(inst), inst.dir, buildEnv(path.join(dir, 'build-traces')));
    fallbacks = uninstrumentedUnits(b.output).map((f) => ({ ...f, unit: normalised(f.unit, inst.dir) }));
    row.build = b.ok ? buildVerdict(fallbacks) : 'failed';
    if (!b.ok) throw new Error(`the build of ${project.name} through cc-memwrap failed (the plain one built):\n${b.output.slice(-4000)}`);
    built = true;
  }, 1_800_000);

  afterAll(() => writeRow(row));

  // A unit that fell back still links the runtime, so the comparisons below
  // would hold with nothing instrumented: the build must say it fell back
  // for no unit but those projects.ts names, with their reasons.
  it('every unit is built instrumented, but for the fallbacks projects.ts expects', () => {
    expect(built).toBe(true);
    const expected = project.expectedFallbacks ?? [];
    const named = (f: Fallback) => expected.some((e) => sameUnit(f.unit, e.unit));
    const unexpected = fallbacks.filter((f) => !named(f)).map((f) => `${f.unit} (${f.reason})`);
    const stale = expected.filter((e) => !fallbacks.some((f) => sameUnit(f.unit, e.unit))).map((e) => e.unit);
    expect(unexpected.length, `units built uninstrumented: ${unexpected.join(', ')}`).toBe(0);
    expect(stale.length, `expected fallbacks that no longer happen: ${stale.join(', ')}`).toBe(0);
  });

  it("the workload's trace enters functions of the project's own sources", () => {
    expect(built).toBe(true);
    const traces = path.join(dir, 'entry-traces');
    const ours = runStep(project.workload(inst), inst.dir, tracedEnv(traces));
    expect(ours.status).toBe(0);
    const entries = functionEntries(traceOf(traces, ours.pid));
    const own = ownFunctionsEntered(entries, inst.dir);
    row.units = entries.units;
    row.functionsEntered = own.length;
    process.stderr.write(`${project.name}: ${entries.units} instrumented units in the workload's program; ${own.length} functions of its own sources entered\n`);
    expect(own.length, `functions entered: ${own.join(', ')}`).toBeGreaterThanOrEqual(MIN_OWN_FUNCTIONS);
  });

  it('its own tests print the same and exit the same, plain and through cc-memwrap', () => {
    expect(built).toBe(true);
    const steps = [project.tests(plain), project.tests(inst)] as const;
    let passed = 0;
    for (let i = 0; i < steps[0].length; i++) {
      const a = runStep(steps[0][i]!, plain.dir, plainEnv);
      const b = runStep(steps[1][i]!, inst.dir, instEnv('test-traces'));
      const what = `${steps[0][i]!.command} ${steps[0][i]!.args.join(' ')}`;
      expect(a.status, `${what} (plain): ${a.stderr}`).toBe(0);
      expect(normalised(b.stdout, inst.dir), what).toBe(normalised(a.stdout, plain.dir));
      expect(normalised(b.stderr, inst.dir), what).toBe(normalised(a.stderr, plain.dir));
      expect(b.status, what).toBe(a.status);
      passed++;
      row.tests = `${passed}/${steps[0].length}`;
    }
  });

  it("the workload's trace has Valgrind's heap totals for the plain build", () => {
    expect(built).toBe(true);
    const step = project.workload(plain);
    project.workload(inst);
    const traces = path.join(dir, 'workload-traces');
    const ours = runStep(step, inst.dir, tracedEnv(traces));
    // freeres=no: a plain run never has glibc free its own buffers at exit,
    // so with it Valgrind counts frees the program does not make.
    const reference = valgrindTotals(programOf(step, plain.dir), step.args, { freeres: false, input: step.input, cwd: path.join(plain.dir, step.cwd ?? '') });
    expect(reference.run.status).toBe(0);
    expect(ours.status).toBe(0);
    expect(normalised(ours.stdout, inst.dir)).toBe(normalised(reference.run.stdout, plain.dir));
    const trace = traceOf(traces, ours.pid);
    row.traceBytes = statSync(trace).size;
    const report = reportJson(trace) as unknown as HeapReport;
    expect(report.end.how).toBe('exit');
    const vg = reference.totals.get(reference.run.pid);
    expect(vg, 'Valgrind wrote no heap summary').toBeDefined();
    const theirs = { allocs: vg!.allocs, frees: vg!.frees, bytes: vg!.bytes };
    const recorded = { allocs: report.valgrind.allocs, frees: report.valgrind.frees, bytes: report.valgrind.bytesAllocated };
    row.heap = JSON.stringify(recorded) === JSON.stringify(theirs) ? `= Valgrind (${theirs.allocs.toLocaleString('en-US')} allocs, ${theirs.bytes.toLocaleString('en-US')} B)` : 'differs';
    expect(recorded).toEqual(theirs);
  });

  it('the workload runs side by side, plain and instrumented', () => {
    expect(built).toBe(true);
    const traces = path.join(dir, 'timing-traces');
    const times = timeSideBySide(project.workload(plain), { plain: plain.dir, inst: inst.dir }, { plain: plainEnv, inst: tracedEnv(traces) }, traces, 3);
    row.plainMs = times.plainMs;
    row.ratio = times.instMs / times.plainMs;
    // Every timed instrumented run recorded (one process each).
    expect(times.traced).toBe(3);
  });
});

/** Fewer than this many functions of a project's own files entered means
 *  its code was, in effect, not instrumented. */
const MIN_OWN_FUNCTIONS = 5;

/** A unit as the build named it, against an expected one (a path or its tail). */
function sameUnit(printed: string, expected: string): boolean {
  return printed === expected || printed.endsWith(`/${expected}`);
}

function buildVerdict(fallbacks: Fallback[]): string {
  const units = fallbacks.map((f) => f.unit);
  return units.length === 0 ? 'ok' : `ok; ${units.length} unit${units.length > 1 ? 's' : ''} uninstrumented (${units.join(', ')})`;
}
