// Interrupt handlers on a Cortex-M run on the stack of the code they interrupt: cc-memwrap records them at their real
// depth, from the initial stack pointer. test/programs/firmware/ticks.c takes SysTick interrupts while it waits at
// each level of a recursion, under QEMU, for both C libraries.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { skipAllWhen } from '../support/machine.js';
import { programsDir } from '../support/programs.js';
import { buildFirmware, callsOf, firmwareDir, noFirmware, runFirmware, target } from '../support/firmware.js';

const LEVELS = 6;

describe('interrupt handlers at their real depth', () => {
  skipAllWhen(noFirmware);
  it.each([target('picolibc', 'mps2-an385'), target('newlib', 'netduinoplus2')])('$libc on $machine: SysTick taken at each level of a recursion', (t) => {
    const dir = firmwareDir('ticks', t);
    const elf = path.join(dir, 'ticks.elf');
    buildFirmware(t, [path.join(programsDir, 'firmware', 'ticks.c')], elf, { instrumented: true, defines: [`-DLEVELS=${LEVELS}`] });
    const ran = runFirmware(t, elf, dir);
    expect(ran.console).toBe(`levels=${LEVELS} sum=${(LEVELS * (LEVELS - 1)) / 2} ticks>=${LEVELS * 3}: yes\n`);
    const calls = callsOf(ran.traces[0]!);
    const handler = t.libc === 'picolibc' ? 'arm_systick_isr' : 'SysTick_Handler';
    const waits = calls.filter((c) => c.fn === 'wait_tick').map((c) => c.depth);
    // The waits: one per level, each a level() frame deeper than the last.
    expect(waits).toHaveLength(LEVELS);
    const levelFrame = waits[1]! - waits[0]!;
    expect(levelFrame).toBeGreaterThan(16);
    expect(waits).toEqual(waits.map((_, i) => waits[0]! + i * levelFrame));
    // Every tick recorded while a level waited: above wait_tick by the same bytes at every level (its frame and the
    // processor's exception frame), so the handlers' depths step with the levels' as the real stack does.
    const ticks = calls.filter((c) => c.fn === handler && c.caller?.fn === 'wait_tick');
    expect(ticks.length).toBeGreaterThanOrEqual(LEVELS);
    const above = [...new Set(ticks.map((c) => c.depth - c.caller!.depth))];
    expect(above).toHaveLength(1);
    expect(above[0]).toBeGreaterThanOrEqual(32);
    expect([...new Set(ticks.map((c) => c.depth))].sort((a, b) => a - b)).toEqual(waits.map((w) => w + above[0]!));
    // The handler's own callee is one frame further down.
    const callees = calls.filter((c) => c.fn === 'count_tick' && c.caller?.fn === handler);
    expect(callees.length).toBeGreaterThanOrEqual(LEVELS);
    for (const c of callees) expect(c.depth).toBeGreaterThan(c.caller!.depth);
  });
});
