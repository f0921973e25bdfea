// The compare page's differences computed on the host (host/compare-runs.ts): both traces streamed through
// compareReport give what analysis/compare.ts gives for the decoded models (what the page computes for small traces),
// with each run's budget lines as the page's decoded view has them; a trace that cannot be read is named.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { compareRuns } from '../../analysis/compare.js';
import { checkBudgets, type Budgets } from '../../analysis/budgets.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { compareTracesJson, type CompareInput } from '../../host/compare-runs.js';
import { packageRoot } from '../../package-root.js';
import type { CompareReply } from '../../host/session-types.js';
import { basicTrace, twoThreadsTrace } from '../fixtures/scenarios.js';
import { scratch } from '../support/programs.js';

const dir = scratch('compare-runs');
const a = path.join(dir, 'a.mwtrace');
const b = path.join(dir, 'b.mwtrace');
writeFileSync(a, basicTrace().build());
writeFileSync(b, twoThreadsTrace().build());
/** The compiled module (`npx tsc`), whose worker thread is there beside it: the path the server takes. */
const compiled = import(path.join(packageRoot, 'dist/host/compare-runs.js')) as Promise<typeof import('../../host/compare-runs.js')>;
const limits: Budgets = { heap: 600, stack: 64 };
const runs: [CompareInput, CompareInput] = [
  { trace: a, name: 'a.mwtrace', budgets: { limits, source: '--budget' } },
  { trace: b, name: 'b.mwtrace', budgets: null },
];

/** What the page computes from the decoded traces. */
function fromModels(): { comparison: unknown; budgets: unknown } {
  const ma = decodeTrace(basicTrace().build());
  const mb = decodeTrace(twoThreadsTrace().build());
  const comparison = compareRuns(
    { model: ma, file: 'a.mwtrace', inputs: { budgets: { limits, source: '--budget' }, frameSizes: null } },
    { model: mb, file: 'b.mwtrace', inputs: { budgets: null, frameSizes: null } },
  );
  const lines = checkBudgets(ma, limits).map((c) => ({ kind: c.kind, limitBytes: c.limitBytes, ranges: c.ranges.map((r) => [r.startEvent, r.endEvent]), rangeCount: c.rangeCount }));
  return { comparison, budgets: [lines, []] };
}

describe("the compare page's differences streamed on the host", () => {
  test('the same comparison as the decoded models give, and the budget lines with their ranges', () => {
    const want = fromModels();
    const got = JSON.parse(compareTracesJson(runs)) as Omit<Extract<CompareReply, { state: 'ready' }>, 'state'>;
    expect(got).toEqual(want);
    // Not empty: sites on both sides, and A's heap budget exceeded over a range.
    expect(got.comparison.sites.length).toBeGreaterThan(0);
    expect(got.budgets[0].find((l) => l.kind === 'heap')!.ranges.length).toBeGreaterThan(0);
  });

  test('in a worker thread: the same text, with progress over both runs', async () => {
    const seen: number[] = [];
    const { compareInWorker } = await compiled;
    const json = await compareInWorker(runs, (p) => seen.push(p.fraction));
    expect(json).toBe(compareTracesJson(runs));
    for (const f of seen) expect(f).toBeGreaterThanOrEqual(0);
    for (const f of seen) expect(f).toBeLessThanOrEqual(1);
  });

  test('a trace that is missing, or not a trace, is named', async () => {
    const missing = path.join(dir, 'gone.mwtrace');
    expect(() => compareTracesJson([runs[0], { ...runs[1], trace: missing }])).toThrow(new RegExp(`^${missing.replace(/[.]/g, '\\.')}: `));
    const text = path.join(dir, 'notes.mwtrace');
    writeFileSync(text, 'not a trace at all, just some text\n');
    const { compareInWorker } = await compiled;
    await expect(compareInWorker([{ ...runs[0], trace: text }, runs[1]])).rejects.toThrow(/notes\.mwtrace: /);
  });
});
