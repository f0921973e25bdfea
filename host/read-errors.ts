// A trace file that cannot be read, said in one line naming it: the words `cc-memwrap report`, `dump`, `export` and
// the viewer's hosts all use.
import { TraceRefusedError } from '../analysis/trace/header.js';
import { RegularFileError } from '../instrumenter/regular-file.js';

/** One line for a file that cannot be read or is not a trace; everything else is rethrown. */
export function describeReadError(file: string, e: unknown): string {
  if (e instanceof TraceRefusedError) return `${file}: ${e.message}`;
  const code = (e as NodeJS.ErrnoException | null)?.code;
  if (code === 'ENOENT') return `${file}: no such file`;
  if (code === 'EISDIR') return `${file}: is a directory, not a trace file`;
  if (code === 'ENOTREGULAR') return `${file}: not a regular file (a FIFO or a device), not a trace file`;
  if (e instanceof RegularFileError) return `${file}: ${e.message}, not a trace file`;
  if (code === 'EACCES' || code === 'EPERM') return `${file}: permission denied`;
  if (code !== undefined) return `${file}: cannot read (${code}: ${(e as Error).message})`;
  throw e;
}
