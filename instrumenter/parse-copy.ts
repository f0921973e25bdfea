// The text tree-sitter parses: the unit with its directive lines blanked and
// the few constructs tree-sitter-c cannot parse (GNU statement attributes,
// type arguments of __builtin_va_arg and __builtin_offsetof, some keyword
// spellings; unnamed bit-fields) overwritten in place. Every replacement has the length of what
// it replaces and keeps its newlines, so offsets and rows equal the
// original's; the edits never fall inside a replaced range.
import { blankDirectives } from './linemarkers.js';

const WORD = /[A-Za-z0-9_$]/;

/** Keywords tree-sitter-c lacks, and the spelling it knows (padded with spaces). */
const SPELLINGS: Record<string, string> = {
  _Thread_local: '__thread',
  __signed__: 'signed',
  __signed: 'signed',
  __const__: 'const',
  __const: 'const',
  __volatile: 'volatile',
};

const TOKENS = new RegExp(
  `\\b(?:__attribute__|__attribute|__builtin_va_arg|__builtin_offsetof|__builtin_types_compatible_p|${Object.keys(SPELLINGS).join('|')})\\b`,
  'g',
);

/**
 * An unnamed bit-field (`signed : 0;`, `unsigned int : 4;`), which
 * tree-sitter-c cannot read: a struct member with no name, so nothing the
 * rewrite looks at. Only built-in type words, as a typedef name before `:`
 * could be a named field of type int.
 */
const UNNAMED_BITFIELD = /(?<=[;{]\s*)(?:(?:signed|unsigned|int|char|short|long|_Bool|const|volatile)\s+)*(?:signed|unsigned|int|char|short|long|_Bool)\s*:[^;{}]*;/g;

export function makeParseCopy(text: string): string {
  const blanked = blankDirectives(text).replace(UNNAMED_BITFIELD, blank);
  const pieces: string[] = [];
  let copied = 0;
  const overwrite = (start: number, end: number, lead: string): void => {
    if (start < copied) return; // inside a range already overwritten
    pieces.push(blanked.slice(copied, start), lead, blank(blanked.slice(start + lead.length, end)));
    copied = end;
  };

  for (const m of blanked.matchAll(TOKENS)) {
    const at = m.index;
    const word = m[0];
    if (at < copied || (at > 0 && WORD.test(blanked[at - 1]!))) continue;
    const spelling = SPELLINGS[word];
    if (spelling !== undefined) {
      overwrite(at, at + word.length, spelling);
      continue;
    }
    const open = skipSpace(blanked, at + word.length);
    if (blanked[open] !== '(') continue;
    const close = matchingParen(blanked, open);
    if (close < 0) continue;
    if (word === '__attribute__' || word === '__attribute') {
      // A statement attribute (`__attribute__((fallthrough));`) is an ERROR
      // for tree-sitter-c; an attribute before `;` carries nothing we edit.
      if (blanked[skipSpace(blanked, close + 1)] === ';') overwrite(at, close + 1, '');
    } else if (word === '__builtin_va_arg') {
      // `__builtin_va_arg(ap, char *)`: the type becomes the expression `0`.
      const comma = topLevelComma(blanked, open + 1, close);
      if (comma >= 0) overwrite(comma + 1, close, '0');
    } else {
      // __builtin_offsetof(type, member), __builtin_types_compatible_p(t1, t2):
      // an integer constant expression; `0` stands for it.
      overwrite(at, close + 1, '0');
    }
  }
  if (copied === 0) return blanked;
  pieces.push(blanked.slice(copied));
  return pieces.join('');
}

/** `s` with every character but CR and LF replaced by a space. */
function blank(s: string): string {
  return s.replace(/[^\r\n]/g, ' ');
}

function skipSpace(text: string, at: number): number {
  while (at < text.length && /\s/.test(text[at]!)) at++;
  return at;
}

/** Index of the `)` matching the `(` at `open`, skipping string and char literals; -1 if none. */
function matchingParen(text: string, open: number): number {
  let depth = 0;
  for (let k = open; k < text.length; k++) {
    const c = text[k]!;
    if (c === '(') depth++;
    else if (c === ')') {
      if (--depth === 0) return k;
    } else if (c === '"' || c === "'") {
      k = endOfLiteral(text, k);
      if (k < 0) return -1;
    } else if (c === ';' || c === '{' || c === '}') {
      return -1; // not inside one expression: leave it to the parser
    }
  }
  return -1;
}

function topLevelComma(text: string, from: number, to: number): number {
  let depth = 0;
  for (let k = from; k < to; k++) {
    const c = text[k]!;
    if (c === '(' || c === '[') depth++;
    else if (c === ')' || c === ']') depth--;
    else if (c === ',' && depth === 0) return k;
    else if (c === '"' || c === "'") {
      k = endOfLiteral(text, k);
      if (k < 0) return -1;
    }
  }
  return -1;
}

/** Index of the closing quote of the literal opening at `at`; -1 if the line ends first. */
function endOfLiteral(text: string, at: number): number {
  const quote = text[at];
  for (let k = at + 1; k < text.length; k++) {
    const c = text[k];
    if (c === '\\') k++;
    else if (c === quote) return k;
    else if (c === '\n') return -1;
  }
  return -1;
}
