// `report --leak-causes` as text: per suspect site, freed and leaked counts, the lowest common function, the step that
// separates leaking from freeing paths (with its source line), and the end of one path of each kind.
import type { LeakCauses, PathStep, PlainLeakSite, SourcePlace, SuspectSite } from './leak-causes.js';
import { siteLocation } from './sites.js';
import type { SourceLines, TextView } from './text-view.js';

/** Steps of each example path shown in the text (the JSON has them all). */
const PATH_STEPS_SHOWN = 10;

/** `source(file, line)` gives the trimmed source line, or null; `relativeTo` shortens file names (the run's cwd). */
export function renderLeakCauses(causes: LeakCauses, view: TextView): string {
  const { top, source, relativeTo } = view;
  const where = (p: SourcePlace): string => siteLocation({ kind: 0, file: p.file, line: p.line, func: null, name: null }, relativeTo);
  const lines: string[] = [''];
  const n = causes.suspects.length;
  const branches = causes.branchesRecorded ? 'branches recorded' : 'no branches recorded: build with cc-memwrap --mw-branches to name the branch';
  lines.push(`Leak causes (${n} suspect site${n === 1 ? '' : 's'}: some blocks freed, some not; ${branches})`);
  if (n === 0) lines.push('  none');
  for (const s of causes.suspects.slice(0, Math.max(0, top))) lines.push(...renderSuspect(s, where, source));
  lines.push('', `Never freed (${causes.neverFreed.length} site${causes.neverFreed.length === 1 ? '' : 's'}; not suspect: a plain leak, or a cache kept to the end)`);
  if (causes.neverFreed.length === 0) lines.push('  none');
  for (const p of causes.neverFreed.slice(0, Math.max(0, top))) lines.push(`  ${allocationLabel(p, where)}: ${plural(p.leaked, 'block')}`);
  return lines.join('\n') + '\n';
}

function renderSuspect(s: SuspectSite, where: (p: SourcePlace) => string, source: SourceLines | null): string[] {
  const out = [`  ${allocationLabel(s, where)}: freed ${s.freed}, leaked ${s.leaked}`];
  if (s.commonFunction !== null) out.push(`    lowest common function: ${s.commonFunction.function} (${where(s.commonFunction)})`);
  if (s.culprit !== null) {
    out.push(`    cause: ${where(s.culprit)} ${stepLabel(s.culprit)} (in ${s.culprit.leakingPaths} of ${s.compared.leaking} leaking paths; never there in ${s.compared.freeing} freeing paths)`);
    const text = s.culprit.file === null || source === null ? null : source(s.culprit.file, s.culprit.line);
    if (text !== null) out.push(`      ${s.culprit.line} | ${text}`);
  }
  if (s.note !== null) out.push(`    ${s.note}`);
  if (s.onlyInFreeing.length > 0) out.push(`    only freeing paths call: ${s.onlyInFreeing.map((f) => `${f.function} (${where(f)})`).join(', ')}`);
  if (s.freeingPath.length > 0) out.push(`    a freeing path: ${pathText(s.freeingPath)}`);
  if (s.leakingPath.length > 0) out.push(`    a leaking path: ${pathText(s.leakingPath)}`);
  return out;
}

/** `funcA: if (error == 1) taken`, `enter funcB`, `exit funcA` (the GUI's leak panel shows steps the same way). */
export function stepLabel(step: PathStep): string {
  if (step.kind === 'branch') return `${step.function}: ${step.text ?? '?'} ${step.taken ? 'taken' : 'not taken'}`;
  return `${step.kind} ${step.function}`;
}

/** The path's last steps, from the allocation to the common function's exit, repeats folded. */
function pathText(path: PathStep[]): string {
  const shown = path.slice(-PATH_STEPS_SHOWN).map((step) => (step.kind === 'branch' ? `${step.text ?? '?'} ${step.taken ? 'taken' : 'not taken'} (${step.line})` : stepLabel(step)));
  const cut = path.length - shown.length;
  return (cut > 0 ? `… ${plural(cut, 'earlier step')} → ` : 'alloc → ') + shown.join(' → ');
}

function allocationLabel(p: SuspectSite | PlainLeakSite, where: (p: SourcePlace) => string): string {
  return `${where(p.allocation)} ${p.allocation.function} → ${p.allocation.allocator}`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
