// The edit list: edits given in any order land in position order, overlaps
// are refused with a message naming both edits, and offsets into text with
// multibyte characters become the right byte offsets.
import { describe, expect, it } from 'vitest';
import { EditList, EditOverlapError } from '../../instrumenter/edits.js';
import { SourceText } from '../../instrumenter/source-text.js';

const apply = (text: string, build: (edits: EditList) => void): string => {
  const edits = new EditList();
  build(edits);
  return edits.apply(SourceText.fromBytes(Buffer.from(text, 'utf8'))).toString('utf8');
};

describe('EditList', () => {
  it('applies edits given in reverse order in position order', () => {
    const out = apply('abcdef', (e) => {
      e.insert(6, '!');
      e.replace(3, 4, 'D');
      e.insert(1, '[');
      e.insert(0, '<');
    });
    expect(out).toBe('<a[bcDef!');
  });

  it('puts `after` insertions before `before` insertions at one offset, each in the order added', () => {
    // free(malloc(3)): `&u, 0u, ` belongs after free's `(`, `__mw_` before malloc.
    const out = apply('free(malloc(3))', (e) => {
      e.insert(5, '__mw_', 'before');
      e.insert(0, '__mw_', 'before');
      e.insert(5, '&u, 0u, ', 'after');
      e.insert(12, '&u, 1u, ', 'after');
      e.insert(5, 'X', 'before');
    });
    expect(out).toBe('__mw_free(&u, 0u, __mw_X' + 'malloc(&u, 1u, 3))');
  });

  it('accepts a replacement right next to another and an insertion at either end', () => {
    const out = apply('0123456789', (e) => {
      e.replace(2, 4, 'ab');
      e.replace(4, 6, 'cd');
      e.insert(2, '<');
      e.insert(6, '>');
    });
    expect(out).toBe('01<abcd>6789');
  });

  it('rejects overlapping replacements, naming both', () => {
    const edits = new EditList();
    edits.replace(2, 6, 'x');
    edits.replace(4, 8, 'y');
    expect(() => edits.sorted()).toThrow(EditOverlapError);
    expect(() => edits.sorted()).toThrow(/replacing \[4, 8\).*overlaps.*replacing \[2, 6\)/);
  });

  it('rejects an insertion inside a replaced range', () => {
    const edits = new EditList();
    edits.insert(5, 'x');
    edits.replace(3, 7, 'y');
    expect(() => edits.sorted()).toThrow(/inserting at 5 .*overlaps.*replacing \[3, 7\)/);
  });

  it('rejects a replacement inside another', () => {
    const edits = new EditList();
    edits.replace(0, 10, 'outer');
    edits.replace(3, 4, 'inner');
    expect(() => edits.sorted()).toThrow(EditOverlapError);
  });

  it('rejects edits past the end of the text', () => {
    const edits = new EditList();
    edits.insert(4, 'x');
    expect(() => edits.apply(SourceText.fromBytes(Buffer.from('abc')))).toThrow(RangeError);
  });

  it('edits after multibyte text at the right bytes (Japanese, emoji, CRLF)', () => {
    const text = '/* 日本語 */ int x; /* 😀 */\r\nchar *s = "é";';
    const at = (needle: string): number => text.indexOf(needle);
    const out = apply(text, (e) => {
      e.insert(at('int'), '[');
      e.insert(at('x;') + 1, ']');
      e.replace(at('s ='), at('s =') + 1, 'str');
      e.insert(text.length, '!');
    });
    expect(out).toBe('/* 日本語 */ [int x]; /* 😀 */\r\nchar *str = "é";!');
  });

  it('keeps bytes that are not UTF-8 as they are', () => {
    const bytes = Buffer.from([0x63, 0x3d, 0x22, 0xe9, 0xff, 0x22, 0x3b]); // c="\xe9\xff";
    const source = SourceText.fromBytes(bytes);
    expect(source.encoding).toBe('latin1');
    const edits = new EditList();
    edits.insert(6, ' /* ok */');
    edits.insert(0, 'x');
    expect([...edits.apply(source)]).toEqual([...Buffer.from('xc="'), 0xe9, 0xff, ...Buffer.from('" /* ok */;')]);
  });
});

describe('SourceText.byteOffsets', () => {
  it('converts sorted string indices to byte offsets in one pass', () => {
    const source = SourceText.fromBytes(Buffer.from('aé日😀b', 'utf8'));
    // a=1 byte, é=2, 日=3, 😀=4 (two UTF-16 units)
    expect(source.byteOffsets([0, 1, 2, 3, 5, 6])).toEqual([0, 1, 3, 6, 10, 11]);
    expect(source.identity).toBe(false);
    expect(SourceText.fromBytes(Buffer.from('plain')).identity).toBe(true);
  });

  it('keeps a byte-order mark as a character', () => {
    const source = SourceText.fromBytes(Buffer.from('\ufeffint x;', 'utf8'));
    expect(source.text.charCodeAt(0)).toBe(0xfeff);
    expect(source.byteOffsets([1])).toEqual([3]);
  });
});
