// Reading C declarators off the tree: the name a declarator declares and
// whether that name is a function, an array (complete or not), a pointer or
// a plain object; and the storage-class words of a declaration.
import { nodes, type SyntaxNode } from './parser.js';

export interface Declared {
  /** The identifier (or type_identifier, in a typedef) being declared. */
  readonly name: SyntaxNode;
  /** The derivation nearest the name: `int *f(void)` is a function, `int (*f)(void)` a pointer. */
  readonly derived: 'function' | 'array' | 'pointer' | 'none';
  /** The nearest derivation is an array without a size (`int a[]`). */
  readonly sizeless: boolean;
  /** The declarator has an initializer (`= ...`). */
  readonly initialized: boolean;
}

/** What a declarator (a declaration's `declarator` field) declares; null if unreadable. */
export function readDeclarator(declarator: SyntaxNode): Declared | null {
  let node: SyntaxNode | null = declarator;
  let initialized = false;
  if (node.type === 'init_declarator') {
    initialized = true;
    node = node.childForFieldName('declarator');
  }
  let derived: Declared['derived'] = 'none';
  let sizeless = false;
  for (let depth = 0; node !== null && depth < 64; depth++) {
    switch (node.type) {
      case 'identifier':
      case 'type_identifier':
      case 'field_identifier':
        return { name: node, derived, sizeless, initialized };
      case 'pointer_declarator':
        derived = 'pointer';
        sizeless = false;
        node = node.childForFieldName('declarator');
        break;
      case 'array_declarator':
        derived = 'array';
        sizeless = node.childForFieldName('size') === null;
        node = node.childForFieldName('declarator');
        break;
      case 'function_declarator':
        derived = 'function';
        sizeless = false;
        node = node.childForFieldName('declarator');
        break;
      case 'parenthesized_declarator':
      case 'attributed_declarator':
        node = firstDeclarator(node);
        break;
      default:
        return null;
    }
  }
  return null;
}

function firstDeclarator(node: SyntaxNode): SyntaxNode | null {
  for (const child of nodes(node.namedChildren)) {
    if (child.type !== 'ms_call_modifier' && child.type !== 'attribute_declaration') return child;
  }
  return null;
}

/**
 * The storage-class words of a declaration or function definition (`static`,
 * `extern`, `inline`, `__thread`, ...); pass the parsed copy as `text`.
 */
export function storageClasses(node: SyntaxNode, text: string): string[] {
  const words: string[] = [];
  forEachChild(node, (type, start, end) => {
    if (type === 'storage_class_specifier') words.push(text.slice(start, end));
  });
  return words;
}

/**
 * Calls `visit` with the type and range of each child of `node`, through a
 * tree cursor: sibling and parent steps on nodes search down from the root
 * (tree-sitter nodes have no parent pointers), slow in big units.
 */
export function forEachChild(node: SyntaxNode, visit: (type: string, start: number, end: number) => boolean | void): void {
  const cursor = node.walk();
  try {
    if (!cursor.gotoFirstChild()) return;
    do {
      if (visit(cursor.nodeType, cursor.startIndex, cursor.endIndex) === false) return;
    } while (cursor.gotoNextSibling());
  } finally {
    cursor.delete(); // it lives in the WebAssembly heap
  }
}

export const THREAD_LOCAL_WORDS: ReadonlySet<string> = new Set(['__thread', 'thread_local', '_Thread_local']);

export const INLINE_WORDS: ReadonlySet<string> = new Set(['inline', '__inline', '__inline__', '__forceinline']);
