// A firmware's memory for the report and the viewer: the traced program's ELF file (the PROGRAM record of a trace
// whose header has pid 0, written by a runtime with no operating system) read as analysis/firmware-image.ts reads it.
import { readFirmwareImage, type FirmwareImage } from '../analysis/firmware-image.js';
import type { ProgramFile } from './program-file.js';

export interface FirmwareInfo {
  program: string | null;
  image: FirmwareImage | null;
  /** Why there is no image (null when there is one). */
  missing: string | null;
}

/** The firmware image of `program` (absolute, or null when the trace names none), from its file read once. */
export function readFirmwareInfo(program: string | null, file: ProgramFile | null): FirmwareInfo {
  if (program === null || file === null) return { program, image: null, missing: 'the trace does not name its firmware' };
  if (file.bytes === null) return { program, image: null, missing: file.problem };
  try {
    const image = readFirmwareImage(file.bytes);
    return image === null ? { program, image, missing: `${program} is not a bare-metal ARM program` } : { program, image, missing: null };
  } catch (e) {
    return { program, image: null, missing: `${program}: ${(e as Error).message}` };
  }
}
