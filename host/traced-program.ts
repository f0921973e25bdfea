// Where the traced program is on disk: the path its PROGRAM record gives, resolved against the run's working
// directory. The one place that works it out; the memwrap.json beside it and its frame sizes are found from here.
import path from 'node:path';

/** The traced program's absolute path, or null when the trace names none (no PROGRAM record, or an empty path). */
export function tracedProgram(program: string | null | undefined, cwd: string | null | undefined): string | null {
  if (program === null || program === undefined || program === '') return null;
  return path.resolve(cwd || '/', program);
}
