// How the driver tells a firmware build from a host's, reads the firmware's own options and writes the object of a
// firmware link; and that those options given to a host build are refused in one line.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  applyFirmwareFlag,
  FirmwareFlagError,
  firmwareLibc,
  firmwareSizes,
  firmwareWraps,
  isFirmwareBuild,
  linkObjectSource,
  traceStem,
  type FirmwareFlags,
} from '../../instrumenter/firmware.js';
import { relocatableLink } from '../../instrumenter/runtime-build.js';
import { haveCommand } from '../support/machine.js';
import { run, scratch, wrapper } from '../support/programs.js';

const flags = (...given: string[]): FirmwareFlags => {
  const into: FirmwareFlags = {};
  for (const f of given) expect(applyFirmwareFlag(f, into)).toBe(true);
  return into;
};

describe('firmware builds', () => {
  it('are a bare-metal compiler, or a command that links no hosted C library', () => {
    expect(isFirmwareBuild('arm-none-eabi-gcc', [])).toBe(true);
    expect(isFirmwareBuild('/opt/gcc/bin/arm-none-eabi-gcc', ['-c', 'x.c'])).toBe(true);
    expect(isFirmwareBuild('riscv64-unknown-elf-gcc', [])).toBe(true);
    expect(isFirmwareBuild('clang', ['--target=armv7m-none-eabi', '--specs=nano.specs'])).toBe(true);
    expect(isFirmwareBuild('gcc', ['-ffreestanding', 'x.c'])).toBe(true);
    expect(isFirmwareBuild('gcc', ['-O2', 'x.c'])).toBe(false);
    expect(isFirmwareBuild('arm-linux-gnueabihf-gcc', ['x.c'])).toBe(false);
    expect(firmwareLibc(['--specs=picolibc.specs'])).toBe('picolibc');
    expect(firmwareLibc(['--specs=nano.specs', '--specs=rdimon.specs'])).toBe('newlib');
  });

  it('wrap the allocator and _exit; newlib also its reentrant allocator, which its malloc calls', () => {
    expect(firmwareWraps('picolibc')).toEqual(['malloc', 'calloc', 'realloc', 'free', 'memalign', 'aligned_alloc', 'posix_memalign', 'reallocarray', '_exit'].map((n) => `-Wl,--wrap=${n}`));
    expect(firmwareWraps('newlib').slice(-5)).toEqual(['_malloc_r', '_calloc_r', '_realloc_r', '_free_r', '_memalign_r'].map((n) => `-Wl,--wrap=${n}`));
  });

  it('size the runtime from --mw-buffer, --mw-frames and --mw-blocks; the block table a power of two', () => {
    expect(firmwareSizes({})).toEqual({ bufferBytes: 2048, frames: 128, blocks: 64 });
    expect(firmwareSizes(flags('--mw-buffer=4K', '--mw-frames=32', '--mw-blocks=100'))).toEqual({ bufferBytes: 4096, frames: 32, blocks: 128 });
    expect(firmwareSizes(flags('--mw-buffer=1001'))).toMatchObject({ bufferBytes: 1000 });
    expect(applyFirmwareFlag('--mw-strict', {})).toBe(false);
  });

  it.each([
    ['--mw-buffer=100', '--mw-buffer=100: expected a size in bytes from 256 to 1M (K and M allowed)'],
    ['--mw-buffer=2M', '--mw-buffer=2M: expected a size in bytes from 256 to 1M (K and M allowed)'],
    ['--mw-buffer=', '--mw-buffer=: expected a size in bytes from 256 to 1M (K and M allowed)'],
    ['--mw-frames=4k', '--mw-frames=4k: expected a number of frames from 8 to 65536'],
    ['--mw-blocks=-1', '--mw-blocks=-1: expected a number of blocks from 8 to 65536'],
  ])('refuse %s in one line', (flag, message) => {
    expect(() => applyFirmwareFlag(flag, {})).toThrow(new FirmwareFlagError(message));
  });

  it("write the link's object: the ELF file's absolute path, the trace's name, the sizes", () => {
    const text = linkObjectSource('out/fw.elf', '/work/a "b"', firmwareSizes({}));
    expect(text).toContain(`const char mw_program_path[] = "/work/a \\042b\\042/out/fw.elf";`);
    expect(text).toContain('const char mw_trace_stem[] = "fw";');
    expect(text).toContain('unsigned char mw_buffer[MW_CHUNK_HEAD + 2048u]');
    expect(text).toContain('struct mw_live_slot mw_block_slots[64u];');
    expect(traceStem(path.join('x', 'firmware.axf'))).toBe('firmware');
    expect(traceStem('a.out')).toBe('a');
  });

  it('join objects without the specs file, whose linker script would make them a program', () => {
    expect(relocatableLink(['-mcpu=cortex-m3', '--specs=picolibc.specs', '-specs', 'nano.specs', '-mthumb'])).toEqual(['-mcpu=cortex-m3', '-mthumb', '-r', '-nostdlib']);
  });

  it.skipIf(!haveCommand('gcc'))('given to a host build, the sizes are refused in one line, exit 2', () => {
    const dir = scratch('fw-flags');
    const r = run(wrapper, ['--mw-buffer=4K', 'gcc', '-c', 'x.c', '--mw-blocks=32'], { cwd: dir });
    expect(r.status).toBe(2);
    expect(r.stderr).toBe('cc-memwrap: --mw-buffer, --mw-blocks size the runtime of firmware (a bare-metal compiler such as arm-none-eabi-gcc); gcc builds for this host, whose runtime writes straight to a file\n');
    const bad = run(wrapper, ['--mw-frames=2', 'arm-none-eabi-gcc', '-c', 'x.c'], { cwd: dir });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toBe('cc-memwrap: --mw-frames=2: expected a number of frames from 8 to 65536\n');
  });
});
