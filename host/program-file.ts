// The traced program's file, read once for what the host takes from it: its frame sizes (stack-info.ts) and, for a
// firmware, its memory (firmware-info.ts). A program that cannot be read is a reason, in words, never a throw.
import { describeFileProblem, readRegularFile } from '../instrumenter/regular-file.js';

/** Programs larger than this are not read (the whole file is read to find one section, or a firmware's tables). */
export const MAX_PROGRAM_BYTES = 512 << 20;

/** The program's bytes, or why they are not there. */
export type ProgramFile = { bytes: Uint8Array; problem: null } | { bytes: null; problem: string };

/** Reads `program` (absolute): the trace names it, so only a regular file of a sane size (not /dev/zero, not a FIFO). */
export function readProgramFile(program: string): ProgramFile {
  try {
    return { bytes: readRegularFile(program, MAX_PROGRAM_BYTES), problem: null };
  } catch (e) {
    return { bytes: null, problem: `cannot read ${program} (${describeFileProblem(e)})` };
  }
}
