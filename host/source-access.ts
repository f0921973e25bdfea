// Which source files a viewer may read: only files the trace names, only under the source root (the run's recorded working directory unless the user chose another), only regular files of a sane size. Traces are untrusted, so every path is checked twice: as text, then after symlinks.
import { realpathSync, statSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { SourceRefusal, SourceResult } from './session-types.js';

/** Larger files are not shown (a trace can name anything; a viewer must not read gigabytes). */
export const MAX_SOURCE_BYTES = 8 << 20;

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

export class SourceAccess {
  private readonly named: Set<string>;
  readonly root: string;

  /** `files`: what the trace names; `root`: absolute directory every served file must be inside. */
  constructor(files: Iterable<string>, root: string) {
    if (!path.isAbsolute(root)) throw new Error(`source root must be an absolute path, got '${root}'`);
    this.named = new Set(files);
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

  /** Reads a source file the trace names, if it is a regular file under the root (after resolving symlinks). */
  read(file: string): SourceResult {
    const at = this.locate(file);
    if (!at.ok) return at;
    let real: string;
    let realRoot: string;
    try {
      real = realpathSync(at.path);
      realRoot = realpathSync(this.root);
    } catch {
      return refuse(file, 'missing', `${file}: not found under ${this.root}`);
    }
    if (!isInside(realRoot, real)) return refuse(file, 'outside-root', `${file}: leads outside the source root ${this.root}`);
    try {
      const st = statSync(real);
      if (!st.isFile()) return refuse(file, 'not-a-file', `${file}: not a regular file`);
      if (st.size > MAX_SOURCE_BYTES) return refuse(file, 'too-large', `${file}: larger than ${MAX_SOURCE_BYTES >> 20} MiB, not shown`);
      return { ok: true, file, path: real, text: readFileSync(real, 'utf8') };
    } catch (e) {
      return refuse(file, 'unreadable', `${file}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
  }
}
