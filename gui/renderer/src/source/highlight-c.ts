// A small C tokenizer for syntax highlighting: comments, strings and characters, preprocessor lines, keywords, numbers. Its output is token classes over the text; the source pane turns them into text nodes, so nothing in a file is ever parsed as HTML.

export type TokenClass = 'comment' | 'string' | 'preproc' | 'keyword' | 'type' | 'number' | 'plain';

export interface Token {
  text: string;
  cls: TokenClass;
}

const KEYWORDS = new Set(
  'auto break case const continue default do else enum extern for goto if inline register restrict return sizeof static struct switch typedef union volatile while _Alignas _Alignof _Atomic _Generic _Noreturn _Static_assert _Thread_local'.split(' '),
);
const TYPES = new Set('void char short int long float double signed unsigned _Bool bool size_t ssize_t uint8_t uint16_t uint32_t uint64_t int8_t int16_t int32_t int64_t FILE'.split(' '));

/** Each line's tokens; a block comment carries over lines. */
export function highlightC(text: string): Token[][] {
  const lines: Token[][] = [];
  let inComment = false;
  for (const line of text.split(/\r?\n/)) {
    const out: Token[] = [];
    let i = 0;
    const push = (end: number, cls: TokenClass): void => {
      if (end > i) out.push({ text: line.slice(i, end), cls });
      i = end;
    };
    if (!inComment && /^\s*#/.test(line)) {
      push(line.length, 'preproc');
      lines.push(out);
      continue;
    }
    while (i < line.length) {
      if (inComment) {
        const close = line.indexOf('*/', i);
        if (close < 0) push(line.length, 'comment');
        else {
          push(close + 2, 'comment');
          inComment = false;
        }
        continue;
      }
      const rest = line.slice(i);
      if (rest.startsWith('//')) push(line.length, 'comment');
      else if (rest.startsWith('/*')) {
        inComment = true;
        i += 0;
        const close = line.indexOf('*/', i + 2);
        if (close >= 0) {
          push(close + 2, 'comment');
          inComment = false;
        } else push(line.length, 'comment');
      } else if (rest[0] === '"' || rest[0] === "'") {
        const q = rest[0];
        let j = i + 1;
        while (j < line.length && line[j] !== q) j += line[j] === '\\' ? 2 : 1;
        push(Math.min(line.length, j + 1), 'string');
      } else {
        const word = /^[A-Za-z_]\w*/.exec(rest);
        const num = word ? null : /^(0[xX][0-9a-fA-F]+|\d+\.?\d*([eE][-+]?\d+)?)[uUlLfF]*/.exec(rest);
        if (word) push(i + word[0].length, KEYWORDS.has(word[0]) ? 'keyword' : TYPES.has(word[0]) ? 'type' : 'plain');
        else if (num) push(i + num[0].length, 'number');
        else {
          const plain = /^[^A-Za-z_0-9"'/]+|^./.exec(rest)!;
          push(i + plain[0].length, 'plain');
        }
      }
    }
    lines.push(out);
  }
  return lines;
}
