// tree-sitter setup: the C parser and the compiled queries of queries/*.scm,
// created once per process, and a parse that takes texts of any size.
//
// The parser is web-tree-sitter, tree-sitter compiled to WebAssembly, with
// tree-sitter-c's own grammar as WebAssembly: nothing native to build or load,
// so an installed package works on any machine that runs Node (the native
// binding's prebuilt Linux binary needs a newer libstdc++ than Debian 12 has,
// and building it needs a C++ toolchain). Trees, cursors and queries live in
// the WebAssembly heap, not the JS one: a tree is deleted once its unit is
// rewritten (`withTree`), a cursor once its walk is done.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Language, Parser, Query, type Node, type Tree } from 'web-tree-sitter';

export type SyntaxNode = Node;
export type { Query, Tree };

/** The grammar: copied beside the compiled parser by the build (the package holds no tree-sitter-c), else
 *  tree-sitter-c's own file (running from the sources). */
function grammarFile(): string {
  const beside = fileURLToPath(new URL('./tree-sitter-c.wasm', import.meta.url));
  if (existsSync(beside)) return beside;
  return createRequire(import.meta.url).resolve('tree-sitter-c/tree-sitter-c.wasm');
}

await Parser.init();
const language = await Language.load(grammarFile());

/** Chunk size (UTF-16 units) handed to tree-sitter per read. */
const CHUNK = 1 << 16;

let parser: Parser | undefined;

/** Parses C text (read in chunks, so megabyte units parse too), hands the tree to `use`, then frees it: nodes of
 *  the tree must not be kept past `use`. */
export function withTree<T>(text: string, use: (tree: Tree) => T): T {
  if (parser === undefined) {
    parser = new Parser();
    parser.setLanguage(language);
  }
  const tree = parser.parse((index: number) => text.slice(index, index + CHUNK));
  if (tree === null) throw new Error('tree-sitter returned no tree');
  try {
    return use(tree);
  } finally {
    tree.delete();
  }
}

/** The nodes of a child list: web-tree-sitter types its entries as possibly null, which they never are for a node
 *  of a live tree. */
export function nodes(list: readonly (SyntaxNode | null)[]): SyntaxNode[] {
  return list.filter((node): node is SyntaxNode => node !== null);
}

const compiled = new Map<string, Query>();

/** The query compiled from queries/<names>.scm (several files make one query). */
export function query(...names: string[]): Query {
  const key = names.join('+');
  let q = compiled.get(key);
  if (q === undefined) {
    q = new Query(language, names.map(readQuery).join('\n'));
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
