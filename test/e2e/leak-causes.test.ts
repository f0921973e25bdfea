// --mw-branches end to end: samples/leak-causes.c (the published example) built with branches names error condition
// 1's branch as the cause and nothing else; sites that always or never free are not suspect; test/programs/branches.c
// (every rewritten shape, side effects in conditions) behaves as the plain build and adds no warning under -Werror.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { must, programsDir, run, runTraced, samplesDir, scratch, traceOf, wrapper } from '../support/programs.js';
import { STRICT } from '../instrumenter/cc.js';

const sample = path.join(samplesDir, 'leak-causes.c');
/** The strict flags but -Wc++-compat: the sample, like most C, assigns malloc's void * without a cast. */
const SAMPLE_FLAGS = STRICT.filter((f) => f !== '-Wc++-compat');

interface Step {
  kind: string;
  function: string;
  file: string;
  line: number;
  text: string | null;
  taken: boolean | null;
}
interface Causes {
  schema: string;
  branchesRecorded: boolean;
  suspects: { allocation: { line: number; function: string }; freed: number; leaked: number; culprit: (Step & { leakingPaths: number }) | null; onlyInFreeing: { function: string }[]; note: string | null }[];
  neverFreed: { allocation: { line: number }; leaked: number }[];
}

/** Builds the sample (with or without branches), runs it, returns its output and `report --leak-causes` (JSON, text). */
function traced(branches: boolean): { stdout: string; causes: Causes; text: string } {
  const dir = scratch(branches ? 'leak-causes-b' : 'leak-causes');
  const exe = path.join(dir, 'leak-causes');
  must(wrapper, ['--mw-strict', ...(branches ? ['--mw-branches'] : []), 'gcc', ...SAMPLE_FLAGS, sample, '-o', exe]);
  const ran = runTraced(exe, [], path.join(dir, 'traces'));
  expect(ran.status).toBe(0);
  const trace = traceOf(path.join(dir, 'traces'), ran.pid);
  const json = JSON.parse(must(process.execPath, [wrapper, 'report', '--json', '--leak-causes', trace]).stdout) as { leakCauses: Causes };
  const text = must(process.execPath, [wrapper, 'report', '--leak-causes', trace]).stdout;
  return { stdout: ran.stdout, causes: json.leakCauses, text };
}

describe('report --leak-causes on samples/leak-causes.c', () => {
  it("names error condition 1's branch (file:line, taken) as the cause, and no other branch", () => {
    const { stdout, causes, text } = traced(true);
    expect(stdout).toBe('handled 30 requests, 60 errors\n');
    expect(causes.schema).toBe('cc-memwrap.leak-causes/1');
    expect(causes.branchesRecorded).toBe(true);
    expect(causes.suspects).toHaveLength(1);
    const s = causes.suspects[0]!;
    expect(s).toMatchObject({ allocation: { line: 33, function: 'funcA' }, freed: 60, leaked: 30 });
    expect(s.culprit).toEqual({ kind: 'branch', function: 'funcA', file: sample, line: 36, text: 'if (error == 1)', taken: true, leakingPaths: 30 });
    expect(s.onlyInFreeing.map((f) => f.function)).toEqual(['funcB']);
    const causeLines = text.split('\n').filter((l) => /^\s+cause:/.test(l));
    expect(causeLines).toEqual(['    cause: samples/leak-causes.c:36 funcA: if (error == 1) taken (in 30 of 30 leaking paths; never there in 60 freeing paths)']);
    expect(text).toContain('      36 | if (error == 1) {');
  });

  it('a site whose blocks are all freed is not suspect, nor one that never frees (listed apart)', () => {
    const { causes } = traced(true);
    expect(causes.suspects.map((s) => s.allocation.line)).toEqual([33]);
    expect(causes.neverFreed.map((s) => [s.allocation.line, s.leaked])).toEqual([[48, 1]]);
    expect(JSON.stringify(causes)).not.toMatch(/"line":51\b/);
  });

  it('without --mw-branches: the same suspect, no branch, and a note saying where the paths part', () => {
    const { causes } = traced(false);
    expect(causes.branchesRecorded).toBe(false);
    expect(causes.suspects).toHaveLength(1);
    expect(causes.suspects[0]!.culprit).toBeNull();
    expect(causes.suspects[0]!.note).toMatch(/part inside funcA \(build with cc-memwrap --mw-branches/);
  });
});

describe('--mw-branches keeps the program as it was', () => {
  const source = path.join(programsDir, 'branches.c');
  for (const cc of ['gcc', 'clang']) {
    for (const opt of ['-O0', '-O2']) {
      it(`${cc} ${opt}: same output, no warning under -pedantic -Werror, branches recorded`, () => {
        const dir = scratch(`branches-${cc}${opt}`);
        const plain = path.join(dir, 'plain');
        const inst = path.join(dir, 'inst');
        must(cc, [...STRICT, opt, source, '-o', plain]);
        const built = must(wrapper, ['--mw-strict', '--mw-branches', cc, ...STRICT, opt, source, '-o', inst]);
        expect(built.stderr).toBe('');
        const a = run(plain, []);
        const b = runTraced(inst, [], path.join(dir, 'traces'));
        expect(b.stdout).toBe(a.stdout);
        expect(b.status).toBe(a.status);
        expect(a.stdout).toContain('nested 11 12 0 20');
        const dump = must(process.execPath, [wrapper, 'dump', traceOf(path.join(dir, 'traces'), b.pid)]).stdout;
        expect(dump).toContain('problems: none');
        // word(): `case 0:` falls into `case 1:`, which records nothing; `case 3:` reached from `case 2:` neither.
        expect(dump).toMatch(/site \d+ branch file="[^"]*branches.c" line=24 func="word" name="case 0:"/);
        const caseSite = (line: number): string => new RegExp(`site (\\d+) branch file="[^"]*" line=${line} func="word"`).exec(dump)![1]!;
        const taken = (site: string): number => dump.split('\n').filter((l) => new RegExp(`BRANCH length=\\d+ site=${site} taken$`).test(l)).length;
        expect([24, 25, 27, 30, 32, 34].map((line) => taken(caseSite(line)))).toEqual([1, 1, 1, 1, 1, 2]);
      });
    }
  }

  it('is in cc-memwrap --help', () => {
    expect(must(wrapper, ['--help']).stdout).toMatch(/--mw-branches\s+also record the outcome of every if, switch case, \?:, &&/);
  });
});
