// The rewriter: takes one preprocessed translation unit (`cc -E` output with
// runtime/memwrap.h force-included), finds function bodies, returns,
// allocation and setjmp calls and static objects with tree-sitter queries,
// and inserts the recording calls as edits at unchanged offsets, so every
// newline and linemarker stays where it was. README.md beside this file
// shows the inserted code.
import { findBranches, type FunctionBranches } from './branches.js';
import { foreignFunctions, frameSites } from './frame-sites.js';
import { forEachChild, INLINE_WORDS, readDeclarator, storageClasses } from './declarators.js';
import { EditList } from './edits.js';
import { readLinemarkers, type LineMap } from './linemarkers.js';
import type { KnownCalls } from './known-calls.js';
import { findLeafTrees, typedefNames, type Definition, type LeafTrees } from './leaf-calls.js';
import type { CallFilter } from './left-out.js';
import { findInFunction, findTopLevel, locallyDeclared, type CallSite } from './locate.js';
import { fileScopeObjects, staticLocals } from './objects.js';
import { makeParseCopy } from './parse-copy.js';
import { nodes, withTree, type SyntaxNode } from './parser.js';
import { ALLOCATOR_KINDS, cStringLiteral, renderStaticRef, SETJMP_NAMES, SiteKind, SiteTable } from './sites.js';
import { SourceText } from './source-text.js';
import { MEASURED_TREE } from '../analysis/trace/format.js';

export interface RewriteWarning {
  file: string;
  line: number;
  message: string;
}

export interface RewriteResult {
  output: Buffer;
  warnings: RewriteWarning[];
  /** Functions instrumented. */
  functions: number;
  /** Entries in the unit's site table. */
  sites: number;
  /** Function definitions of the user's files left uninstrumented. */
  skippedFunctions: number;
  /** Functions whose calls are left out (`--mw-no-calls`); their heap calls are recorded. */
  uncalledFunctions: number;
  /** Leaf call trees summarised (`summarise`): what the driver bounds once the unit is compiled, or null. */
  leafTrees: LeafTreeResult | null;
}

/** The summarised and measured functions of a unit (leaf-calls.ts) and the stack bounds the site table leaves for the
 *  driver to write. */
export interface LeafTreeResult extends LeafTrees {
  /** The bound slots in order: each summarised function's tree, each recorded caller's summarised calls. */
  readonly slots: readonly { readonly kind: 'tree' | 'caller'; readonly name: string }[];
}

export interface RewriteOptions {
  /** The runtime header given to `-include`; nothing from it is instrumented. */
  headerPath: string;
  /** Record the outcome of every if, switch, ?:, && and || in instrumented functions (`--mw-branches`). */
  branches?: boolean;
  /** The directory the compiler runs in: relative file names in the site
   *  table are made absolute against it. */
  compileDir?: string;
  /** Functions whose calls are not recorded (`--mw-no-calls`). */
  noCalls?: CallFilter;
  /**
   * The content hash to record for a source file the unit's sites name (its site-table name, absolute), or null to
   * record none: one SOURCE site per such file, last in the table. The driver passes source-digest.ts's fileDigest;
   * without it the table has no SOURCE sites.
   */
  hashSource?: (file: Buffer) => string | null;
  /**
   * Summarise leaf call trees (`--mw-calls=leaves`): the calls known outside the unit, and functions not to summarise;
   * `pending` (`--mw-calls=heap`): the recorded functions enter through the runtime's pending entries, a call written
   * only when a record is made inside it or it reaches a new depth.
   */
  summarise?: { known: KnownCalls; exclude: ReadonlySet<string>; pending?: boolean };
}

/** A function definition chosen for instrumentation. */
interface Instrumented {
  readonly node: SyntaxNode;
  readonly name: SyntaxNode;
  readonly body: SyntaxNode;
  /** Entry and exit recorded; false for a function `--mw-no-calls` names or a summarised one, whose heap calls and statics still are. */
  calls: boolean;
  /** Its call tree is summarised (no heap calls, nothing recorded below it). */
  summarised: boolean;
  /** Recursion without heap work: a probe instead of the frame (leaf-calls.ts). */
  measured: boolean;
  /** Recorded, entering pending (`--mw-calls=heap`): a PENDING_CALLS site names it. */
  pending: boolean;
}

/** What every step of one rewrite shares. */
interface Unit {
  readonly source: SourceText;
  /** The original text (names, storage words). */
  readonly text: string;
  /** The parsed copy (directives blanked): searched for tokens. */
  readonly parseText: string;
  readonly lines: LineMap;
  readonly sites: SiteTable;
  readonly edits: EditList;
  /** Allocator names the unit defines itself (as function or object): calls keep their name. */
  readonly ownAllocators: ReadonlySet<string>;
  /** Static objects registered so far (numbers the `__mw_s<k>` declarations). */
  refs: number;
  /** Record branches (`--mw-branches`). */
  readonly branches: boolean;
  /** Bound slots handed out, in order. */
  readonly slots: { kind: 'tree' | 'caller'; name: string }[];
  /** The summarised and measured functions (`--mw-calls=leaves`); null when every call is recorded. */
  readonly leaves: LeafTrees | null;
  /** Recorded functions enter through the pending entries (`--mw-calls=heap`). */
  readonly pending: boolean;
}

export function rewriteTranslationUnit(preprocessed: Buffer, options: RewriteOptions): RewriteResult {
  const source = SourceText.fromBytes(preprocessed);
  const lines = readLinemarkers(source.text, options.headerPath, source.encoding, options.compileDir);
  const parseText = makeParseCopy(source.text);
  return withTree(parseText, (tree) => rewriteTree(tree.rootNode, { preprocessed, source, lines, parseText }, options));
}

/** The unit as read: its bytes, its text, its linemarkers, and the copy tree-sitter parsed. */
interface ReadUnit {
  readonly preprocessed: Buffer;
  readonly source: SourceText;
  readonly lines: LineMap;
  readonly parseText: string;
}

/** The rewrite of a parsed unit (its tree is freed after this returns). */
function rewriteTree(root: SyntaxNode, read: ReadUnit, options: RewriteOptions): RewriteResult {
  const { preprocessed, source, lines, parseText } = read;
  const text = source.text;
  const top = findTopLevel(root);
  const warnings: RewriteWarning[] = [];
  const nameOf = (node: SyntaxNode): string => text.slice(node.startIndex, node.endIndex);

  // Which function definitions to instrument.
  const chosen: Instrumented[] = [];
  const definitions: Definition[] = [];
  const ownAllocators = new Set<string>();
  let skippedFunctions = 0;
  for (const node of top.functions) {
    const declarator = node.childForFieldName('declarator');
    const declared = declarator === null ? null : readDeclarator(declarator);
    const name = declared !== null && declared.derived === 'function' ? declared.name : null;
    const body = node.childForFieldName('body');
    if (name !== null && ALLOCATOR_KINDS.has(nameOf(name))) ownAllocators.add(nameOf(name));
    const words = name !== null && body !== null && !node.hasError ? storageClasses(node, parseText) : [];
    const define = (role: Definition['role']) => {
      if (name !== null && body !== null) definitions.push({ node, name: nameOf(name), body, role, isStatic: words.includes('static') });
    };
    if (lines.kind((name ?? node).startPosition.row) !== 'user') {
      if (words.includes('static')) define('system');
      continue;
    }
    const label = name === null ? 'a function' : `function '${nameOf(name)}'`;
    if (node.hasError) {
      skippedFunctions++;
      const message = `${label} left uninstrumented: ${describeError(node, lines)}`;
      warnings.push({ ...where(name ?? node, lines), message });
      define('skipped');
      continue;
    }
    if (name === null || body === null) {
      skippedFunctions++;
      warnings.push({ ...where(node, lines), message: `${label} left uninstrumented: its name could not be read` });
      continue;
    }
    // An inline definition with external linkage may not refer to the unit's
    // static `__mw_u` (C99 6.7.4p3, a warning by default in GCC and clang); a
    // naked function has no frame to put `__mw_f` in.
    const externalInline = !words.includes('static') && words.some((w) => INLINE_WORDS.has(w));
    const naked = /\bnaked\b|\b__naked__\b/.test(text.slice(node.startIndex, body.startIndex));
    if (externalInline || naked || nameOf(name).startsWith('__mw_')) {
      skippedFunctions++;
      define('skipped');
      continue;
    }
    const calls = options.noCalls?.leavesOut(nameOf(name), lines.file(name.startPosition.row).name, options.compileDir ?? process.cwd()) !== true;
    chosen.push({ node, name, body, calls, summarised: false, measured: false, pending: false });
    define(calls ? 'recorded' : 'uncalled');
  }
  const objects = fileScopeObjects(top.declarations, top.typedefs, lines, text, parseText);
  for (const object of objects) if (ALLOCATOR_KINDS.has(object.name)) ownAllocators.add(object.name);
  const leaves =
    options.summarise === undefined
      ? null
      : findLeafTrees(definitions, { text, parseText, ownAllocators, typeNames: typedefNames(top.typedefs, text), branches: options.branches === true, ...options.summarise });
  for (const fn of chosen) {
    const name = nameOf(fn.name);
    if (leaves?.summarised.has(name) !== true && leaves?.measured.has(name) !== true) continue;
    fn.calls = false;
    fn.summarised = leaves.summarised.has(name);
    fn.measured = !fn.summarised;
  }

  const unit: Unit = {
    source,
    text,
    parseText,
    lines,
    sites: new SiteTable(),
    edits: new EditList(),
    ownAllocators,
    refs: 0,
    branches: options.branches === true,
    slots: [],
    leaves,
    pending: leaves !== null && options.summarise?.pending === true,
  };
  for (const fn of chosen) instrumentFunction(unit, fn);

  // File-scope objects are registered at the end of the unit, where every
  // tentative definition has its final type; the table goes before the first
  // instrumented function, or there when none is.
  let trailer = '';
  for (const object of objects) {
    const site = addSite(unit, SiteKind.STATIC, object.node, '""', nameLiteral(unit, object.node));
    trailer += ' ' + renderStaticRef(unit.refs++, site, object.name);
  }
  // Last in the table, so the recorded sites keep their numbers: the call lines (of the program's functions and of
  // libc's) and automatic objects of each function. Allocator calls have sites of their own; setjmp is not a call.
  const foreign = foreignFunctions(top.declarations, lines, text);
  const never = new Set<string>([...ALLOCATOR_KINDS.keys(), ...SETJMP_NAMES]);
  for (const fn of chosen) {
    // The stack a measured function's summarised calls add goes on top of its deepest call's depth.
    if (fn.measured) addCallsBound(unit, fn, leaves);
    if (!fn.calls) continue; // no frame to explain
    const func = nameLiteral(unit, fn.name);
    const found = frameSites(fn.body, text, parseText, lines, foreign, never);
    for (const call of found.calls) addSite(unit, SiteKind.CALL, call.node, func, cStringLiteral(Buffer.from(call.name)));
    for (const call of found.libCalls) addSite(unit, SiteKind.LIBCALL, call.node, func, cStringLiteral(Buffer.from(call.name)));
    for (const local of found.locals) addSite(unit, SiteKind.LOCAL, local.node, func, labelLiteral(unit, local.label));
    addCallsBound(unit, fn, leaves);
    if (fn.pending) addSite(unit, SiteKind.PENDING_CALLS, fn.name, func, func);
  }
  if (options.hashSource) addSourceSites(unit, options.hashSource);
  const table = unit.sites.renderUnit();
  if (table !== '') {
    const first = chosen[0];
    if (first !== undefined) unit.edits.insert(first.node.startIndex, table, 'before');
    else trailer = ' ' + table.trimEnd() + trailer;
  }
  if (trailer !== '') unit.edits.insert(root.lastChild?.endIndex ?? text.length, trailer, 'after');

  // Code at file scope that tree-sitter could not read.
  if (root.hasError) {
    for (const child of nodes(root.children)) {
      if (child.type === 'function_definition' || lines.kind(child.startPosition.row) !== 'user') continue;
      if (child.hasError || child.type === 'ERROR') {
        const message = `code at file scope left uninstrumented: ${describeError(child, lines)}`;
        warnings.push({ ...where(child, lines), message });
      }
    }
  }

  return {
    output: unit.edits.size === 0 ? Buffer.from(preprocessed) : unit.edits.apply(source),
    warnings,
    functions: chosen.length,
    sites: unit.sites.size,
    skippedFunctions,
    uncalledFunctions: chosen.filter((fn) => !fn.calls && !fn.summarised && !fn.measured).length,
    leafTrees: leaves === null ? null : { ...leaves, slots: unit.slots },
  };
}

/**
 * Sites and edits of one function: ENTRY and FALLOFF, then its returns,
 * calls and static locals in source order. A function whose calls are left
 * out gets an UNCALLED site instead of the frame, and only its heap calls
 * and static locals.
 */
function instrumentFunction(unit: Unit, fn: Instrumented): void {
  const { edits, text } = unit;
  const func = nameLiteral(unit, fn.name);
  const found = findInFunction(fn.node, fn.body, unit.parseText);
  const branches = unit.branches && fn.calls ? findBranches(fn.body, unit.parseText, unit.text) : null;
  const allocCalls = found.calls.filter((c) => ALLOCATOR_KINDS.has(c.name) && !unit.ownAllocators.has(c.name));
  const shadowed = locallyDeclared(fn.node, unit.parseText, allocCalls);
  if (fn.calls || fn.measured) {
    const entry = addSite(unit, SiteKind.ENTRY, fn.name, func, func);
    const falloff = addSite(unit, SiteKind.FALLOFF, fn.body, func, func, fn.body.endPosition.row);
    if (fn.calls) {
      const enter = entryCall(unit, fn, allocCalls.filter((c) => !shadowed.has(c.name)), found.returns);
      fn.pending = enter !== '__mw_enter';
      edits.insert(
        frameInsertionPoint(fn.body, text),
        `struct __mw_frame __mw_f __attribute__((cleanup(__mw_leave), unused)) = ${enter}(&__mw_u, ${entry}u, ${falloff}u);` +
          (branches !== null && branches.switches.length > 0 ? switchVariable(found.calls.some((c) => !ALLOCATOR_KINDS.has(c.name))) : ''),
        'after',
      );
    } else {
      // A declaration, not a statement, so that C89's declarations may follow it.
      addSite(unit, SiteKind.SUMMARISED, fn.name, func, cStringLiteral(Buffer.from(MEASURED_TREE)));
      const probe = callsSummarised(unit, fn, unit.leaves) ? '__mw_probe_bounded' : '__mw_probe';
      edits.insert(frameInsertionPoint(fn.body, text), `int __mw_p __attribute__((unused)) = ${probe}(&__mw_u, ${entry}u, ${falloff}u);`, 'after');
    }
  } else if (fn.summarised) {
    addBoundSite(unit, SiteKind.SUMMARISED, fn, 'tree');
  } else {
    addSite(unit, SiteKind.UNCALLED, fn.name, func, func);
  }

  // Branch steps come first: at an offset where several edits open, the branch's wrapper is the outermost.
  const steps: Step[] = [];
  const closes = branches === null ? [] : branchSteps(unit, func, branches, steps);

  for (const node of fn.calls ? found.returns : []) {
    steps.push({
      at: node.startIndex,
      apply: () => {
        const site = addSite(unit, SiteKind.RETURN, node, func, func);
        edits.insert(node.startIndex, `{__mw_f.site = __mw_u.base + ${site}u; `, 'before');
        edits.insert(node.endIndex, '}', 'after');
      },
    });
  }
  for (const call of found.calls) {
    if (ALLOCATOR_KINDS.has(call.name)) {
      if (unit.ownAllocators.has(call.name) || shadowed.has(call.name)) continue;
      steps.push({
        at: call.callee.startIndex,
        apply: () => {
          const kind = ALLOCATOR_KINDS.get(call.name)!;
          const site = addSite(unit, kind, call.callee, func, cStringLiteral(Buffer.from(call.name)));
          edits.insert(call.callee.startIndex, '__mw_', 'before');
          const separator = call.args.namedChildCount === 0 ? '' : ', ';
          edits.insert(call.args.startIndex + 1, `&__mw_u, ${site}u${separator}`, 'after');
        },
      });
    } else if (fn.calls) {
      // setjmp family: no site; the runtime closes the frames a longjmp skipped
      // (without a frame of its own to resume, by depth at the next entry).
      steps.push({
        at: call.call.startIndex,
        apply: () => {
          edits.insert(call.call.startIndex, '__mw_resume(&__mw_f, ', 'before');
          edits.insert(call.call.endIndex, ')', 'after');
        },
      });
    }
  }
  for (const { node: declaration, parentType } of found.statics) {
    const locals = staticLocals(declaration, parentType, text, unit.parseText);
    if (locals.length === 0) continue;
    steps.push({
      at: declaration.startIndex,
      apply: () => {
        let registrations = '';
        for (const object of locals) {
          const site = addSite(unit, SiteKind.STATIC, object.node, func, nameLiteral(unit, object.node));
          registrations += ' ' + renderStaticRef(unit.refs++, site, object.name);
        }
        edits.insert(declaration.endIndex, registrations, 'after');
      },
    });
  }
  steps.sort((a, b) => a.at - b.at);
  for (const step of steps) step.apply();
  // Closed last: at an offset where an inner edit also closes (a setjmp call that ends a condition), it goes first.
  for (const close of closes) edits.insert(close.at, close.text, 'after');
}

type Step = { at: number; apply: () => void };

/**
 * Steps that number the branch sites and insert the recording calls (see runtime/memwrap.h), outermost first where
 * several start at one offset; returns the closing insertions, innermost first where several end at one offset.
 * A switch's labels are numbered at the switch; its id in `__mw_sw` is its first label's site.
 */
function branchSteps(unit: Unit, func: string, found: FunctionBranches, steps: Step[]): { at: number; text: string }[] {
  const { edits } = unit;
  const site = (row: number, label: string): number =>
    unit.sites.add({ kind: SiteKind.BRANCH, line: unit.lines.line(row), file: unit.lines.file(row).literal, func, name: labelLiteral(unit, label) });
  for (const sw of found.switches) {
    steps.push({
      at: sw.armAt,
      apply: () => {
        const ids = sw.labels.map((l) => site(l.row, l.label));
        const id = ids[0]!;
        edits.insert(sw.armAt, `__mw_sw = ${id}u, `, 'before');
        sw.labels.forEach((l, k) => {
          edits.insert(l.at, ` if (__mw_sw == ${id}u) { __mw_sw = 0u; (void)__mw_branch(&__mw_u, ${ids[k]}u, 1); }`, 'after');
          if (l.fallthroughAt !== null) edits.insert(l.fallthroughAt, '__attribute__((fallthrough)); ', 'before');
        });
      },
    });
  }
  const conditions = found.conditions.slice().sort((a, b) => a.start - b.start || b.end - a.end);
  for (const c of conditions) {
    steps.push({
      at: c.start,
      apply: () => edits.insert(c.start, `__mw_branch(&__mw_u, ${site(c.row, c.label)}u, !!(`, 'before'),
    });
  }
  return conditions
    .slice()
    .sort((a, b) => a.end - b.end || b.start - a.start)
    .map((c) => ({ at: c.end, text: '))' }));
}

/** The switch id of the label that is to record the next jump (0: none); volatile where setjmp could clobber it. */
function switchVariable(hasSetjmp: boolean): string {
  return ` ${hasSetjmp ? 'volatile ' : ''}unsigned __mw_sw = 0u;`;
}

/** A branch's source text as a C string literal, in the unit's own encoding. */
function labelLiteral(unit: Unit, label: string): string {
  return cStringLiteral(Buffer.from(label, unit.source.encoding));
}

/**
 * One SOURCE site per file the unit's sites name (in order of first appearance) whose hash `hashSource` gives: what a
 * viewer checks a file against before it shows it, so that a trace cannot make it show a file the build did not read.
 */
function addSourceSites(unit: Unit, hashSource: (file: Buffer) => string | null): void {
  const byLiteral = new Map(unit.lines.files.map((f) => [f.literal, f]));
  const named = new Set(unit.sites.all().map((s) => s.file));
  for (const literal of named) {
    const file = byLiteral.get(literal);
    if (file === undefined || file.kind !== 'user' || file.siteName.length === 0) continue;
    const digest = hashSource(file.siteName);
    if (digest !== null) unit.sites.add({ kind: SiteKind.SOURCE, line: 0, file: literal, func: '""', name: cStringLiteral(Buffer.from(digest)) });
  }
}

/** Adds a site at the row of `node` (or `row`); func and name are C literals. */
function addSite(
  unit: Unit,
  kind: number,
  node: SyntaxNode,
  func: string,
  name: string,
  row = node.startPosition.row,
): number {
  return unit.sites.add({ kind, line: unit.lines.line(row), file: unit.lines.file(row).literal, func, name });
}

/** Whether `fn` calls summarised functions: the stack it can reach is its depth plus their bound (a CALLS_BOUND site). */
function callsSummarised(unit: Unit, fn: Instrumented, leaves: LeafTrees | null): boolean {
  return leaves?.callees.get(unit.text.slice(fn.name.startIndex, fn.name.endIndex))?.some((c) => leaves.summarised.has(c)) === true;
}

/** The most stack a function's summarised calls add, written by the driver once the unit is compiled. */
function addCallsBound(unit: Unit, fn: Instrumented, leaves: LeafTrees | null): void {
  if (callsSummarised(unit, fn, leaves)) addBoundSite(unit, SiteKind.CALLS_BOUND, fn, 'caller');
}

/**
 * The entry a recorded function calls. With pending entries (`--mw-calls=heap`): the runtime writes a call only
 * when a record is made inside it or it reached deeper than any call recorded since the thread's last record that is
 * not a call's. A function that calls summarised ones reaches its depth plus their bound (`__mw_enter_bounded`, which
 * compares that sum on a host and records every call on a target). A function that makes a heap call itself on
 * every way through its body (`heapCalls`: outside any branch or loop, no return or goto before it) has a record in
 * each call, so a pending entry would only be written later at more cost: it enters as before.
 */
function entryCall(unit: Unit, fn: Instrumented, heapCalls: readonly CallSite[], returns: readonly SyntaxNode[]): string {
  if (!unit.pending || heapCalls.some((c) => alwaysReached(unit, fn, c, returns))) return '__mw_enter';
  return callsSummarised(unit, fn, unit.leaves) ? '__mw_enter_bounded' : '__mw_enter_lazy';
}

/** Whether every call of `fn` that returns makes `call`: it is in no branch or loop, and no return or goto comes first. */
function alwaysReached(unit: Unit, fn: Instrumented, call: CallSite, returns: readonly SyntaxNode[]): boolean {
  if (call.conditional || returns.some((r) => r.startIndex < call.call.startIndex)) return false;
  return !/\bgoto\b/.test(unit.parseText.slice(fn.body.startIndex, call.call.startIndex));
}

/** A site of `fn` whose name is a stack bound the driver writes after compiling (its slot in `__mw_bounds`). */
function addBoundSite(unit: Unit, kind: number, fn: Instrumented, slot: 'tree' | 'caller'): void {
  unit.slots.push({ kind: slot, name: unit.text.slice(fn.name.startIndex, fn.name.endIndex) });
  addSite(unit, kind, fn.name, nameLiteral(unit, fn.name), unit.sites.addBound());
}

/** An identifier's original bytes as a C string literal. */
function nameLiteral(unit: Unit, node: SyntaxNode): string {
  return cStringLiteral(unit.source.bytesOf(node.startIndex, node.endIndex));
}

/** Where the frame declaration goes: after the body's `{`, or after GNU `__label__` declarations, which must come first. */
function frameInsertionPoint(body: SyntaxNode, text: string): number {
  let at = body.startIndex + 1;
  forEachChild(body, (type, start, end) => {
    if (type === '{') return true;
    if (type !== 'declaration' || !text.startsWith('__label__', start)) return false;
    at = end;
    return true;
  });
  return at;
}

function where(node: SyntaxNode, lines: LineMap): { file: string; line: number } {
  const row = node.startPosition.row;
  return { file: lines.file(row).name, line: lines.line(row) };
}

/** Where the first ERROR or MISSING node under `node` is, as a phrase naming file:line. */
function describeError(node: SyntaxNode, lines: LineMap): string {
  let at: SyntaxNode = node;
  for (let depth = 0; depth < 1000 && at.type !== 'ERROR' && !at.isMissing; depth++) {
    const next = nodes(at.children).find((c) => c.hasError || c.isMissing || c.type === 'ERROR');
    if (next === undefined) break;
    at = next;
  }
  const row = at.startPosition.row;
  const what = at.isMissing ? `a missing '${at.type}'` : 'a syntax error';
  return `tree-sitter found ${what} at ${lines.file(row).name}:${lines.line(row)}`;
}
