// The firmware targets the tests and the benchmark build for: two bare-metal C libraries (picolibc with its semihost
// crt0 and no linker script; newlib-nano with rdimon, samples/board's STM32-style script and start-up code) on two
// QEMU machines (mps2-an385, a Cortex-M3; netduinoplus2, an STM32F405), and the plain qemu-system-arm command that runs
// a firmware as docs/target.md gives it.
import path from 'node:path';
import { packageRoot } from '../package-root.js';

export const CROSS = 'arm-none-eabi-gcc';
export const boardDir = path.join(packageRoot, 'samples', 'board');

export type Libc = 'picolibc' | 'newlib';
export type Machine = 'mps2-an385' | 'netduinoplus2';

/** One C library on one machine: its compiler flags, extra sources, and QEMU's machine flags. */
export interface Target {
  libc: Libc;
  machine: Machine;
  flags: string[];
  sources: string[];
  qemu: string[];
}

const CPU: Record<Machine, string> = { 'mps2-an385': 'cortex-m3', netduinoplus2: 'cortex-m4' };
/** Flash and RAM as picolibc's linker script takes them (--defsym), per machine. */
const PICOLIBC_MEMORY: Record<Machine, string[]> = {
  'mps2-an385': ['__flash=0', '__flash_size=0x400000', '__ram=0x20000000', '__ram_size=0x400000'],
  netduinoplus2: ['__flash=0x08000000', '__flash_size=0x100000', '__ram=0x20000000', '__ram_size=0x20000'],
};
const NEWLIB_SCRIPT: Record<Machine, string> = { 'mps2-an385': 'mps2-an385.ld', netduinoplus2: 'stm32f405.ld' };

export function target(libc: Libc, machine: Machine): Target {
  const cpu = ['-mcpu=' + CPU[machine], '-mthumb'];
  const qemu = ['-M', machine, ...(machine === 'mps2-an385' ? ['-cpu', 'cortex-m3'] : [])];
  if (libc === 'picolibc') {
    const memory = PICOLIBC_MEMORY[machine].map((d) => `-Wl,--defsym=${d}`);
    return { libc, machine, flags: [...cpu, '--specs=picolibc.specs', '--oslib=semihost', '--crt0=semihost', ...memory], sources: [], qemu };
  }
  return { libc, machine, flags: [...cpu, '--specs=nano.specs', '--specs=rdimon.specs', `-L${boardDir}`, '-T', NEWLIB_SCRIPT[machine]], sources: [path.join(boardDir, 'startup.c')], qemu };
}

/** QEMU's arguments: the plain command of docs/target.md, with `serial` for the UART. */
export function qemuArgs(t: Target, elf: string, serial = 'none'): string[] {
  return [...t.qemu, '-nographic', '-monitor', 'none', '-serial', serial, '-semihosting-config', 'enable=on,target=native', '-kernel', elf];
}
