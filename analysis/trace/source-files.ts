// The source files a trace names (the files of its UNIT site tables) and the run's working directory, read in one walk without building the model: what a viewer host needs to decide which files it may serve.
import { ProblemLog } from '../problems.js';
import { Kind } from './format.js';
import { parseHeader, readHeader } from './header.js';
import type { ByteSource } from './byte-source.js';
import { walkRecords } from './records.js';

export interface NamedSources {
  /** Distinct file strings of the site tables, in order of first appearance, exactly as the trace holds them. */
  files: string[];
  /** The PROGRAM record's working directory and executable path, or null without one. */
  cwd: string | null;
  program: string | null;
}

/** Throws TraceRefusedError for bytes that are not a trace this reader accepts; tolerates damage after the header. */
export function namedSources(bytes: Uint8Array | ByteSource): NamedSources {
  const files = new Set<string>();
  let cwd: string | null = null;
  let program: string | null = null;
  walkRecords(
    bytes,
    bytes instanceof Uint8Array ? parseHeader(bytes) : readHeader(bytes),
    {
      record(r) {
        if (r.kind === Kind.UNIT && r.unit !== null) {
          for (const f of r.unit.file) {
            const s = r.unit.strings[f];
            if (s !== undefined && s !== '') files.add(s);
          }
        } else if (r.kind === Kind.PROGRAM && cwd === null) {
          cwd = r.cwd;
          program = r.path;
        }
      },
    },
    new ProblemLog(),
  );
  return { files: [...files], cwd, program };
}
