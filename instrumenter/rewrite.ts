// The rewriter: takes one preprocessed translation unit (`cc -E` output with
// runtime/memwrap.h force-included), finds function bodies, returns,
// allocation and setjmp calls and static objects with tree-sitter queries,
// and inserts the recording calls as edits at unchanged offsets, so every
// newline and linemarker stays where it was. README.md beside this file
// shows the inserted code.
import { forEachChild, INLINE_WORDS, readDeclarator, storageClasses } from './declarators.js';
import { EditList } from './edits.js';
import { readLinemarkers, type LineMap } from './linemarkers.js';
import { findInFunction, findTopLevel, locallyDeclared } from './locate.js';
import { fileScopeObjects, staticLocals } from './objects.js';
import { makeParseCopy } from './parse-copy.js';
import { parseC, type SyntaxNode } from './parser.js';
import { ALLOCATOR_KINDS, cStringLiteral, renderStaticRef, SiteKind, SiteTable } from './sites.js';
import { SourceText } from './source-text.js';

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
}

export interface RewriteOptions {
  /** The runtime header given to `-include`; nothing from it is instrumented. */
  headerPath: string;
  /** Reserved for branch recording (a later issue); accepted and ignored. */
  branches?: boolean;
  /** The directory the compiler runs in: relative file names in the site
   *  table are made absolute against it. */
  compileDir?: string;
}

/** A function definition chosen for instrumentation. */
interface Instrumented {
  readonly node: SyntaxNode;
  readonly name: SyntaxNode;
  readonly body: SyntaxNode;
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
}

export function rewriteTranslationUnit(preprocessed: Buffer, options: RewriteOptions): RewriteResult {
  const source = SourceText.fromBytes(preprocessed);
  const text = source.text;
  const lines = readLinemarkers(text, options.headerPath, source.encoding, options.compileDir);
  const parseText = makeParseCopy(text);
  const root = parseC(parseText).rootNode;
  const top = findTopLevel(root);
  const warnings: RewriteWarning[] = [];
  const nameOf = (node: SyntaxNode): string => text.slice(node.startIndex, node.endIndex);

  // Which function definitions to instrument.
  const chosen: Instrumented[] = [];
  const ownAllocators = new Set<string>();
  let skippedFunctions = 0;
  for (const node of top.functions) {
    const declarator = node.childForFieldName('declarator');
    const declared = declarator === null ? null : readDeclarator(declarator);
    const name = declared !== null && declared.derived === 'function' ? declared.name : null;
    const body = node.childForFieldName('body');
    if (name !== null && ALLOCATOR_KINDS.has(nameOf(name))) ownAllocators.add(nameOf(name));
    if (lines.kind((name ?? node).startPosition.row) !== 'user') continue;
    const label = name === null ? 'a function' : `function '${nameOf(name)}'`;
    if (node.hasError) {
      skippedFunctions++;
      const message = `${label} left uninstrumented: ${describeError(node, lines)}`;
      warnings.push({ ...where(name ?? node, lines), message });
      continue;
    }
    if (name === null || body === null) {
      skippedFunctions++;
      warnings.push({ ...where(node, lines), message: `${label} left uninstrumented: its name could not be read` });
      continue;
    }
    const words = storageClasses(node, parseText);
    // An inline definition with external linkage may not refer to the unit's
    // static `__mw_u` (C99 6.7.4p3, a warning by default in GCC and clang); a
    // naked function has no frame to put `__mw_f` in.
    const externalInline = !words.includes('static') && words.some((w) => INLINE_WORDS.has(w));
    const naked = /\bnaked\b|\b__naked__\b/.test(text.slice(node.startIndex, body.startIndex));
    if (externalInline || naked || nameOf(name).startsWith('__mw_')) {
      skippedFunctions++;
      continue;
    }
    chosen.push({ node, name, body });
  }
  const objects = fileScopeObjects(top.declarations, top.typedefs, lines, text, parseText);
  for (const object of objects) if (ALLOCATOR_KINDS.has(object.name)) ownAllocators.add(object.name);

  const unit: Unit = {
    source,
    text,
    parseText,
    lines,
    sites: new SiteTable(),
    edits: new EditList(),
    ownAllocators,
    refs: 0,
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
  const table = unit.sites.renderUnit();
  if (table !== '') {
    const first = chosen[0];
    if (first !== undefined) unit.edits.insert(first.node.startIndex, table, 'before');
    else trailer = ' ' + table.trimEnd() + trailer;
  }
  if (trailer !== '') unit.edits.insert(root.lastChild?.endIndex ?? text.length, trailer, 'after');

  // Code at file scope that tree-sitter could not read.
  if (root.hasError) {
    for (const child of root.children) {
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
  };
}

/**
 * Sites and edits of one function: ENTRY and FALLOFF, then its returns,
 * calls and static locals in source order.
 */
function instrumentFunction(unit: Unit, fn: Instrumented): void {
  const { edits, text } = unit;
  const func = nameLiteral(unit, fn.name);
  const entry = addSite(unit, SiteKind.ENTRY, fn.name, func, func);
  const falloff = addSite(unit, SiteKind.FALLOFF, fn.body, func, func, fn.body.endPosition.row);
  edits.insert(
    frameInsertionPoint(fn.body, text),
    `struct __mw_frame __mw_f __attribute__((cleanup(__mw_leave), unused)) = __mw_enter(&__mw_u, ${entry}u, ${falloff}u);`,
    'after',
  );

  const found = findInFunction(fn.node, fn.body, unit.parseText);
  const allocCalls = found.calls.filter((c) => ALLOCATOR_KINDS.has(c.name) && !unit.ownAllocators.has(c.name));
  const shadowed = locallyDeclared(fn.node, unit.parseText, allocCalls);
  type Step = { at: number; apply: () => void };
  const steps: Step[] = [];

  for (const node of found.returns) {
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
    } else {
      // setjmp family: no site; the runtime closes the frames a longjmp skipped.
      edits.insert(call.call.startIndex, '__mw_resume(&__mw_f, ', 'before');
      edits.insert(call.call.endIndex, ')', 'after');
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
    const next = at.children.find((c) => c.hasError || c.isMissing || c.type === 'ERROR');
    if (next === undefined) break;
    at = next;
  }
  const row = at.startPosition.row;
  const what = at.isMissing ? `a missing '${at.type}'` : 'a syntax error';
  return `tree-sitter found ${what} at ${lines.file(row).name}:${lines.line(row)}`;
}
