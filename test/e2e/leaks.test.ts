// Leak classes at exit, recorded by the runtime (EXT/LEAKS) for test/programs/leaks.c.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { leaksAtExit } from '../../analysis/leaks.js';
import { siteInfo } from '../../analysis/sites.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { buildInstrumented, programsDir, runTraced, scratch, traceOf } from '../support/programs.js';

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
      expect(model.header.minor).toBe(1);
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
