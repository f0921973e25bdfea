// What explains a frame (analysis/frame-detail.ts) on hand-built traces: the caller's call lines from CALL sites (one
// line, or several), the bytes from entry depths, locals from LOCAL sites, the compiler's size; and a trace whose site
// tables have no CALL or LOCAL sites (an older instrumenter's) read as before, with nothing invented.
import { describe, expect, test } from 'vitest';
import { callStackAt } from '../../analysis/event-detail.js';
import { explainStack, traceNamesCallLines } from '../../analysis/frame-detail.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import type { StackUnit } from '../../analysis/worst-stack.js';
import { S, TraceBuilder, type SiteDef } from '../fixtures/trace-builder.js';

const F = '/src/t.c';
const RECORDED: SiteDef[] = [
  { kind: S.ENTRY, file: F, func: 'main', name: 'main', line: 20 }, // 1
  { kind: S.FALLOFF, file: F, func: 'main', name: 'main', line: 30 }, // 2
  { kind: S.ENTRY, file: F, func: 'walk', name: 'walk', line: 5 }, // 3
  { kind: S.FALLOFF, file: F, func: 'walk', name: 'walk', line: 12 }, // 4
  { kind: S.MALLOC, file: F, func: 'walk', name: 'malloc', line: 7 }, // 5
];
const FRAME_SITES: SiteDef[] = [
  { kind: S.CALL, file: F, func: 'main', name: 'walk', line: 24 },
  { kind: S.CALL, file: F, func: 'walk', name: 'walk', line: 10 },
  { kind: S.CALL, file: F, func: 'walk', name: 'walk', line: 9 },
  { kind: S.LOCAL, file: F, func: 'walk', name: 'char scratch[128]', line: 6 },
  { kind: S.LOCAL, file: F, func: 'main', name: 'int n', line: 21 },
];

/** main (depth 100) calls walk (300), which calls itself (520) and allocates. */
function trace(sites: SiteDef[]) {
  const b = new TraceBuilder({ complete: true });
  const t = b.thread(0);
  t.threadBegin(1);
  t.unit(1, sites);
  t.enter(1, 100);
  t.enter(3, 300);
  t.enter(3, 520);
  t.alloc({ site: 5, size: 8, addr: 0x1000 });
  t.exit(4);
  t.exit(4);
  t.exit(2);
  t.end(0, 0);
  const model = decodeTrace(b.build());
  const alloc = [...model.events.kind.keys()].find((e) => model.events.kind[e] === 7)!;
  return { model, stack: callStackAt(model, alloc) };
}

describe('explainStack', () => {
  test('call lines, bytes, locals and the compiler size of each frame, innermost first', () => {
    const { model, stack } = trace([...RECORDED, ...FRAME_SITES]);
    expect(model.problems).toEqual([]);
    expect(traceNamesCallLines(model)).toBe(true);
    const units: StackUnit[] = [{ v: 1, source: F, compiler: 'gcc', calls: null, functions: [{ id: 'walk', name: 'walk', file: 't.c', line: 5, bytes: 208, kind: 'static' }] }];
    const frames = explainStack(model, stack, units);
    expect(frames.map((f) => [f.function, f.call?.lines ?? null, f.call?.label ?? null, f.bytes, f.compilerBytes, f.locals.map((l) => `${l.line}: ${l.text}`)])).toEqual([
      ['walk', [9, 10], '/src/t.c:9 or 10', 220, 208, ['6: char scratch[128]']],
      ['walk', [24], '/src/t.c:24', 200, 208, ['6: char scratch[128]']],
      ['main', null, null, null, null, ['21: int n']],
    ]);
  });

  test('a trace without CALL and LOCAL sites: the same stack and bytes, no call lines or locals', () => {
    const { model, stack } = trace(RECORDED);
    expect(traceNamesCallLines(model)).toBe(false);
    const frames = explainStack(model, stack);
    expect(frames.map((f) => [f.function, f.call, f.bytes, f.compilerBytes, f.locals])).toEqual([
      ['walk', null, 220, null, []],
      ['walk', null, 200, null, []],
      ['main', null, null, null, []],
    ]);
  });
});
