// `report --stack`: the static worst case (worst-stack.ts) beside the deepest stack the run reached
// (deepest-stack.ts), as one JSON-ready object and as text with the two paths side by side.
import type { Model } from './model.js';
import { deepestStack, type DeepestStack, type ObservedStep } from './deepest-stack.js';
import { worstCaseStack, type StackUnit, type WorstStack } from './worst-stack.js';
import { formatCount } from './units.js';
import type { TextView } from './text-view.js';

/** Exact bytes: stack budgets are counted to the byte. */
const bytes = (n: number) => `${formatCount(n)} B`;

export interface StackReport {
  /** Where the frame sizes were looked for (the traced program), and why there are none (null: found). */
  program: string | null;
  missing: string | null;
  /** null when there are no frame sizes. */
  worstCase: WorstStack | null;
  observed: DeepestStack;
}

/** The worst case from the frame sizes (null without them), and main's own frame size, for `fromMainBytes`. */
export function worstCaseOf(units: StackUnit[] | null): { worstCase: WorstStack | null; mainFrame: number | null } {
  const worstCase = units === null ? null : worstCaseStack(units);
  return { worstCase, mainFrame: worstCase?.path[0]?.function === 'main' ? worstCase.path[0].frameBytes : null };
}

/** `units`: the program's `.mw_stack` lines, or null with the reason in `missing`. */
export function stackReport(model: Model, program: string | null, units: StackUnit[] | null, missing: string | null): StackReport {
  const { worstCase, mainFrame } = worstCaseOf(units);
  return stackSection(deepestStack(model, mainFrame), program, units, missing, worstCase);
}

/** The section from its parts: the deepest stack observed (a DeepestStackFold's) and the worst case (`worstCaseOf`). */
export function stackSection(observed: DeepestStack, program: string | null, units: StackUnit[] | null, missing: string | null, worstCase: WorstStack | null): StackReport {
  return { program, missing: units === null ? missing : null, worstCase, observed };
}

function place(file: string, line: number, relativeTo: string | null): string {
  const dir = relativeTo === null ? null : relativeTo.endsWith('/') ? relativeTo : relativeTo + '/';
  return `${dir !== null && file.startsWith(dir) ? file.slice(dir.length) : file}:${line}`;
}

/** The worst case in one line (the text report's column head, and the GUI's). */
export function worstHeadline(w: WorstStack): string {
  const total = bytes(w.bytes ?? 0);
  if (w.status === 'bounded') return `${total} from ${w.root}`;
  if (w.status === 'unbounded') return `unbounded (recursion); the path below alone: ${total}`;
  if (w.status === 'unknown') return `unknown; the path below alone: ${total}`;
  return `no frame size for ${w.root}`;
}

function worstColumn(r: StackReport, relativeTo: string | null): string[] {
  const w = r.worstCase;
  if (w === null) return ['(no frame sizes)'];
  return [worstHeadline(w), ...w.path.map((s) => `${s.function} ${bytes(s.frameBytes)}  ${place(s.file, s.line, relativeTo)}`)];
}

/** The deepest observed stack in one line (the text report's column head, and the GUI's). */
export function observedHeadline(o: DeepestStack): string {
  if (o.event === null) return '(no instrumented call)';
  return o.fromMainBytes === null
    ? `${bytes(o.depthBytes)} from the stack base`
    : `${bytes(o.fromMainBytes)} from main (${bytes(o.depthBytes)} from the stack base)`;
}

/** Why the worst case is what it is, one line each, for the text report and the GUI. */
export function worstCaseNotes(w: WorstStack, relativeTo: string | null): string[] {
  return worstNotes(w, relativeTo).map((l) => l.trim());
}

function observedColumn(o: DeepestStack): string[] {
  if (o.event === null) return ['(no instrumented call)'];
  return [observedHeadline(o) + `, event ${o.event}`, ...pathRows(o.path)];
}

/**
 * An observed call path as text rows, outermost first: "main", "checksum 208 B × 6 = 1,248 B". Runs of the same
 * function with the same frame (recursion) fold into one row. Also the stack of a budget range (report-text.ts).
 */
export function pathRows(path: readonly ObservedStep[]): string[] {
  const rows: string[] = [];
  for (let i = 0; i < path.length; ) {
    const s = path[i]!;
    let n = 1;
    while (i + n < path.length && path[i + n]!.function === s.function && path[i + n]!.frameBytes === s.frameBytes) n++;
    const frame = s.frameBytes === null ? '' : bytes(s.frameBytes);
    rows.push(n === 1 ? `${s.function} ${frame}`.trimEnd() : `${s.function} ${frame} × ${n} = ${bytes((s.frameBytes ?? 0) * n)}`);
    i += n;
  }
  return rows;
}

/** Why the worst case is what it is: recursion, indirect calls, dynamic frames, callees not counted. */
function worstNotes(w: WorstStack, relativeTo: string | null): string[] {
  const out: string[] = [];
  for (const cycle of w.recursion) out.push(`  recursion: ${cycle.join(' → ')} (unbounded)`);
  for (const s of w.indirectCalls) out.push(`  call through a function pointer in ${s.function} (${place(s.file, s.line, relativeTo)}): callee unknown`);
  for (const s of w.dynamicFrames) out.push(`  frame of run-time size (alloca or VLA) in ${s.function} (${place(s.file, s.line, relativeTo)}): ${bytes(s.frameBytes)} + unknown`);
  if (w.noCallGraph) out.push('  the compiler gave frame sizes but no call graph (clang): only main\'s frame is known');
  if (w.notCounted.length > 0) out.push(`  not counted (no frame size: libc or uninstrumented code): ${w.notCounted.join(', ')}`);
  return out;
}

export function renderStack(r: StackReport, view: TextView): string {
  const { relativeTo } = view;
  const left = ['worst case (compiler frame sizes)', ...worstColumn(r, relativeTo)];
  const right = ['observed (deepest frame of the run)', ...observedColumn(r.observed)];
  const width = Math.max(...left.map((l) => l.length)) + 3;
  const lines = ['', 'Stack: worst case vs observed'];
  for (let i = 0; i < Math.max(left.length, right.length); i++) lines.push(`  ${(left[i] ?? '').padEnd(width)}${right[i] ?? ''}`.trimEnd());
  if (r.worstCase !== null) lines.push(...worstNotes(r.worstCase, relativeTo));
  else lines.push(`  no frame sizes: ${r.missing ?? 'not found'}`);
  return lines.join('\n') + '\n';
}
