// EXT/BRANCH (format 1.2) in the decoder, the dump and hostile input; and the leak-cause analysis (leak-causes.ts) on
// small crafted runs: the separating branch, loops folded, sites that are not suspect.
import { describe, expect, test } from 'vitest';
import { dumpTraceText } from '../../analysis/dump.js';
import { foldRepeats, leakCauses } from '../../analysis/leak-causes.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { SiteKind } from '../../analysis/trace/format.js';
import { S, TraceBuilder, type SiteDef, type ThreadWriter } from '../fixtures/trace-builder.js';

const B = SiteKind.BRANCH;
/** a.c: main calls work, which allocates; `if (bad)` returns, `if (fail)` frees; else `release` frees. */
const SITES: SiteDef[] = [
  { kind: S.ENTRY, file: '/src/a.c', func: 'main', name: 'main', line: 30 }, // 1
  { kind: S.ENTRY, file: '/src/a.c', func: 'work', name: 'work', line: 10 }, // 2
  { kind: S.MALLOC, file: '/src/a.c', func: 'work', name: 'malloc', line: 11 }, // 3
  { kind: B, file: '/src/a.c', func: 'work', name: 'if (bad)', line: 12 }, // 4
  { kind: B, file: '/src/a.c', func: 'work', name: 'if (fail)', line: 14 }, // 5
  { kind: S.FREE, file: '/src/a.c', func: 'work', name: 'free', line: 15 }, // 6
  { kind: S.ENTRY, file: '/src/a.c', func: 'release', name: 'release', line: 3 }, // 7
  { kind: S.FREE, file: '/src/a.c', func: 'release', name: 'free', line: 4 }, // 8
  { kind: B, file: '/src/a.c', func: 'work', name: 'i < n', line: 13 }, // 9
  { kind: S.MALLOC, file: '/src/a.c', func: 'main', name: 'malloc', line: 31 }, // 10 (a cache, never freed)
  { kind: S.MALLOC, file: '/src/a.c', func: 'main', name: 'malloc', line: 32 }, // 11 (always freed)
  { kind: S.FREE, file: '/src/a.c', func: 'main', name: 'free', line: 33 }, // 12
];

/** One call of work on path 0 (release frees), 1 (leaks), 2 (frees itself); `loops` turns of a loop first. */
function work(t: ThreadWriter, path: number, addr: number, loops = 0): void {
  t.enter(2, 200);
  const block = t.alloc({ site: 3, size: 16, addr });
  for (let k = 0; k < loops; k++) t.branch(9, true);
  if (loops > 0) t.branch(9, false);
  t.branch(4, path === 1);
  if (path !== 1) t.branch(5, path === 2);
  if (path === 2) t.free({ site: 6, block });
  if (path === 0) {
    t.enter(7, 260);
    t.free({ site: 8, block });
    t.exit(7);
  }
  t.exit(2);
}

function run(paths: number[], loops: (k: number) => number = () => 0): TraceBuilder {
  const b = new TraceBuilder({ minor: 2, complete: true });
  const t = b.thread(0);
  t.threadBegin(1);
  t.unit(1, SITES);
  t.enter(1, 100);
  t.alloc({ site: 10, size: 64, addr: 0x9000 });
  paths.forEach((p, k) => {
    const tmp = t.alloc({ site: 11, size: 8, addr: 0x8000 });
    work(t, p, 0x1000 + 0x100 * k, loops(k));
    t.free({ site: 12, block: tmp });
  });
  t.exit(1);
  t.end(0, 0);
  return b;
}

describe('EXT/BRANCH records', () => {
  test('decode into the branch table, after the latest event of their thread', () => {
    const m = decodeTrace(run([1, 2]).build());
    expect(m.problems).toEqual([]);
    expect(m.header.minor).toBe(2);
    expect(Array.from(m.branches.site)).toEqual([4, 4, 5]);
    expect(Array.from(m.branches.taken)).toEqual([1, 0, 1]);
    // The first `if (bad)` comes right after the first work's ALLOC (event 5: BEGIN, ENTER main, cache, tmp, ENTER work, ALLOC).
    expect(m.events.kind[m.branches.after[0]!]).toBe(7);
    expect(m.branches.after[0]).toBe(5);
    // Branches are not events: BEGIN, ENTER main, the cache; path 1: tmp, ENTER work, ALLOC, EXIT, FREE tmp;
    // path 2: tmp, ENTER work, ALLOC, FREE, EXIT, FREE tmp; EXIT main, END — 16, with 3 BRANCH records among them.
    expect(m.events.count).toBe(16);
  });

  test('dump prints them', () => {
    const text = dumpTraceText(run([1]).build());
    expect(text).toMatch(/EXT BRANCH length=1 site=4 taken/);
    expect(text).toMatch(/site 4 branch file="\/src\/a.c" line=12 func="work" name="if \(bad\)"/);
  });

  test('a BRANCH whose payload is empty is an error naming its offset; what came before is kept', () => {
    const b = new TraceBuilder({ minor: 2 });
    const t = b.thread(0);
    t.threadBegin(1);
    t.unit(1, SITES);
    t.enter(1, 100);
    const bad = t.mark();
    t.ext(4, []);
    t.exit(1);
    const bytes = b.build();
    const m = decodeTrace(bytes);
    const offset = `0x${b.offsetOf(bad).toString(16)}`;
    expect(m.problems.map((p) => p.message)).toContainEqual(expect.stringMatching(/BRANCH fields run past the end of its 0-byte payload/));
    expect(m.problems.find((p) => /BRANCH/.test(p.message))!.offset).toBe(b.offsetOf(bad));
    expect(m.events.count).toBe(2);
    expect(dumpTraceText(bytes)).toContain(offset);
  });

  test('a BRANCH cut by the end of the file is an error naming its offset', () => {
    const b = new TraceBuilder({ minor: 2 });
    const t = b.thread(0);
    t.threadBegin(1);
    t.unit(1, SITES);
    const bad = t.mark();
    t.branch(4, true);
    const bytes = b.build();
    const cut = bytes.subarray(0, b.offsetOf(bad) + 3);
    const m = decodeTrace(cut);
    const problem = m.problems.find((p) => p.severity === 'error')!;
    expect(problem.offset).toBe(b.offsetOf(bad));
    expect(problem.message).toMatch(/truncated EXT record/);
  });

  test('a site delta that leaves the site range is an error; an undefined site is a warning and dropped', () => {
    const b = new TraceBuilder({ minor: 2 });
    const t = b.thread(0);
    t.threadBegin(1);
    t.unit(1, SITES);
    t.branch(3, true); // a malloc site, not a branch
    const bad = t.mark();
    t.ext(4, [0x0f]); // v 15: taken, zig-zag 7 = delta −4, from site 3 to −1
    const m = decodeTrace(b.build());
    expect(m.branches.count).toBe(1);
    expect(m.branches.site[0]).toBe(0);
    expect(m.problems.map((p) => p.message)).toContainEqual(expect.stringMatching(/1 BRANCH record\(s\) name a site that is not a branch site/));
    const error = m.problems.find((p) => p.severity === 'error')!;
    expect(error.offset).toBe(b.offsetOf(bad));
    expect(error.message).toMatch(/gives no valid site id/);
  });

  test('a 1.1 reader path: traces without branches have an empty branch table', () => {
    const b = new TraceBuilder({ minor: 1, complete: true });
    b.thread(0).threadBegin(1);
    b.thread(0).end(0, 0);
    expect(decodeTrace(b.build()).branches.count).toBe(0);
  });
});

describe('leak causes', () => {
  test('names the branch that separates leaking from freeing paths, and no other', () => {
    const c = leakCauses(decodeTrace(run([0, 1, 2, 0, 1, 2, 1]).build()));
    expect(c.branchesRecorded).toBe(true);
    expect(c.suspects).toHaveLength(1);
    const s = c.suspects[0]!;
    expect(s).toMatchObject({ site: 3, freed: 4, leaked: 3, compared: { freeing: 4, leaking: 3 } });
    expect(s.commonFunction).toEqual({ function: 'work', file: '/src/a.c', line: 10 });
    expect(s.culprit).toEqual({ kind: 'branch', function: 'work', file: '/src/a.c', line: 12, text: 'if (bad)', taken: true, leakingPaths: 3 });
    expect(s.onlyInFreeing).toEqual([{ function: 'release', file: '/src/a.c', line: 3 }]);
    expect(s.leakingPath.map((p) => p.text ?? `${p.kind} ${p.function}`)).toEqual(['if (bad)', 'exit work']);
    expect(s.freeingPath.map((p) => p.text ?? `${p.kind} ${p.function}`)).toEqual(['if (bad)', 'if (fail)', 'enter release', 'exit release', 'exit work']);
  });

  test('loops run a different number of times do not hide the branch', () => {
    const c = leakCauses(decodeTrace(run([0, 1, 2, 1, 0, 2], (k) => 1 + 3 * k).build()));
    const s = c.suspects[0]!;
    expect(s.culprit).toMatchObject({ line: 12, taken: true, leakingPaths: 2 });
    expect(s.leakingPath.map((p) => `${p.text ?? p.function}:${p.taken}`)).toEqual(['i < n:true', 'i < n:false', 'if (bad):true', 'work:null']);
  });

  test('a site that always frees is not suspect; a site that never frees is listed apart', () => {
    const c = leakCauses(decodeTrace(run([0, 1, 2]).build()));
    expect(c.suspects.map((s) => s.site)).toEqual([3]);
    expect(c.neverFreed).toEqual([{ site: 10, allocation: { function: 'main', file: '/src/a.c', line: 31, allocator: 'malloc' }, leaked: 1 }]);
    expect(leakCauses(decodeTrace(run([0, 2, 0]).build())).suspects).toEqual([]);
  });

  test('without branches the paths cannot be told apart: no culprit, and a note that says where they part', () => {
    const b = run([0, 1, 2]);
    const m = decodeTrace(b.build());
    m.branches.count = 0; // as if built without --mw-branches
    const s = leakCauses(m).suspects[0]!;
    expect(s.culprit).toBeNull();
    expect(s.note).toMatch(/they part inside work \(build with cc-memwrap --mw-branches to name the branch\)/);
  });
});

describe('foldRepeats', () => {
  test('keeps one copy of a block repeated back to back, however often', () => {
    expect(foldRepeats([1, 2, 3, 2, 3, 2, 3, 4])).toEqual([1, 2, 3, 4]);
    expect(foldRepeats([5, 5, 5, 5])).toEqual([5]);
    expect(foldRepeats([7, 1, 2, 1, 2, 9])).toEqual(foldRepeats([7, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 9]));
    expect(foldRepeats([1, 2, 1, 3])).toEqual([1, 2, 1, 3]);
  });

  test('nested loops fold inside out', () => {
    const inner = (n: number): number[] => Array.from({ length: n }, () => [8, 9]).flat();
    const outer = (a: number, b: number): number[] => [1, ...inner(a), 2, 1, ...inner(b), 2, 3];
    expect(foldRepeats(outer(2, 5))).toEqual([1, 8, 9, 2, 3]);
  });
});
