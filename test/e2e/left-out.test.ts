// --mw-no-calls: the functions it names are recorded without their calls, but
// every heap number stays exact (the same as a full recording's), the report
// names what was left out, and bad lists are refused before anything is built.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildPlain, heapNumbers as heapOf, must, programsDir, run, runTraced, scratch, traceOf, wrapper } from '../support/programs.js';

const source = path.join(programsDir, 'left-out.c');

describe('--mw-no-calls', () => {
  const dir = scratch('left-out');
  let full = '';
  let left = '';
  let fullRun = '';
  beforeAll(() => {
    const plain = path.join(dir, 'plain');
    buildPlain('gcc', ['-O2'], [source], plain);
    fullRun = must(plain, []).stdout;
    // Every call recorded, leaf trees too: the functions left out by hand are then all the difference.
    must(wrapper, ['--mw-strict', '--mw-calls=all', 'gcc', '-O2', source, '-o', path.join(dir, 'full')]);
    must(wrapper, ['--mw-strict', '--mw-calls=all', '--mw-no-calls=is_even,push', 'gcc', '-O2', source, '-o', path.join(dir, 'left')]);
    const a = runTraced(path.join(dir, 'full'), [], path.join(dir, 'traces'));
    const b = runTraced(path.join(dir, 'left'), [], path.join(dir, 'traces'));
    expect([a.stdout, b.stdout]).toEqual([fullRun, fullRun]);
    full = traceOf(path.join(dir, 'traces'), a.pid);
    left = traceOf(path.join(dir, 'traces'), b.pid);
  });

  it('keeps every heap number of a full recording, linked sets and leaks included', () => {
    const want = heapOf(full);
    expect(want.allocations).toBe(1002); // and stdout's buffer
    expect(heapOf(left)).toEqual(want);
  });

  it('records no call of the functions left out: 2 events fewer per call', () => {
    const events = (t: string): number => (JSON.parse(must(process.execPath, [wrapper, 'report', '--json', t]).stdout) as { events: number }).events;
    expect(events(full) - events(left)).toBe(2 * (1000 + 1000));
  });

  it('says in the report which functions were left out', () => {
    const text = must(process.execPath, [wrapper, 'report', left]).stdout;
    expect(text).toMatch(/^Left out +calls of 2 functions \(--mw-no-calls\): is_even, push$/m);
    expect(text).toContain('(heap calls recorded; stack counted in the callers\')');
    const json = JSON.parse(must(process.execPath, [wrapper, 'report', '--json', left]).stdout) as { uncalledFunctions: { name: string; file: string; line: number }[] };
    expect(json.uncalledFunctions).toEqual([
      { name: 'is_even', file: source, line: 12 },
      { name: 'push', file: source, line: 14 },
    ]);
    const whole = must(process.execPath, [wrapper, 'report', full]).stdout;
    expect(whole).not.toContain('Left out');
    expect(JSON.parse(must(process.execPath, [wrapper, 'report', '--json', full]).stdout)).not.toHaveProperty('uncalledFunctions');
  });

  it('takes a file pattern, also among the compiler options: every function of the file left out, the heap still exact', () => {
    must(wrapper, ['--mw-strict', '--mw-calls=all', 'gcc', '-O2', '--mw-no-calls=left-*.c', source, '-o', path.join(dir, 'none')]);
    const c = runTraced(path.join(dir, 'none'), [], path.join(dir, 'traces'));
    expect(c.stdout).toBe(fullRun);
    const trace = traceOf(path.join(dir, 'traces'), c.pid);
    // With main left out too, stdout's buffer (allocated inside printf) has no instrumented frame to be charged to:
    // the numbers are the same, that one label is not.
    const totals = (t: string): unknown => ({ ...heapOf(t), linked: undefined, leaks: undefined });
    expect(totals(trace)).toEqual(totals(full));
    expect(must(process.execPath, [wrapper, 'report', trace]).stdout).toMatch(/^Left out +calls of 5 functions \(--mw-no-calls\): count_even, drop, is_even,$/m);
  });

  it.each([['--mw-no-calls='], ['--mw-no-calls=peek,,push']])('refuses %s with one line and status 2', (flag) => {
    const r = run(wrapper, [flag, 'gcc', source, '-o', path.join(dir, 'never')]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^cc-memwrap: --mw-no-calls=.*: give a comma-separated list of function names or files, e\.g\. /);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});
