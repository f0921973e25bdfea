// Finds the frame sizes for `report --stack` and the viewer's stack panel: the traced program (tracedProgram())
// carries them in its `.mw_stack` section, put there by the driver at build time.
import { elfSection } from '../analysis/elf-section.js';
import { parseStackUnits } from '../analysis/worst-stack.js';
import { STACK_SECTION } from '../instrumenter/stack-usage.js';
import { readProgramFile, type ProgramFile } from './program-file.js';

export { MAX_PROGRAM_BYTES } from './program-file.js';
import type { StackInfo } from './session-types.js';

export type { StackInfo };

/** The frame sizes in `program`'s .mw_stack section (an absolute path, or null when the trace names none); `file`: the
 *  program's file read already (else it is read here). */
export function readStackInfo(program: string | null, file: ProgramFile | null = null): StackInfo {
  if (program === null) return { program, units: null, missing: 'the trace does not name its program' };
  const read = file ?? readProgramFile(program);
  if (read.bytes === null) return { program, units: null, missing: read.problem };
  const bytes = read.bytes;
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
