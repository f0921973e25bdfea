// Output files appear whole or not at all: written beside their final name under a temporary one and renamed into
// place, so that a run stopped half-way (Ctrl-C, a full disk, a kill) never leaves a truncated report or export that
// looks like a finished one. They are private (private-files.ts): created 0600 whatever the umask.
import { renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { writePrivateFile } from './private-files.js';

/** Writes `data` to `file` through a temporary file in the same folder; throws the fs error, leaving nothing behind. */
export function writeWholeFile(file: string, data: string | Uint8Array): void {
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.partial`);
  try {
    writePrivateFile(temporary, data);
    renameSync(temporary, file);
  } catch (e) {
    rmSync(temporary, { force: true });
    throw e;
  }
}
