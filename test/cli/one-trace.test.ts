// Several traces where `report` reads one (a shell pattern such as leak2.*.mwtrace after a program ran twice): the
// newest of runs of one program one after another is read, and stderr says which; traces of different programs, of a
// program and the children it started, or one trace named twice, stay refused with the count on the side they were
// given for (--compare's A or B, not "before it").
import { copyFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { runReport } from '../../cli/report.js';
import { capture } from '../fixtures/cli-capture.js';
import { buildInstrumented, programsDir, runTraced, samplesDir, scratch, traceOf } from '../support/programs.js';

const dir = scratch('one-trace');
const traces = path.join(dir, 'traces');
let leak = '';
let fixed: string[] = [];
let forked: string[] = [];

/** Runs `exe` once; its trace. */
function once(exe: string): string {
  const ran = runTraced(exe, [], traces);
  return traceOf(traces, ran.pid);
}

beforeAll(() => {
  const source = path.join(samplesDir, 'error-path-leak.c');
  buildInstrumented('gcc', ['-O0'], [source], path.join(dir, 'leak'));
  buildInstrumented('gcc', ['-O0', '-DFIXED'], [source], path.join(dir, 'leak2'));
  buildInstrumented('gcc', ['-O0'], [path.join(programsDir, 'fork-lanes.c')], path.join(dir, 'forks'));
  leak = once(path.join(dir, 'leak'));
  fixed = [once(path.join(dir, 'leak2')), once(path.join(dir, 'leak2'))];
  const before = new Set(readdirSync(traces));
  runTraced(path.join(dir, 'forks'), [], traces);
  forked = readdirSync(traces).filter((f) => !before.has(f)).map((f) => path.join(traces, f));
}, 120_000);

describe('report with several traces where it reads one', () => {
  test('--compare B given as two runs of one program reads the newer, and says so', async () => {
    const r = await capture(runReport, [leak, '--compare', ...fixed]);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toBe(`cc-memwrap report: --compare's B reads one trace: ${fixed[1]}, the newest of the 2 runs of leak2 named (left out: ${fixed[0]})\n`);
    expect(r.out).toMatch(new RegExp(`^Compare {6}A ${leak}\n  with {7}B ${fixed[1]}\n`));
  });

  test('--leaks given the same runs reads the newer; --fail-on leaks then passes on the fixed program', async () => {
    const r = await capture(runReport, [...fixed, '--leaks', '--fail-on', 'leaks']);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain(`--leaks reads one trace: ${fixed[1]}, the newest of the 2 runs of leak2 named`);
    expect(r.out).toMatch(new RegExp(`^Trace +\\S*${path.basename(fixed[1]!)} `));
  });

  test('traces of two programs on one side are refused, counted for that side', async () => {
    const b = await capture(runReport, [leak, '--compare', fixed[0]!, leak]);
    expect(b).toEqual({ code: 2, out: '', err: "cc-memwrap report: --compare compares one trace (A) with another (B); got 2 for B (name one trace on each side): they are not all runs of one program\n" });
    const a = await capture(runReport, [leak, fixed[0]!, '--compare', fixed[1]!]);
    expect(a.err).toBe("cc-memwrap report: --compare compares one trace (A) with another (B); got 2 for A (name one trace on each side): they are not all runs of one program\n");
    const fail = await capture(runReport, [leak, fixed[0]!, '--fail-on', 'leaks']);
    expect(fail).toEqual({ code: 2, out: '', err: 'cc-memwrap report: --fail-on reads one trace; got 2 (report them one at a time, or leave --fail-on out): they are not all runs of one program\n' });
  });

  test('a program and the children it forked, or one trace named twice, are not runs one after another', async () => {
    expect(forked.length).toBeGreaterThan(1);
    const tree = await capture(runReport, [...forked, '--peak']);
    expect(tree.code).toBe(2);
    expect(tree.err).toMatch(/--peak reads one trace; got \d+ \(.*\): they are a program and the children it started\n$/);
    const twice = path.join(dir, 'copy.mwtrace');
    copyFileSync(leak, twice);
    const same = await capture(runReport, [leak, twice, '--leaks']);
    expect(same.err).toBe('cc-memwrap report: --leaks reads one trace; got 2 (report them one at a time, or leave --leaks out): some are one process named twice\n');
  });
});
