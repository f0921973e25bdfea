// The live-block index is exact: a seeded random workload of 10⁵ operations
// (test/programs/index-exact.c) prints, at every free and realloc, the linked
// set a brute force over its own table of live blocks finds; the trace's
// LINKED records must hold exactly those blocks, every time.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Model } from '../../analysis/model.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { buildInstrumented, programsDir, runTraced, scratch, traceOf } from '../support/programs.js';

/** Ordinal (rank among the blocks made at instrumented sites) → its LINKED
 *  set as ordinals, sorted; null when the block was never ended. */
function recordedSets(model: Model): Array<{ linked: number[]; partial: boolean } | null> {
  const ordinal = new Int32Array(model.blocks.count).fill(-1);
  const own: number[] = [];
  for (let b = 0; b < model.blocks.count; b++) {
    if (model.blocks.site[b] === 0) continue; // libc's own (stdout's buffer)
    ordinal[b] = own.length;
    own.push(b);
  }
  const setAt = new Map<number, number>();
  for (let i = 0; i < model.linked.count; i++) setAt.set(model.linked.event[i]!, i);
  return own.map((b) => {
    const ended = model.blocks.freeEvent[b]!;
    if (ended < 0) return null;
    const i = setAt.get(ended);
    if (i === undefined) return { linked: [], partial: false };
    const blocks = Array.from(model.linked.blocks.subarray(model.linked.start[i]!, model.linked.start[i + 1]!));
    return { linked: blocks.map((x) => ordinal[x]!).sort((x, y) => x - y), partial: model.linked.partial[i] === 1 };
  });
}

describe('the live-block index against a brute force', () => {
  for (const [opt, seed] of [
    ['-O2', 1],
    ['-O0', 20261125],
  ] as const) {
    it(`10⁵ random operations (${opt}, seed ${seed}): every LINKED set is the brute force's`, () => {
      const dir = scratch('index-exact');
      const exe = path.join(dir, 'index-exact');
      buildInstrumented('gcc', [opt, '-g'], [path.join(programsDir, 'index-exact.c')], exe);
      const ran = runTraced(exe, ['100000', String(seed)], dir, { env: { MEMWRAP_LINK_BLOCKS: '4096', MEMWRAP_LINK_BYTES: '16m' } });
      expect(ran.status).toBe(0);
      const model = decodeTrace(readFileSync(traceOf(dir, ran.pid)));
      expect(model.problems.filter((p) => p.severity === 'error')).toEqual([]);

      const lines = ran.stdout.trim().split('\n');
      const stats = Object.fromEntries(lines.at(-1)!.split(' ').slice(1).map((kv) => kv.split('=')).map(([k, v]) => [k!, Number(v)]));
      // the workload built what it is meant to test
      for (const what of ['interior', 'unaligned', 'self', 'two-places', 'cycles', 'chains', 'moved', 'aligned']) expect(stats[what], what).toBeGreaterThan(100);

      const recorded = recordedSets(model);
      expect(recorded).toHaveLength(stats.blocks!);
      let checked = 0;
      let nonEmpty = 0;
      const wrong: string[] = [];
      for (const line of lines.slice(0, -1)) {
        const [tag, ord, n, ...rest] = line.split(' ');
        expect(tag).toBe('E');
        const got = recorded[Number(ord)];
        if (!got) {
          wrong.push(`block ${ord}: not ended in the trace`);
          continue;
        }
        // a realloc that stayed in place moved nothing: no LINKED
        const want = n === '-' ? [] : rest.map(Number);
        if (n !== '-') expect(want).toHaveLength(Number(n));
        if (got.partial || got.linked.join(' ') !== want.join(' ')) wrong.push(`block ${ord}: recorded [${got.linked.join(' ')}]${got.partial ? ' (partial)' : ''}, brute force [${want.join(' ')}]`);
        checked++;
        if (want.length > 0) nonEmpty++;
      }
      expect(wrong.slice(0, 10)).toEqual([]);
      expect(checked).toBe(stats.blocks!); // every block was ended and checked
      expect(nonEmpty).toBeGreaterThan(5000);
    });
  }
});
