// Frees with a linked set: the freed block, its linked blocks, which of them the free orphaned; the leak → free map; `report --linked`; the linked-list sample end to end.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { linkedFrees, linkedSection, orphanedLeaks, orphaningEvents } from '../../analysis/linked.js';
import { NONE } from '../../analysis/model.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { runReport } from '../../cli/report.js';
import { capture } from '../fixtures/cli-capture.js';
import { studentMain } from '../fixtures/scenarios.js';
import { TraceBuilder } from '../fixtures/trace-builder.js';
import { buildInstrumented, runTraced, samplesDir, scratch, traceOf } from '../support/programs.js';

/**
 * main allocates A, B, D (demo.c:4, 24 B) and C (demo.c:15, 100 B); frees A, whose linked set is {B, C}; frees B; frees
 * D, whose linked set is {C}. C is never freed: A's free orphaned it, D's free found it already leaked.
 */
function linkedTrace(): TraceBuilder {
  const { b, t } = studentMain();
  const a = t.alloc({ site: 4, size: 24, addr: 0x1000 });
  const bb = t.alloc({ site: 4, size: 24, addr: 0x1020 });
  const c = t.alloc({ site: 9, size: 100, addr: 0x1040 });
  const d = t.alloc({ site: 4, size: 24, addr: 0x10c0 });
  t.free({ site: 6, block: a });
  t.linked([bb, c]);
  t.free({ site: 6, block: bb });
  t.free({ site: 6, block: d });
  t.linked([c]);
  t.exit(2);
  t.end(0, 0);
  return b;
}

describe('linkedFrees', () => {
  const model = decodeTrace(linkedTrace().build());

  test('one orphaned and one later-freed block', () => {
    const frees = linkedFrees(model);
    expect(frees).toHaveLength(2);
    const [first, second] = frees as [(typeof frees)[0], (typeof frees)[0]];
    expect(first.kind).toBe('free');
    expect(first.at).toMatchObject({ label: 'demo.c:20 main → free', file: '/home/student/demo.c', line: 20, interposed: false });
    expect(first.freed).toMatchObject({ block: 0, requestedBytes: 24, allocation: { label: 'demo.c:4 make_node → malloc', line: 4 } });
    expect(first.partial).toBe(false);
    expect(first.blocks.map((m) => [m.block, m.allocation.label, m.leaked, m.orphaned])).toEqual([
      [1, 'demo.c:4 make_node → malloc', false, false],
      [2, 'demo.c:15 main → calloc', true, true],
    ]);
    expect(first.blocks[0]!.freeEvent).toBe(model.blocks.freeEvent[1]);
    expect(first.blocks[0]!.freeEvent).toBeGreaterThan(first.event);
    expect(first.blocks[1]!.freeEvent).toBeNull();
    expect([first.orphaned, first.orphanedBytes]).toEqual([1, 100]);
    // C was already orphaned by the first free: leaked, but not orphaned here.
    expect(second.freed?.block).toBe(3);
    expect(second.blocks.map((m) => [m.block, m.leaked, m.orphaned])).toEqual([[2, true, false]]);
    expect(second.orphaned).toBe(0);
  });

  test('leaked block → the free that orphaned it', () => {
    const frees = linkedFrees(model);
    const by = orphaningEvents(model);
    expect(Array.from(by)).toEqual([NONE, NONE, frees[0]!.event, NONE]);
    const leaks = orphanedLeaks(model);
    expect(leaks).toHaveLength(1);
    expect(leaks[0]).toMatchObject({
      block: { block: 2, requestedBytes: 100, allocation: { line: 15 } },
      freeEvent: frees[0]!.event,
      at: { file: '/home/student/demo.c', line: 20, label: 'demo.c:20 main → free' },
    });
  });
});

describe('linkedSection', () => {
  test('keeps the first frees whole and counts them all', () => {
    const model = decodeTrace(linkedTrace().build());
    const all = linkedFrees(model);
    const one = linkedSection(model, 1);
    expect(one.frees).toEqual([all[0]]);
    expect([one.count, one.orphaned, one.orphanedBlocks]).toEqual([2, 1, 1]);
    expect(one.orphanedLeaks).toEqual(orphanedLeaks(model));
    expect(linkedSection(model, 0)).toMatchObject({ frees: [], count: 2, orphaned: 1, orphanedBlocks: 1, orphanedLeaks: [] });
  });
});

describe('report --linked', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'mw-linked-'));
  const file = path.join(dir, 'linked.mwtrace');
  writeFileSync(file, linkedTrace().build());

  test('text: each free, its freed block, its linked blocks and their marks', async () => {
    const r = await capture(runReport, [file, '--linked']);
    expect(r.code).toBe(0);
    expect(r.err).toBe('');
    expect(r.out).toContain(
      [
        'Frees with a linked set (2 of 2; 1 block orphaned in all)',
        '  free at event 6: demo.c:20 main → free',
        '    freed   demo.c:4 make_node → malloc (24 B)',
        '    linked  demo.c:4 make_node → malloc (24 B)  freed later',
        '    linked  demo.c:15 main → calloc (100 B)     orphaned',
        '  free at event 8: demo.c:20 main → free',
        '    freed   demo.c:4 make_node → malloc (24 B)',
        '    linked  demo.c:15 main → calloc (100 B)  leaked',
      ].join('\n'),
    );
    for (const line of r.out.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
    const one = await capture(runReport, [file, '--linked', '--top', '1']);
    expect(one.out).toContain('Frees with a linked set (1 of 2; 1 block orphaned in all)');
    expect(one.out).not.toContain('free at event 9');
  });

  test('--json has "linked"', async () => {
    const j = JSON.parse((await capture(runReport, [file, '--json', '--linked', '--top', '1'])).out);
    expect(j.linked.frees).toBe(2);
    expect(j.linked.orphanedBlocks).toBe(1);
    expect(j.linked.rows).toHaveLength(1);
    expect(j.linked.rows[0]).toMatchObject({
      event: 6,
      kind: 'free',
      at: { line: 20 },
      freed: { block: 0, id: 2 },
      orphaned: 1,
      blocks: [
        { block: 1, leaked: false, orphaned: false },
        { block: 2, leaked: true, orphaned: true, freeEvent: null },
      ],
    });
    expect(j.linked.orphanedLeaks).toEqual([expect.objectContaining({ freeEvent: 6, block: expect.objectContaining({ block: 2 }) })]);
    expect(j.peak).toBeUndefined();
  });
});

describe('samples/linked-list.c end to end', () => {
  test('the free at line 38 orphaned the block from line 33; --peak shows line 33', async () => {
    const work = scratch('linked-report');
    const exe = path.join(work, 'prog');
    buildInstrumented('gcc', ['-O0', '-g'], [path.join(samplesDir, 'linked-list.c')], exe);
    const ran = runTraced(exe, [], work);
    expect(ran.status).toBe(0);
    const trace = traceOf(work, ran.pid);

    const j = JSON.parse((await capture(runReport, [trace, '--json', '--linked'])).out);
    const isSample = (f: string | null): boolean => f !== null && f.endsWith('/linked-list.c');
    const at38 = j.linked.rows.filter((f: { at: { file: string | null; line: number } }) => isSample(f.at.file) && f.at.line === 38);
    expect(at38).toHaveLength(1);
    expect(at38[0].freed.allocation.line).toBe(32);
    expect(at38[0].blocks.map((m: { allocation: { line: number }; orphaned: boolean }) => [m.allocation.line, m.orphaned])).toEqual([[33, true]]);
    expect(j.linked.orphanedLeaks.map((l: { block: { allocation: { line: number } }; at: { line: number } }) => [l.block.allocation.line, l.at.line])).toEqual([
      [33, 38],
    ]);

    const text = (await capture(runReport, [trace, '--peak'])).out;
    expect(text).toMatch(/linked-list\.c:33 main → malloc\n {6}\| data->next->next = malloc\(sizeof \*data->next->next\);\n/);
    for (const line of text.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
  });
});
