// EXT/LEAKS (format 1.1): decoding, skipping unknown EXT subkinds, truncated payloads, the dump line, and analysis/leaks.ts.
import { describe, expect, test } from 'vitest';
import { dumpTraceText } from '../../analysis/dump.js';
import { leaksAtExit } from '../../analysis/leaks.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { LeakClass } from '../../analysis/trace/format.js';
import { studentMain } from '../fixtures/scenarios.js';
import { TraceBuilder } from '../fixtures/trace-builder.js';

/** A (reachable), B and C (direct, indirect: C linked from a freed block D), E freed. */
function leaksTrace(opts: { partial?: boolean; extra?: boolean } = {}): { b: TraceBuilder; ids: Record<string, number> } {
  const { b, t } = studentMain({ minor: 1, complete: true });
  const a = t.alloc({ site: 4, size: 24, addr: 0x1000 });
  const bb = t.alloc({ site: 9, size: 100, addr: 0x1020 });
  const c = t.alloc({ site: 4, size: 24, addr: 0x10a0 });
  const d = t.alloc({ site: 4, size: 24, addr: 0x10c0 });
  const e = t.alloc({ site: 9, size: 8, addr: 0x10e0 });
  t.free({ site: 6, block: d });
  t.linked([c]);
  t.free({ site: 6, block: e });
  t.unwind(1);
  if (opts.extra) t.ext(9, [9, 9, 9]); // 7 is SEAL since format 1.5: 9 is still unknown
  t.leaks(
    [
      [a, LeakClass.REACHABLE],
      [bb, LeakClass.DIRECT],
      [c, LeakClass.INDIRECT],
    ],
    opts.partial,
  );
  t.end(0, 0);
  return { b, ids: { a, bb, c, d, e } };
}

describe('EXT/LEAKS decoding', () => {
  test('classes land on the blocks; freed blocks stay unclassified', () => {
    const m = decodeTrace(leaksTrace().b.build());
    expect(m.problems).toEqual([]);
    expect(m.leakScan).toEqual({ present: true, partial: false });
    expect(Array.from(m.blocks.leakClass)).toEqual([2, 0, 1, 255, 255]);
  });

  test('the partial flag', () => {
    expect(decodeTrace(leaksTrace({ partial: true }).b.build()).leakScan).toEqual({ present: true, partial: true });
  });

  test('no LEAKS record: nothing classified', () => {
    const b = new TraceBuilder({ minor: 1 });
    b.thread(0).threadBegin(1);
    b.thread(0).alloc({ size: 8, addr: 0x100 });
    const m = decodeTrace(b.build());
    expect(m.leakScan.present).toBe(false);
    expect(Array.from(m.blocks.leakClass)).toEqual([255]);
  });

  test('an unknown EXT subkind is skipped by its length, with a warning', () => {
    const { b } = leaksTrace({ extra: true });
    const m = decodeTrace(b.build());
    expect(m.problems).toHaveLength(1);
    expect(m.problems[0]).toMatchObject({ severity: 'warning', thread: 0 });
    expect(m.problems[0]!.message).toMatch(/EXT record of unknown subkind 9 \(3 payload bytes\) skipped$/);
    expect(Array.from(m.blocks.leakClass)).toEqual([2, 0, 1, 255, 255]);
    expect(m.end.how).toBe('exit');
  });

  test('fields a newer minor appends to LEAKS are skipped', () => {
    const b = new TraceBuilder({ minor: 2 });
    const t = b.thread(0);
    t.threadBegin(1);
    const a = t.alloc({ size: 8, addr: 0x100 });
    t.ext(1, [0, 1, 0, 2, 0x55, 0x66]); // flags, count 1, (seq − id = 0, class 2), then two unknown bytes
    t.end(0, 0);
    const m = decodeTrace(b.build());
    expect(a).toBe(2);
    expect(m.problems).toEqual([]);
    expect(Array.from(m.blocks.leakClass)).toEqual([2]);
    expect(m.end.how).toBe('exit');
  });

  test('a truncated EXT payload is an error naming its offset', () => {
    const b = new TraceBuilder({ minor: 1 });
    const t = b.thread(0);
    t.threadBegin(1);
    t.alloc({ size: 8, addr: 0x100 });
    const at = t.mark();
    t.ext(1, [0, 1, 0], { length: 40 });
    const m = decodeTrace(b.build());
    const off = b.offsetOf(at);
    const err = m.problems.find((p) => p.severity === 'error');
    expect(err).toBeDefined();
    expect(err!.offset).toBe(off);
    expect(err!.message).toMatch(new RegExp(`^at offset 0x${off.toString(16)} \\(${off}\\) \\(thread 0\\): truncated EXT record: its payload of 40 bytes`));
  });

  test('LEAKS fields that overrun their own payload are corrupt', () => {
    const b = new TraceBuilder({ minor: 1 });
    const t = b.thread(0);
    t.threadBegin(1);
    t.ext(1, [0, 3, 0]); // count 3 but one byte left
    t.end(0, 0);
    const m = decodeTrace(b.build());
    expect(m.problems[0]!.severity).toBe('error');
    expect(m.problems[0]!.message).toMatch(/corrupt EXT record: classified block count 3 cannot fit/);
  });

  test('dump prints the classes', () => {
    const { b, ids } = leaksTrace({ extra: true });
    const text = dumpTraceText(b.build());
    expect(text).toContain(`EXT LEAKS length=8 count=3 blocks=0x${ids.a!.toString(16)}:reachable,0x${ids.bb!.toString(16)}:direct,0x${ids.c!.toString(16)}:indirect`);
    expect(text).toMatch(/EXT EXT9 length=3 \(ignored\)/);
    expect(text).toMatch(/^MWTRACE 1\.1 /);
  });
});

describe('leaksAtExit', () => {
  test('by class, then by site, with the orphaning free', () => {
    const { b } = leaksTrace();
    const r = leaksAtExit(decodeTrace(b.build()));
    expect(r.present).toBe(true);
    expect(r.partial).toBe(false);
    expect(r.unclassified).toBe(0);
    expect(r.classes.map((c) => [c.class, c.count, c.bytes])).toEqual([
      ['direct', 1, 100],
      ['indirect', 1, 24],
      ['reachable', 1, 24],
    ]);
    const direct = r.classes[0]!.sites[0]!;
    expect(direct.allocation.label).toBe('demo.c:15 main → calloc');
    expect(direct.blocks[0]!.orphanedBy).toBeNull();
    const indirect = r.classes[1]!.sites[0]!;
    expect(indirect.allocation.label).toBe('demo.c:4 make_node → malloc');
    expect(indirect.blocks[0]!.orphanedBy?.at.label).toBe('demo.c:20 main → free');
  });

  test('without a LEAKS record every live block is unclassified', () => {
    const b = new TraceBuilder();
    b.thread(0).threadBegin(1);
    b.thread(0).alloc({ size: 8, addr: 0x100 });
    const r = leaksAtExit(decodeTrace(b.build()));
    expect(r.present).toBe(false);
    expect(r.classes.every((c) => c.count === 0)).toBe(true);
    expect([r.unclassified, r.unclassifiedBytes]).toEqual([1, 8]);
  });
});
