// Leaf call trees (`--mw-calls=leaves`, and `heap`, the default at -O1 and above): the
// functions of a unit whose whole call tree does no heap work and calls
// nothing recorded, so that recording their calls would show nothing but the
// stack they take while they run. Their calls are not recorded; after the
// unit is compiled the driver bounds that stack from the compiler's frame
// sizes (call-bounds.ts), per function and per recorded caller.
//
// Found per unit from its syntax tree, as the least fixed point of "every
// call it makes is of a summarised function of this unit or of a known
// library function" over the functions nothing else rules out: a function
// other units can call (not `static`), one whose name is used as a value
// anywhere in the unit (a function pointer may call it from anywhere),
// `main`, constructors and destructors, a function that calls an allocator
// or setjmp, calls through a pointer, holds inline assembly or a nested
// function, or (with --mw-branches) has a branch to record. Recursion never
// reaches the fixed point.
//
// Measured: the greatest fixed point of the same rule, every call tree that
// does no heap work, recursive or not, less the leaves. A function in it
// probes its own depth and is recorded only at a call deeper than any since
// the thread's last record, so it needs no bound from its callers: it may be
// recursive, called through a pointer or from other units (a qsort
// comparator is). Its calls of functions other units can call stay unknown:
// in a shared object those may be interposed by a body that allocates.
import { findBranches } from './branches.js';
import type { KnownCalls } from './known-calls.js';
import { locallyDeclared } from './locate.js';
import { readDeclarator } from './declarators.js';
import { nodes, query, type SyntaxNode } from './parser.js';
import { ALLOCATOR_KINDS, SETJMP_NAMES } from './sites.js';

/** A function definition of the unit, as the rewrite sees it. */
export interface Definition {
  readonly node: SyntaxNode;
  readonly name: string;
  readonly body: SyntaxNode;
  /** recorded: instrumented with its calls; uncalled: left out by hand (--mw-no-calls); skipped: a user function
   *  left uninstrumented; system: a `static` function of a system header (never instrumented). */
  readonly role: 'recorded' | 'uncalled' | 'skipped' | 'system';
  readonly isStatic: boolean;
}

export interface LeafTreeOptions {
  readonly text: string;
  /** The parsed copy (directives blanked). */
  readonly parseText: string;
  /** Allocator names the unit defines itself: calls of those are ordinary calls. */
  readonly ownAllocators: ReadonlySet<string>;
  /** The unit's typedef names: `(u32)(x)` is a cast to one, which tree-sitter reads as a call. */
  readonly typeNames: ReadonlySet<string>;
  /** Branches are recorded (--mw-branches): a function with one is not summarised. */
  readonly branches: boolean;
  readonly known: KnownCalls;
  /** Functions the driver found it cannot bound (a frame of run-time size, a call it does not know). */
  readonly exclude: ReadonlySet<string>;
}

export interface LeafTrees {
  /** The instrumented functions whose calls are not recorded. */
  readonly summarised: ReadonlySet<string>;
  /** Every function of the unit whose call tree is known: the summarised ones and `static` ones of system headers. */
  readonly leaves: ReadonlySet<string>;
  /** The instrumented functions whose call trees do no heap work but which no caller bounds (recursive, called
   *  through a pointer or from other units): probed, recorded only at a new deepest call. */
  readonly measured: ReadonlySet<string>;
  /** The named calls of every function summarised or calling one (the call graph the bounds follow). */
  readonly callees: ReadonlyMap<string, readonly string[]>;
}

/** What one body calls, and whether it does anything that rules it out. */
interface Body {
  callees: Set<string>;
  barrier: string | null;
  /** What keeps its callers from bounding it (other units call it, or a pointer does): it is never summarised, but
   *  it may be measured, since a probe measures its own depth wherever it is called from. */
  reached: string | null;
}

/** The summarised functions of a unit, and the calls their bounds follow. */
export function findLeafTrees(definitions: readonly Definition[], options: LeafTreeOptions): LeafTrees {
  const byName = new Map<string, Definition>();
  for (const d of definitions) byName.set(d.name, d);
  // The original text: the parsed copy blanks attributes, and `alias("f")` is in one.
  const values = namesUsedAsValues(options.text, new Set(byName.keys()));
  const bodies = new Map<string, Body>();
  for (const d of byName.values()) {
    const own = ownBarrier(d, values, options);
    const reached = own !== null && REACHED_BARRIERS.has(own) ? own : null;
    // Every instrumented body is read, ruled out or not: its calls of summarised functions are what its bound adds.
    const read = own === NOT_INSTRUMENTED ? { callees: new Set<string>(), barrier: own } : readBody(d, options);
    bodies.set(d.name, { callees: read.callees, barrier: own !== null && reached === null ? own : read.barrier, reached });
  }
  // Least fixed point: a function joins once all it calls is known or has joined.
  const leaf = new Set<string>();
  for (let grew = true; grew; ) {
    grew = false;
    for (const [name, body] of bodies) {
      if (body.barrier !== null || body.reached !== null || leaf.has(name)) continue;
      if (callsOnly(body, leaf, bodies, options)) {
        leaf.add(name);
        grew = true;
      }
    }
  }
  const summarised = new Set([...leaf].filter((name) => byName.get(name)!.role === 'recorded'));
  const measured = new Set([...heapFree(bodies, options)].filter((name) => !leaf.has(name) && byName.get(name)!.role === 'recorded'));
  const callees = new Map<string, readonly string[]>();
  for (const [name, body] of bodies) {
    if (leaf.has(name) || [...body.callees].some((c) => summarised.has(c))) callees.set(name, [...body.callees]);
  }
  return { summarised, leaves: leaf, measured, callees };
}

/** Whether every call of `body` is of a function of `set` or, outside the unit, of a known library function. */
function callsOnly(body: Body, set: { has(name: string): boolean }, bodies: ReadonlyMap<string, Body>, options: LeafTreeOptions): boolean {
  return [...body.callees].every((c) => (bodies.has(c) ? set.has(c) : options.known.bytes(c) !== null));
}

/** Greatest fixed point: the functions nothing rules out whose every call is of a known library function or of a
 *  function still in the set — every call tree that does no heap work, recursive or not. */
function heapFree(bodies: ReadonlyMap<string, Body>, options: LeafTreeOptions): Set<string> {
  const kept = new Set([...bodies].filter(([, body]) => body.barrier === null).map(([name]) => name));
  // A call of a function other units can define too (interposed in a shared object) may not run this unit's body.
  const callable = { has: (name: string) => kept.has(name) && bodies.get(name)!.reached !== EXPORTED };
  for (let shrank = true; shrank; ) {
    shrank = false;
    for (const name of kept) {
      if (callsOnly(bodies.get(name)!, callable, bodies, options)) continue;
      kept.delete(name);
      shrank = true;
    }
  }
  return kept;
}

/** The names the unit's typedefs declare. */
export function typedefNames(typedefs: readonly SyntaxNode[], text: string): Set<string> {
  const names = new Set<string>();
  for (const node of typedefs) {
    for (const declarator of nodes(node.childrenForFieldName('declarator'))) {
      const declared = readDeclarator(declarator);
      if (declared !== null) names.add(text.slice(declared.name.startIndex, declared.name.endIndex));
    }
  }
  return names;
}

/** The type name when a call's "function" is a parenthesised typedef name — `(u32)(p[0] & 0x7f)` is a cast of
 *  `(p[0] & 0x7f)`, which tree-sitter, knowing no typedefs, reads as a call of `(u32)`; null for a real call. */
function castType(callee: SyntaxNode, text: string, typeNames: ReadonlySet<string>): string | null {
  if (callee.type !== 'parenthesized_expression' || callee.namedChildCount !== 1) return null;
  const inner = callee.namedChild(0);
  if (inner === null || inner.type !== 'identifier') return null;
  const name = text.slice(inner.startIndex, inner.endIndex);
  return typeNames.has(name) ? name : null;
}

const NOT_INSTRUMENTED = 'not instrumented';
const EXPORTED = 'other units can call it';
const REACHED_BARRIERS = new Set([EXPORTED, 'used as a value']);

/** Why a definition can never be summarised, before its body is read; null if nothing rules it out yet. */
function ownBarrier(d: Definition, values: ReadonlySet<string>, options: LeafTreeOptions): string | null {
  if (d.role === 'skipped' || d.role === 'uncalled') return NOT_INSTRUMENTED;
  if (d.name === 'main') return 'main';
  if (options.exclude.has(d.name)) return 'not bounded';
  if (/\b(?:__)?(?:constructor|destructor)(?:__)?\b/.test(options.parseText.slice(d.node.startIndex, d.body.startIndex))) return 'constructor';
  if (!d.isStatic) return EXPORTED;
  if (values.has(d.name)) return 'used as a value';
  return null;
}

/** The named calls of a body, and the first thing in it that rules the function out. */
function readBody(d: Definition, options: LeafTreeOptions): Omit<Body, 'reached'> {
  const { text, parseText } = options;
  const found: Omit<Body, 'reached'> = { callees: new Set(), barrier: null };
  const named: { name: string }[] = [];
  const sizes: SyntaxNode[] = [];
  const parameters: SyntaxNode[] = [];
  const casts: { name: string }[] = [];
  for (const { name, node } of query('leaf-calls').captures(d.body)) {
    if (name === 'asm') found.barrier ??= 'inline assembly';
    else if (name === 'nested') found.barrier ??= 'a nested function';
    else if (name === 'array_size') sizes.push(node);
    else if (name === 'parameters') parameters.push(node);
    else if (node.type !== 'identifier') {
      const cast = castType(node, text, options.typeNames);
      if (cast === null) found.barrier ??= 'a call through a pointer';
      else casts.push({ name: cast });
    } else named.push({ name: text.slice(node.startIndex, node.endIndex) });
  }
  // An array whose size is not a constant takes stack at run time, in whichever frame it is inlined into; a
  // parameter's array is a pointer. (An enum constant in a size counts as run-time too: a tree recorded, no harm.)
  const inParameters = (n: SyntaxNode) => parameters.some((p) => p.startIndex <= n.startIndex && n.endIndex <= p.endIndex);
  if (sizes.some((n) => !inParameters(n) && !isConstantSize(parseText.slice(n.startIndex, n.endIndex)))) found.barrier ??= 'an array of run-time size';
  for (const { name } of named) {
    if (SETJMP_NAMES.has(name)) found.barrier ??= 'setjmp';
    else if (ALLOCATOR_KINDS.has(name) && !options.ownAllocators.has(name)) found.barrier ??= 'heap calls';
    else found.callees.add(name);
  }
  // A parameter or local of a callee's name makes that call one through a pointer; of a cast's type name, too (the
  // local hides the typedef: `(u32)(x)` is then a call of u32).
  if (found.barrier === null && locallyDeclared(d.node, parseText, [...named, ...casts]).size > 0) found.barrier = 'a call through a pointer';
  if (found.barrier === null && options.branches && d.role === 'recorded') {
    const branches = findBranches(d.body, parseText, text);
    if (branches.conditions.length + branches.switches.length > 0) found.barrier = 'branches to record';
  }
  return found;
}

/** Whether an array size is plainly constant: numbers, operators and `sizeof`, no other name. */
function isConstantSize(size: string): boolean {
  const rest = size
    .replace(/\bsizeof\s*\([^()]*\)|\bsizeof\s+[\w$]+/g, '0')
    .replace(/\b(?:0[xX][0-9a-fA-F]+|\d+)[uUlL]*\b/g, '0');
  return !/[A-Za-z_$]/.test(rest);
}

/**
 * The names among `names` that the unit uses other than by calling them: an identifier not followed by `(` (its
 * address taken, stored, passed), outside comments and character constants, not a member after `.` or `->`; a
 * string that is one name (`alias("f")`, `dlsym(h, "f")`); and any name in the strings of an `asm` (`call f`). A
 * word of other text in a string (`printf("%d check\n")`) is no use of a function, nor is a struct's or union's
 * member of that name. Declarations and definitions are followed by `(`.
 */
export function namesUsedAsValues(text: string, names: ReadonlySet<string>): Set<string> {
  const used = new Set<string>();
  const n = text.length;
  const isIdentStart = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 36;
  const isIdent = (c: number) => isIdentStart(c) || (c >= 48 && c <= 57);
  let i = 0;
  // Parentheses open, the depth at which an asm's operands close (-1: not in one), and an asm keyword just read.
  let depth = 0;
  let asmDepth = -1;
  let asmNext = false;
  // Braces open, the depths of those that open a struct's or union's members (their names are no uses: a header's
  // `unsigned depth;` must not stop a function `depth` from being summarised), and `struct` just read.
  let braces = 0;
  const members: number[] = [];
  let aggregateNext = false;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 47 && text.charCodeAt(i + 1) === 42) {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? n : end + 2;
    } else if (c === 47 && text.charCodeAt(i + 1) === 47) {
      const end = text.indexOf('\n', i);
      i = end < 0 ? n : end;
    } else if (c === 34 || c === 39) {
      const end = literalEnd(text, i);
      const content = text.slice(i + 1, end - 1);
      if (c === 34 && (asmDepth >= 0 || /^[A-Za-z_$][\w$]*$/.test(content))) {
        for (const m of content.matchAll(/[A-Za-z_$][\w$]*/g)) if (names.has(m[0])) used.add(m[0]);
      }
      i = end;
    } else if (isIdentStart(c)) {
      let j = i + 1;
      while (j < n && isIdent(text.charCodeAt(j))) j++;
      const word = text.slice(i, j);
      const member = members.length > 0 && members[members.length - 1] === braces;
      if (names.has(word) && !member && !afterMemberOperator(text, i) && !beforeParenthesis(text, j)) used.add(word);
      if (word === 'struct' || word === 'union') aggregateNext = true;
      if (ASM_WORDS.has(word)) asmNext = true;
      else if (!ASM_QUALIFIERS.has(word)) asmNext = false;
      i = j;
    } else if (c >= 48 && c <= 57) {
      let j = i + 1;
      while (j < n && isIdent(text.charCodeAt(j))) j++; // a number with its suffix (0x1fULL, 1e5f)
      i = j;
    } else {
      if (c === 40) {
        depth++;
        if (asmNext && asmDepth < 0) asmDepth = depth;
      } else if (c === 41) {
        if (depth === asmDepth) asmDepth = -1;
        depth--;
      } else if (c === 123) {
        braces++;
        if (aggregateNext) members.push(braces);
      } else if (c === 125) {
        if (members[members.length - 1] === braces) members.pop();
        braces--;
      }
      // A member list follows `struct` and its tag (or attributes) directly; `;`, `=`, `,` and `)` end the chance.
      if (c === 123 || c === 59 || c === 61 || c === 44 || c === 41) aggregateNext = false;
      if (c !== 32 && c !== 10 && c !== 9) asmNext = false;
      i++;
    }
  }
  return used;
}

const ASM_WORDS = new Set(['asm', '__asm', '__asm__']);
const ASM_QUALIFIERS = new Set(['volatile', '__volatile__', '__volatile', 'goto', 'inline', '__inline', '__inline__']);

/** The offset just past the string or character literal that opens at `at`. */
function literalEnd(text: string, at: number): number {
  const quote = text[at];
  for (let i = at + 1; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') i++;
    else if (c === quote || c === '\n') return i + 1;
  }
  return text.length;
}

function afterMemberOperator(text: string, at: number): boolean {
  let i = at - 1;
  while (i >= 0 && /\s/.test(text[i]!)) i--;
  return text[i] === '.' || (text[i] === '>' && text[i - 1] === '-');
}

function beforeParenthesis(text: string, at: number): boolean {
  let i = at;
  while (i < text.length && /\s/.test(text[i]!)) i++;
  return text[i] === '(';
}
