// A short seeded fuzz campaign (test/fuzz/campaign.ts) on real traces, in CI's time budget: damage that a chunk's
// seal covers is never read silently (no different output without a word), no damage ever makes an internal error,
// and the damage reaches every outcome. A long one: test/fuzz/run-campaign.sh (MEMWRAP_FUZZ_MUTANTS, MEMWRAP_FUZZ_SEED).
import path from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { buildInstrumented, programsDir, runTraced, samplesDir, scratch, traceOf } from '../support/programs.js';
import { campaignTable, layout, runCampaign } from './campaign.js';
import { readFileSync } from 'node:fs';

const mutants = Number(process.env.MEMWRAP_FUZZ_MUTANTS ?? 60) || 60;
const seed = Number(process.env.MEMWRAP_FUZZ_SEED ?? 20261128) || 20261128;
const dir = scratch('fuzz-campaign');
const traces: string[] = [];

beforeAll(() => {
  // A one-thread sample, four threads in chunks of every early size, and a program with leaks.
  const programs = [
    { source: path.join(samplesDir, 'linked-list.c'), args: [] as string[], name: 'linked-list' },
    { source: path.join(programsDir, 'sealed-chunks.c'), args: [], name: 'sealed-chunks' },
    { source: path.join(programsDir, 'leaks.c'), args: [], name: 'leaks' },
  ];
  for (const p of programs) {
    const exe = path.join(dir, p.name);
    buildInstrumented('gcc', ['-O0', '-pthread'], [p.source], exe);
    const out = path.join(dir, `traces-${p.name}`);
    traces.push(traceOf(out, runTraced(exe, p.args, out).pid));
  }
});

describe(`a seeded fuzz campaign: ${mutants} damaged traces through report, dump, export and report --html`, () => {
  test('the traces have sealed chunks to damage', () => {
    for (const t of traces) expect(layout(new Uint8Array(readFileSync(t))).sealedCovered.length, t).toBeGreaterThan(0);
  });

  // A long campaign takes about half a second per damaged trace on a loaded machine.
  test('no silent difference for damage inside a sealed chunk; no internal error; the table', { timeout: Math.max(120_000, mutants * 2_000) }, async () => {
    const r = await runCampaign({ seed, mutants, traces, dir, htmlEvery: 10 });
    console.log(`fuzz campaign, seed ${seed}, ${r.mutants} mutants of ${traces.map((t) => path.basename(path.dirname(t))).join(', ')}:\n${campaignTable(r)}`);
    expect(r.silentCovered).toEqual([]);
    expect(r.internalErrors).toEqual([]);
    const sealed = r.table.get('sealed chunk');
    expect(sealed?.get('warning') ?? 0).toBeGreaterThan(0);
  });
});
