// Reading a file a trace or a build names, safely: only a regular file (a FIFO would block the read, a device such as
// /dev/zero would never end), only up to a size the caller can hold. Used by the driver (source hashes) and by every
// host-side reader of a path that comes from a trace (sources, the traced program, memwrap.json, libraries).
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/** A path that is not a regular file, or one larger than the caller accepts; the message says which, without the name. */
export class RegularFileError extends Error {
  override name = 'RegularFileError';
}

/**
 * Opens `file` for reading without blocking on a FIFO and checks that it is a regular file of at most `maxBytes`;
 * returns the descriptor and size (the caller closes it). Throws RegularFileError, or the fs error (ENOENT …).
 */
export function openRegularFile(file: string | Buffer, maxBytes: number): { fd: number; size: number } {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer; on a regular file it changes nothing.
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new RegularFileError(st.isDirectory() ? 'a directory, not a regular file' : 'not a regular file');
    if (st.size > maxBytes) throw new RegularFileError(`larger than ${describeBytes(maxBytes)}`);
    return { fd, size: st.size };
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

/** The bytes of the regular file `file` (at most `maxBytes`; a file that grows meanwhile is read to its size at open). */
export function readRegularFile(file: string | Buffer, maxBytes: number): Buffer {
  const { fd, size } = openRegularFile(file, maxBytes);
  try {
    const out = Buffer.alloc(size);
    let at = 0;
    while (at < size) {
      const n = readSync(fd, out, at, size - at, at);
      if (n === 0) break;
      at += n;
    }
    return at === size ? out : out.subarray(0, at);
  } finally {
    closeSync(fd);
  }
}

/** A read error as a short phrase: RegularFileError's own words, else the fs error's code (ENOENT, EACCES …). */
export function describeFileProblem(e: unknown): string {
  if (e instanceof RegularFileError) return e.message;
  return (e as NodeJS.ErrnoException).code ?? (e as Error).message;
}

function describeBytes(n: number): string {
  return n >= 1 << 20 ? `${n / (1 << 20)} MiB` : `${n} bytes`;
}
