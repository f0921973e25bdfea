// Firmware for a Cortex-M built plainly and through cc-memwrap, run under QEMU with the plain command a user types,
// and its trace read back: the shared machinery of the target's suites, over the targets of bench/firmware-targets.ts
// (both bare-metal C libraries on two QEMU machines).
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { CROSS, qemuArgs, target, type Target } from '../../bench/firmware-targets.js';
import { haveCommand } from './machine.js';
import { must, run, scratch, wrapper, type Ran } from './programs.js';

export { CROSS, boardDir, target, qemuArgs, type Target, type Libc, type Machine } from '../../bench/firmware-targets.js';

/** Why firmware cannot be built and run here, or null. test/run-all.sh installs what is missing. */
export const noFirmware: string | null =
  !haveCommand(CROSS) || !haveCommand('qemu-system-arm')
    ? `${CROSS} or qemu-system-arm is missing (test/run-all.sh installs gcc-arm-none-eabi, picolibc-arm-none-eabi, libnewlib-arm-none-eabi, qemu-system-arm)`
    : !existsSync('/usr/lib/picolibc/arm-none-eabi/picolibc.specs')
      ? 'picolibc-arm-none-eabi is missing (test/run-all.sh installs it)'
      : !existsSync('/usr/lib/arm-none-eabi/lib/nano.specs')
        ? 'libnewlib-arm-none-eabi is missing (test/run-all.sh installs it)'
        : null;

/** Every pairing the suites run: both C libraries on both machines. */
export const TARGETS: Target[] = (['picolibc', 'newlib'] as const).flatMap((libc) => (['mps2-an385', 'netduinoplus2'] as const).map((m) => target(libc, m)));

export const label = (t: Target): string => `${t.libc} on ${t.machine}`;

/** Builds `sources` for `t`: through cc-memwrap (strict; `mwFlags` before the compiler) or plainly. */
export function buildFirmware(t: Target, sources: string[], out: string, options: { instrumented: boolean; defines?: string[]; mwFlags?: string[]; level?: string }): void {
  const args = [...t.flags, options.level ?? '-O0', '-g', ...(options.defines ?? []), ...t.sources, ...sources, '-o', out];
  if (options.instrumented) must(wrapper, ['--mw-strict', ...(options.mwFlags ?? []), CROSS, ...args]);
  else must(CROSS, args);
}

export interface FirmwareRun extends Ran {
  /** The firmware's console output through semihosting: picolibc's arrives on QEMU's stderr, newlib's stdout on
   *  QEMU's stdout (the firmware here write to one stream each). */
  console: string;
  /** The traces the run left in its working directory. */
  traces: string[];
}

/** Runs `elf` under QEMU in `dir` (where semihosting files land) and lists the traces it wrote there. */
export function runFirmware(t: Target, elf: string, dir: string, serial = 'none'): FirmwareRun {
  const before = new Set(readdirSync(dir));
  const ran = run('qemu-system-arm', qemuArgs(t, elf, serial), { cwd: dir, timeout: 60_000 });
  const traces = readdirSync(dir).filter((f) => f.endsWith('.mwtrace') && !before.has(f)).map((f) => path.join(dir, f));
  return { ...ran, console: ran.stdout + ran.stderr, traces };
}

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** `cc-memwrap report TRACE --json` with `args`. */
export function reportJson(trace: string, args: string[] = []): Json {
  return JSON.parse(must(process.execPath, [wrapper, 'report', trace, '--json', ...args]).stdout) as Json;
}

/** A scratch folder for one firmware test. */
export function firmwareDir(name: string, t: Target): string {
  return scratch(`fw-${name}-${t.libc}-${t.machine}`);
}

/** The calls of a trace as `cc-memwrap dump` prints them, in order: each ENTER's function and depth, and the function
 *  and depth of the frame open below it when it was entered (null: none). */
export interface Call {
  fn: string;
  depth: number;
  caller: { fn: string; depth: number } | null;
}

export function callsOf(trace: string): Call[] {
  const text = must(process.execPath, [wrapper, 'dump', trace]).stdout;
  const functionOf = new Map<number, string>();
  for (const m of text.matchAll(/^ +site (\d+) entry .* name="([^"]*)"$/gm)) functionOf.set(Number(m[1]), m[2]!);
  const open: { fn: string; depth: number }[] = [];
  const calls: Call[] = [];
  for (const m of text.matchAll(/ t0 (ENTER site=(\d+) depth=(\d+)|EXIT |UNWIND count=(\d+))/g)) {
    if (m[2] !== undefined) {
      const frame = { fn: functionOf.get(Number(m[2])) ?? `site ${m[2]}`, depth: Number(m[3]) };
      calls.push({ ...frame, caller: open.at(-1) ?? null });
      open.push(frame);
    } else {
      open.splice(open.length - (m[4] !== undefined ? Number(m[4]) : 1));
    }
  }
  return calls;
}
