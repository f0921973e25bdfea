// Leak classes at exit, recorded by the runtime (EXT/LEAKS) for test/programs/leaks.c.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { leaksAtExit } from '../../analysis/leaks.js';
import { siteInfo } from '../../analysis/sites.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { READER_MINOR } from '../../analysis/trace/format.js';
import { buildInstrumented, programsDir, run, runTraced, samplesDir, scratch, traceOf, wrapper } from '../support/programs.js';

for (const opt of ['-O0', '-O2']) {
  describe(`leaks.c at ${opt}`, () => {
    it('classifies static, stack, list head and list node', () => {
      const dir = scratch('leaks');
      const exe = path.join(dir, 'prog');
      buildInstrumented('gcc', [opt, '-g'], [path.join(programsDir, 'leaks.c')], exe);
      const ran = runTraced(exe, [], dir);
      expect(ran.status).toBe(0);
      const model = decodeTrace(readFileSync(traceOf(dir, ran.pid)));
      expect(model.problems).toEqual([]);
      expect(model.header.minor).toBe(READER_MINOR - 1); // 1.5: no raw segments in a trace this short
      expect(model.leakScan).toEqual({ present: true, partial: false });
      const byLine = new Map<number, string>();
      const names = ['direct', 'indirect', 'reachable'];
      for (let b = 0; b < model.blocks.count; b++) {
        const info = siteInfo(model, model.blocks.site[b]!);
        if (info?.file?.endsWith('leaks.c')) byLine.set(info.line, names[model.blocks.leakClass[b]!] ?? 'none');
      }
      expect(Object.fromEntries(byLine)).toEqual({
        15: 'reachable',
        16: 'reachable',
        18: 'direct',
        19: 'indirect',
        27: 'reachable',
        28: 'none',
      });
      const r = leaksAtExit(model);
      expect(r.classes[0]!.sites.map((s) => s.allocation.line)).toEqual([18]);
      expect(r.classes[1]!.sites.map((s) => s.allocation.line)).toEqual([19]);
    });
  });
}

describe('report --leaks and --fail-on leaks', () => {
  const dir = scratch('leaks-cli');

  function traced(source: string): string {
    const exe = path.join(dir, path.basename(source, '.c'));
    buildInstrumented('gcc', ['-O0'], [source], exe);
    const ran = runTraced(exe, [], path.join(dir, 'traces'));
    expect(ran.status).toBe(0);
    return traceOf(path.join(dir, 'traces'), ran.pid);
  }

  it('names the free that orphaned the third node of the list, and fails the run', () => {
    const trace = traced(path.join(samplesDir, 'linked-list.c'));
    const json = run(process.execPath, [wrapper, 'report', trace, '--leaks', '--json', '--fail-on', 'leaks']);
    expect(json.status).toBe(1);
    const leaks = (JSON.parse(json.stdout) as { leaks: { classes: Array<{ class: string; count: number; sites: Array<{ allocation: { line: number }; blocks: Array<{ orphanedBy: { at: { line: number } } | null }> }> }> } }).leaks;
    const direct = leaks.classes.find((c) => c.class === 'direct')!;
    expect(direct.sites.map((s) => s.allocation.line).sort()).toEqual([31, 33]);
    const third = direct.sites.find((s) => s.allocation.line === 33)!;
    expect(third.blocks[0]!.orphanedBy?.at.line).toBe(38);
    const text = run(process.execPath, [wrapper, 'report', trace, '--leaks']);
    expect(text.stdout).toMatch(/direct leak: 2 blocks, 32 B/);
    expect(text.stdout).toMatch(/orphaned by the free at .*linked-list\.c:38 main → free/);
  });

  it('shows the source line of every site live when a budget was exceeded, and fails on it', () => {
    const trace = traced(path.join(samplesDir, 'linked-list.c'));
    const ran = run(process.execPath, [wrapper, 'report', trace, '--budget', 'heap=1K', '--fail-on', 'budget']);
    expect(ran.status).toBe(1);
    expect(ran.stdout).toMatch(/heap ≤ 1\.0 KiB: max 4\.0 KiB at event \d+, EXCEEDED in 1 range/);
    expect(ran.stdout).toMatch(/linked-list\.c:33 main → malloc\n +\| data->next->next = malloc\(sizeof \*data->next->next\);/);
    expect(run(process.execPath, [wrapper, 'report', trace, '--budget', 'heap=8K', '--fail-on', 'budget']).status).toBe(0);
  });

  it('lists still-reachable blocks by site, and heads the top-sites column with what it counts', () => {
    const trace = traced(path.join(programsDir, 'leaks.c'));
    const text = run(process.execPath, [wrapper, 'report', trace, '--leaks']).stdout;
    const reachable = text.slice(text.indexOf('still reachable:'));
    // stdout's 4 KiB buffer (allocated inside libc by printf) is the fourth.
    expect(reachable).toMatch(/^still reachable: 4 blocks, 4.1 KiB\n +4.0 KiB +1  main \(via libc\/uninstrumented\)\n/);
    // One line per site under its class: the static root (15), the node it links (16), main's stack (27).
    const lines = [...reachable.matchAll(/leaks\.c:(\d+) /g)].map((m) => Number(m[1]));
    expect(lines.sort((a, b) => a - b)).toEqual([15, 16, 27]);
    expect(text).toMatch(/requested +allocs +live at exit +site/);
    expect(text).not.toMatch(/ leaked +site/);
  });

  it('passes a run whose only live memory is still reachable (stdout’s buffer)', () => {
    const trace = traced(path.join(samplesDir, 'recursion.c'));
    const ran = run(process.execPath, [wrapper, 'report', trace, '--leaks', '--fail-on', 'leaks']);
    expect(ran.status).toBe(0);
    expect(ran.stdout).toMatch(/direct leak: 0 blocks/);
    expect(ran.stdout).toMatch(/still reachable: 1 block/);
  });
});
