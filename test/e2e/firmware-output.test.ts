// Where a firmware's trace goes and what is left of it when the firmware stops: the buffer written out whenever it
// fills (a record larger than the buffer streamed), the firmware's own UART through memwrap_write instead of
// semihosting, and a run that locks up or faults leaving a trace readable up to the last write-out. Under QEMU.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { skipAllWhen } from '../support/machine.js';
import { must, programsDir, wrapper } from '../support/programs.js';
import { buildFirmware, firmwareDir, noFirmware, reportJson, runFirmware, target, type Target } from '../support/firmware.js';

const firmware = (name: string): string => path.join(programsDir, 'firmware', name);

/**
 * A trace's events as `cc-memwrap dump` prints them, without their offsets and chunks, the PROGRAM record (which names
 * the build's folder) and the UNIT records (the firmware's other files), block addresses taken from the first block's:
 * and statics' addresses left out: what two builds of one firmware must agree on (a larger buffer in .bss moves them).
 */
function records(trace: string): string[] {
  const lines = must(process.execPath, [wrapper, 'dump', trace])
    .stdout.split('\n')
    .filter((l) => / t0 /.test(l) && !/ (PROGRAM|UNIT) /.test(l))
    .map((l) => l.replace(/^ *0x[0-9a-f]+ /, ''));
  const heap = (l: string): boolean => / (ALLOC|REALLOC) /.test(l);
  const first = lines.filter(heap).map((l) => /addr=(0x[0-9a-f]+)/.exec(l)).find((m) => m !== null);
  const base = first ? Number(first[1]) : 0;
  return lines.map((l) => (heap(l) ? l.replace(/addr=(0x[0-9a-f]+)/, (_, a: string) => `addr=+${Number(a) - base}`) : l.replace(/ STATIC (.*) addr=\S+/, ' STATIC $1')));
}

/** The chunks' capacities, in file order. */
function chunks(trace: string): number[] {
  return [...must(process.execPath, [wrapper, 'dump', trace]).stdout.matchAll(/^chunk \S+ thread=0 capacity=(\d+)/gm)].map((m) => Number(m[1]));
}

/** Builds `sources` through cc-memwrap into `dir/name.elf` and runs it there. */
function recorded(t: Target, dir: string, name: string, sources: string[], options: { mwFlags?: string[]; defines?: string[]; serial?: string } = {}) {
  const elf = path.join(dir, `${name}.elf`);
  buildFirmware(t, sources, elf, { instrumented: true, ...options });
  return runFirmware(t, elf, dir, options.serial);
}

describe("a firmware's trace on its way out", () => {
  skipAllWhen(noFirmware);

  it.each([target('picolibc', 'mps2-an385'), target('newlib', 'mps2-an385')])('$libc: through the UART (memwrap_write) the same records as through semihosting', (t) => {
    const dir = firmwareDir('uart', t);
    const semihosted = recorded(t, dir, 'semihosted', [firmware('heap-work.c')]);
    const uart = path.join(dir, 'uart.bin');
    const sent = recorded(t, dir, 'sent', [firmware('heap-work.c'), firmware('uart-sink.c')], { serial: `file:${uart}` });
    expect(sent.console).toBe(semihosted.console);
    expect(sent.traces).toEqual([]); // nothing through semihosting
    expect(records(uart)).toEqual(records(semihosted.traces[0]!));
    // A stream cannot go back to mark the header complete: END alone says the run ended.
    expect(reportJson(uart).end).toMatchObject({ how: 'exit', code: 140 % 9, complete: false, description: `normal exit, status ${140 % 9}` });
  });

  it('a 256-byte buffer: written out many times, a site table larger than it streamed, the records unchanged', () => {
    const t = target('picolibc', 'netduinoplus2');
    const dir = firmwareDir('small', t);
    const whole = recorded(t, dir, 'whole', [firmware('heap-work.c')]);
    const small = recorded(t, dir, 'small', [firmware('heap-work.c')], { mwFlags: ['--mw-buffer=256'] });
    expect(small.console).toBe(whole.console);
    expect(records(small.traces[0]!)).toEqual(records(whole.traces[0]!));
    expect(chunks(whole.traces[0]!)).toHaveLength(1);
    const sizes = chunks(small.traces[0]!);
    expect(sizes.length).toBeGreaterThanOrEqual(3);
    expect(Math.max(...sizes)).toBeGreaterThan(256); // the UNIT record, streamed past the buffer
    expect(sizes.filter((n) => n > 256)).toHaveLength(1);
  });

  it('a lockup: the trace holds what was written out before it, and the report says the firmware stopped', () => {
    const t = target('picolibc', 'mps2-an385');
    const dir = firmwareDir('lockup', t);
    const full = recorded(t, dir, 'full', [firmware('stops.c')], { mwFlags: ['--mw-buffer=256'], defines: ['-DSTOP=0'] });
    const stopped = recorded(t, dir, 'stopped', [firmware('stops.c')], { mwFlags: ['--mw-buffer=256'], defines: ['-DSTOP=1'] });
    expect(stopped.console).toMatch(/^sum=780\n[^]*Lockup/);
    expect(stopped.status).not.toBe(0);
    const all = records(full.traces[0]!);
    const kept = records(stopped.traces[0]!);
    // Whole write-outs of the buffer, from the start: the records before the lockup less at most one buffer's worth.
    expect(kept).toEqual(all.slice(0, kept.length));
    expect(kept.length).toBeGreaterThan(all.length / 2);
    expect(kept.length).toBeLessThan(all.length - 2);
    expect(readFileSync(stopped.traces[0]!).length - 64).toBe(chunks(stopped.traces[0]!).reduce((n, c) => n + 16 + c, 0));
    const text = must(process.execPath, [wrapper, 'report', stopped.traces[0]!]);
    expect(text.stdout).toMatch(/^Run {10}stopped before its end was recorded \(a fault, a lockup, a reset or a debugger\)/m);
    expect(text.stderr).toMatch(/warning: no END record: the firmware stopped \(a fault, a lockup, a reset or a debugger\) before the runtime could record its end/);
    expect(reportJson(stopped.traces[0]!).end).toMatchObject({ how: 'unknown', complete: false });
  });

  it("a fault that picolibc's handler reports and exits from: every record before it written out, without END", () => {
    const t = target('picolibc', 'mps2-an385');
    const dir = firmwareDir('fault', t);
    const full = recorded(t, dir, 'full', [firmware('stops.c')], { mwFlags: ['--mw-buffer=256'], defines: ['-DSTOP=0'] });
    const faulted = recorded(t, dir, 'faulted', [firmware('stops.c')], { mwFlags: ['--mw-buffer=256'], defines: ['-DSTOP=2'] });
    expect(faulted.console).toMatch(/^sum=780\nARM fault/);
    expect(faulted.status).toBe(1);
    const all = records(full.traces[0]!);
    // All but main's EXIT and the END of the normal run.
    expect(all.slice(-2).map((r) => r.split(' ')[1])).toEqual(['EXIT', 'END']);
    expect(records(faulted.traces[0]!)).toEqual(all.slice(0, -2));
    expect(reportJson(faulted.traces[0]!).end).toMatchObject({ how: 'unknown', description: expect.stringMatching(/^stopped before its end was recorded/) });
  });
});
