// The detail of the selected event: kind, place, size and totals; its call stack; the other end of its block (the free, or "never freed" with the leak class; the allocation a free released); the blocks linked from a freed one, with those it orphaned marked.
import type { EventDetail } from '../../../analysis/event-detail.js';
import type { ExplainedFrame } from '../../../analysis/frame-detail.js';
import { leakClassLabel } from '../../../analysis/leaks.js';
import { formatBytesFine } from '../../../analysis/units.js';
import { formatNs } from './chart/chart.js';
import { el, fill } from './dom.js';
import type { SourceMark } from './source/source-pane.js';

export interface DetailActions {
  goto(event: number): void;
  /** Opens `file` in the source pane with `lines` marked. */
  source(file: string | null, lines: number[]): void;
}

function jump(label: string, act: () => void, attrs: Record<string, string> = {}): HTMLButtonElement {
  const b = el('button', { type: 'button', class: 'link', ...attrs }, label);
  b.addEventListener('click', act);
  return b;
}

/**
 * Why an event has no source line, for the source pane: the run's end, a thread's start or end, lost records and
 * unwinds are not at any line; only the allocator's own calls are inside libc or uninstrumented code.
 * `end`: the run's end in words (`Summary.end.description`).
 */
export function noSourceText(d: EventDetail, end: string): string {
  switch (d.kind) {
    case 'END':
      return `The run ended here (${end}). The end of a run has no source line.`;
    case 'THREAD_BEGIN':
      return `Thread ${d.thread} began here. A thread's start has no source line.`;
    case 'THREAD_END':
      return `Thread ${d.thread} ended here. A thread's end has no source line.`;
    case 'LOST':
      return 'Records were lost here (the recorder could not write them). Lost records have no source line.';
    case 'UNWIND':
      return 'Frames left without their return (longjmp, exit or a signal) were closed here. This has no source line.';
    default:
      return d.interposed ? 'This event happened inside libc or uninstrumented code: it has no source line.' : 'This event has no source location.';
  }
}

/**
 * What a selected event marks: on the chart, the events related to it (its block's other end, a free's linked blocks)
 * and the allocations a free orphaned; in its source file, its own line and those of the related events in that file.
 */
export function selectionMarks(d: EventDetail): { related: Int32Array; orphaned: Int32Array; source: SourceMark[] } {
  const related: number[] = [];
  const orphaned: number[] = [];
  const marks: SourceMark[] = [];
  // A block libc made during one call of the function: that call's line, not the function's definition.
  const call = d.madeBy?.call;
  if (call && call.file === d.place?.file) {
    const what = d.madeBy!.label.split(' — ');
    marks.push({ line: call.line, kind: 'selected', note: what.length > 1 ? `${what[0]} made here` : 'a block made inside this call' });
  }
  else if (d.place?.line != null) marks.push({ line: d.place.line, kind: 'selected' });
  if (d.created?.freeEvent != null) related.push(d.created.freeEvent);
  const orphanedBy = d.created?.orphanedBy;
  if (orphanedBy) {
    related.push(orphanedBy.event);
    if (orphanedBy.at.file === d.place?.file && orphanedBy.at.line !== null) marks.push({ line: orphanedBy.at.line, kind: 'orphaned', note: 'the free that orphaned this block' });
  }
  if (d.ended) {
    related.push(d.ended.allocEvent);
    if (d.ended.allocation.file === d.place?.file && d.ended.allocation.line !== null) marks.push({ line: d.ended.allocation.line, kind: 'related', note: 'allocated the freed block' });
  }
  for (const b of d.linked?.blocks ?? []) {
    (b.orphaned ? orphaned : related).push(b.allocEvent);
    if (b.allocation.file === d.place?.file && b.allocation.line !== null) {
      marks.push(b.orphaned ? { line: b.allocation.line, kind: 'orphaned', note: 'linked block, orphaned by this free' } : { line: b.allocation.line, kind: 'related', note: 'linked block' });
    }
  }
  return { related: Int32Array.from(related), orphaned: Int32Array.from(orphaned), source: marks };
}

/** Where the call stack's numbers and names come from, said once above it. */
export const STACK_NOTE =
  "frame: the stack bytes it took, from the trace (the stack in use at its entry less its caller's); compiler: the compiler's frame size, from the program; locals: the objects its body declares, as written.";

/**
 * One frame of the call stack: its function and where its caller called it (the link opens that line, else its
 * definition), the stack bytes it took and where that number comes from, and the automatic objects it declares.
 * `namesCalls`: the trace's site tables name call lines at all (a program built before they did has none).
 */
function frameItem(f: ExplainedFrame, outermost: boolean, namesCalls: boolean, act: DetailActions): HTMLElement {
  const where = f.call !== null ? `called at ${f.call.label}` : outermost ? 'outermost frame' : namesCalls ? 'call line unknown (a call through a pointer?)' : 'call line not in this trace';
  const open = f.call !== null ? () => act.source(f.call!.file, f.call!.lines) : () => act.source(f.file, f.line === null ? [] : [f.line]);
  const sizes: string[] = [];
  sizes.push(f.bytes !== null ? `frame ${formatBytesFine(f.bytes)}` : `${formatBytesFine(f.depth)} from the stack base`);
  if (f.compilerBytes !== null) sizes.push(`compiler ${formatBytesFine(f.compilerBytes)}`);
  return el(
    'li',
    { class: 'frame', 'data-function': f.function },
    jump(`${f.function} — ${where}`, open, { class: 'link frame-call', 'data-lines': f.call?.lines.join(' ') ?? '' }),
    el('div', { class: 'frame-facts' }, sizes.join(' · '), ' · ', jump(`defined at ${f.label}`, () => act.source(f.file, f.line === null ? [] : [f.line]), { class: 'link frame-def' })),
    f.locals.length === 0
      ? null
      : el('div', { class: 'frame-locals' }, 'locals: ', ...f.locals.flatMap((l, k) => [k > 0 ? ', ' : '', el('code', { title: `line ${l.line}` }, l.text)])),
  );
}

export function renderDetail(host: HTMLElement, d: EventDetail, stack: ExplainedFrame[], namesCalls: boolean, act: DetailActions): void {
  const facts = el(
    'dl',
    { class: 'facts' },
    el('dt', {}, 'event'),
    el('dd', {}, `${d.event} · ${d.kind}${d.interposed ? ' (via libc/uninstrumented)' : ''} · thread ${d.thread} · ${formatNs(d.timeNs)}`),
    el('dt', {}, 'where'),
    el('dd', { class: 'place' }, d.place?.label ?? 'no source location'),
    d.madeBy ? el('dt', {}, 'made by') : null,
    d.madeBy ? el('dd', { 'data-role': 'made-by' }, d.madeBy.label) : null,
    d.madeBy?.advice ? el('dt', {}, 'why') : null,
    d.madeBy?.advice ? el('dd', { class: 'advice', 'data-role': 'made-by-advice' }, d.madeBy.advice) : null,
    d.bytes !== null ? el('dt', {}, d.class === 'call' ? 'stack at entry' : 'size') : null,
    d.bytes !== null ? el('dd', {}, formatBytesFine(d.bytes)) : null,
    el('dt', {}, 'after it'),
    el('dd', {}, `heap ${formatBytesFine(d.heapRequested)} (usable ${formatBytesFine(d.heapUsable)}) · stack ${formatBytesFine(d.stack)} · static ${formatBytesFine(d.static)}`),
  );
  const parts: Array<HTMLElement | null> = [el('h3', {}, `${d.kind} ${d.place?.function ?? ''}`.trim()), facts];

  if (d.created) {
    const c = d.created;
    parts.push(
      el(
        'p',
        { class: 'block-end', 'data-role': 'free-of-allocation' },
        c.freeEvent !== null
          ? jump(`freed at event ${c.freeEvent}`, () => act.goto(c.freeEvent!), { 'data-event': String(c.freeEvent) })
          : el('span', { class: `never-freed leak-${c.leakClass ?? 'unclassified'}` }, `never freed — ${c.leakClass ? leakClassLabel(c.leakClass) : 'live at the end of the run (not classified)'}`),
      ),
    );
    const by = c.orphanedBy;
    if (by) {
      parts.push(
        el('p', { class: 'block-end orphaned', 'data-role': 'orphaned-by' }, jump(`orphaned by the free at event ${by.event} (${by.at.label})`, () => act.goto(by.event), { 'data-event': String(by.event) })),
      );
    }
  }
  if (d.ended) {
    const e = d.ended;
    parts.push(
      el(
        'p',
        { class: 'block-end', 'data-role': 'allocation-of-free' },
        'released the block allocated at ',
        jump(`${e.allocation.label} (event ${e.allocEvent}, ${formatBytesFine(e.requestedBytes)})`, () => act.goto(e.allocEvent), { 'data-event': String(e.allocEvent) }),
      ),
    );
  }
  if (d.linked && d.linked.blocks.length > 0) {
    const l = d.linked;
    // Each entry jumps to the block's allocation event (which opens its line), as every block reference in the pane does.
    const item = (m: (typeof l.blocks)[number]): HTMLElement =>
      el(
        'li',
        { class: m.orphaned ? 'orphaned' : m.leaked ? 'leaked' : '' },
        jump(`${m.allocation.label} (event ${m.allocEvent})`, () => act.goto(m.allocEvent), { 'data-line': String(m.allocation.line ?? ''), 'data-event': String(m.allocEvent) }),
        ` ${formatBytesFine(m.requestedBytes)} `,
        m.orphaned ? el('span', { class: 'badge orphaned' }, 'orphaned') : m.leaked ? el('span', { class: 'badge' }, 'leaked') : el('span', { class: 'badge freed' }, `freed later (event ${m.freeEvent})`),
      );
    parts.push(
      el('h4', {}, `Blocks linked from the freed one (${l.blocks.length}${l.partial ? ', scan cut short' : ''}; ${l.orphaned} orphaned)`),
      el('ul', { class: 'linked' }, ...l.blocks.map(item)),
    );
  }
  parts.push(
    el('h4', {}, 'Call stack (innermost first)'),
    stack.length === 0 ? null : el('p', { class: 'stack-note' }, STACK_NOTE),
    stack.length === 0 ? el('p', { class: 'empty' }, 'no instrumented frame open') : stackList(stack, namesCalls, act),
  );
  fill(host, ...parts);
}

/** Frames listed of a call stack deeper than this: the innermost STACK_HEAD and the outermost STACK_TAIL. */
const STACK_HEAD = 150;
const STACK_TAIL = 50;

/**
 * The call stack as a list, innermost first. A deep recursion's stack (100,000 frames) is listed by its ends, the
 * frames between counted in one line: a list of every frame would take the page seconds to lay out and no one reads it.
 */
function stackList(stack: ExplainedFrame[], namesCalls: boolean, act: DetailActions): HTMLElement {
  const list = el('ol', { class: 'stack' });
  const item = (i: number): HTMLElement => frameItem(stack[i]!, i === stack.length - 1, namesCalls, act);
  if (stack.length <= STACK_HEAD + STACK_TAIL) {
    for (let i = 0; i < stack.length; i++) list.append(item(i));
    return list;
  }
  for (let i = 0; i < STACK_HEAD; i++) list.append(item(i));
  const hidden = stack.length - STACK_HEAD - STACK_TAIL;
  list.append(el('li', { class: 'stack-gap' }, `… ${hidden.toLocaleString('en-US')} more frames, not listed (${stack.length.toLocaleString('en-US')} open in all) …`));
  for (let i = stack.length - STACK_TAIL; i < stack.length; i++) list.append(item(i));
  return list;
}
