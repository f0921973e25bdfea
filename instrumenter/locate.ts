// Finds what the rewrite edits, with the queries of queries/*.scm. File-scope
// definitions: toplevel.scm on the root's children only. Inside a function:
// returns.scm, statics.scm and calls.scm run at the tokens that can start a
// match (`return`, `static`, an allocator or setjmp name), found by a text
// search of the body. A query over the whole tree walks every node of a
// megabyte unit (~0.2 s per query for SQLite); this visits a few thousand.
import { ALLOCATOR_KINDS, SETJMP_NAMES } from './sites.js';
import type { TreeCursor } from 'web-tree-sitter';
import { nodes, query, type SyntaxNode } from './parser.js';
import { readDeclarator } from './declarators.js';

export interface TopLevel {
  readonly functions: SyntaxNode[];
  readonly declarations: SyntaxNode[];
  readonly typedefs: SyntaxNode[];
}

export function findTopLevel(root: SyntaxNode): TopLevel {
  const found: TopLevel = { functions: [], declarations: [], typedefs: [] };
  const parameters = oldStyleParameters(root);
  for (const { name, node } of query('toplevel').captures(root, { maxStartDepth: 0 })) {
    if (name === 'function') found.functions.push(node);
    else if (name === 'file_declaration' && !parameters.has(node.startIndex)) found.declarations.push(node);
    else if (name === 'typedef') found.typedefs.push(node);
  }
  return found;
}

/**
 * Start offsets of file-scope declarations that are really the parameter
 * declarations of an old-style (K&R) definition tree-sitter-c could not read,
 * e.g. `char *f(a, n) char *a; int *n; { … }`: it yields a declaration with
 * an error, more declarations, then a compound statement at file scope, where
 * C allows none. They declare no objects.
 */
function oldStyleParameters(root: SyntaxNode): Set<number> {
  const out = new Set<number>();
  const children = nodes(root.children);
  for (let i = 0; i < children.length; i++) {
    if (children[i]!.type !== 'compound_statement') continue;
    // Back to the misread head `char *f(a, n) char *a;`, which holds the error.
    for (let j = i - 1; j >= 0 && children[j]!.type === 'declaration'; j--) {
      out.add(children[j]!.startIndex);
      if (children[j]!.hasError) break;
    }
  }
  return out;
}

export interface CallSite {
  readonly name: string;
  readonly call: SyntaxNode;
  readonly callee: SyntaxNode;
  readonly args: SyntaxNode;
  /** Inside a branch, a loop, a `?:`, a binary operator (`&&`, `||`: the types do not say which) or after a label. */
  readonly conditional: boolean;
}

/** Node types whose parts may run or not, or run again: a call inside one is conditional. */
const CONDITIONAL = new Set(['if_statement', 'for_statement', 'while_statement', 'do_statement', 'switch_statement', 'case_statement', 'labeled_statement', 'conditional_expression', 'binary_expression']);

export interface StaticDeclaration {
  readonly node: SyntaxNode;
  /** The type of the node holding the declaration (a declaration can follow it only in a block). */
  readonly parentType: string;
}

export interface InFunction {
  readonly returns: SyntaxNode[];
  readonly statics: StaticDeclaration[];
  readonly calls: CallSite[];
}

const TOKENS = new RegExp(`\\b(?:return|static|${[...ALLOCATOR_KINDS.keys(), ...SETJMP_NAMES].join('|')})\\b`, 'g');

/**
 * Returns, static declarations and allocator/setjmp calls of one function
 * definition, in source order, leaving out those of GNU nested functions.
 * `text` is the parsed text (directives blanked, so no marker matches).
 *
 * Each token is reached with a tree cursor walking down from the function,
 * which also yields its ancestors: tree-sitter nodes have no parent
 * pointers, and `node.parent` searches down from the root through every
 * top-level declaration, which is slow in a unit with thousands of them.
 */
export function findInFunction(fn: SyntaxNode, body: SyntaxNode, text: string): InFunction {
  const found: InFunction = { returns: [], statics: [], calls: [] };
  const start = fn.walk(); // a cursor at `fn`, copied into `cursor` before each walk down
  const cursor = fn.walk();
  try {
    walkTokens(start, cursor, body, text, found);
  } finally {
    cursor.delete();
    start.delete();
  }
  return found;
}

/** For each token of the body (`return`, `static`, a called name), walks down to it from `fn` and notes what it
 *  belongs to. */
function walkTokens(start: TreeCursor, cursor: TreeCursor, body: SyntaxNode, text: string, found: InFunction): void {
  const path: string[] = [];
  const end = body.endIndex;
  TOKENS.lastIndex = body.startIndex;
  for (let m = TOKENS.exec(text); m !== null && m.index < end; m = TOKENS.exec(text)) {
    const at = m.index;
    const word = m[0];
    if (text[at - 1] === '$' || text[at + word.length] === '$') continue; // part of a `$` identifier
    // Walk down to the token at `at`, noting the node types on the way.
    cursor.resetTo(start);
    path.length = 0;
    let nested = false;
    while (gotoChildAt(cursor, at) && cursor.startIndex <= at) {
      path.push(cursor.nodeType);
      if (cursor.nodeType === 'function_definition') nested = true;
    }
    if (nested || cursor.startIndex !== at || cursor.endIndex !== at + word.length) continue; // a literal, a nested function
    const up = (levels: number): SyntaxNode | null => {
      for (let k = 0; k < levels; k++) if (!cursor.gotoParent()) return null;
      return cursor.currentNode;
    };
    const parentType = path[path.length - 2];
    if (word === 'return') {
      if (parentType !== 'return_statement') continue;
      const statement = up(1);
      if (statement !== null && matchesAt('returns', statement)) found.returns.push(statement);
    } else if (word === 'static') {
      if (parentType !== 'storage_class_specifier' || path[path.length - 3] !== 'declaration') continue;
      const declaration = up(2);
      if (declaration !== null && matchesAt('statics', declaration)) {
        found.statics.push({ node: declaration, parentType: path[path.length - 4] ?? '' });
      }
    } else if (parentType === 'call_expression' && path[path.length - 1] === 'identifier') {
      const call = up(1);
      if (call === null) continue;
      for (const match of query('calls').matches(call, { maxStartDepth: 0 })) {
        const get = (name: string): SyntaxNode | undefined => match.captures.find((c) => c.name === name)?.node;
        const callee = get('callee');
        const args = get('arguments');
        if (callee === undefined || args === undefined || callee.startIndex !== at) continue;
        found.calls.push({ name: word, call, callee, args, conditional: path.some((type) => CONDITIONAL.has(type)) });
      }
    }
  }
}

/** Moves the cursor to its node's first child that ends after `at`; false, not moved, when none does. (What the
 *  cursor's own `gotoFirstChildForIndex` does: web-tree-sitter 0.25 hands it the index at the wrong place and
 *  reports a move to the first child as no move.) */
function gotoChildAt(cursor: TreeCursor, at: number): boolean {
  if (!cursor.gotoFirstChild()) return false;
  while (cursor.endIndex <= at) {
    if (!cursor.gotoNextSibling()) {
      cursor.gotoParent();
      return false;
    }
  }
  return true;
}

/** True when the query matches with `node` itself as the pattern's top node. */
function matchesAt(name: string, node: SyntaxNode): boolean {
  const start = node.startIndex;
  return query(name).captures(node, { maxStartDepth: 0 }).some((c) => c.node.startIndex === start);
}

/**
 * Names a function declares for itself (a parameter `free`, a local
 * `malloc`, a function pointer named like a function), among the names of
 * `calls`. Only a name that occurs in
 * the function more often than it is called can be declared there; the
 * declarators query runs only then.
 */
export function locallyDeclared(fn: SyntaxNode, text: string, calls: readonly { readonly name: string }[]): Set<string> {
  const declared = new Set<string>();
  const called = new Map<string, number>();
  for (const call of calls) called.set(call.name, (called.get(call.name) ?? 0) + 1);
  const body = text.slice(fn.startIndex, fn.endIndex);
  const occurrences = (name: string): number => body.match(new RegExp(`\\b${name}\\b`, 'g'))?.length ?? 0;
  const suspects = [...called].filter(([name, count]) => occurrences(name) > count);
  if (suspects.length === 0) return declared;
  const names = new Set(suspects.map(([name]) => name));
  for (const capture of query('declarators').captures(fn)) {
    const d = readDeclarator(capture.node);
    if (d === null) continue;
    const name = text.slice(d.name.startIndex, d.name.endIndex);
    if (names.has(name)) declared.add(name);
  }
  return declared;
}
