// Output files appear whole or not at all: written beside their final name under a temporary one and renamed into
// place, so that a run stopped half-way (Ctrl-C, a full disk, a kill) never leaves a truncated report or export that
// looks like a finished one. They are private (private-files.ts): created 0600 whatever the umask.
import { closeSync, renameSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { openPrivate, writePrivateFile } from './private-files.js';

/**
 * Writes `data` to `file` through a temporary file in the same folder; throws the fs error, leaving nothing behind.
 * Pieces of text (an iterable) are written as they come, so the whole need never be one string.
 */
export function writeWholeFile(file: string, data: string | Uint8Array | Iterable<string>): void {
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.partial`);
  try {
    if (typeof data === 'string' || data instanceof Uint8Array) writePrivateFile(temporary, data);
    else writePieces(temporary, data);
    renameSync(temporary, file);
  } catch (e) {
    rmSync(temporary, { force: true });
    throw e;
  }
}

/** Text pieces into a new private file, gathered into writes of about 1 MiB. */
function writePieces(file: string, pieces: Iterable<string>): void {
  const fd = openPrivate(file, 'w');
  try {
    let batch: string[] = [];
    let size = 0;
    for (const piece of pieces) {
      batch.push(piece);
      size += piece.length;
      if (size >= 1 << 20) {
        writeSync(fd, batch.join(''));
        batch = [];
        size = 0;
      }
    }
    if (batch.length > 0) writeSync(fd, batch.join(''));
  } finally {
    closeSync(fd);
  }
}
