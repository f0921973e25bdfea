// The RAM map panel of a firmware's trace: its RAM as the linker script lays it out, drawn to scale (static data by
// owner, the heap region and how far the heap reached, the stack's reservation and how deep the stack went, the
// budgets as marks), then a gauge per part against its budget, the first budget crossed and the largest static
// objects. Every number is analysis/ram-map.ts's, as `cc-memwrap report` prints it; a row opens its event or its line.
import type { Budgets } from '../../../../analysis/budgets.js';
import type { Owner, RamMap } from '../../../../analysis/ram-map.js';
import { formatBytes, formatCount } from '../../../../analysis/units.js';
import { SERIES_COLOURS, MARK_COLOURS } from '../chart/palette.js';
import { el } from '../dom.js';
import { table } from './table.js';

export interface RamMapActions {
  /** Select an event (opens its source and detail). */
  goto(event: number): void;
  /** Open a source line. */
  source(file: string | null, line: number | null): void;
}

const OWNERS: { owner: Owner; label: string; colour: string }[] = [
  { owner: 'program', label: 'program', colour: SERIES_COLOURS.static },
  { owner: 'other', label: 'C library and start-up', colour: '#ffe8a1' },
  { owner: 'runtime', label: 'cc-memwrap', colour: '#ced4da' },
];

const hex = (n: number): string => `0x${n.toString(16)}`;
const exact = (n: number): string => `${formatCount(n)} B`;

/** A segment of the bar from `from` for `bytes`, as percentages of RAM; a part too small to see is drawn 0.6 % wide. */
function segment(m: RamMap, from: number, bytes: number, cls: string, colour: string | null, title: string): HTMLElement {
  const left = ((from - m.ram.start) / m.ram.size) * 100;
  const width = Math.max(0.6, (bytes / m.ram.size) * 100);
  const s = el('div', { class: `ram-seg ${cls}`, title });
  s.style.left = `${Math.max(0, Math.min(100 - width, left))}%`;
  s.style.width = `${width}%`;
  if (colour !== null) s.style.background = colour;
  return s;
}

/** A budget's mark on the bar, at `at` (an address). */
function mark(m: RamMap, at: number, title: string): HTMLElement {
  const b = el('div', { class: 'ram-budget', 'data-role': 'ram-budget', title });
  b.style.left = `${Math.max(0, Math.min(100, ((at - m.ram.start) / m.ram.size) * 100))}%`;
  b.style.background = MARK_COLOURS.budget;
  return b;
}

/** RAM to scale, low addresses on the left: static data, the heap region and its peak, the stack's reservation and its peak. */
function bar(m: RamMap, budgets: Budgets | null): HTMLElement {
  const top = m.stack.top;
  const parts: HTMLElement[] = [];
  let at = m.ram.start;
  for (const o of OWNERS) {
    const bytes = m.static.byOwner[o.owner];
    if (bytes === 0) continue;
    parts.push(segment(m, at, bytes, 'static', o.colour, `static, ${o.label}: ${exact(bytes)}`));
    at += bytes;
  }
  const heap = m.heap.region;
  if (heap !== null) {
    parts.push(segment(m, heap.start, heap.end - heap.start, 'region', null, `heap region: ${exact(heap.end - heap.start)} (${heap.source})`));
    if (m.heap.peakUsable > 0) parts.push(segment(m, heap.start, m.heap.peakUsable, 'used', SERIES_COLOURS.heap, `heap peak: ${exact(m.heap.peakUsable)} usable`));
    if (budgets?.heap !== undefined) parts.push(mark(m, heap.start + budgets.heap, `heap budget: ${exact(budgets.heap)}`));
  }
  if (m.stack.reserved !== null) parts.push(segment(m, top - m.stack.reserved, m.stack.reserved, 'region', null, `stack reservation: ${exact(m.stack.reserved)} (${m.stack.source})`));
  if (m.stack.peak > 0) parts.push(segment(m, top - m.stack.peak, m.stack.peak, 'used', SERIES_COLOURS.stack, `stack peak: ${exact(m.stack.peak)}`));
  if (budgets?.stack !== undefined) parts.push(mark(m, top - budgets.stack, `stack budget: ${exact(budgets.stack)}`));
  return el(
    'div',
    { class: 'ram-map-bar' },
    el('div', { class: 'ram-bar', 'data-role': 'ram-bar' }, ...parts),
    el('div', { class: 'ram-ends' }, el('span', {}, hex(m.ram.start)), el('span', {}, `${hex(m.ram.start + m.ram.size)} (${m.ram.source})`)),
  );
}

/** A used-against-limit gauge: the fill in `colour`, red past the limit. */
function gauge(used: number, limit: number | null, colour: string): HTMLElement {
  const g = el('div', { class: 'ram-gauge' });
  const fillBar = el('div', { class: 'ram-gauge-fill' });
  const share = limit === null || limit === 0 ? 0 : used / limit;
  fillBar.style.width = `${Math.min(100, share * 100)}%`;
  fillBar.style.background = share > 1 ? MARK_COLOURS.budget : colour;
  g.append(fillBar);
  return g;
}

interface Part {
  what: string;
  used: number;
  limit: number | null;
  of: string;
  colour: string;
  event: number | null;
}

export function ramMapPanel(m: RamMap, budgets: Budgets | null, act: RamMapActions): HTMLElement {
  const heap = m.heap.region;
  const heapLimit = budgets?.heap ?? (heap === null ? null : heap.end - heap.start);
  const stackLimit = budgets?.stack ?? m.stack.reserved;
  const parts: Part[] = [
    { what: 'static (.data + .bss)', used: m.static.data + m.static.bss, limit: m.ram.size, of: `${formatBytes(m.ram.size)} of RAM`, colour: SERIES_COLOURS.static, event: null },
    { what: 'heap peak (usable)', used: m.heap.peakUsable, limit: heapLimit, of: heapLimit === null ? 'no heap region' : `${formatBytes(heapLimit)} budget (${heap?.source ?? 'memwrap.json'})`, colour: SERIES_COLOURS.heap, event: m.heap.peakEvent },
    { what: 'stack peak', used: m.stack.peak, limit: stackLimit, of: stackLimit === null ? 'no reservation' : `${formatBytes(stackLimit)} budget (${m.stack.source})`, colour: SERIES_COLOURS.stack, event: m.stack.peakEvent },
  ];
  const gauges = table<Part>(
    [
      { label: 'part', cell: (p) => p.what },
      { label: 'bytes', cell: (p) => exact(p.used), numeric: true },
      { label: 'against', cell: (p) => p.of, cls: (p) => (p.limit !== null && p.used > p.limit ? 'bad' : null) },
    ],
    parts,
    (p) => p.event !== null && act.goto(p.event),
  );
  // The gauges go into the rows' first cells' ends: one bar per row.
  gauges.querySelectorAll('tbody tr').forEach((tr, i) => tr.firstElementChild!.append(gauge(parts[i]!.used, parts[i]!.limit, parts[i]!.colour)));
  const c = m.firstCrossed;
  const crossed =
    c === null
      ? el('p', { class: 'good', 'data-role': 'ram-crossed' }, 'No budget crossed.')
      : el(
          'p',
          { class: 'bad', 'data-role': 'ram-crossed' },
          `First crossed: the ${c.kind} budget of ${exact(c.limitBytes)} at event ${formatCount(c.event)} (${exact(c.bytes)}), by `,
          (() => {
            const b = el('button', { type: 'button', class: 'link', 'data-role': 'ram-crossed-line' }, c.function === null ? `event ${c.event}` : `${c.function}${c.line === null ? '' : ` (line ${c.line})`}`);
            b.addEventListener('click', () => {
              act.goto(c.event);
              if (c.file !== null) act.source(c.file, c.line);
            });
            return b;
          })(),
        );
  const owners = el('p', { class: 'ram-owners' }, ...OWNERS.map((o) => {
    const key = el('span', { class: 'ram-key' });
    key.style.background = o.colour;
    return el('span', {}, key, `${o.label} ${exact(m.static.byOwner[o.owner])}`);
  }));
  const objects = table(
    [
      { label: 'object', cell: (o: RamMap['static']['objects'][number]) => o.name },
      { label: 'bytes', cell: (o) => exact(o.size), numeric: true, sort: (o) => o.size },
      { label: 'section', cell: (o) => o.section },
      { label: 'owner', cell: (o) => OWNERS.find((w) => w.owner === o.owner)!.label },
      { label: 'declared at', cell: (o) => (o.line === null ? '' : `${o.file?.split('/').pop() ?? '?'}:${o.line}`) },
    ],
    m.static.objects,
    (o) => o.line !== null && act.source(o.file, o.line),
  );
  return el(
    'div',
    { class: 'ram-map', 'data-role': 'ram-map' },
    el('p', { class: 'headline' }, `RAM of ${m.program?.split('/').pop() ?? 'the firmware'}: ${formatBytes(m.ram.size)} at ${hex(m.ram.start)} · margin at the peaks ${exact(m.margin)} · flash ${formatBytes(m.flash.used)} used${m.flash.size === null ? '' : ` of ${formatBytes(m.flash.size)}`}, cc-memwrap's ${formatBytes(m.runtime.flash)}`),
    bar(m, budgets),
    owners,
    gauges,
    crossed,
    el('h4', {}, `Largest static objects (${m.static.objects.length} of ${formatCount(m.static.objectCount)})`),
    objects,
  );
}
