// What explains a frame in the viewer's call stack, found at rewrite time and
// written only into the unit's site table (kinds CALL, LIBCALL and LOCAL,
// never recorded, so they cost the running program nothing): the lines where
// a function calls another by name (one of the program's, or one declared in
// a system header, whose heap blocks a reader can then name: the stdout
// buffer a printf makes), and the automatic objects its body declares, as
// declared (`char scratch[128]`).
import { readDeclarator, storageClasses } from './declarators.js';
import type { LineMap } from './linemarkers.js';
import { nodes, query, type SyntaxNode } from './parser.js';

export interface FrameCall {
  /** The callee's name. */
  readonly name: string;
  /** The callee identifier (its row is the call's line). */
  readonly node: SyntaxNode;
}

export interface FrameLocal {
  /** The declaration without its initializer, whitespace collapsed: `const char *p`. */
  readonly label: string;
  /** The declared identifier. */
  readonly node: SyntaxNode;
}

/** Longest local label kept (an inline struct definition can be long). */
const MAX_LABEL = 80;

/** Words that make a declaration in a body declare no object of the frame. */
const NOT_AUTOMATIC = new Set(['static', 'extern', 'typedef', '__thread', 'thread_local', '_Thread_local']);

/**
 * Names of functions declared in files that are not the user's (libc, system headers): calls of them open no
 * instrumented frame, so they get a LIBCALL site, not a CALL site.
 */
export function foreignFunctions(declarations: readonly SyntaxNode[], lines: LineMap, text: string): Set<string> {
  const names = new Set<string>();
  for (const node of declarations) {
    if (lines.kind(node.startPosition.row) === 'user') continue;
    for (const declarator of nodes(node.childrenForFieldName('declarator'))) {
      const d = readDeclarator(declarator);
      if (d !== null && d.derived === 'function') names.add(text.slice(d.name.startIndex, d.name.endIndex));
    }
  }
  return names;
}

/**
 * Calls of named functions (once per callee and line; not those in `skip`, not the rewriter's `__mw_` names), those
 * of functions in `foreign` apart (`libCalls`), and automatic objects declared in `body`, in source order. `text` is
 * the original text, `parseText` the parsed copy.
 */
export function frameSites(
  body: SyntaxNode,
  text: string,
  parseText: string,
  lines: LineMap,
  foreign: ReadonlySet<string>,
  skip: ReadonlySet<string>,
): { calls: FrameCall[]; libCalls: FrameCall[]; locals: FrameLocal[] } {
  const calls: FrameCall[] = [];
  const libCalls: FrameCall[] = [];
  const locals: FrameLocal[] = [];
  const seen = new Set<string>();
  const slice = (n: SyntaxNode): string => text.slice(n.startIndex, n.endIndex);
  for (const { name, node } of query('frame').captures(body)) {
    if (name === 'callee') {
      const callee = slice(node);
      const key = `${callee}\n${lines.line(node.startPosition.row)}`;
      if (skip.has(callee) || callee.startsWith('__mw_') || seen.has(key)) continue;
      seen.add(key);
      (foreign.has(callee) ? libCalls : calls).push({ name: callee, node });
      continue;
    }
    if (storageClasses(node, parseText).some((w) => NOT_AUTOMATIC.has(w))) continue;
    const declarators = nodes(node.childrenForFieldName('declarator'));
    const first = declarators[0];
    if (first === undefined) continue;
    const type = text.slice(node.startIndex, first.startIndex).replace(/\s+/g, ' ').trim();
    for (const declarator of declarators) {
      const d = readDeclarator(declarator);
      if (d === null || d.derived === 'function') continue;
      const plain = declarator.type === 'init_declarator' ? (declarator.childForFieldName('declarator') ?? declarator) : declarator;
      let label = `${type} ${slice(plain).replace(/\s+/g, ' ')}`;
      if (label.length > MAX_LABEL) label = `${label.slice(0, MAX_LABEL - 1)}…`;
      locals.push({ label, node: d.name });
    }
  }
  return { calls, libCalls, locals };
}
