// The worst-case stack panel: the static worst case from the compiler's frame sizes beside the deepest stack the run reached (analysis/stack-report.ts, as `report --stack` prints them), each with its call path; the gap between the two is the lesson. A worst-case frame opens its source line, an observed frame selects its call.
import type { ObservedStep } from '../../../../analysis/deepest-stack.js';
import { observedHeadline, worstCaseNotes, worstHeadline, type StackReport } from '../../../../analysis/stack-report.js';
import type { StackStep } from '../../../../analysis/worst-stack.js';
import { siteLocation } from '../../../../analysis/sites.js';
import { formatCount } from '../../../../analysis/units.js';
import { el } from '../dom.js';

/** Frames listed per path (a deep recursion can have thousands); the analysis holds them all. */
const FRAMES_SHOWN = 200;

export interface StackActions {
  source(file: string | null, line: number | null): void;
  goto(event: number): void;
}

const exact = (n: number): string => `${formatCount(n)} B`;

function frameList<T>(steps: T[], label: (s: T) => string, onClick: (s: T) => void): HTMLElement {
  const shown = steps.slice(0, FRAMES_SHOWN).map((s) => {
    const b = el('button', { type: 'button', class: 'link' }, label(s));
    b.addEventListener('click', () => onClick(s));
    return el('li', {}, b);
  });
  const more = steps.length > FRAMES_SHOWN ? el('p', { class: 'empty' }, `First ${formatCount(FRAMES_SHOWN)} of ${formatCount(steps.length)} frames.`) : null;
  return el('div', {}, el('ol', { class: 'stack' }, ...shown), more);
}

function worstColumn(r: StackReport, relativeTo: string | null, act: StackActions): HTMLElement {
  const w = r.worstCase;
  const title = el('h4', {}, 'worst case (compiler frame sizes)');
  if (w === null) return el('div', { class: 'path', 'data-role': 'worst-case' }, title, el('p', { class: 'empty' }, `no frame sizes: ${r.missing ?? 'not found'}`));
  const where = (s: StackStep) => siteLocation({ kind: 0, file: s.file, line: s.line, func: null, name: null }, relativeTo);
  return el(
    'div',
    { class: 'path', 'data-role': 'worst-case' },
    title,
    el('p', { class: `headline ${w.status}` }, worstHeadline(w)),
    frameList(w.path, (s) => `${s.function} ${exact(s.frameBytes)}  ${where(s)}`, (s) => act.source(s.file, s.line)),
    ...worstCaseNotes(w, relativeTo).map((n) => el('p', { class: 'note' }, n)),
  );
}

function observedColumn(r: StackReport, act: StackActions): HTMLElement {
  const o = r.observed;
  const title = el('h4', {}, 'observed (deepest frame of the run)');
  if (o.event === null) return el('div', { class: 'path', 'data-role': 'observed' }, title, el('p', { class: 'empty' }, observedHeadline(o)));
  const at = el('button', { type: 'button', class: 'link', 'data-role': 'deepest-event' }, `event ${o.event}`);
  at.addEventListener('click', () => o.event !== null && act.goto(o.event));
  return el(
    'div',
    { class: 'path', 'data-role': 'observed' },
    title,
    el('p', { class: 'headline' }, `${observedHeadline(o)}, `, at),
    frameList(o.path, (s: ObservedStep) => `${s.function}${s.frameBytes === null ? '' : ` ${exact(s.frameBytes)}`}`, (s) => act.goto(s.event)),
  );
}

export function stackPanel(r: StackReport, relativeTo: string | null, act: StackActions): HTMLElement {
  return el('div', { class: 'side-by-side stack-panel' }, worstColumn(r, relativeTo, act), observedColumn(r, act));
}
