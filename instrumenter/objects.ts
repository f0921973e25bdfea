// Static objects: which file-scope declarations of the user's files define
// objects to register (once per name), and which names a static local
// declaration defines. Functions, extern and thread-local declarations,
// sizeless arrays without initializer are not objects to register. Names are
// read from the original text, storage-class words from the parsed copy
// (where `_Thread_local` is spelled `__thread`).
import { readDeclarator, storageClasses, THREAD_LOCAL_WORDS, type Declared } from './declarators.js';
import type { LineMap } from './linemarkers.js';
import { nodes, type SyntaxNode } from './parser.js';

export interface StaticObject {
  readonly name: string;
  /** The declared identifier (its row gives the site's file and line). */
  readonly node: SyntaxNode;
}

/** A declared name that is an object (not a function, not a sizeless array without initializer). */
export function isObject(declared: Declared): boolean {
  if (declared.derived === 'function') return false;
  if (declared.derived === 'array' && declared.sizeless && !declared.initialized) return false;
  return true;
}

/**
 * File-scope object definitions of the user's files, once per name, in order
 * of first definition: not `extern`, not thread-local, not functions (also
 * through a function typedef: `fn_t f;`), not sizeless arrays without
 * initializer (also through a typedef), not the rewriter's own `__mw_` names.
 */
export function fileScopeObjects(
  declarations: readonly SyntaxNode[],
  typedefs: readonly SyntaxNode[],
  lines: LineMap,
  text: string,
  parseText: string,
): StaticObject[] {
  const functionTypes = new Set<string>();
  const sizelessTypes = new Set<string>();
  const typeName = (node: SyntaxNode): string | null => {
    const type = node.childForFieldName('type');
    return type !== null && type.type === 'type_identifier' ? text.slice(type.startIndex, type.endIndex) : null;
  };
  for (const node of typedefs) {
    const base = typeName(node);
    for (const declarator of nodes(node.childrenForFieldName('declarator'))) {
      const declared = readDeclarator(declarator);
      if (declared === null) continue;
      const name = text.slice(declared.name.startIndex, declared.name.endIndex);
      const plain = declared.derived === 'none' && base !== null;
      if (declared.derived === 'function' || (plain && functionTypes.has(base))) functionTypes.add(name);
      if ((declared.derived === 'array' && declared.sizeless) || (plain && sizelessTypes.has(base))) {
        sizelessTypes.add(name);
      }
    }
  }

  const seen = new Set<string>();
  const objects: StaticObject[] = [];
  for (const node of declarations) {
    if (lines.kind(node.startPosition.row) !== 'user' || node.hasError) continue;
    const words = storageClasses(node, parseText);
    if (words.some((w) => w === 'extern' || THREAD_LOCAL_WORDS.has(w))) continue;
    const base = typeName(node);
    for (const declarator of nodes(node.childrenForFieldName('declarator'))) {
      const declared = readDeclarator(declarator);
      if (declared === null || !isObject(declared)) continue;
      if (declared.derived === 'none' && base !== null) {
        if (functionTypes.has(base)) continue;
        if (sizelessTypes.has(base) && !declared.initialized) continue;
      }
      const name = text.slice(declared.name.startIndex, declared.name.endIndex);
      if (seen.has(name) || name.startsWith('__mw_')) continue;
      seen.add(name);
      objects.push({ name, node: declared.name });
    }
  }
  return objects;
}

/**
 * The objects a `static` declaration inside a function body defines; none
 * when it is thread-local or sits where a declaration cannot be followed by
 * another (a `for` clause).
 */
export function staticLocals(declaration: SyntaxNode, parentType: string, text: string, parseText: string): StaticObject[] {
  if (parentType !== 'compound_statement' && parentType !== 'case_statement') return [];
  const words = storageClasses(declaration, parseText);
  if (words.some((w) => w === 'extern' || THREAD_LOCAL_WORDS.has(w))) return [];
  const objects: StaticObject[] = [];
  for (const declarator of nodes(declaration.childrenForFieldName('declarator'))) {
    const declared = readDeclarator(declarator);
    if (declared === null || !isObject(declared)) continue;
    const name = text.slice(declared.name.startIndex, declared.name.endIndex);
    if (!name.startsWith('__mw_')) objects.push({ name, node: declared.name });
  }
  return objects;
}
