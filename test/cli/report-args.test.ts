// `cc-memwrap report`'s arguments become one checked request, or the first mistake in documented order.
import { describe, expect, test } from 'vitest';
import { parseReportArgs } from '../../cli/report-args.js';

describe('report arguments', () => {
  test('become a request with a section per option', () => {
    const p = parseReportArgs(['t.mwtrace', '--top', '3', '--by', 'file', '--attribute', 'inclusive', '--temporary', '--fail-on', 'budget,leaks', '--budget-heap', '1K']);
    if (p.kind !== 'report') throw new Error(JSON.stringify(p));
    expect(p.file).toBe('t.mwtrace');
    expect(p.request.top).toBe(3);
    expect(p.request.by).toEqual({ by: 'file', mode: 'inclusive' });
    expect(p.request.temporaryWithin).toBe(16);
    expect([...p.request.failOn]).toEqual(['budget', 'leaks']);
    expect(p.budgets).toEqual({ heap: 1024 });
    expect(p.request.peak || p.request.linked || p.request.leaks || p.request.stack || p.request.leakCauses).toBe(false);
    expect(p.request.calls).toBeNull();
    expect(p.json).toBe(false);
    expect(p.html).toBeNull();
  });

  test('--temporary takes a following count', () => {
    const p = parseReportArgs(['--temporary', '4', 't.mwtrace']);
    expect(p.kind === 'report' && p.request.temporaryWithin).toBe(4);
  });

  test.each([
    [['t', '--top', 'x'], "--top wants a whole number, got 'x'"],
    [['t', '--attribute', 'inclusive'], '--attribute needs --by function or --by file'],
    [['t', '--by', 'colour'], '--by wants function, site, file, thread, library, entry, library-function, got \'colour\''],
    [['t', '--calls', ' '], '--calls wants a function name'],
    [['t', '--interval', '3 days'], "--interval wants a number of events (1000) or a time (500ns, 20us, 10ms, 1.5s), got '3 days'"],
    [['t', '--fail-on', 'warnings'], "--fail-on wants budget or leaks, got 'warnings'"],
    // The first mistake in the order the options are documented is the one named.
    [['t', '--fail-on', 'x', '--top', 'y'], "--top wants a whole number, got 'y'"],
  ])('%j is refused: %s', (args, message) => {
    expect(parseReportArgs(args)).toEqual({ kind: 'error', message, usage: false });
  });

  test('no trace, and an unknown option, point to --help; options that read one trace are named for the run to check (cli/one-trace.ts)', () => {
    expect(parseReportArgs([])).toMatchObject({ kind: 'error', message: 'expected a trace file (or several, or a folder of them)', usage: true });
    expect(parseReportArgs(['a', 'b', '--by', 'library'])).toMatchObject({ kind: 'report', files: ['a', 'b'], singleOnly: null });
    expect(parseReportArgs(['a', 'b', '--budget-heap', '1K'])).toMatchObject({ kind: 'report', files: ['a', 'b'], singleOnly: 'budget-heap' });
    // The names after --compare's are B's too (a shell pattern), those before it A's.
    expect(parseReportArgs(['a', '--compare', 'b1', 'b2'])).toMatchObject({ kind: 'report', files: ['a'], compare: 'b1', compareFiles: ['b1', 'b2'] });
    expect(parseReportArgs(['a1', 'a2', '--compare', 'b', '--top', '3'])).toMatchObject({ kind: 'report', files: ['a1', 'a2'], compareFiles: ['b'] });
    expect(parseReportArgs(['t', '--colour'])).toMatchObject({ kind: 'error', usage: true });
    expect(parseReportArgs(['-h'])).toEqual({ kind: 'help' });
  });
});
