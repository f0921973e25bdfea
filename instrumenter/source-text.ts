// One translation unit held twice: as the original bytes (what the edits are
// applied to) and as the JS string that tree-sitter parses, whose node
// offsets are UTF-16 indices; converts those indices to byte offsets.

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export class SourceText {
  /** `utf8` when the bytes are valid UTF-8, else `latin1` (one char per byte). */
  readonly encoding: 'utf8' | 'latin1';
  /** True when every string index equals its byte offset. */
  readonly identity: boolean;

  private constructor(
    readonly bytes: Buffer,
    readonly text: string,
    encoding: 'utf8' | 'latin1',
  ) {
    this.encoding = encoding;
    this.identity = text.length === bytes.length;
  }

  static fromBytes(bytes: Buffer): SourceText {
    let text: string;
    try {
      text = utf8.decode(bytes);
    } catch {
      // Not UTF-8 (a Latin-1 string literal, say): one char per byte keeps
      // every index equal to its byte offset.
      return new SourceText(bytes, bytes.toString('latin1'), 'latin1');
    }
    return new SourceText(bytes, text, 'utf8');
  }

  /**
   * Byte offsets of string indices, in one pass. `indices` must be sorted
   * ascending and fall on character boundaries (never inside a surrogate
   * pair), as tree-sitter's offsets do.
   */
  byteOffsets(indices: readonly number[]): number[] {
    if (this.identity) return indices.slice();
    const text = this.text;
    const out: number[] = new Array<number>(indices.length);
    let at = 0;
    let bytes = 0;
    for (let k = 0; k < indices.length; k++) {
      const target = indices[k]!;
      if (target < at) throw new Error(`byteOffsets: index ${target} after ${at}: indices must be sorted`);
      for (; at < target; at++) {
        const c = text.charCodeAt(at);
        if (c < 0x80) bytes += 1;
        else if (c < 0x800) bytes += 2;
        else if (c >= 0xd800 && c <= 0xdbff) bytes += 4; // high surrogate: the pair is 4 bytes
        else if (c >= 0xdc00 && c <= 0xdfff) bytes += 0; // low surrogate: counted with its pair
        else bytes += 3;
      }
      out[k] = bytes;
    }
    return out;
  }

  /** The original bytes of the string range [start, end). */
  bytesOf(start: number, end: number): Buffer {
    return Buffer.from(this.text.slice(start, end), this.encoding);
  }
}
