// Firmware for a Cortex-M built through cc-memwrap (`cc-memwrap arm-none-eabi-gcc …`), run under QEMU with the plain
// command, against the same firmware built plainly and the same source built for this host: both C libraries
// (picolibc, newlib-nano) on both machines (mps2-an385, netduinoplus2). test/run-all.sh installs the ARM packages.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { skipAllWhen } from '../support/machine.js';
import { must, programsDir, scratch, traceOf, runTraced, wrapper } from '../support/programs.js';
import { buildFirmware, firmwareDir, label, noFirmware, reportJson, runFirmware, target, TARGETS, type Target } from '../support/firmware.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const heapWork = path.join(programsDir, 'firmware', 'heap-work.c');

/** The program's own allocation sites (the libraries' blocks are the `interposed:` rows, apart): line and allocator → counts. */
function programSites(report: Json): Map<string, { counts: Json; live: number }> {
  const live = new Map<string, number>();
  for (const s of report.topSites as Json[]) if (s.kind === 'site') live.set(`${s.line} ${s.allocator}`, s.liveBlocks);
  const out = new Map<string, { counts: Json; live: number }>();
  for (const r of report.attribution.rows as Json[]) {
    if (!r.key.startsWith('site:')) continue;
    const key = `${r.line} ${/→ (\w+)$/.exec(r.label)![1]}`;
    out.set(key, { counts: r.counts, live: live.get(key) ?? 0 });
  }
  return out;
}

/** Builds heap-work for `t` plainly and through cc-memwrap, runs both: the plain run, and the recorded one's trace. */
function plainAndRecorded(t: Target, defines: string[] = [], level = '-O0'): { plain: ReturnType<typeof runFirmware>; recorded: ReturnType<typeof runFirmware>; dir: string } {
  const dir = firmwareDir('heap', t);
  buildFirmware(t, [heapWork], path.join(dir, 'plain.elf'), { instrumented: false, defines, level });
  buildFirmware(t, [heapWork], path.join(dir, 'heap-work.elf'), { instrumented: true, defines, level });
  return { plain: runFirmware(t, path.join(dir, 'plain.elf'), dir), recorded: runFirmware(t, path.join(dir, 'heap-work.elf'), dir), dir };
}

/** heap-work with its recursion `depth` deep, built at `level`: the runs, the report with --stack, the peak stack and
 *  the frame the compiler gave descend(). */
function descendPeak(t: Target, depth: number, level = '-O0') {
  const { plain, recorded } = plainAndRecorded(t, [`-DDEPTH=${depth}`], level);
  const report = reportJson(recorded.traces[0]!, ['--stack']);
  const descend = (report.stack.worstCase.path as Json[]).find((s) => s.function === 'descend')!;
  return { plain, recorded, report, bytes: report.peakStack.bytes as number, frame: descend.frameBytes as number };
}

describe('firmware through cc-memwrap, run under QEMU', () => {
  skipAllWhen(noFirmware);
  let host: Json;
  beforeAll(() => {
    if (noFirmware !== null) return;
    const dir = scratch('fw-host');
    const exe = path.join(dir, 'heap-work');
    must(wrapper, ['--mw-strict', 'gcc', '-O0', '-g', heapWork, '-o', exe]);
    const ran = runTraced(exe, [], path.join(dir, 'traces'));
    host = reportJson(traceOf(path.join(dir, 'traces'), ran.pid), ['--by', 'site']);
  });

  for (const t of TARGETS) {
    it(`${label(t)}: the plain firmware's console and exit status; the program's heap calls and leaks as on this host, the C library's blocks apart`, () => {
      const { plain, recorded, dir } = plainAndRecorded(t);
      expect(recorded.console).toBe(plain.console);
      expect(recorded.console).toMatch(/^sum=140 histogram\[3\]=3 depth=\d+ kept\n$/);
      expect(recorded.status).toBe(plain.status);
      expect(plain.status).toBe(140 % 9);
      // One trace, named after the firmware as a host's is after its program, in QEMU's working directory.
      expect(recorded.traces).toEqual([path.join(dir, 'heap-work.mwtrace')]);
      const report = reportJson(recorded.traces[0]!, ['--by', 'site']);
      expect(report.format).toMatchObject({ pointerSize: 4, littleEndian: true });
      expect(report.end).toMatchObject({ how: 'exit', code: 140 % 9, complete: true });
      expect(report.process.program).toBe(path.join(dir, 'heap-work.elf'));
      const mine = programSites(report);
      expect(mine.size).toBe(8); // 5 allocation sites, 3 frees
      expect(mine).toEqual(programSites(host));
      // Blocks the C library made for itself are its own rows: newlib-nano's stdout buffer; picolibc's stdio has none.
      const libc = (report.attribution.rows as Json[]).filter((r) => r.key.startsWith('interposed:'));
      if (t.libc === 'newlib') expect(libc.map((r) => r.bytesAllocated)).toContain(1024);
      else expect(libc).toEqual([]);
    });
  }

  it.each([target('picolibc', 'mps2-an385'), target('newlib', 'netduinoplus2')])('$libc on $machine: each level of a recursion adds the compiler\'s frame size to the peak stack', (t) => {
    const shallow = descendPeak(t, 4);
    const deep = descendPeak(t, 12);
    expect(deep.frame).toBe(shallow.frame);
    expect((deep.bytes - shallow.bytes) / 8).toBe(deep.frame);
    // The frame the compiler gives the instrumented function is the plain one plus the instrumentation's own bytes
    // (its 8-byte frame record, kept 8-aligned).
    const dir = firmwareDir('su', t);
    must('arm-none-eabi-gcc', [...t.flags, '-O0', '-fstack-usage', '-c', heapWork, '-o', path.join(dir, 'plain.o')]);
    const plainFrame = Number(/:descend\t(\d+)\t/.exec(readFileSync(path.join(dir, 'plain.su'), 'utf8'))![1]);
    expect(deep.frame - plainFrame).toBeGreaterThanOrEqual(8);
    expect(deep.frame - plainFrame).toBeLessThanOrEqual(16);
  });

  it.each([target('picolibc', 'mps2-an385'), target('newlib', 'netduinoplus2')])('$libc on $machine at -Os: the recursion, which does no heap work, is measured, and each level still adds its frame to the peak stack', (t) => {
    const peak = (depth: number) => {
      const p = descendPeak(t, depth, '-Os');
      expect(p.recorded.console).toBe(p.plain.console);
      // Where the board's startup file is built with the program (netduinoplus2), its fault handler, an endless loop
      // the vector table points at, is measured too.
      const measured = (p.report.summarisedFunctions as Json[]).filter((f) => f.measured === true).map((f) => f.name as string);
      expect(measured.filter((name) => name !== 'Default_Handler')).toEqual(['descend']);
      const calls = reportJson(p.recorded.traces[0]!, ['--calls', 'descend']);
      return { ...p, descends: calls.calls.totals.calls as number };
    };
    const shallow = peak(4);
    const deep = peak(12);
    // One call per level on the way down, each deeper than the last: all recorded, none on the way back.
    expect([shallow.descends, deep.descends]).toEqual([5, 13]);
    expect(deep.frame).toBe(shallow.frame);
    expect((deep.bytes - shallow.bytes) / 8).toBe(deep.frame);
  });
});
