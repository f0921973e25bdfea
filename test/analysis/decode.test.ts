// The decoder on crafted traces: event order, frames and stack depths, blocks and realloc variants, linked sets, threads, attribution, statics, run end.
import { describe, expect, test } from 'vitest';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { dumpTraceText } from '../../analysis/dump.js';
import { Kind } from '../../analysis/trace/format.js';
import { NONE, type Model } from '../../analysis/model.js';
import { S, TraceBuilder } from '../fixtures/trace-builder.js';
import { DEMO_SITES, basicTrace, killedTrace, signalBigEndianTrace, twoThreadsTrace } from '../fixtures/scenarios.js';

const kinds = (m: Model): string[] =>
  Array.from(m.events.kind, (k) => Object.entries(Kind).find(([, v]) => v === k)![0]);

describe('single thread calls and returns', () => {
  const b = new TraceBuilder({ complete: true });
  const t = b.thread(0);
  t.threadBegin(1);
  t.unit(1, DEMO_SITES);
  t.enter(1, 128); // main
  t.enter(3, 192); // make_node
  t.exit(5);
  t.enter(10, 256); // worker (depth grows relative to the last ENTER, not the open frame)
  t.enter(3, 320);
  t.exit(5);
  t.exit(11);
  t.exit(2);
  t.end(0, 0);
  const m = decodeTrace(b.build());

  test('events in thread order with sites', () => {
    expect(m.problems).toEqual([]);
    expect(kinds(m)).toEqual(['THREAD_BEGIN', 'ENTER', 'ENTER', 'EXIT', 'ENTER', 'ENTER', 'EXIT', 'EXIT', 'EXIT', 'END']);
    expect(Array.from(m.events.site)).toEqual([0, 1, 3, 5, 10, 3, 5, 11, 2, 0]);
  });

  test('stack depth after every event', () => {
    expect(Array.from(m.events.stack)).toEqual([0, 128, 192, 128, 256, 320, 256, 128, 0, 0]);
    expect(Array.from(m.events.stackTotal)).toEqual(Array.from(m.events.stack));
    expect(m.threads[0]!.maxStack).toBe(320);
    expect(m.threads[0]!.maxStackEvent).toBe(5);
  });

  test('frames: enter, exit, depth, parent, exit site', () => {
    const f = m.frames;
    expect(f.count).toBe(4);
    expect(Array.from(f.enter)).toEqual([1, 2, 4, 5]);
    expect(Array.from(f.exit)).toEqual([8, 3, 7, 6]);
    expect(Array.from(f.entrySite)).toEqual([1, 3, 10, 3]);
    expect(Array.from(f.exitSite)).toEqual([2, 5, 11, 5]);
    expect(Array.from(f.depth)).toEqual([128, 192, 256, 320]);
    expect(Array.from(f.parent)).toEqual([NONE, 0, 0, 2]);
    expect(Array.from(m.events.frame)).toEqual([NONE, 0, 1, 1, 2, 3, 3, 2, 0, NONE]);
  });

  test('run end', () => {
    expect(m.end).toEqual({ how: 'exit', code: 0, complete: true, event: 9 });
  });
});

describe('heap records', () => {
  const b = basicTrace();
  const m = decodeTrace(b.build());
  const blk = m.blocks;

  test('no problems', () => {
    expect(m.problems).toEqual([]);
  });

  test('blocks table', () => {
    expect(blk.count).toBe(6);
    // seq: 1 THREAD_BEGIN, 2 a, 3 b, 4 c, 5 d, 6 e, 7 f, 8 realloc e→none, 9 failed, 10 free a, 11 untracked
    expect(Array.from(blk.id)).toEqual([2, 3, 4, 5, 6, 7]);
    expect(Array.from(blk.requested)).toEqual([24, 24, 100, 200, 50, 1024]);
    expect(Array.from(blk.usable)).toEqual([24, 24, 104, 200, 56, 1024]);
    expect(Array.from(blk.address)).toEqual([0x5000, 0x5020, 0x5040, 0x6000, 0x7000, 0x8000]);
    expect(Array.from(blk.site)).toEqual([4, 4, 9, 7, 7, 0]);
    expect(Array.from(blk.fn)).toEqual([S.MALLOC, S.MALLOC, S.CALLOC, S.REALLOC, S.REALLOC, S.MALLOC]);
    expect(Array.from(blk.interposed)).toEqual([0, 0, 0, 0, 0, 1]);
    const ev = (b: number): string => kinds(m)[blk.freeEvent[b]!] ?? 'live';
    expect([0, 1, 2, 3, 4, 5].map(ev)).toEqual(['FREE', 'live', 'REALLOC', 'live', 'REALLOC', 'live']);
  });

  test('realloc variants: old and new, from NULL, to no block, failed', () => {
    const reallocs = kinds(m).flatMap((k, i) => (k === 'REALLOC' ? [i] : []));
    expect(reallocs.map((i) => [m.events.oldBlock[i], m.events.newBlock[i]])).toEqual([
      [2, 3],
      [NONE, 4],
      [4, NONE],
      [NONE, NONE],
    ]);
  });

  test('heap live after each heap event', () => {
    const heapEvents = kinds(m).flatMap((k, i) => (['ALLOC', 'FREE', 'REALLOC'].includes(k) ? [i] : []));
    expect(heapEvents.map((i) => m.events.heapRequested[i])).toEqual([24, 48, 148, 248, 298, 1322, 1272, 1272, 1248, 1248]);
    expect(heapEvents.map((i) => m.events.heapUsable[i])).toEqual([24, 48, 152, 248, 304, 1328, 1272, 1272, 1248, 1248]);
  });

  test('linked set of the free, untracked free', () => {
    expect(m.linked.count).toBe(1);
    expect(kinds(m)[m.linked.event[0]!]).toBe('FREE');
    expect(m.events.oldBlock[m.linked.event[0]!]).toBe(0);
    expect(Array.from(m.linked.blocks.subarray(m.linked.start[0], m.linked.start[1]))).toEqual([1]);
    expect(m.linked.partial[0]).toBe(0);
    expect(m.untrackedFrees.count).toBe(1);
    expect(m.untrackedFrees.address[0]).toBe(0x1234);
  });

  test('interposed allocation attributed to the innermost open frame', () => {
    const alloc = blk.allocEvent[5]!;
    const frame = m.events.frame[alloc]!;
    expect(m.frames.entrySite[frame]).toBe(1); // main
  });

  test('statics and program', () => {
    expect(m.statics.count).toBe(2);
    expect(Array.from(m.statics.size)).toEqual([400, 4]);
    expect(Array.from(m.statics.address)).toEqual([0x601040, 0x601200]);
    expect(Array.from(m.statics.site)).toEqual([8, 13]);
    expect(m.statics.totalBytes).toBe(404);
    expect(m.program).toEqual({ path: '/home/student/demo', cwd: '/home/student' });
  });

  test('times: first TIME applies to earlier events, later ones are interpolated', () => {
    const time = Array.from(m.events.time);
    expect(time[0]).toBe(1000);
    expect(time.at(-1)).toBe(1500);
    for (let i = 1; i < time.length; i++) expect(time[i]!).toBeGreaterThanOrEqual(time[i - 1]!);
    expect(time.some((x) => x > 1000 && x < 1500)).toBe(true);
  });

  test('sites table from the UNIT record', () => {
    const s = m.sites;
    expect(s.count).toBe(DEMO_SITES.length + 1);
    expect(s.kind[4]).toBe(S.MALLOC);
    expect(s.strings[s.file[4]!]).toBe('demo.c');
    expect(s.strings[s.func[4]!]).toBe('make_node');
    expect(s.strings[s.name[4]!]).toBe('malloc');
    expect(s.line[4]).toBe(4);
  });
});

describe('two threads', () => {
  const m = decodeTrace(twoThreadsTrace().build());

  test('merged by seq; calls stay after their thread\'s previous heap record', () => {
    expect(m.problems).toEqual([]);
    const rows = Array.from(m.events.kind, (k, i) => `${m.threads[m.events.thread[i]!]!.index}:${kinds(m)[i]}`);
    expect(rows).toEqual([
      '0:THREAD_BEGIN', // seq 1
      '0:ENTER',
      '0:ALLOC', // seq 2
      '0:ENTER', // still keyed by seq 2
      '0:EXIT',
      '1:THREAD_BEGIN', // seq 3
      '1:ENTER',
      '1:ALLOC', // seq 4
      '1:FREE', // seq 5
      '1:EXIT',
      '1:THREAD_END',
      '0:FREE', // seq 6
      '0:EXIT',
      '0:END',
    ]);
  });

  test('cross-thread frees and per-thread stacks', () => {
    expect(m.blocks.count).toBe(2);
    expect(m.events.thread[m.blocks.freeEvent[0]!]).toBe(1);
    expect(m.events.thread[m.blocks.freeEvent[1]!]).toBe(0);
    expect(Array.from(m.events.stackTotal)).toEqual([0, 100, 100, 160, 100, 100, 164, 164, 164, 100, 100, 100, 0, 0]);
    expect(m.threads.map((t) => [t.index, t.osTid, t.maxStack, t.events])).toEqual([
      [0, 500, 160, 8],
      [1, 501, 64, 6],
    ]);
    expect(m.threads[1]!.endEvent).toBe(10);
  });

  test('interposed free on thread 1 is attributed to its open frame', () => {
    const free = m.blocks.freeEvent[0]!;
    expect(m.frames.entrySite[m.events.frame[free]!]).toBe(10); // worker
  });
});

describe('UNWIND and frames open at the end', () => {
  test('UNWIND closes frames; depth returns to the remaining frame', () => {
    const b = new TraceBuilder({ complete: true });
    const t = b.thread(0);
    t.threadBegin(1);
    t.unit(1, DEMO_SITES);
    t.enter(1, 100);
    t.enter(3, 200);
    t.enter(10, 300);
    t.unwind(2); // longjmp back into main
    t.exit(2);
    t.end(0, 0);
    const m = decodeTrace(b.build());
    expect(m.problems).toEqual([]);
    expect(Array.from(m.events.stack)).toEqual([0, 100, 200, 300, 100, 0, 0]);
    expect(Array.from(m.frames.exit)).toEqual([5, 4, 4]);
    expect(Array.from(m.frames.exitSite)).toEqual([2, 0, 0]);
    expect(m.events.frame[4]).toBe(1); // the outermost frame UNWIND closed
  });

  test('killed run: frames stay open, no END, a warning', () => {
    const m = decodeTrace(killedTrace().build());
    expect(m.end).toEqual({ how: 'unknown', code: null, complete: false, event: NONE });
    expect(Array.from(m.frames.exit)).toEqual([NONE, NONE]);
    expect(m.problems.map((p) => p.message)).toEqual([expect.stringContaining('no END record')]);
    expect(m.blocks.count).toBe(1);
    expect(m.blocks.freeEvent[0]).toBe(NONE);
  });

  test('signal, big-endian header, 4-byte pointers', () => {
    const m = decodeTrace(signalBigEndianTrace().build());
    expect(m.problems).toEqual([]);
    expect(m.header.littleEndian).toBe(false);
    expect(m.header.pointerSize).toBe(4);
    expect(m.end).toEqual({ how: 'signal', code: 11, complete: false, event: 4 });
    expect(m.blocks.address[0]).toBe(0x804a000);
  });

  test('exit recorded but the header is not complete', () => {
    const b = new TraceBuilder({ complete: false });
    b.thread(0).threadBegin(1);
    b.thread(0).end(0, 2);
    const m = decodeTrace(b.build());
    expect(m.end).toEqual({ how: 'exit', code: 2, complete: false, event: 1 });
  });
});

describe('semantic problems are warnings', () => {
  test('unknown block, unknown site, stray EXIT and LINKED, too many UNWIND', () => {
    const b = new TraceBuilder({ complete: true });
    const t = b.thread(0);
    t.threadBegin(1);
    t.unit(1, DEMO_SITES);
    const exitAt = t.mark();
    t.exit(2); // no frame open
    const freeAt = t.mark();
    t.free({ site: 6, block: 1 }); // seq 1 is the THREAD_BEGIN, not a block
    const siteAt = t.mark();
    t.enter(500, 10);
    t.unwind(3);
    const linkedAt = t.mark();
    t.linked([1]);
    t.end(0, 0);
    const m = decodeTrace(b.build());
    const msgs = m.problems.map((p) => [p.severity, p.offset, p.message]);
    expect(msgs).toEqual([
      ['warning', b.offsetOf(exitAt), expect.stringMatching(/EXIT record but no frame is open/)],
      ['warning', b.offsetOf(freeAt), expect.stringMatching(/FREE record ends block 0x1, which is not live/)],
      ['warning', b.offsetOf(siteAt), expect.stringMatching(/ENTER record names site 500/)],
      ['warning', expect.any(Number), expect.stringMatching(/UNWIND of 3 frames but only 1 are open/)],
      ['warning', b.offsetOf(linkedAt), expect.stringMatching(/LINKED record does not follow/)],
    ]);
    for (const p of m.problems) expect(p.message).toContain(`0x${p.offset!.toString(16)}`);
    const dump = dumpTraceText(b.build());
    expect(dump).toContain(`  0x${b.offsetOf(exitAt).toString(16).padStart(6, '0')} t0 EXIT delta=2 (ignored)\n`);
    expect(dump).toContain(`  0x${b.offsetOf(linkedAt).toString(16).padStart(6, '0')} t0 LINKED count=1 blocks=0x1 (ignored)\n`);
    expect(m.events.oldBlock[kinds(m).indexOf('FREE')]).toBe(NONE);
  });

  test('a flood of warnings is capped per kind', () => {
    const b = new TraceBuilder({ complete: true });
    const t = b.thread(0);
    t.threadBegin(1);
    for (let i = 0; i < 100; i++) t.free({ site: 0, block: 1000 + i, seq: 2000 + i });
    t.end(0, 0);
    const m = decodeTrace(b.build());
    expect(m.problems).toHaveLength(21);
    expect(m.problems[20]!.message).toBe('80 more problems like the above (unknown-block) not shown');
  });
});
