// The content hash a build records for every source file its sites name (site kind SOURCE, runtime/TRACE-FORMAT.md),
// and the bound on the files it reads for it: the driver writes it, a viewer host checks a file against it before it
// shows the file (host/source-access.ts). One function on both ends.
import { createHash } from 'node:crypto';
import { readRegularFile } from './regular-file.js';

/** What the SOURCE site's name starts with: the algorithm, so that a later one can be told apart. */
export const DIGEST_PREFIX = 'sha256:';

/** Larger files are neither hashed nor shown (a trace can name anything; a viewer must not read gigabytes). */
export const MAX_SOURCE_BYTES = 8 << 20;

/** `sha256:<64 hex digits>` of `bytes`. */
export function sourceDigest(bytes: Uint8Array): string {
  return DIGEST_PREFIX + createHash('sha256').update(bytes).digest('hex');
}

/** The digest of the file at `file` as it is now, or null when it is not a regular file of at most MAX_SOURCE_BYTES. */
export function fileDigest(file: string | Buffer): string | null {
  try {
    return sourceDigest(readRegularFile(file, MAX_SOURCE_BYTES));
  } catch {
    return null;
  }
}
