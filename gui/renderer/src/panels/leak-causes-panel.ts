// The leak-cause panel: per suspect site (analysis/leak-causes.ts) freed N / leaked M, the step that separates leaking from freeing paths — clicking it highlights its line in the source pane — and one freeing and one leaking path side by side, every step a link to its line.
import type { LeakCauses, PathStep, SourcePlace, SuspectSite } from '../../../../analysis/leak-causes.js';
import { stepLabel } from '../../../../analysis/leak-causes-text.js';
import { siteLocation } from '../../../../analysis/sites.js';
import { formatCount } from '../../../../analysis/units.js';
import { el } from '../dom.js';
import type { SourceMark } from '../source/source-pane.js';
import { table } from './table.js';

/** Suspect sites shown; the analysis orders them most leaked first. */
const SUSPECTS_SHOWN = 50;

export interface LeakCauseActions {
  source(file: string | null, line: number | null, marks?: SourceMark[]): void;
}

type Where = (p: SourcePlace) => string;

function link(text: string, role: string, onClick: () => void): HTMLButtonElement {
  const b = el('button', { type: 'button', class: 'link', 'data-role': role }, text);
  b.addEventListener('click', onClick);
  return b;
}

const sameStep = (a: PathStep, b: PathStep): boolean => a.kind === b.kind && a.function === b.function && a.file === b.file && a.line === b.line && a.taken === b.taken;

/** One example path as a list of steps, the culprit marked. */
function pathList(title: string, role: string, steps: PathStep[], culprit: PathStep | null, where: Where, act: LeakCauseActions): HTMLElement {
  const items = steps.map((s) => {
    const isCulprit = culprit !== null && sameStep(s, culprit);
    const li = el('li', { class: isCulprit ? 'culprit' : '' }, link(`${stepLabel(s)} (${where(s)})`, 'step', () => act.source(s.file, s.line)));
    return li;
  });
  return el('div', { class: 'path', 'data-role': role }, el('h4', {}, title), steps.length ? el('ol', { class: 'steps' }, el('li', { class: 'muted' }, 'allocation'), ...items) : el('p', { class: 'empty' }, 'none recorded'));
}

/** Source marks for a culprit: its line selected, the allocation related when in the same file. */
function culpritMarks(s: SuspectSite): SourceMark[] {
  const c = s.culprit!;
  const note = c.kind === 'branch' ? `leaks when ${c.taken ? 'taken' : 'not taken'}` : `leaking paths: ${c.kind} ${c.function}`;
  const marks: SourceMark[] = [{ line: c.line, kind: 'selected', note }];
  if (s.allocation.file === c.file && s.allocation.line !== c.line) marks.push({ line: s.allocation.line, kind: 'related', note: 'allocated here' });
  return marks;
}

function suspect(s: SuspectSite, where: Where, act: LeakCauseActions): HTMLElement {
  const head = el('h4', {}, `${where(s.allocation)} ${s.allocation.function} → ${s.allocation.allocator}: freed ${formatCount(s.freed)}, leaked ${formatCount(s.leaked)}`);
  const c = s.culprit;
  const cause = c === null
    ? null
    : el('p', {}, 'cause: ', link(`${where(c)} ${stepLabel(c)}`, 'culprit', () => act.source(c.file, c.line, culpritMarks(s))), ` (in ${formatCount(c.leakingPaths)} of ${formatCount(s.compared.leaking)} leaking paths; never there in ${formatCount(s.compared.freeing)} freeing paths)`);
  return el(
    'div',
    { class: 'suspect', 'data-site': String(s.site) },
    head,
    s.commonFunction ? el('p', {}, `lowest common function: ${s.commonFunction.function} (${where(s.commonFunction)})`) : null,
    cause,
    s.note ? el('p', { class: 'empty' }, s.note) : null,
    s.onlyInFreeing.length ? el('p', {}, `only freeing paths call: ${s.onlyInFreeing.map((f) => `${f.function} (${where(f)})`).join(', ')}`) : null,
    el('div', { class: 'side-by-side' }, pathList('a freeing path', 'freeing-path', s.freeingPath, null, where, act), pathList('a leaking path', 'leaking-path', s.leakingPath, c, where, act)),
  );
}

export function leakCausesPanel(causes: LeakCauses, relativeTo: string | null, act: LeakCauseActions): HTMLElement {
  const where: Where = (p) => siteLocation({ kind: 0, file: p.file, line: p.line, func: null, name: null }, relativeTo);
  const intro = causes.branchesRecorded
    ? 'Sites some of whose blocks were freed and some not. Branches were recorded: the cause names the branch.'
    : 'Sites some of whose blocks were freed and some not. No branches recorded: build with cc-memwrap --mw-branches to name the branch.';
  const suspects = causes.suspects.slice(0, SUSPECTS_SHOWN).map((s) => suspect(s, where, act));
  const never = table(
    [
      { label: 'never freed (a plain leak or a cache; not suspect)', cell: (p: LeakCauses['neverFreed'][number]) => `${where(p.allocation)} ${p.allocation.function} → ${p.allocation.allocator}` },
      { label: 'blocks', cell: (p) => formatCount(p.leaked), numeric: true },
    ],
    causes.neverFreed,
    (p) => act.source(p.allocation.file, p.allocation.line),
    'none',
  );
  return el('div', { class: 'leak-causes' }, el('p', { class: 'hint' }, intro), ...(suspects.length ? suspects : [el('p', { class: 'empty' }, 'no suspect site: every site either freed all its blocks or none')]), never);
}
