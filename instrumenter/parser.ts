// tree-sitter setup: the C parser and the compiled queries of queries/*.scm,
// created once per process, and a parse that takes texts of any size.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import Parser from 'tree-sitter';
import C from 'tree-sitter-c';

export type SyntaxNode = Parser.SyntaxNode;
export type Tree = Parser.Tree;
export type Query = Parser.Query;

const language = C as unknown as Parser.Language;

/** Chunk size (UTF-16 units) handed to tree-sitter per read. */
const CHUNK = 1 << 16;

let parser: Parser | undefined;

/** Parses C text; the input is read in chunks, so megabyte units parse too. */
export function parseC(text: string): Tree {
  if (parser === undefined) {
    parser = new Parser();
    parser.setLanguage(language);
  }
  return parser.parse((index: number) => text.slice(index, index + CHUNK), null, { bufferSize: CHUNK });
}

const compiled = new Map<string, Query>();

/** The query compiled from queries/<names>.scm (several files make one query). */
export function query(...names: string[]): Query {
  const key = names.join('+');
  let q = compiled.get(key);
  if (q === undefined) {
    q = new Parser.Query(language, names.map(readQuery).join('\n'));
    compiled.set(key, q);
  }
  return q;
}

function readQuery(name: string): string {
  // Beside this file when run from source; from dist/instrumenter/ the .scm
  // files stay in instrumenter/queries/.
  for (const dir of ['./queries/', '../../instrumenter/queries/']) {
    const file = fileURLToPath(new URL(`${dir}${name}.scm`, import.meta.url));
    if (existsSync(file)) return readFileSync(file, 'utf8');
  }
  throw new Error(`query ${name}.scm not found beside ${fileURLToPath(import.meta.url)}`);
}
