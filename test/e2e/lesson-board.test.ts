// Lesson 8 (samples/sensor-log.md): the firmware built for an STM32F405 with newlib-nano and samples/board's linker
// script, run under QEMU as its text says, from a directory above a copy of samples/: the numbers it promises, its RAM
// map and its --compare as the text's commands show them (lessons-typed.test.ts types the text itself on x86-64), and
// the host's numbers of its last table.
import { cpSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { normaliseOutput, outputMatches, parseCommandBlocks } from '../support/doc-commands.js';
import { notX86_64Glibc, skipAllWhen } from '../support/machine.js';
import { must, run, runTraced, samplesDir, scratch, traceOf, wrapper } from '../support/programs.js';
import { CROSS, noFirmware, reportJson } from '../support/firmware.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const lesson = readFileSync(path.join(samplesDir, 'sensor-log.md'), 'utf8');
const BOARD = ['-mcpu=cortex-m4', '-mthumb', '--specs=nano.specs', '--specs=rdimon.specs', '-Lsamples/board', '-T', 'stm32f405.ld', '-O0', '-g'];
const QEMU = ['-M', 'netduinoplus2', '-nographic', '-monitor', 'none', '-serial', 'none', '-semihosting-config', 'enable=on,target=native', '-kernel', 'sensor.elf'];

/** What the text shows `command` printing (its console blocks; `…` lines stand for any lines). */
function shown(command: string): string[] {
  const found = parseCommandBlocks(lesson, 'sensor-log.md').flatMap((b) => b.commands).find((c) => c.command === command);
  if (found === undefined) throw new Error(`sensor-log.md shows no \`$ ${command}\``);
  return found.expected;
}

/** Whether `output` is what the text shows `command` printing, masked as the docs check masks. */
function asShown(command: string, output: string): boolean {
  return outputMatches(normaliseOutput(shown(command)), normaliseOutput(output.replace(/\n$/, '').split('\n')));
}

describe('lesson 8: on the board, against its own linker script (arm-none-eabi-gcc 12, newlib-nano, QEMU)', () => {
  skipAllWhen(noFirmware);
  let dir: string;
  let before: string;
  let after: string;

  beforeAll(() => {
    if (noFirmware !== null) return;
    dir = scratch('lesson-board');
    cpSync(samplesDir, path.join(dir, 'samples'), { recursive: true });
    for (const [folder, defines] of [['before', []], ['after', ['-DITERATIVE']]] as const) {
      mkdirSync(path.join(dir, folder));
      must(wrapper, ['--mw-strict', CROSS, ...BOARD, ...defines, 'samples/board/startup.c', 'samples/sensor-log.c', '-o', `${folder}/sensor.elf`], { cwd: dir });
      const ran = run('qemu-system-arm', QEMU, { cwd: path.join(dir, folder) });
      expect(ran.stdout + ran.stderr).toBe('readings 828, formula 91\n');
    }
    before = path.join(dir, 'before', 'sensor.mwtrace');
    after = path.join(dir, 'after', 'sensor.mwtrace');
  });

  it('the stack peaks at 1,504 bytes against the script\'s 1,024, crossed first by term at line 48; --fail-on budget fails', () => {
    const r = run(process.execPath, [wrapper, 'report', 'before/sensor.mwtrace', '--fail-on', 'budget', '--json'], { cwd: dir });
    expect(r.status).toBe(1);
    const j = JSON.parse(r.stdout) as Json;
    expect(j.peakStack.bytes).toBe(1504);
    expect(j.ramMap.stack).toMatchObject({ reserved: 1024, source: '_Min_Stack_Size', peak: 1504 });
    expect(j.ramMap.firstCrossed).toMatchObject({ kind: 'stack', limitBytes: 1024, bytes: 1056, event: 133, function: 'term', line: 48 });
    expect(j.ramMap.static.byOwner.program).toBe(8);
    // The RAM map as the text shows it; the text leaves its flash line out (`…`): the firmware carries its own path
    // (for the trace to name), whose length is the folder's, and the runtime's code changes with cc-memwrap's version.
    const text = run(process.execPath, [wrapper, 'report', 'before/sensor.mwtrace', '--top', '3'], { cwd: dir }).stdout;
    expect(shown('cc-memwrap report before/sensor.mwtrace --top 3')).toContain('  stack peak    1.5 KiB  of 1.0 KiB reserved (_Min_Stack_Size)');
    expect(asShown('cc-memwrap report before/sensor.mwtrace --top 3', text)).toBe(true);
  });

  it('-DITERATIVE: 168 bytes of stack, the budget kept; the compare as the text quotes it', () => {
    expect(run(process.execPath, [wrapper, 'report', 'after/sensor.mwtrace', '--fail-on', 'budget'], { cwd: dir }).status).toBe(0);
    expect(reportJson(after).peakStack.bytes).toBe(168);
    const compare = must(process.execPath, [wrapper, 'report', 'before/sensor.mwtrace', '--compare', 'after/sensor.mwtrace'], { cwd: dir }).stdout;
    expect(asShown('cc-memwrap report before/sensor.mwtrace --compare after/sensor.mwtrace', compare)).toBe(true);
    expect(reportJson(before, ['--stack']).stack.worstCase.path.map((s: Json) => [s.function, s.frameBytes])).toEqual([['main', 40], ['evaluate', 32], ['sum_of', 40], ['term', 72]]);
  });

  it.skipIf(notX86_64Glibc !== null)('the host\'s numbers of the last table (gcc 12, x86-64, glibc; stdout a pipe)', () => {
    const exe = path.join(dir, 'sensor');
    must(wrapper, ['--mw-strict', 'gcc', '-O0', 'samples/sensor-log.c', '-o', exe], { cwd: dir });
    const traces = path.join(dir, 'host-traces');
    const host = reportJson(traceOf(traces, runTraced(exe, [], traces).pid), ['--stack']);
    const board = reportJson(before);
    const sites = (j: Json) => Object.fromEntries((j.topSites as Json[]).map((s) => [s.kind, s]));
    expect([sites(host).site.requestedBytes / 24, sites(board).site.requestedBytes / 24]).toEqual([16, 8]);
    expect([sites(host).site.usableBytes, sites(board).site.usableBytes]).toEqual([576, 288]);
    expect([sites(host).interposed.requestedBytes, sites(board).interposed.requestedBytes]).toEqual([4096, 1024]);
    expect(host.stack.worstCase.path.map((s: Json) => s.frameBytes).slice(2)).toEqual([64, 112]);
    expect([host.peakStack.bytes, board.peakStack.bytes]).toEqual([2512, 1504]);
  });
});
