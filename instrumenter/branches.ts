// With --mw-branches: finds the branches of one function body whose outcome
// is recorded (queries/branches.scm) and leaves out those in places where an
// expression must stay constant or is not evaluated. rewrite.ts turns what
// this finds into sites and edits; runtime/memwrap.h shows the inserted code.
import { nodes, query, type SyntaxNode } from './parser.js';

/** A condition recorded as `__mw_branch(&__mw_u, <site>u, !!(<text>))`: the string range [start, end) of the text. */
export interface WrappedCondition {
  readonly start: number;
  readonly end: number;
  /** Row of the construct (its `if`, or the condition's first token). */
  readonly row: number;
  /** The site's name: the construct's source text, one line, shortened (`if (p == NULL)`, `n > 0 ?`, `a &&`). */
  readonly label: string;
}

/** One label of a switch: `case X:` or `default:`. */
export interface SwitchLabel {
  /** Just after the label's `:`, where its recording statement goes. */
  readonly at: number;
  readonly row: number;
  readonly label: string;
  /**
   * Where `__attribute__((fallthrough)); ` goes, or null. A label with no statement of its own (or only empty ones),
   * directly followed by another label, now holds the recording statement, which GCC's -Wimplicit-fallthrough (in
   * -Wextra) would flag as falling into the next label: the attribute, put right before that label, says it is meant.
   */
  readonly fallthroughAt: number | null;
}

export interface SwitchBranches {
  /** Start of the controlling expression (inside the parentheses), where `__mw_sw = <id>u, ` goes. */
  readonly armAt: number;
  /** The labels that are direct children of the switch's body, in source order. */
  readonly labels: SwitchLabel[];
}

export interface FunctionBranches {
  readonly conditions: WrappedCondition[];
  readonly switches: SwitchBranches[];
}

/** Longest site name kept; longer conditions end in `...`. */
const MAX_LABEL = 72;

/** Storage classes whose objects need constant initializers (or are not defined here). */
const CONSTANT_STORAGE = new Set(['static', 'extern', '__thread', 'thread_local']);

/** __builtin_ calls whose arguments are ordinary run-time values; other builtins may want constants. */
const PLAIN_BUILTINS = new Set(['__builtin_expect', '__builtin_expect_with_probability']);

/**
 * The branches of `body` (an instrumented function's compound statement) to record. `text` is the parsed text
 * (directives blanked), used for the site names.
 */
export function findBranches(body: SyntaxNode, text: string, original: string): FunctionBranches {
  const skip: [number, number][] = [];
  const conditions: WrappedCondition[] = [];
  const switches: SyntaxNode[] = [];
  for (const { name, node } of query('branches').captures(body)) {
    switch (name) {
      case 'if':
        conditions.push(wrapInside(node, text, (t) => `if ${t}`, node.startPosition.row));
        break;
      case 'ternary':
        conditions.push(wrapWhole(node, text, (t) => `${t} ?`));
        break;
      case 'logical':
        conditions.push(wrapWhole(node, text, (t) => `${t} ${operatorAfter(node, text)}`));
        break;
      case 'switch':
        switches.push(node);
        break;
      case 'skip':
        skip.push([node.startIndex, node.endIndex]);
        break;
      case 'storage_declaration':
        if (hasConstantStorage(node, text)) skip.push([node.startIndex, node.endIndex]);
        break;
      case 'call':
        if (isConstantBuiltin(node, text)) skip.push([node.startIndex, node.endIndex]);
        break;
    }
  }
  const inSkipped = insideAny(skip);
  const found: FunctionBranches = { conditions: conditions.filter((c) => !inSkipped(c.start, c.end)), switches: [] };
  for (const node of switches) {
    const condition = node.childForFieldName('condition');
    const switchBody = node.childForFieldName('body');
    if (condition === null || switchBody === null || inSkipped(node.startIndex, node.startIndex + 1)) continue;
    const labels = labelsOf(switchBody, text, original);
    if (labels.length > 0) found.switches.push({ armAt: condition.startIndex + 1, labels });
  }
  return found;
}

/** The inside of a parenthesized condition. */
function wrapInside(paren: SyntaxNode, text: string, name: (t: string) => string, row: number): WrappedCondition {
  const start = paren.startIndex + 1;
  const end = paren.endIndex - 1;
  return { start, end, row, label: name(`(${oneLine(text.slice(start, end))})`) };
}

/** A whole expression node. */
function wrapWhole(node: SyntaxNode, text: string, name: (t: string) => string): WrappedCondition {
  return { start: node.startIndex, end: node.endIndex, row: node.startPosition.row, label: name(oneLine(text.slice(node.startIndex, node.endIndex))) };
}

/** `&&` or `||`: the first operator token after the left operand. */
function operatorAfter(left: SyntaxNode, text: string): string {
  const m = /&&|\|\|/.exec(text.slice(left.endIndex, left.endIndex + 4096));
  return m === null ? '&&' : m[0];
}

/** Whitespace runs (newlines included) as one space, cut to MAX_LABEL characters. */
function oneLine(s: string): string {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length <= MAX_LABEL ? t : t.slice(0, MAX_LABEL - 3) + '...';
}

function hasConstantStorage(declaration: SyntaxNode, text: string): boolean {
  for (const child of nodes(declaration.namedChildren)) {
    if (child.type === 'storage_class_specifier' && CONSTANT_STORAGE.has(text.slice(child.startIndex, child.endIndex))) return true;
  }
  return false;
}

function isConstantBuiltin(call: SyntaxNode, text: string): boolean {
  const callee = call.childForFieldName('function');
  if (callee === null) return false;
  const name = text.slice(callee.startIndex, callee.endIndex);
  return name.startsWith('__builtin_') && !PLAIN_BUILTINS.has(name);
}

/**
 * The case and default labels that are direct children of a switch body (or the body itself when it is one). `text`
 * is the parsed copy (names), `original` the unit's text (where statement attributes are still visible).
 */
function labelsOf(body: SyntaxNode, text: string, original: string): SwitchLabel[] {
  const cases = body.type === 'case_statement' ? [body] : body.type === 'compound_statement' ? nodes(body.namedChildren).filter((c) => c.type === 'case_statement') : [];
  const labels: SwitchLabel[] = [];
  cases.forEach((c, k) => {
    const colon = nodes(c.children).find((child) => child.type === ':');
    if (colon === undefined) return;
    const next = cases[k + 1];
    const adjacent = next !== undefined && c.nextNamedSibling?.startIndex === next.startIndex;
    const fallsInto = adjacent && hasOnlyEmptyStatements(c) && !/fallthrough/.test(original.slice(colon.endIndex, next.startIndex));
    labels.push({
      at: colon.endIndex,
      row: c.startPosition.row,
      label: oneLine(text.slice(c.startIndex, colon.endIndex)),
      fallthroughAt: fallsInto ? next.startIndex : null,
    });
  });
  return labels;
}

/** No statement after the label, or only `;` and `{ }`. */
function hasOnlyEmptyStatements(label: SyntaxNode): boolean {
  const value = label.childForFieldName('value');
  return nodes(label.namedChildren).every(
    (c) => (value !== null && c.startIndex === value.startIndex) || ((c.type === 'expression_statement' || c.type === 'compound_statement') && c.namedChildCount === 0),
  );
}

/**
 * A test of "does [start, end) lie inside one of the ranges". The ranges are syntax nodes, so any two are nested or
 * disjoint; merged and sorted once, a binary search finds the one that could hold a range.
 */
function insideAny(ranges: [number, number][]): (start: number, end: number) => boolean {
  ranges.sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const r of ranges) {
    const last = merged[merged.length - 1];
    if (last !== undefined && r[0] < last[1]) last[1] = Math.max(last[1], r[1]);
    else merged.push([r[0], r[1]]);
  }
  return (start, end) => {
    let lo = 0;
    let hi = merged.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (merged[mid]![0] <= start) lo = mid;
      else hi = mid - 1;
    }
    const r = merged[lo];
    return r !== undefined && r[0] <= start && end <= r[1];
  };
}
