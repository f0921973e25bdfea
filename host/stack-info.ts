// Finds the frame sizes for `report --stack` and the viewer's stack panel: the traced program (tracedProgram())
// carries them in its `.mw_stack` section, put there by the driver at build time.
import { elfSection } from '../analysis/elf-section.js';
import { describeFileProblem, readRegularFile } from '../instrumenter/regular-file.js';
import { parseStackUnits } from '../analysis/worst-stack.js';
import { STACK_SECTION } from '../instrumenter/stack-usage.js';
import type { StackInfo } from './session-types.js';

export type { StackInfo };

/** Programs larger than this are not read for their frame sizes (the whole file is read to find one section). */
export const MAX_PROGRAM_BYTES = 512 << 20;

/** The frame sizes in `program`'s .mw_stack section (an absolute path, or null when the trace names none). */
export function readStackInfo(program: string | null): StackInfo {
  if (program === null) return { program, units: null, missing: 'the trace does not name its program' };
  let bytes: Uint8Array;
  try {
    // The trace names the program: only a regular file of a sane size is read (not /dev/zero, not a FIFO).
    bytes = readRegularFile(program, MAX_PROGRAM_BYTES);
  } catch (e) {
    return { program, units: null, missing: `cannot read ${program} (${describeFileProblem(e)})` };
  }
  try {
    const section = elfSection(bytes, STACK_SECTION);
    if (section === null || section.length === 0) {
      return { program, units: null, missing: `${program} has no ${STACK_SECTION} section (not linked by cc-memwrap, or the compiler gave no frame sizes)` };
    }
    return { program, units: parseStackUnits(new TextDecoder().decode(section)), missing: null };
  } catch (e) {
    return { program, units: null, missing: `${program}: ${(e as Error).message}` };
  }
}
