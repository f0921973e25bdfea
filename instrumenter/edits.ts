// The edit list: insertions and replacements collected in any order at string
// indices of the unit, sorted by position, overlaps rejected, and applied once
// to the original bytes (so linemarkers, newlines and UTF-8 text stay put).
import type { SourceText } from './source-text.js';

/**
 * Which neighbour an insertion belongs to when several land on one offset.
 * `after` text closes or continues what precedes the offset (`&__mw_u, 4u, `
 * after a call's `(`, a `}` after a `;`) and goes first; `before` text opens
 * what follows (`__mw_` before `malloc`) and goes after all `after` text.
 * Within one side, edits keep the order in which they were added.
 */
export type Side = 'after' | 'before';

export interface Edit {
  readonly start: number;
  readonly end: number;
  readonly text: string;
  /** 0 = insertion attached after, 1 = insertion attached before, 2 = replacement. */
  readonly rank: 0 | 1 | 2;
  readonly seq: number;
}

export class EditOverlapError extends Error {
  override readonly name = 'EditOverlapError';
}

export class EditList {
  private readonly edits: Edit[] = [];

  get size(): number {
    return this.edits.length;
  }

  /** Inserts `text` at string index `at`. */
  insert(at: number, text: string, side: Side = 'before'): void {
    this.push(at, at, text, side === 'after' ? 0 : 1);
  }

  /** Replaces the string range [start, end) with `text`. */
  replace(start: number, end: number, text: string): void {
    if (end < start) throw new RangeError(`replace: end ${end} before start ${start}`);
    if (end === start) this.push(start, end, text, 1);
    else this.push(start, end, text, 2);
  }

  /** The edits in the order they will be applied; throws on an overlap. */
  sorted(): Edit[] {
    const edits = this.edits.slice().sort((a, b) => a.start - b.start || a.rank - b.rank || a.seq - b.seq);
    let widest: Edit | undefined; // the edit reaching furthest so far
    for (const edit of edits) {
      if (widest !== undefined && widest.end > edit.start) {
        throw new EditOverlapError(
          `edit ${describe(edit)} overlaps edit ${describe(widest)}: a replaced range cannot take another edit`,
        );
      }
      if (widest === undefined || edit.end >= widest.end) widest = edit;
    }
    return edits;
  }

  /** Applies every edit to the source's bytes and returns the new bytes. */
  apply(source: SourceText): Buffer {
    const edits = this.sorted();
    for (const edit of edits) {
      if (edit.end > source.text.length) {
        throw new RangeError(`edit ${describe(edit)} ends past the text (${source.text.length} chars)`);
      }
    }
    const positions: number[] = [];
    for (const edit of edits) positions.push(edit.start, edit.end);
    const bytes = source.byteOffsets(positions);
    const pieces: Buffer[] = [];
    let copied = 0;
    for (let k = 0; k < edits.length; k++) {
      const start = bytes[2 * k]!;
      const end = bytes[2 * k + 1]!;
      if (start > copied) pieces.push(source.bytes.subarray(copied, start));
      pieces.push(Buffer.from(edits[k]!.text, source.encoding)); // generated text is ASCII; names keep the unit's own encoding
      copied = Math.max(copied, end);
    }
    if (copied < source.bytes.length) pieces.push(source.bytes.subarray(copied));
    return Buffer.concat(pieces);
  }

  private push(start: number, end: number, text: string, rank: 0 | 1 | 2): void {
    if (!Number.isInteger(start) || start < 0) throw new RangeError(`edit at invalid index ${start}`);
    this.edits.push({ start, end, text, rank, seq: this.edits.length });
  }
}

function describe(edit: Edit): string {
  const what = edit.rank === 2 ? `replacing [${edit.start}, ${edit.end})` : `inserting at ${edit.start}`;
  return `${what} with ${JSON.stringify(edit.text.length > 40 ? edit.text.slice(0, 40) + '…' : edit.text)}`;
}
