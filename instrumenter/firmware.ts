// Firmware builds (bare metal: a Cortex-M and its vendor's C library): recognising them, their own `--mw-` options,
// and what their link adds — the linker's --wrap of the C library's allocator and of _exit, and one small object that
// names the firmware and sizes the runtime's buffer, shadow stack and block table (runtime/target/).
import path from 'node:path';

/** How the runtime is sized on the target (`--mw-buffer=`, `--mw-frames=`, `--mw-blocks=`). */
export interface FirmwareSizes {
  /** Record bytes held between two writes of the trace. */
  bufferBytes: number;
  /** Open frames the shadow stack holds; deeper calls are counted as lost. */
  frames: number;
  /** Live blocks the block table holds (a power of two); a block made when it is full has an untracked free. */
  blocks: number;
}

export const FIRMWARE_DEFAULTS: FirmwareSizes = { bufferBytes: 2048, frames: 128, blocks: 64 };

/** The firmware options a command line gave; the rest are the defaults. */
export type FirmwareFlags = Partial<FirmwareSizes>;

const FLAGS: Record<string, { key: keyof FirmwareSizes; min: number; max: number; what: string }> = {
  '--mw-buffer=': { key: 'bufferBytes', min: 256, max: 1 << 20, what: 'a size in bytes from 256 to 1M (K and M allowed)' },
  '--mw-frames=': { key: 'frames', min: 8, max: 1 << 16, what: 'a number of frames from 8 to 65536' },
  '--mw-blocks=': { key: 'blocks', min: 8, max: 1 << 16, what: 'a number of blocks from 8 to 65536' },
};

/** Functions of a firmware's start-up that run before its RAM is set up (.data copied, .bss cleared), when the
 *  runtime's own state is not there yet: built with their calls left out, as by `--mw-no-calls`. */
export const BEFORE_RAM_FUNCTIONS = ['Reset_Handler', 'SystemInit'];

/** A firmware option's problem, in one line. */
export class FirmwareFlagError extends Error {
  override name = 'FirmwareFlagError';
}

/** Reads `--mw-buffer=…`, `--mw-frames=…` or `--mw-blocks=…` into `into`; false for any other flag. Throws FirmwareFlagError. */
export function applyFirmwareFlag(flag: string, into: FirmwareFlags): boolean {
  const prefix = Object.keys(FLAGS).find((p) => flag.startsWith(p));
  if (prefix === undefined) return false;
  const spec = FLAGS[prefix]!;
  const text = flag.slice(prefix.length);
  const m = /^(\d+)([kKmM]?)$/.exec(text);
  const value = m === null || (m[2] !== '' && spec.key !== 'bufferBytes') ? NaN : Number(m[1]) * (/k/i.test(m[2]!) ? 1024 : /m/i.test(m[2]!) ? 1 << 20 : 1);
  if (!Number.isSafeInteger(value) || value < spec.min || value > spec.max) {
    throw new FirmwareFlagError(`${prefix}${text}: expected ${spec.what}`);
  }
  into[spec.key] = value;
  return true;
}

/** The sizes a build uses: its flags over the defaults, the block table rounded up to a power of two. */
export function firmwareSizes(flags: FirmwareFlags): FirmwareSizes {
  const sizes = { ...FIRMWARE_DEFAULTS, ...flags };
  let blocks = 1;
  while (blocks < sizes.blocks) blocks *= 2;
  return { ...sizes, bufferBytes: sizes.bufferBytes & ~7, blocks };
}

/**
 * Whether a command builds firmware: a bare-metal cross compiler (`arm-none-eabi-gcc`, any `*-none-eabi-*` or
 * `*-elf-*` one), or a command that links no hosted C library (`-ffreestanding`, `-nostdlib`, a picolibc or newlib
 * specs file).
 */
export function isFirmwareBuild(compiler: string, args: readonly string[]): boolean {
  const name = path.basename(compiler);
  if (/-none-eabi(hf)?-|-elf-|^arm-none-/.test(name)) return true;
  return args.some((a) => a === '-ffreestanding' || a === '-nostdlib' || /^--?specs=(picolibc|nano|rdimon|nosys)\.specs$/.test(a));
}

/** picolibc (its specs file) or newlib (the cross compiler's default, nano.specs, rdimon.specs). */
export function firmwareLibc(args: readonly string[]): 'picolibc' | 'newlib' {
  return args.some((a) => /^--?specs=picolibc(cpp)?\.specs$/.test(a)) ? 'picolibc' : 'newlib';
}

/** The names the linker redirects to the runtime: the allocator (newlib's reentrant forms too, which its malloc
 *  calls), and _exit, the last function every end of a firmware passes through. */
export function firmwareWraps(libc: 'picolibc' | 'newlib'): string[] {
  const names = ['malloc', 'calloc', 'realloc', 'free', 'memalign', 'aligned_alloc', 'posix_memalign', 'reallocarray', '_exit'];
  if (libc === 'newlib') names.push('_malloc_r', '_calloc_r', '_realloc_r', '_free_r', '_memalign_r');
  return names.map((n) => `-Wl,--wrap=${n}`);
}

/** A C string literal of `s` (printable ASCII as is, every other byte as an octal escape). */
function cString(s: string): string {
  let out = '"';
  for (const b of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(b);
    out += b >= 0x20 && b < 0x7f && c !== '"' && c !== '\\' && c !== '?' ? c : `\\${b.toString(8).padStart(3, '0')}`;
  }
  return `${out}"`;
}

/** The trace's name on the debugger's host: the firmware's file name less .elf / .axf (`fw.elf` → fw.mwtrace). */
export function traceStem(output: string): string {
  return path.basename(output).replace(/\.(elf|axf|out)$/i, '') || 'firmware';
}

/**
 * The C text of a link's own object: where the firmware is (so the trace finds its ELF file, its regions and frame
 * sizes), the trace's name, and the runtime's memory at the sizes asked for (runtime/mw-internal.h, MW_TARGET).
 */
export function linkObjectSource(output: string, cwd: string, sizes: FirmwareSizes): string {
  const elf = path.resolve(cwd, output);
  return [
    '/* cc-memwrap: the object of one firmware link (instrumenter/firmware.ts) */',
    '#include "mw-internal.h"',
    `const char mw_program_path[] = ${cString(elf)};`,
    `const char mw_program_cwd[] = ${cString(cwd)};`,
    `const char mw_trace_stem[] = ${cString(traceStem(output))};`,
    `unsigned char mw_buffer[MW_CHUNK_HEAD + ${sizes.bufferBytes}u] __attribute__((aligned(8)));`,
    `const unsigned mw_buffer_bytes = ${sizes.bufferBytes}u;`,
    `struct mw_frame_slot mw_frame_slots[${sizes.frames}u + 1u];`,
    `const unsigned mw_frame_cap = ${sizes.frames}u;`,
    `struct mw_live_slot mw_block_slots[${sizes.blocks}u];`,
    `const unsigned mw_block_cap = ${sizes.blocks}u;`,
    '',
  ].join('\n');
}
