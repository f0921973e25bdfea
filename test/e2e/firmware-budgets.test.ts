// A firmware's budgets come from its own linker script: the heap region and the stack's reservation, read from its ELF
// file (the trace names it), narrowed by a memwrap.json beside it; the report's RAM map says which was crossed first, by
// which line, and `--fail-on budget` fails the run that crossed one. heap-work.c's recursion under QEMU, both C libraries.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { skipAllWhen } from '../support/machine.js';
import { programsDir, run, wrapper } from '../support/programs.js';
import { buildFirmware, firmwareDir, noFirmware, reportJson, runFirmware, target, type Target } from '../support/firmware.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const heapWork = path.join(programsDir, 'firmware', 'heap-work.c');
/** The line of descend()'s name: where its frames are entered. */
const descendLine = readFileSync(heapWork, 'utf8').split('\n').findIndex((l) => l.startsWith('static int descend(')) + 1;

/** heap-work.c recursing `depth` levels, built for `t` with `extra` flags: its trace's folder and trace. */
function recursing(t: Target, depth: number, extra: string[] = []): { dir: string; trace: string } {
  const dir = firmwareDir(`budget${depth}`, t);
  const elf = path.join(dir, 'heap-work.elf');
  buildFirmware({ ...t, flags: [...t.flags, ...extra] }, [heapWork], elf, { instrumented: true, defines: [`-DDEPTH=${depth}`] });
  return { dir, trace: runFirmware(t, elf, dir).traces[0]! };
}

/** `report TRACE --fail-on budget --json`: its exit status and JSON. */
function failOn(trace: string): { status: number | null; json: Json } {
  const r = run(process.execPath, [wrapper, 'report', trace, '--fail-on', 'budget', '--json']);
  return { status: r.status, json: JSON.parse(r.stdout) as Json };
}

describe("a firmware's budgets from its linker script", () => {
  skipAllWhen(noFirmware);
  // picolibc's script reserves 2 KiB (its .stack section); newlib's STM32 script _Min_Stack_Size, set to 1 KiB here.
  const cases: [string, Target, string[], number, string][] = [
    ['picolibc on mps2-an385', target('picolibc', 'mps2-an385'), [], 2048, 'the .stack section'],
    ['newlib on netduinoplus2', target('newlib', 'netduinoplus2'), ['-Wl,--defsym=_Min_Stack_Size=0x400'], 1024, '_Min_Stack_Size'],
  ];
  it.each(cases)('%s: --fail-on budget passes a recursion that fits the stack reservation and fails one that does not', (_, t, extra, reserved, source) => {
    const fits = failOn(recursing(t, 8, extra).trace);
    expect(fits.status).toBe(0);
    expect(fits.json.budgets.source).toBe('the linker script of heap-work.elf');
    const stack = (fits.json.budgets.checks as Json[]).find((c) => c.kind === 'stack')!;
    expect(stack).toMatchObject({ limitBytes: reserved, exceeded: false });
    expect(fits.json.ramMap.stack).toMatchObject({ reserved, source });
    expect(fits.json.ramMap.firstCrossed).toBeNull();
    // The heap's budget is its region: picolibc's __heap_start … __heap_end, newlib's end up to the reserved stack.
    const heap = (fits.json.budgets.checks as Json[]).find((c) => c.kind === 'heap')!;
    expect(heap.limitBytes).toBe(fits.json.ramMap.heap.region.end - fits.json.ramMap.heap.region.start);

    const deep = failOn(recursing(t, 60, extra).trace);
    expect(deep.status).toBe(1);
    expect(deep.json.failOn.failed).toEqual(['budget']);
    const crossed = deep.json.ramMap.firstCrossed;
    expect(crossed).toMatchObject({ kind: 'stack', limitBytes: reserved, function: 'descend', line: descendLine });
    expect(crossed.bytes).toBeGreaterThan(reserved);
    expect(crossed.file).toMatch(/heap-work\.c$/);
  });

  it('a memwrap.json beside the firmware narrows the script\'s budgets, never widens them', () => {
    const t = target('picolibc', 'mps2-an385');
    const { dir, trace } = recursing(t, 8);
    writeFileSync(path.join(dir, 'memwrap.json'), JSON.stringify({ budgets: { stack: 512, heap: '1G', static: '8K' } }));
    const r = failOn(trace);
    expect(r.status).toBe(1);
    expect(r.json.budgets.source).toBe(`the linker script of heap-work.elf, narrowed by ${path.join(dir, 'memwrap.json')}`);
    const limits = Object.fromEntries((r.json.budgets.checks as Json[]).map((c) => [c.kind, c.limitBytes]));
    expect(limits).toEqual({ stack: 512, heap: r.json.ramMap.heap.region.end - r.json.ramMap.heap.region.start, static: 8192 });
    expect(r.json.ramMap.firstCrossed).toMatchObject({ kind: 'stack', limitBytes: 512 });
    const text = run(process.execPath, [wrapper, 'report', trace]).stdout;
    expect(text).toMatch(new RegExp(String.raw`^  First crossed: the stack budget, 512 B, at event \d+ \(\d+ B\)\n    by descend \(heap-work\.c:${descendLine}\)$`, 'm'));
  });

  it('the firmware\'s ELF file gone: one line says the RAM map and the script\'s budgets are missing, the rest is reported', () => {
    const t = target('picolibc', 'mps2-an385');
    const { dir, trace } = recursing(t, 8);
    renameSync(path.join(dir, 'heap-work.elf'), path.join(dir, 'moved.elf'));
    const r = run(process.execPath, [wrapper, 'report', trace]);
    expect(r.status).toBe(0);
    expect(r.stderr).toBe(`cc-memwrap report: ${trace}: no RAM map or linker-script budgets: cannot read ${path.join(dir, 'heap-work.elf')} (ENOENT)\n`);
    expect(r.stdout).toMatch(/^Run {10}normal exit, status 5$/m);
    expect(r.stdout).not.toMatch(/RAM map/);
  });
});
