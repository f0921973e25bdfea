// A large real code base none of us wrote: the SQLite amalgamation (sqlite3.c
// and shell.c, 300,000 lines, from the sqlite3 npm package) builds through
// cc-memwrap, answers a SQL script exactly as the plain build does, and its
// trace's heap totals equal Valgrind's.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { sqliteAmalgamation, sqliteWorkload } from '../../bench/sources.js';
import { buildInstrumented, buildPlain, reportJson, run, runTraced, scratch, traceOf, valgrindTotals } from '../support/programs.js';

const dir = scratch('sqlite');
const plain = path.join(dir, 'sqlite3.plain');
const inst = path.join(dir, 'sqlite3.inst');
let src = '';

beforeAll(() => {
  src = sqliteAmalgamation();
  const flags = ['-O0', '-DSQLITE_THREADSAFE=0', '-DSQLITE_OMIT_LOAD_EXTENSION', `-I${src}`];
  const sources = [path.join(src, 'shell.c'), path.join(src, 'sqlite3.c')];
  buildPlain('gcc', [...flags, '-lm'], sources, plain);
  buildInstrumented('gcc', [...flags, '-lm'], sources, inst);
}, 600_000);

describe('SQLite through cc-memwrap', () => {
  it('answers the SQL script exactly as the plain build does', () => {
    const script = sqliteWorkload(3000);
    const a = run(plain, [':memory:'], { input: script });
    const b = runTraced(inst, [':memory:'], path.join(dir, 'traces'), { input: script });
    expect(a.status).toBe(0);
    expect(a.stdout.split('\n').length).toBeGreaterThan(10);
    expect(b.stdout).toBe(a.stdout);
    expect(b.stderr).toBe(a.stderr);
    expect(b.status).toBe(0);
    const report = reportJson(traceOf(path.join(dir, 'traces'), b.pid)) as { allocations: number; end: { how: string }; problems: { errors: number } };
    expect(report.end.how).toBe('exit');
    expect(report.problems.errors).toBe(0);
    expect(report.allocations).toBeGreaterThan(1_000);
  });

  it("records Valgrind's heap totals", () => {
    const script = sqliteWorkload(300);
    const ours = runTraced(inst, [':memory:'], path.join(dir, 'vg-traces'), { input: script });
    const reference = valgrindTotals(plain, [':memory:'], { freeres: false, input: script });
    expect(reference.run.stdout).toBe(ours.stdout);
    const [vg] = [...reference.totals.values()];
    const report = reportJson(traceOf(path.join(dir, 'vg-traces'), ours.pid)) as { valgrind: { allocs: number; frees: number; bytesAllocated: number } };
    expect({ allocs: report.valgrind.allocs, frees: report.valgrind.frees, bytes: report.valgrind.bytesAllocated }).toEqual(vg);
  });
});
