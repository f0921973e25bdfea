// Files and folders the tools create are their user's alone: traces can hold a program's data, HTML reports embed
// its sources, indexes and caches repeat what the trace holds. Files are created 0600 and folders 0700 whatever the
// umask (as shells create their history files), so a shared machine's other users read none of them.
import { closeSync, fchmodSync, fstatSync, mkdirSync, openSync, writeSync, chmodSync } from 'node:fs';
import path from 'node:path';

/** rw for the owner only. */
export const PRIVATE_FILE_MODE = 0o600;
/** rwx for the owner only. */
export const PRIVATE_DIR_MODE = 0o700;

/**
 * Opens `file` as openSync(file, flags) does, creating it 0600 whatever the umask; a regular file that existed is
 * made 0600 too (never a device such as /dev/null, whose mode is the system's). Returns the descriptor.
 */
export function openPrivate(file: string, flags: string): number {
  const fd = openSync(file, flags, PRIVATE_FILE_MODE);
  try {
    if (fstatSync(fd).isFile()) fchmodSync(fd, PRIVATE_FILE_MODE);
  } catch (e) {
    closeSync(fd);
    throw e;
  }
  return fd;
}

/** Writes `data` to `file` (created or truncated) as a private file. */
export function writePrivateFile(file: string, data: string | Uint8Array): void {
  const fd = openPrivate(file, 'w');
  try {
    const bytes = typeof data === 'string' ? Buffer.from(data) : data;
    for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at);
  } finally {
    closeSync(fd);
  }
}

/** Creates `dir` and any missing parents as mkdir -p does; each folder it creates is 0700 whatever the umask. */
export function makePrivateDir(dir: string): void {
  const abs = path.resolve(dir);
  const first = mkdirSync(abs, { recursive: true, mode: PRIVATE_DIR_MODE });
  if (first === undefined) return;
  // Only the folders this call created: from the first of them down to `dir`.
  for (let d = abs; ; d = path.dirname(d)) {
    chmodSync(d, PRIVATE_DIR_MODE);
    if (d === first || d === path.dirname(d)) break;
  }
}
