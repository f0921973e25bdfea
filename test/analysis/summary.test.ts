// The report's numbers on crafted traces, asserted exactly: totals, Valgrind-style counts, peaks, leaks, top sites, run end.
import { describe, expect, test } from 'vitest';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { describeEnd, summarize } from '../../analysis/summary.js';
import { renderReport } from '../../analysis/report-text.js';
import { formatBytes } from '../../analysis/units.js';
import { S, TraceBuilder } from '../fixtures/trace-builder.js';
import { DEMO_SITES, basicTrace, killedTrace, signalBigEndianTrace, twoThreadsTrace } from '../fixtures/scenarios.js';

describe('basic trace', () => {
  const s = summarize(decodeTrace(basicTrace().build()));

  test('totals', () => {
    expect(s.events).toBe(20);
    expect(s.allocations).toBe(6);
    expect(s.frees).toBe(3);
    expect(s.untrackedFrees).toBe(1);
    expect(s.failedReallocs).toBe(1);
    expect(s.bytesAllocated).toEqual({ requested: 1422, usable: 1432 });
    expect(s.peakHeap).toEqual({ requested: { bytes: 1322, event: 13 }, usable: { bytes: 1328, event: 13 } });
    expect(s.peakStack).toEqual({ bytes: 192, event: 4 });
    expect(s.static).toEqual({ objects: 2, bytes: 404 });
    expect(s.leaked).toEqual({ blocks: 3, requestedBytes: 1248, usableBytes: 1248 });
    expect(s.lostRecords).toBe(0);
    expect(s.end).toEqual({ how: 'exit', code: 0, signalName: null, complete: true, stopped: null, description: 'normal exit, status 0' });
    expect(s.process).toEqual({ pid: 1234, ppid: 1000, startTimeNs: '1700000000000000000', program: '/home/student/demo', cwd: '/home/student', rank: null });
    expect(s.threads).toEqual([{ index: 0, osTid: 1234, events: 20, maxStackBytes: 192, maxStackEvent: 4, ended: false }]);
  });

  test('Valgrind-style totals: realloc is alloc + free, from NULL an alloc, to nothing a free, failed nothing', () => {
    expect(s.valgrind).toEqual({ allocs: 6, frees: 3, bytesAllocated: 1422, inUseAtExit: { bytes: 1248, blocks: 3 } });
  });

  test('top sites, interposed grouped under their frame', () => {
    expect(s.siteGroups).toBe(4);
    expect(s.topSites.map((r) => [r.label, r.allocs, r.requestedBytes, r.usableBytes, r.liveBlocks, r.liveRequestedBytes])).toEqual([
      ['main (via libc/uninstrumented)', 1, 1024, 1024, 1, 1024],
      ['demo.c:16 main → realloc', 2, 250, 256, 1, 200],
      ['demo.c:15 main → calloc', 1, 100, 104, 0, 0],
      ['demo.c:4 make_node → malloc', 2, 48, 48, 1, 24],
    ]);
    expect(s.topSites[0]).toMatchObject({ kind: 'interposed', site: 1, file: 'demo.c', line: 10, function: 'main', allocator: null, allocators: ['malloc'] });
    expect(s.topSites[1]).toMatchObject({ kind: 'site', site: 7, file: 'demo.c', line: 16, function: 'main', allocator: 'realloc' });
    expect(summarize(decodeTrace(basicTrace().build()), { top: 2 }).topSites).toHaveLength(2);
  });

  test('text report fits 80 columns and shows the numbers', () => {
    const text = renderReport(s, 'demo.1234.mwtrace');
    for (const line of text.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(text).toContain('Run          normal exit, status 0\n');
    expect(text).toContain('Allocations  6 (1.4 KiB requested, 1.4 KiB usable)\n');
    expect(text).toContain('Frees        3 (1 untracked, 1 failed realloc)\n');
    expect(text).toContain('  total heap usage: 6 allocs, 3 frees, 1,422 bytes allocated\n');
    expect(text).toContain('  in use at exit: 1,248 bytes in 3 blocks\n');
    expect(text).toMatch(/1\.0 KiB +1 +1\.0 KiB +main \(via libc\/uninstrumented\)/);
  });
});

describe('other runs', () => {
  test('two threads', () => {
    const s = summarize(decodeTrace(twoThreadsTrace().build()));
    expect(s.valgrind).toEqual({ allocs: 2, frees: 2, bytesAllocated: 30, inUseAtExit: { bytes: 0, blocks: 0 } });
    expect(s.peakStack).toEqual({ bytes: 164, event: 6 });
    expect(s.threads.map((t) => [t.index, t.maxStackBytes, t.ended])).toEqual([
      [0, 160, false],
      [1, 64, true],
    ]);
    expect(s.end.description).toBe('normal exit, status 3');
  });

  test('killed and signalled runs', () => {
    const k = summarize(decodeTrace(killedTrace().build()));
    expect(k.end.description).toBe('ended without a trailer: killed (e.g. SIGKILL) or crashed');
    expect(k.leaked).toEqual({ blocks: 1, requestedBytes: 32, usableBytes: 40 });
    expect(k.problems.warnings).toBe(1);
    const g = summarize(decodeTrace(signalBigEndianTrace().build()));
    expect(g.end).toMatchObject({ how: 'signal', code: 11, signalName: 'SIGSEGV', description: 'killed by signal 11 (SIGSEGV)' });
    expect(describeEnd('exit', 1, false)).toMatch(/not marked complete/);
  });

  test('interposed allocation outside any instrumented frame, and an empty trace', () => {
    const b = new TraceBuilder({ complete: true });
    const t = b.thread(0);
    t.threadBegin(1);
    t.unit(1, DEMO_SITES);
    t.alloc({ fn: S.CALLOC, size: 10, addr: 0x10 });
    t.end(0, 0);
    const s = summarize(decodeTrace(b.build()));
    expect(s.topSites.map((r) => [r.label, r.site, r.function])).toEqual([['<no instrumented frame> (via libc/uninstrumented)', 0, null]]);
    const empty = summarize(decodeTrace(new TraceBuilder().build()));
    expect(empty.events).toBe(0);
    expect(empty.peakHeap.requested).toEqual({ bytes: 0, event: null });
    expect(renderReport(empty, 'x')).toContain('(no allocations)');
  });

  test('byte units', () => {
    expect([0, 1023, 1024, 1536, 1048575, 1048576, 5 * 2 ** 30].map(formatBytes)).toEqual([
      '0 B',
      '1023 B',
      '1.0 KiB',
      '1.5 KiB',
      '1.0 MiB',
      '1.0 MiB',
      '5.0 GiB',
    ]);
  });
});
