// Reads the linemarkers of a preprocessed unit (`# 335 "lapi.c" 3 4`) into a
// per-line map of the user's file and line and what kind of file that is
// (user, system header, our own header, built-in), and makes the copy that
// tree-sitter parses: every directive line blanked to spaces of equal length.
import path from 'node:path';
import { cStringLiteral } from './sites.js';

/** `system`: flag 3; `header`: the runtime header given as headerPath;
 * `builtin`: `<built-in>`, `<command-line>` and the like. */
export type FileKind = 'user' | 'system' | 'header' | 'builtin';

export interface SourceFile {
  /** The name as the preprocessor wrote it, unescaped (for messages). */
  readonly name: string;
  /** The same name as a C string literal, quotes included (for the site table). */
  readonly literal: string;
  /** The bytes that literal holds: the name made absolute against the compile directory (for reading the file). */
  readonly siteName: Buffer;
  readonly kind: FileKind;
}

/** Where each line of the preprocessed text came from. */
export class LineMap {
  constructor(
    readonly files: readonly SourceFile[],
    /** Per row of the text: index into `files`, or -1 before any linemarker. */
    private readonly rowFile: Int32Array,
    /** Per row: the line number in that file. */
    private readonly rowLine: Int32Array,
    /** Used for rows before any linemarker (text without markers). */
    private readonly fallback: SourceFile,
  ) {}

  get rows(): number {
    return this.rowLine.length;
  }

  file(row: number): SourceFile {
    const index = this.rowFile[row] ?? -1;
    return index < 0 ? this.fallback : this.files[index]!;
  }

  line(row: number): number {
    return this.rowLine[row] ?? row + 1;
  }

  kind(row: number): FileKind {
    return this.file(row).kind;
  }
}

const MARKER =
  /^[ \t]*#[ \t]*(?:line[ \t]+)?(\d+)(?:[ \t]+"((?:[^"\\]|\\[\s\S])*)")?((?:[ \t]+\d+)*)[ \t]*\r?$/;

/**
 * Builds the line map. A file's kind is fixed the first time a marker names
 * it: GCC also marks tokens of system-header macros expanded in the user's
 * file with flag 3 (`# 20 "a.c" 3 4`), and those still belong to the user.
 */
export function readLinemarkers(text: string, headerPath: string, encoding: 'utf8' | 'latin1', compileDir = ''): LineMap {
  let rows = 1;
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) rows++;
  const rowFile = new Int32Array(rows).fill(-1);
  const rowLine = new Int32Array(rows);
  const files: SourceFile[] = [];
  const byName = new Map<string, number>();
  const header = headerPath === '' ? '' : path.resolve(headerPath);

  let file = -1;
  let line = 1;
  let row = 0;
  let start = 0;
  while (row < rows) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    rowFile[row] = file;
    rowLine[row] = line;
    line++;
    if (isDirectiveAt(text, start)) {
      const m = MARKER.exec(text.slice(start, end));
      if (m !== null) {
        line = Number(m[1]);
        const flags = (m[3] ?? '').trim().split(/[ \t]+/);
        if (m[2] !== undefined) {
          const raw = m[2];
          let index = byName.get(raw);
          if (index === undefined) {
            const bytes = unescapeCString(raw, encoding);
            const name = bytes.toString(encoding);
            const siteName = siteFileBytes(bytes, name, compileDir);
            index = files.length;
            files.push({ name, literal: cStringLiteral(siteName), siteName, kind: classify(name, flags, header) });
            byName.set(raw, index);
          }
          file = index;
        }
      }
    }
    row++;
    start = end + 1;
  }
  return new LineMap(files, rowFile, rowLine, { name: '', literal: '""', siteName: Buffer.alloc(0), kind: 'user' });
}

function classify(name: string, flags: readonly string[], header: string): FileKind {
  if (header !== '' && (name === header || path.resolve(name) === header)) return 'header';
  if (name.startsWith('<') && name.endsWith('>')) return 'builtin';
  return flags.includes('3') ? 'system' : 'user';
}

/** True when the line starting at `start` is a directive (`#` after blanks). */
function isDirectiveAt(text: string, start: number): boolean {
  for (let k = start; k < text.length; k++) {
    const c = text.charCodeAt(k);
    if (c === 0x23) return true; // '#'
    if (c !== 0x20 && c !== 0x09) return false;
  }
  return false;
}

/**
 * The copy tree-sitter parses: every directive line (linemarkers, and the
 * `#pragma` lines GCC writes, even in the middle of an expression) replaced
 * by spaces of the same length, so every offset and row stays the same.
 */
export function blankDirectives(text: string): string {
  const parts: string[] = [];
  let copied = 0;
  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    if (isDirectiveAt(text, start)) {
      let stop = end;
      if (stop > start && text.charCodeAt(stop - 1) === 0x0d) stop--; // keep a CR of CRLF
      parts.push(text.slice(copied, start), ' '.repeat(stop - start));
      copied = stop;
    }
    start = end + 1;
  }
  parts.push(text.slice(copied));
  return parts.join('');
}

/** The file name the site table records: made absolute against the directory
 *  the compiler ran in, so a trace finds its sources from anywhere (the
 *  linemarkers themselves, and so __FILE__, keep the name as given). */
function siteFileBytes(bytes: Buffer, name: string, compileDir: string): Buffer {
  if (compileDir === '' || name === '' || name.startsWith('<') || path.isAbsolute(name)) return bytes;
  return Buffer.concat([Buffer.from(compileDir.endsWith('/') ? compileDir : compileDir + '/', 'utf8'), bytes]);
}

/** The bytes a C string literal body (as in a linemarker) stands for. */
function unescapeCString(body: string, encoding: 'utf8' | 'latin1'): Buffer {
  if (!body.includes('\\')) return Buffer.from(body, encoding);
  const simple: Record<string, number> = { n: 10, t: 9, r: 13, a: 7, b: 8, f: 12, v: 11 };
  const pieces: Buffer[] = [];
  let copied = 0;
  for (const m of body.matchAll(/\\([0-7]{1,3}|[\s\S])/g)) {
    pieces.push(Buffer.from(body.slice(copied, m.index), encoding));
    const escape = m[1]!;
    const code = /^[0-7]/.test(escape) ? parseInt(escape, 8) & 0xff : simple[escape];
    pieces.push(code !== undefined ? Buffer.from([code]) : Buffer.from(escape, encoding));
    copied = m.index + m[0].length;
  }
  pieces.push(Buffer.from(body.slice(copied), encoding));
  return Buffer.concat(pieces);
}
