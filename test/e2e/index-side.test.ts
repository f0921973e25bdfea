// Blocks of 16 MiB and more do not fit the live-block index's packed 8-byte entry (runtime/mw-blocks.c): they keep
// their start bit and hold their id and size in a side entry in the stripe's hash table. test/programs/index-side.c
// links, grows, frees and leaks such blocks; every LINKED set, the leak classes at exit and online mode's tables
// (whose freed bytes come from the index's sizes) must be what the program did.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Model } from '../../analysis/model.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { buildInstrumented, programsDir, run, runTraced, scratch, traceOf, wrapper } from '../support/programs.js';

const MIB = 1 << 20;
const env = { MEMWRAP_LINK_BLOCKS: '4096', MEMWRAP_LINK_BYTES: '256m' };

/** The blocks made at instrumented sites, in order (libc's own, such as stdout's buffer, left out). */
function ownBlocks(model: Model): number[] {
  const own: number[] = [];
  for (let b = 0; b < model.blocks.count; b++) if (model.blocks.site[b] !== 0) own.push(b);
  return own;
}

function json(file: string, ...args: string[]): unknown {
  const r = run(process.execPath, [wrapper, 'report', file, '--json', '--top', '1000', ...args]);
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return JSON.parse(r.stdout);
}

describe('blocks too large for a packed index entry', () => {
  const dir = scratch('index-side');
  const exe = path.join(dir, 'index-side');

  it('are linked, followed, classified and sized exactly', () => {
    buildInstrumented('gcc', ['-O1', '-g'], [path.join(programsDir, 'index-side.c')], exe);
    const ran = runTraced(exe, [], path.join(dir, 'full'), { env });
    expect(ran.status).toBe(0);
    expect(ran.stdout).toBe('done\n');
    const trace = traceOf(path.join(dir, 'full'), ran.pid);
    const model = decodeTrace(readFileSync(trace));
    expect(model.problems.filter((p) => p.severity === 'error')).toEqual([]);

    const own = ownBlocks(model);
    const ordinal = new Map(own.map((b, i) => [b, i]));
    expect(own.map((b) => model.blocks.requested[b])).toEqual([20 * MIB, 32, 48, 64, 17 * MIB, 16, 24 * MIB, 18 * MIB, 16 * MIB, 17 * MIB]);

    const linkedAt = new Map<number, { blocks: number[]; partial: boolean }>();
    for (let i = 0; i < model.linked.count; i++) {
      const blocks = Array.from(model.linked.blocks.subarray(model.linked.start[i]!, model.linked.start[i + 1]!));
      linkedAt.set(model.linked.event[i]!, { blocks: blocks.map((b) => ordinal.get(b)!).sort((x, y) => x - y), partial: model.linked.partial[i] === 1 });
    }
    const ended = own.map((b) => {
      const at = model.blocks.freeEvent[b]!;
      if (at < 0) return 'live';
      const l = linkedAt.get(at);
      return l ? `${l.blocks.join(' ')}${l.partial ? ' partial' : ''}` : '';
    });
    expect(ended).toEqual(['2', '2', 'live', '0 1 2', 'live', '', '4', 'live', 'live', 'live']);

    expect(model.leakScan).toEqual({ present: true, partial: false });
    const names = ['direct', 'indirect', 'reachable'];
    const classes = own.map((b) => names[model.blocks.leakClass[b]!] ?? '-');
    expect(classes).toEqual(['-', '-', 'reachable', '-', 'reachable', '-', '-', 'direct', 'indirect', 'reachable']);
  }, 120_000);

  it("online mode's tables equal the full trace's", () => {
    const a = runTraced(exe, [], path.join(dir, 'full2'), { env });
    const b = runTraced(exe, [], path.join(dir, 'online'), { env: { ...env, MEMWRAP_MODE: 'online' } });
    expect(a.status).toBe(0);
    expect(b.status).toBe(0);
    const full = traceOf(path.join(dir, 'full2'), a.pid);
    const tables = traceOf(path.join(dir, 'online'), b.pid);
    // Online mode counts calls, not blocks: its rows' allocations and frees are null, the rest equals the trace's.
    type Rows = { attribution: { rows: Record<string, unknown>[] } };
    const strip = (j: unknown, blocks: 'null' | 'keep'): unknown => {
      const a = JSON.parse(JSON.stringify((j as Rows).attribution).replace(/ \(tid \d+\)/g, '')) as Rows['attribution'];
      if (blocks === 'null') for (const r of a.rows) Object.assign(r, { allocations: null, frees: null });
      return a;
    };
    for (const by of ['function', 'thread']) {
      const online = json(tables, '--by', by);
      expect(strip(online, 'keep'), by).toEqual(strip(json(full, '--by', by), 'null'));
    }
  }, 120_000);
});
