// A 32-bit ARM Linux target: lessons cross-compiled with `cc-memwrap arm-linux-gnueabihf-gcc` (the runtime built for
// ARM by the same wrapper) run under qemu-arm, and the host reads their traces: 4-byte pointers in the header, 8-byte
// list nodes whose links the runtime finds by scanning 4-byte words, the ELF32 program's frame sizes.
// test/run-all.sh installs gcc-arm-linux-gnueabihf and qemu-user.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { haveCommand, skipAllWhen } from '../support/machine.js';
import { must, run, samplesDir, scratch, traceOf, wrapper } from '../support/programs.js';

const CROSS = 'arm-linux-gnueabihf-gcc';
/** Why the ARM tests cannot run here, or null. */
const noArm =
  process.platform !== 'linux'
    ? 'ARM programs run under qemu-arm, on Linux only'
    : !haveCommand(CROSS) || !haveCommand('qemu-arm')
      ? `${CROSS} or qemu-arm is missing (test/run-all.sh installs gcc-arm-linux-gnueabihf and qemu-user)`
      : null;

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Cross-builds a lesson, runs it under qemu-arm, returns its stdout and `report --json` with `args`. */
function onArm(source: string, defines: string[], args: string[]): { stdout: string; report: Json } {
  const dir = scratch(`arm-${path.basename(source, '.c')}`);
  const exe = path.join(dir, 'prog');
  must(wrapper, ['--mw-strict', CROSS, '-O0', ...defines, path.join(samplesDir, source), '-o', exe]);
  const traces = path.join(dir, 'traces');
  must('mkdir', ['-p', traces]);
  const env = { ...process.env, QEMU_LD_PREFIX: '/usr/arm-linux-gnueabihf', MEMWRAP_TRACE: path.join(traces, '%p.mwtrace') };
  const ran = run('qemu-arm', [exe], { env });
  if (ran.status !== 0) throw new Error(`qemu-arm ${exe} exited ${ran.status ?? ran.signal}: ${ran.stderr}`);
  // qemu-arm runs the program in its own process: the trace carries that pid.
  const report = JSON.parse(must(process.execPath, [wrapper, 'report', traceOf(traces, ran.pid), '--json', ...args]).stdout) as Json;
  return { stdout: ran.stdout, report };
}

describe('32-bit ARM Linux (arm-linux-gnueabihf-gcc, qemu-arm)', () => {
  skipAllWhen(noArm);
  it('lesson 1: 8-byte nodes, 4-byte pointers, the free at line 38 orphans the node from line 33', () => {
    const { stdout, report } = onArm('linked-list.c', [], ['--linked', '--stack', '--by', 'site']);
    expect(stdout).toBe('first=1 second=4\n');
    expect(report.format).toMatchObject({ pointerSize: 4, littleEndian: true });
    expect(report.end).toMatchObject({ how: 'exit', code: 0, complete: true });
    const nodes = report.attribution.rows.filter((r: Json) => r.key.startsWith('site:') && r.bytesAllocated > 0 && r.line !== null);
    expect(nodes.map((r: Json) => [r.line, r.bytesAllocated]).sort()).toEqual([[23, 8], [31, 8], [32, 8], [33, 8]]);
    expect(report.linked.rows).toHaveLength(1);
    expect(report.linked.rows[0].at.line).toBe(38);
    expect(report.linked.rows[0].freed.requestedBytes).toBe(8);
    expect(report.linked.orphanedLeaks.map((o: Json) => o.block.allocation.line)).toEqual([33]);
    // The frame sizes came from the ARM compiler and were read from the ELF32 program.
    expect(report.stack.worstCase.status).toBe('bounded');
    expect(report.stack.worstCase.path.map((s: Json) => s.function)).toEqual(['main', 'make_node']);
    expect(report.stack.observed.path.map((s: Json) => s.function)).toEqual(['main', 'make_node']);
  });

  it('lesson 7: the struct is 24 bytes, 16 reordered, as on x86-64 (double is 8-aligned on ARM EABI)', () => {
    const padded = onArm('struct-padding.c', [], []);
    expect(padded.stdout).toMatch(/^sizeof\(struct sample\) = 24, /);
    expect(padded.report.peakHeap.requested.bytes).toBe(2400);
    const packed = onArm('struct-padding.c', ['-DREORDERED'], []);
    expect(packed.stdout).toMatch(/^sizeof\(struct sample\) = 16, /);
    expect(packed.report.peakHeap.requested.bytes).toBe(1600);
  });
});
