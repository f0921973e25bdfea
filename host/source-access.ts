// Which source files a viewer may read. A trace is untrusted (people send each other traces), so a file is shown only
// when its content is what the build recorded (the content hash of its SOURCE site, instrumenter/source-digest.ts):
// a trace can then name any path, and still show nothing its author did not already have. A file the trace records
// no hash for (an older build's trace, or one made by hand) is shown only under a source root the user named
// (`--source-root`); so is a file that changed since the build, with a note saying so. Every path is also checked
// twice against the source root, as text and after symlinks, and only regular files of a sane size are read.
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { describeFileProblem, readRegularFile, RegularFileError } from '../instrumenter/regular-file.js';
import { MAX_SOURCE_BYTES, sourceDigest } from '../instrumenter/source-digest.js';
import type { SourceRefusal, SourceResult } from './session-types.js';

export { MAX_SOURCE_BYTES };
export type { SourceResult };

/** `child` is `root` or inside it (both absolute and normalised). */
export function isInside(root: string, child: string): boolean {
  const rel = path.relative(root, child);
  // "..foo" is a name inside; only ".." itself or "../…" climbs out.
  return !path.isAbsolute(rel) && rel !== '..' && !rel.startsWith(`..${path.sep}`);
}

function refuse(file: string, reason: SourceRefusal, message: string): SourceResult {
  return { ok: false, file, reason, message };
}

/** What the trace says of its sources: the files it names, and the content hashes its build recorded for them. */
export interface NamedFiles {
  files: Iterable<string>;
  digests?: ReadonlyMap<string, readonly string[]>;
}

export class SourceAccess {
  private readonly named: Set<string>;
  private readonly digests: ReadonlyMap<string, readonly string[]>;
  readonly root: string;

  /**
   * `named`: what the trace names; `root`: absolute directory every served file must be inside; `chosenRoot`: the user
   * named that root (`--source-root`), which vouches for the files under it that no recorded hash does.
   */
  constructor(
    named: NamedFiles,
    root: string,
    private readonly chosenRoot = false,
  ) {
    if (!path.isAbsolute(root)) throw new Error(`source root must be an absolute path, got '${root}'`);
    this.named = new Set(named.files);
    this.digests = named.digests ?? new Map();
    this.root = path.resolve(root);
  }

  /** The source files the trace names, as it names them. */
  names(): string[] {
    return [...this.named];
  }

  /** Where `file` (a string of the trace) would be read from, or a refusal; does not touch the disk. */
  locate(file: string): { ok: true; path: string } | Exclude<SourceResult, { ok: true }> {
    if (!this.named.has(file)) return refuse(file, 'not-named', `${file}: not a source file of this trace`);
    if (file.includes('\0')) return refuse(file, 'outside-root', `${file}: not a valid path`);
    const full = path.resolve(this.root, file);
    if (!isInside(this.root, full)) return refuse(file, 'outside-root', `${file}: outside the source root ${this.root}`);
    return { ok: true, path: full };
  }

  /**
   * Reads a source file the trace names: a regular file under the root (after resolving symlinks) whose content is
   * what the build recorded, or one under a root the user chose.
   */
  read(file: string): SourceResult {
    const at = this.locate(file);
    if (!at.ok) return at;
    const recorded = this.digests.get(file) ?? [];
    if (recorded.length === 0 && !this.chosenRoot) {
      return refuse(file, 'unverified', `${file}: the trace records no content hash for it (built by an older cc-memwrap, or not by cc-memwrap), so it is shown only from a folder you name: --source-root DIR`);
    }
    let real: string;
    let realRoot: string;
    try {
      real = realpathSync(at.path);
      realRoot = realpathSync(this.root);
    } catch {
      return refuse(file, 'missing', `${file}: not found under ${this.root}`);
    }
    if (!isInside(realRoot, real)) return refuse(file, 'outside-root', `${file}: leads outside the source root ${this.root}`);
    let bytes: Buffer;
    try {
      bytes = readRegularFile(real, MAX_SOURCE_BYTES);
    } catch (e) {
      if (e instanceof RegularFileError) return refuse(file, /larger/.test(e.message) ? 'too-large' : 'not-a-file', `${file}: ${e.message}, not shown`);
      return refuse(file, 'unreadable', `${file}: cannot read (${describeFileProblem(e)})`);
    }
    const text = bytes.toString('utf8');
    if (recorded.length === 0 || recorded.includes(sourceDigest(bytes))) return { ok: true, file, path: real, text };
    if (this.chosenRoot) return { ok: true, file, path: real, text, note: `${file} changed since the build: this is the file as it is now under ${this.root}, not the one the program was built from` };
    return refuse(file, 'changed', `${file}: changed since the build (its content is not what the build recorded), so it is not shown; to see it as it is now, name its folder: --source-root DIR`);
  }
}
