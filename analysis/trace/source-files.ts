// The source files a trace names (the files of its UNIT site tables) and the run's working directory, read in one walk without building the model: what a viewer host needs to decide which files it may serve.
import { ProblemLog } from '../problems.js';
import { Kind, SiteKind } from './format.js';
import { parseHeader, readHeader } from './header.js';
import type { ByteSource } from './byte-source.js';
import { walkRecords } from './records.js';

export interface NamedSources {
  /** Distinct file strings of the site tables, in order of first appearance, exactly as the trace holds them. */
  files: string[];
  /**
   * Per file, the content hashes (`sha256:<hex>`) its SOURCE sites recorded at build time; a header built into several
   * units while it changed can have more than one. A file without any (an older build's trace) is absent.
   */
  digests: Map<string, string[]>;
  /** The PROGRAM record's working directory and executable path, or null without one. */
  cwd: string | null;
  program: string | null;
}

/** Throws TraceRefusedError for bytes that are not a trace this reader accepts; tolerates damage after the header. */
export function namedSources(bytes: Uint8Array | ByteSource): NamedSources {
  const files = new Set<string>();
  const digests = new Map<string, string[]>();
  let cwd: string | null = null;
  let program: string | null = null;
  walkRecords(
    bytes,
    bytes instanceof Uint8Array ? parseHeader(bytes) : readHeader(bytes),
    {
      record(r) {
        if (r.kind === Kind.UNIT && r.unit !== null) {
          const { strings, kind, file, name } = r.unit;
          file.forEach((f, i) => {
            const s = strings[f];
            if (s === undefined || s === '') return;
            files.add(s);
            const digest = kind[i] === SiteKind.SOURCE ? strings[name[i]!] : undefined;
            if (digest !== undefined && !digests.get(s)?.includes(digest)) digests.set(s, [...(digests.get(s) ?? []), digest]);
          });
        } else if (r.kind === Kind.PROGRAM && cwd === null) {
          cwd = r.cwd;
          program = r.path;
        }
      },
    },
    new ProblemLog(),
  );
  return { files: [...files], digests, cwd, program };
}
