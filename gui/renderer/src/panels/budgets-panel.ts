// The budgets panel: each budget with its verdict and the ranges above it, and what each range began with: for a stack budget the frames on the stack (a recursion shows as checksum × 6, each frame with its bytes), for a heap or static budget the heap function with the most bytes live, for a total budget both; the blocks libraries made that the heap budgets counted, with what made them and how to do without. A range row selects its largest event and lists its stack below the table; a frame selects its call.
import type { BudgetCheck, BudgetRange, BudgetStack } from '../../../../analysis/budgets.js';
import { formatBytes, formatCount, plural } from '../../../../analysis/units.js';
import { el, fill } from '../dom.js';
import { table } from './table.js';
import { STACK_MEASURE } from '../vocabulary.js';

/** Ranges listed per budget; the analysis holds them all. */
const RANGES_SHOWN = 200;

export interface BudgetActions {
  /** Select an event (opens its source and detail). */
  goto(event: number): void;
}

interface Row {
  c: BudgetCheck;
  r: BudgetRange | null;
}

const exact = (n: number): string => `${formatCount(n)} B`;

/** "main, checksum × 6": the frames' functions, outermost first, runs of one function folded. */
function foldedNames(stack: BudgetStack): string {
  const out: string[] = [];
  const fs = stack.frames;
  for (let i = 0; i < fs.length; ) {
    let n = 1;
    while (i + n < fs.length && fs[i + n]!.function === fs[i]!.function) n++;
    out.push(n === 1 ? fs[i]!.function : `${fs[i]!.function} × ${n}`);
    i += n;
  }
  return out.join(', ');
}

/** The table cell: what the range began with, in the terms of its budget. */
function atStart(x: Row): string {
  const r = x.r;
  if (r === null) return '';
  const parts: string[] = [];
  if (r.stacks !== null) {
    const threads = r.stacks.length > 1;
    parts.push(r.stacks.length === 0 ? 'no frame open' : r.stacks.map((s) => `${threads ? `thread ${s.thread}: ` : ''}${foldedNames(s)}`).join('; '));
  }
  if (x.c.kind !== 'stack' && r.liveBlocks !== null) {
    const f = r.functions[0];
    parts.push(f === undefined ? 'no heap live' : `heap: ${f.label} ${formatBytes(f.bytes)}`);
  }
  return parts.join(' · ');
}

/** The stack a range began with, every frame listed with its bytes; a frame selects its call. */
function stackDetail(x: Row, act: BudgetActions): HTMLElement {
  const r = x.r!;
  const range = r.startEvent === r.endEvent ? `event ${r.startEvent}` : `events ${r.startEvent}–${r.endEvent}`;
  const head = el('h4', {}, `${x.c.kind} ≤ ${formatBytes(x.c.limitBytes)}, ${range}: the stack at its start (event ${r.startEvent})`);
  const threads = (r.stacks ?? []).map((s) => {
    const frames = s.frames.map((f, i) => {
      const label = i === 0 ? `${f.function} ${exact(f.depthBytes)} ${STACK_MEASURE}` : `${f.function} ${exact(f.frameBytes ?? 0)}`;
      const b = el('button', { type: 'button', class: 'link' }, label);
      b.addEventListener('click', () => act.goto(f.event));
      return el('li', {}, b);
    });
    return el('div', { 'data-role': 'budget-thread' }, el('p', { class: 'headline' }, `thread ${s.thread}: ${exact(s.depthBytes)} in ${plural(s.frames.length, 'frame')}`), el('ol', { class: 'stack' }, ...frames));
  });
  return el('div', {}, head, ...(threads.length ? threads : [el('p', { class: 'empty' }, 'no instrumented frame open')]));
}

/**
 * The blocks a library made that a heap or total budget's ranges began with (libc's stdout buffer …): what made each,
 * and what to do about it; null when there are none.
 */
function madeByNotes(checks: BudgetCheck[]): HTMLElement | null {
  const seen = new Map<string, { label: string; advice: string | null; bytes: number }>();
  for (const c of checks) {
    if (c.kind !== 'heap' && c.kind !== 'total') continue;
    for (const r of c.ranges) for (const f of r.functions) for (const site of f.sites) {
      if (site.madeBy !== undefined && !seen.has(site.madeBy.label)) seen.set(site.madeBy.label, { ...site.madeBy, bytes: site.bytes });
    }
  }
  if (seen.size === 0) return null;
  const items = [...seen.values()].map((m) => el('li', {}, el('strong', {}, m.label), ` (${formatBytes(m.bytes)})`, m.advice === null ? '' : `: ${m.advice}`));
  const how = 'a budget leaves them out with "libraryBlocks": false in memwrap.json (or --budget …,library=no); by default it counts them, as the target would';
  return el('div', { class: 'made-by', 'data-role': 'made-by' }, el('h4', {}, 'Blocks a library made, counted in these budgets'), el('ul', {}, ...items), el('p', { class: 'hint' }, `${how}.`));
}

export function budgetsPanel(checks: BudgetCheck[], act: BudgetActions): HTMLElement {
  if (checks.length === 0) return el('p', { class: 'empty' }, 'No budgets: give --budget heap=8K,stack=2K to cc-memwrap view, or put a memwrap.json beside the program.');
  const rows: Row[] = checks.flatMap((c): Row[] => (c.ranges.length ? c.ranges.slice(0, RANGES_SHOWN).map((r) => ({ c, r })) : [{ c, r: null }]));
  const detail = el('div', { class: 'budget-stack', 'data-role': 'budget-stack' });
  const showStack = (x: Row): void => {
    if (x.r?.stacks) fill(detail, stackDetail(x, act));
  };
  const t = table<Row>(
    [
      {
        label: 'budget',
        cell: (x) => `${x.c.kind} ≤ ${formatBytes(x.c.limitBytes)}${x.c.kind === 'stack' ? ` ${STACK_MEASURE}` : ''}${x.c.libraryBlocks === false ? ' (blocks libraries made left out)' : ''}`,
      },
      { label: 'status', cell: (x) => (x.c.exceeded ? 'exceeded' : `kept (max ${formatBytes(x.c.maxBytes)})`), cls: (x) => (x.c.exceeded ? 'bad' : 'good') },
      { label: 'range (events)', cell: (x) => (x.r ? `${x.r.startEvent}–${x.r.endEvent}` : '') },
      { label: 'max', cell: (x) => (x.r ? formatBytes(x.r.maxBytes) : ''), numeric: true },
      { label: 'at its start', cell: atStart },
    ],
    rows,
    (x) => {
      showStack(x);
      if (x.r) act.goto(x.r.maxEvent);
      else if (x.c.maxEvent !== null) act.goto(x.c.maxEvent);
    },
  );
  // The first range with a stack is shown until another row is chosen.
  const first = rows.find((x) => x.r?.stacks);
  if (first) showStack(first);
  return el('div', { class: 'budgets-panel' }, t, madeByNotes(checks), detail);
}
