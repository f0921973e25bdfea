// Renders a Summary as the aligned plain-text report of `cc-memwrap report` (fits 80 columns).
import type { Attribution, AttributionRow } from './attribution.js';
import type { BudgetCheck, BudgetRange } from './budgets.js';
import type { IntervalSeries } from './timeline.js';
import type { PerCall } from './per-call.js';
import type { Temporaries } from './temporaries.js';
import type { LinkedSection } from './linked.js';
import { leakClassLabel, type LeaksAtExit } from './leaks.js';
import type { PeakGroup, PeakSnapshot } from './peak.js';
import type { Summary } from './summary.js';
import type { ReportResult } from './report.js';
import type { Owner, RamMap } from './ram-map.js';
import { pathRows, renderStack } from './stack-report.js';
import { renderLeakCauses } from './leak-causes-text.js';
import { baseName, type SourceLines, type TextView } from './text-view.js';

export type { SourceLines, TextView };
import { COUNT_WORDS, formatBytes, formatBytesFine, formatCount, plural } from './units.js';

export const REPORT_WIDTH = 80;

/** Cuts `s` to `width` columns, keeping its end (file:line and names matter more than leading directories). */
export function fit(s: string, width: number): string {
  return s.length <= width ? s : '…' + s.slice(s.length - width + 1);
}

/** Right-aligned columns, the last one left-aligned. */
export function table(head: string[], rows: string[][], rightAligned: number): string[] {
  const widths = head.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? '').length)));
  const line = (cells: string[]): string =>
    cells
      .map((cell, c) => (c < rightAligned ? cell.padStart(widths[c]!) : c === cells.length - 1 ? cell : cell.padEnd(widths[c]!)))
      .join('  ')
      .trimEnd();
  return [line(head), ...rows.map(line)].map((l) => '  ' + l);
}

/** What the report, `--calls` and the viewer say of functions whose calls were written only where they mattered. */
export const PENDING_CALLS_WORDS = 'written only with heap work inside or a new depth';

/** What the report and the viewer say of the functions built with `--mw-no-calls`: a lead, their names, what it means. */
export function uncalledWords(list: NonNullable<Summary['uncalledFunctions']>): { lead: string; names: string[]; note: string } {
  const names = [...new Set(list.map((f) => f.name))];
  return { lead: `calls of ${plural(names.length, 'function')} (--mw-no-calls):`, names, note: "heap calls recorded; stack counted in the callers'" };
}

/** The head's lines for functions built with `--mw-no-calls`: their names on up to three lines, then what that means. */
function renderUncalled(list: NonNullable<Summary['uncalledFunctions']>, field: (name: string, value: string) => void): void {
  const { lead, names, note } = uncalledWords(list);
  renderFunctionNames('Left out', lead, names, field);
  field('', `(${note})`);
}

/** The head's lines for summarised leaf call trees: their names, then the most stack one takes. */
function renderSummarised(all: NonNullable<Summary['summarisedFunctions']>, field: (name: string, value: string) => void): void {
  const list = all.filter((f) => f.measured !== true);
  const measured = [...new Set(all.filter((f) => f.measured === true).map((f) => f.name))];
  if (list.length > 0) {
    const names = [...new Set(list.map((f) => f.name))];
    renderFunctionNames('Summarised', `calls of ${plural(names.length, 'function')} (leaf call trees):`, names, field);
    const known = list.map((f) => f.stackBytes).filter((b): b is number => b !== null);
    const most = known.length === 0 ? 'unknown' : `at most ${formatBytes(Math.max(...known))}`;
    field('', `(calls not recorded; peak stack counts the stack they take, ${most})`);
  }
  if (measured.length > 0) {
    renderFunctionNames('Measured', `calls of ${plural(measured.length, 'function')} (no heap work, measured at run time):`, measured, field);
    field('', '(a call recorded when deeper than any since the last heap event: peak stack exact)');
  }
}

/** `lead a, b, …` on up to three lines under `title`. */
function renderFunctionNames(title: string, lead: string, names: readonly string[], field: (name: string, value: string) => void): void {
  const width = REPORT_WIDTH - 13;
  const lines: string[] = [];
  let line = lead;
  for (const [i, name] of names.entries()) {
    const word = i < names.length - 1 ? `${name},` : name;
    const room = lines.length === 2 && i < names.length - 1 ? width - 12 : width; // the last line keeps room for "… N more"
    if (line.length + 1 + word.length <= room) {
      line += ` ${word}`;
      continue;
    }
    if (lines.length === 2) {
      line += ` … ${names.length - i} more`;
      break;
    }
    lines.push(line);
    line = word;
  }
  lines.push(line);
  lines.forEach((l, k) => field(k === 0 ? title : '', l));
}

function at(event: number | null): string {
  return event === null ? '' : ` at event ${formatCount(event)}`;
}

/**
 * The whole report as text: the summary, then each section that was asked for. `source` gives the lines quoted under
 * sites (--peak, --budget, --leak-causes).
 */
export function reportText(r: ReportResult, source: SourceLines | null): string {
  const view: TextView = { top: r.top, source, relativeTo: r.cwd, clock: r.summary.process.pid !== 0 };
  const section = <T>(value: T | null, render: (value: T, view: TextView) => string): string => (value === null ? '' : render(value, view));
  return (
    renderReport(r.summary, r.file) +
    section(r.ramMap ?? null, renderRamMap) +
    section(r.attribution, renderAttribution) +
    section(r.peak, renderPeaks) +
    section(r.linked, renderLinked) +
    section(r.budgets, renderBudgets) +
    section(r.temporaries, renderTemporaries) +
    section(r.calls, (calls, v) => renderCalls(calls, v, r.summary.summarisedFunctions)) +
    section(r.intervals, renderIntervals) +
    section(r.stack, renderStack) +
    section(r.leaks, renderLeaks) +
    section(r.leakCauses, renderLeakCauses)
  );
}

/** The report's head: the run in numbers, threads, top sites; `file` names the trace in the first line. */
export function renderReport(s: Summary, file: string): string {
  const out: string[] = [];
  const field = (name: string, value: string): void => {
    out.push(`${name.padEnd(13)}${value}`);
  };
  const traceInfo = ` (format ${s.format.version}, ${s.format.pointerSize * 8}-bit, pid ${s.process.pid})`;
  field('Trace', fit(file, REPORT_WIDTH - 13 - traceInfo.length) + traceInfo);
  if (s.process.program !== null) field('Program', fit(s.process.program, REPORT_WIDTH - 13));
  if (s.process.rank !== null) field('MPI rank', String(s.process.rank));
  field('Run', s.end.description);
  if (!s.format.interposed) {
    field('Recorded', 'allocations by instrumented code only: malloc was not interposed');
    field('', '(a sanitizer or Valgrind owned it, or a plain host loaded the code)');
  }
  if (s.uncalledFunctions !== undefined) renderUncalled(s.uncalledFunctions, field);
  if (s.summarisedFunctions !== undefined) renderSummarised(s.summarisedFunctions, field);
  if (s.pendingCalls !== undefined) {
    field('Calls', `of ${plural(s.pendingCalls.functions, 'function')} ${PENDING_CALLS_WORDS}`);
    field('', '(others not in the trace: heap, leaks, stack as with every call recorded)');
  }
  field('Threads', formatCount(s.threads.length));
  field('Events', formatCount(s.events));
  field(
    'Allocations',
    `${formatCount(s.allocations)} (${formatBytes(s.bytesAllocated.requested)} requested, ${formatBytes(s.bytesAllocated.usable)} usable)`,
  );
  const extra = [
    s.untrackedFrees > 0 ? `${formatCount(s.untrackedFrees)} untracked` : '',
    s.failedReallocs > 0 ? plural(s.failedReallocs, 'failed realloc') : '',
  ].filter((x) => x !== '');
  field('Frees', formatCount(s.frees) + (extra.length > 0 ? ` (${extra.join(', ')})` : ''));
  field('Peak heap', `${formatBytes(s.peakHeap.requested.bytes)} requested${at(s.peakHeap.requested.event)}`);
  field('', `${formatBytes(s.peakHeap.usable.bytes)} usable${at(s.peakHeap.usable.event)}`);
  field('Peak stack', `${formatBytes(s.peakStack.bytes)}${at(s.peakStack.event)}${s.threads.length > 1 ? ' (all threads)' : ''}`);
  field('Static', `${formatBytes(s.static.bytes)} in ${plural(s.static.objects, 'object')}`);
  field(
    'Leaked',
    `${plural(s.leaked.blocks, 'block')}, ${formatBytes(s.leaked.requestedBytes)} requested ` +
      `(${formatBytes(s.leaked.usableBytes)} usable) ${s.end.how === 'exit' ? 'live at exit' : 'live when the trace ends'}`,
  );
  if (s.lostRecords > 0) field('Lost', `${plural(s.lostRecords, 'record')} the runtime could not write`);
  if (s.problems.list.length > 0) {
    field('Problems', `${plural(s.problems.errors, 'error')}, ${plural(s.problems.warnings, 'warning')} (see stderr)`);
  }

  out.push('', 'Valgrind-style heap summary');
  const v = s.valgrind;
  out.push(`  in use at exit: ${formatCount(v.inUseAtExit.bytes)} bytes in ${formatCount(v.inUseAtExit.blocks)} blocks`);
  out.push(`  total heap usage: ${formatCount(v.allocs)} allocs, ${formatCount(v.frees)} frees, ${formatCount(v.bytesAllocated)} bytes allocated`);

  out.push('', 'Threads');
  out.push(
    ...table(
      ['thread', 'OS tid', 'events', 'max stack', 'ended'],
      s.threads.map((t) => [
        String(t.index),
        t.osTid === null ? '?' : String(t.osTid),
        formatCount(t.events),
        formatBytes(t.maxStackBytes),
        t.ended ? 'yes' : 'no',
      ]),
      4,
    ),
  );

  out.push('', `Top allocation sites by bytes requested (${s.topSites.length} of ${s.siteGroups})`);
  if (s.topSites.length === 0) out.push('  (no allocations)');
  else {
    const rows = s.topSites.map((r) => [
      formatBytes(r.requestedBytes),
      formatCount(r.allocs),
      formatBytes(r.liveRequestedBytes),
      r.label,
    ]);
    // The third column counts every block still live when the run ended: leaks and still-reachable blocks alike.
    const liveHeader = s.end.how === 'exit' ? 'live at exit' : 'live at end';
    out.push(...labelledTable(['requested', 'allocs', liveHeader, 'site'], rows, 3));
  }
  return out.join('\n') + '\n';
}

/**
 * A table whose last column is a label (a site, a function with its file): on one line with its numbers when every
 * label fits in the 80 columns the numbers leave; otherwise each label on a line of its own above its numbers, so no
 * path is cut short (only one longer than a whole line is).
 */
function labelledTable(head: string[], rows: string[][], numeric: number): string[] {
  let used = 2 + 2 * numeric;
  for (let c = 0; c < numeric; c++) used += Math.max(head[c]!.length, ...rows.map((r) => r[c]!.length));
  if (rows.every((r) => r[numeric]!.length <= REPORT_WIDTH - used)) return table(head, rows, numeric);
  const lines = table(head.slice(0, numeric), rows.map((r) => r.slice(0, numeric)), numeric);
  const out = [lines[0]!];
  rows.forEach((r, i) => out.push('  ' + fit(r[numeric]!, REPORT_WIDTH - 2), lines[i + 1]!));
  return out;
}

const COUNT_COLUMNS = ['malloc', 'calloc', 'realloc', 'free', 'aligned', 'strdup'] as const;

/**
 * An attribution table (`cc-memwrap report --by …`), its first `top` rows: net, min and max bytes, the blocks made and
 * ended (allocations, frees) and the realloc calls as the viewer names them (calls into libraries, and online mode's
 * rows, which count calls: each allocator's calls that are not all zero), and the group's label (on a line of its own
 * above each row's numbers when the labels do not all fit beside them).
 */
export function renderAttribution(
  a: Pick<Attribution, 'by' | 'mode'> & { rows: Pick<AttributionRow, 'label' | 'netBytes' | 'minBytes' | 'maxBytes' | 'counts' | 'bytesAllocated' | 'bytesFreed' | 'allocations' | 'frees'>[] },
  view: TextView,
  /** Words after "Heap by <group>" in the heading (the report over several processes says what its rows are). */
  scope = '',
): string {
  const shown = a.rows.slice(0, Math.max(0, view.top));
  const what = a.by === 'site' ? 'allocation site' : a.by;
  const how = a.by === 'function' || a.by === 'file' ? `, ${a.mode}` : '';
  const out = ['', `Heap by ${what}${how}${scope} (${shown.length} of ${a.rows.length}; net = allocated - freed)`];
  if (shown.length === 0) {
    out.push('  (no heap events)');
    return out.join('\n') + '\n';
  }
  // Calls into libraries: what each allocated and freed, beside the net (negative for a finalizer), and the calls of
  // each allocator made from them. Other groups: the blocks made and ended, in the viewer's words.
  const sides = a.by === 'entry' || a.by === 'library-function';
  const blocks = !sides && shown.every((r) => r.allocations !== null && r.frees !== null);
  const counts = blocks ? [] : COUNT_COLUMNS.filter((c) => shown.some((r) => r.counts[c] !== 0));
  const reallocs = blocks && shown.some((r) => r.counts.realloc !== 0);
  const head = [
    ...(sides ? ['allocated', 'freed'] : []),
    'net',
    'min',
    'max',
    ...(blocks ? [COUNT_WORDS.allocations, COUNT_WORDS.frees, ...(reallocs ? [COUNT_WORDS.reallocs] : [])] : counts),
    a.by,
  ];
  const rows = shown.map((r) => [
    ...(sides ? [formatBytes(r.bytesAllocated), formatBytes(r.bytesFreed)] : []),
    formatBytes(r.netBytes),
    formatBytes(r.minBytes),
    formatBytes(r.maxBytes),
    ...(blocks ? [formatCount(r.allocations!), formatCount(r.frees!), ...(reallocs ? [formatCount(r.counts.realloc)] : [])] : counts.map((c) => formatCount(r.counts[c]))),
    r.label,
  ]);
  out.push(...labelledTable(head, rows, head.length - 1));
  return out.join('\n') + '\n';
}

/** `text` in lines of at most 80 columns, each after `indent`, broken between words. */
function wrapped(text: string, indent: string): string[] {
  const out: string[] = [];
  let line = '';
  for (const word of text.split(' ').filter((w) => w !== '')) {
    if (line !== '' && indent.length + line.length + 1 + word.length > REPORT_WIDTH) {
      out.push(indent + line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') out.push(indent + line);
  return out;
}

/** "12.5%". */
function percent(share: number): string {
  return `${(share * 100).toFixed(1)}%`;
}

/** Rows of groups live at a peak: bytes, share, blocks, label; each followed by its source line when `source` is given. */
function peakTable(groups: PeakGroup[], what: string, source: SourceLines | null): string[] {
  if (groups.length === 0) return ['  (no live blocks)'];
  const rows = groups.map((g) => [formatBytes(g.bytes), percent(g.share), formatCount(g.blocks), g.label]);
  const head = ['bytes', 'share', 'blocks', what];
  let used = 2 + 2 * 3;
  for (let c = 0; c < 3; c++) used += Math.max(head[c]!.length, ...rows.map((r) => r[c]!.length));
  for (const r of rows) r[3] = fit(r[3]!, REPORT_WIDTH - used);
  const lines = table(head, rows, 3);
  const out = [lines[0]!];
  groups.forEach((g, i) => {
    out.push(lines[i + 1]!);
    if (source !== null && g.file !== null && g.line !== null) {
      const text = source(g.file, g.line);
      out.push(text === null ? '      (source not found)' : fit(`      | ${text}`, REPORT_WIDTH));
    }
  });
  return out;
}

/**
 * The peak tables of `cc-memwrap report --peak`: for the heap peak and the total peak, the blocks live there by
 * allocation site (each with its source line when `source` gives one: null means "(source not found)") and by
 * function. The snapshots' group lists are printed whole (cut them to --top first); `sites` and `functions` are the
 * full counts when given.
 */
export function renderPeaks(
  p: { heap: PeakSnapshot & { sites?: number; functions?: number }; total: PeakSnapshot & { sites?: number; functions?: number } },
  view: TextView,
): string {
  const { source } = view;
  const out: string[] = [];
  const counts = (shown: number, all: number | undefined): string => `${shown} of ${all ?? shown}`;
  const section = (s: PeakSnapshot & { sites?: number; functions?: number }): void => {
    out.push(
      `  by allocation site (${counts(s.bySite.length, s.sites)})`,
      ...peakTable(s.bySite, 'site', source),
      `  by function (${counts(s.byFunction.length, s.functions)})`,
      ...peakTable(s.byFunction, 'function', null),
    );
  };
  const h = p.heap;
  out.push('', h.event === null ? 'Heap peak: no heap in use' : `Heap peak: ${formatBytes(h.heapBytes)} requested${at(h.event)}, ${plural(h.liveBlocks, 'block')} live`);
  if (h.event !== null) section(h);
  const t = p.total;
  if (t.event === null) out.push('', 'Total peak: no memory in use');
  else {
    out.push(
      '',
      `Total peak: ${formatBytes(t.peakBytes)}${at(t.event)} (heap ${formatBytes(t.heapBytes)}, stack ${formatBytes(t.stackBytes)},`,
      `  static ${formatBytes(t.staticBytes)}), ${plural(t.liveBlocks, 'block')} live`,
    );
    if (t.event === h.event) out.push('  the same event as the heap peak: the same blocks are live');
    else section(t);
  }
  return out.join('\n') + '\n';
}

/** "demo.c:4 make_node → malloc (24 B)". */
function blockText(label: string, bytes: number): string {
  return `${label} (${formatBytes(bytes)})`;
}

/**
 * The frees with a linked set (`cc-memwrap report --linked`), the first `top` in event order: the free's site and the
 * freed block's allocation site, then each linked block's allocation site, marked "orphaned" when that free is where
 * the block is never freed afterwards and this is the first free whose set contains it, "leaked" when an earlier free
 * orphaned it, else "freed later".
 */
export function renderLinked(linked: LinkedSection, view: TextView): string {
  const shown = linked.frees.slice(0, Math.max(0, view.top));
  const out = ['', `Frees with a linked set (${shown.length} of ${linked.count}; ${plural(linked.orphaned, 'block')} orphaned in all)`];
  if (shown.length === 0) {
    out.push('  (no linked sets)');
    return out.join('\n') + '\n';
  }
  for (const f of shown) {
    out.push(fit(`  ${f.kind}${at(f.event)}: ${f.at.label}`, REPORT_WIDTH));
    out.push(fit(`    freed   ${f.freed === null ? '(unknown block)' : blockText(f.freed.allocation.label, f.freed.requestedBytes)}`, REPORT_WIDTH));
    const marks = f.blocks.map((m) => (m.orphaned ? 'orphaned' : m.leaked ? 'leaked' : 'freed later'));
    const texts = f.blocks.map((m) => blockText(m.allocation.label, m.requestedBytes));
    const width = Math.min(Math.max(0, ...texts.map((t) => t.length)), REPORT_WIDTH - 12 - 2 - 11);
    texts.forEach((t, i) => out.push(`    linked  ${fit(t, width).padEnd(width)}  ${marks[i]}`));
    if (f.partial) out.push('    (the runtime cut this set short: more blocks were reachable)');
  }
  return out.join('\n') + '\n';
}

/**
 * Leaks at exit as the runtime classified them, LeakSanitizer's way: direct
 * leaks, indirect leaks, still reachable; per allocation site, and for each
 * block the free that orphaned it when a linked set names one.
 */
export function renderLeaks(leaks: LeaksAtExit, view: TextView): string {
  const out = ['', 'Leaks at exit'];
  if (!leaks.present) {
    out.push('  (not classified: the run did not end through exit, or the trace predates format 1.1)');
    return out.join('\n') + '\n';
  }
  for (const c of leaks.classes) {
    out.push(`  ${leakClassLabel(c.class)}: ${plural(c.count, 'block')}, ${formatBytes(c.bytes)}`);
    // Still-reachable blocks are listed by site too, as Valgrind's --show-reachable=yes does.
    for (const g of c.sites.slice(0, Math.max(0, view.top))) {
      out.push(fit(`    ${formatBytes(g.bytes).padStart(9)}  ${String(g.count).padStart(5)}  ${g.allocation.label}`, REPORT_WIDTH));
      const orphaning = new Set(g.blocks.filter((b) => b.orphanedBy !== null).map((b) => b.orphanedBy!.at.label));
      const lead = '                   orphaned by the free at ';
      for (const label of orphaning) out.push(lead + fit(label, REPORT_WIDTH - lead.length));
    }
  }
  if (leaks.partial) out.push('  (the runtime stopped its scan at its limit: some leaks may really be reachable)');
  if (leaks.unclassified > 0) out.push(`  ${plural(leaks.unclassified, 'block')} (${formatBytes(leaks.unclassifiedBytes)}) live at the end were not classified`);
  return out.join('\n') + '\n';
}

/** "1.2 ms" style time for a number of ns. */
function formatNs(ns: number): string {
  if (ns < 1e3) return `${Math.round(ns)} ns`;
  if (ns < 1e6) return `${(ns / 1e3).toFixed(1)} us`;
  if (ns < 1e9) return `${(ns / 1e6).toFixed(1)} ms`;
  return `${(ns / 1e9).toFixed(2)} s`;
}

/** Bytes, blocks and a label cut to fit: the rows of the budget tables. */
function labelTable(head: string[], rows: string[][], indent: string): string[] {
  const numeric = head.length - 1;
  let used = indent.length + 2 + 2 * numeric;
  for (let c = 0; c < numeric; c++) used += Math.max(head[c]!.length, ...rows.map((r) => r[c]!.length));
  for (const r of rows) r[numeric] = fit(r[numeric]!, Math.max(8, REPORT_WIDTH - used));
  return table(head, rows, numeric).map((l) => indent + l);
}

/**
 * The stack when a budget range began: per thread with frames open, its bytes and its frames, outermost first, the
 * outermost with its depth from the stack base (the C start-up code included), each other with its own size.
 */
function budgetStacks(r: BudgetRange): string[] {
  const out: string[] = [];
  const stacks = r.stacks ?? [];
  if (stacks.length === 0) out.push('      stack at its start: no instrumented frame open');
  for (const s of stacks) {
    const thread = stacks.length > 1 ? ` on thread ${s.thread}` : '';
    out.push(`      stack at its start${thread}: ${formatCount(s.depthBytes)} B in ${plural(s.frames.length, 'frame')}`);
    const rows = pathRows(s.frames);
    rows[0] += ` (${formatCount(s.frames[0]!.depthBytes)} B from the stack base)`;
    out.push(...rows.map((row) => fit(`        ${row}`, REPORT_WIDTH)));
  }
  return out;
}

/**
 * Budget checks (`cc-memwrap report --budget`): per budget, the limit, the largest usage and each range above it (the
 * first `top`), with what was in use when the range began: for a stack budget the frames on the stack; for a heap or
 * static budget the heap blocks live by function and, under each, by allocation site; for a total budget both.
 */
export function renderBudgets(budgets: { source: string | null; checks: BudgetCheck[] }, view: TextView): string {
  const { source, checks } = budgets;
  const { top, source: sourceText } = view;
  const out = ['', `Budgets${source === null ? '' : ` (${fit(source, REPORT_WIDTH - 12)})`}`];
  if (checks.length === 0) out.push('  (no budgets)');
  for (const c of checks) {
    const verdict = c.exceeded ? `EXCEEDED in ${plural(c.rangeCount, 'range')}` : 'ok';
    const counted = c.libraryBlocks === false ? ' (blocks libraries made left out)' : '';
    out.push(`  ${c.kind} ≤ ${formatBytes(c.limitBytes)}${counted}: max ${formatBytes(c.maxBytes)}${at(c.maxEvent)}, ${verdict}`);
    for (const r of c.ranges.slice(0, Math.max(0, top))) {
      const events = r.startEvent === r.endEvent ? `event ${formatCount(r.startEvent)}` : `events ${formatCount(r.startEvent)}-${formatCount(r.endEvent)}`;
      const times = view.clock === false ? '' : ` (${formatNs(r.startTimeNs)} to ${formatNs(r.endTimeNs)})`;
      out.push(`    ${events}${times}: max ${formatBytes(r.maxBytes)}${at(r.maxEvent)}`);
      if (r.stacks !== null) out.push(...budgetStacks(r));
      if (r.liveBlocks === null || c.kind === 'stack') continue;
      out.push(`      heap live at its start: ${formatBytes(r.liveBytes ?? 0)} in ${plural(r.liveBlocks, 'block')}`);
      if (r.functions.length === 0) continue;
      const rows: string[][] = [];
      // The source line under each allocation site (as in --peak).
      const below = new Map<number, string>();
      for (const f of r.functions.slice(0, Math.max(0, top))) {
        rows.push([formatBytes(f.bytes), formatCount(f.blocks), f.label]);
        for (const s of f.sites) {
          rows.push([formatBytes(s.bytes), formatCount(s.blocks), `  ${s.label}`]);
          // A block a library made: what made it, the line of that call, and what to do about it.
          const line = s.madeBy?.call?.line ?? s.line;
          const quoted = sourceText !== null && s.file !== null && line !== null ? sourceText(s.file, line) : undefined;
          const lines = quoted === undefined ? [] : [quoted === null ? '          (source not found)' : fit(`          | ${quoted}`, REPORT_WIDTH)];
          if (s.madeBy) {
            lines.unshift(...wrapped(s.madeBy.label, '          '));
            lines.push(...wrapped(s.madeBy.advice ?? '', '          '));
          }
          if (lines.length > 0) below.set(rows.length - 1, lines.join('\n'));
        }
      }
      const lines = labelTable(['bytes', 'blocks', 'function / site'], rows, '    ');
      out.push(lines[0]!);
      rows.forEach((_, i) => {
        out.push(lines[i + 1]!);
        const text = below.get(i);
        if (text !== undefined) out.push(text);
      });
    }
    if (c.rangeCount > top && top >= 0) out.push(`    … ${plural(c.rangeCount - Math.max(0, top), 'more range')}`);
  }
  return out.join('\n') + '\n';
}

const OWNER_TEXT: Record<Owner, string> = { program: 'program', runtime: 'cc-memwrap', other: 'C library and start-up' };

/** A firmware's RAM map: its RAM, the static data by owner, the heap's and stack's peaks against the linker script's
 *  region and reservation, the margin, the first budget crossed, flash, the largest static objects. */
export function renderRamMap(m: RamMap, view: TextView): string {
  const hex = (n: number): string => `0x${n.toString(16)}`;
  // A row: what, bytes, and its details, each further line under the first.
  const row = (what: string, bytes: number, ...details: string[]): string[] =>
    details.map((d, i) => fit(i === 0 ? `  ${what.padEnd(11)}${formatBytes(bytes).padStart(10)}  ${d}` : `${' '.repeat(15)}${d}`, REPORT_WIDTH));
  const s = m.static;
  const heap = m.heap.region;
  const out = ['', fit(`RAM map of ${m.program === null ? 'the firmware' : baseName(m.program)}: ${formatBytes(m.ram.size)} at ${hex(m.ram.start)} (${m.ram.source})`, REPORT_WIDTH)];
  out.push(...row('static', s.data + s.bss, `.data ${formatBytes(s.data)} + .bss ${formatBytes(s.bss)}`, (['program', 'runtime', 'other'] as Owner[]).map((o) => `${OWNER_TEXT[o]} ${formatBytes(s.byOwner[o])}`).join(', ')));
  out.push(...row('heap peak', m.heap.peakUsable, `usable (${formatBytes(m.heap.peakRequested)} requested)${heap === null ? '; the script gives no heap region' : `, of ${formatBytes(heap.end - heap.start)}`}`, ...(heap === null ? [] : [`(${heap.source})`])));
  out.push(...row('stack peak', m.stack.peak, m.stack.reserved === null ? 'the script reserves no stack' : `of ${formatBytes(m.stack.reserved)} reserved (${m.stack.source})`));
  out.push(...row('margin', m.margin, m.margin < 0 ? 'short: the heap and the stack met' : 'RAM left at those peaks'));
  out.push(...row('flash', m.flash.used, `used${m.flash.size === null ? '' : ` of ${formatBytes(m.flash.size)}`}; cc-memwrap's code and tables ${formatBytes(m.runtime.flash)}`));
  const c = m.firstCrossed;
  if (c === null) out.push('  No budget crossed.');
  else {
    const where = c.function === null ? 'no known line' : `${c.function}${c.file === null ? '' : ` (${baseName(c.file)}:${c.line})`}`;
    out.push(fit(`  First crossed: the ${c.kind} budget, ${formatBytesFine(c.limitBytes)}, at event ${formatCount(c.event)} (${formatBytesFine(c.bytes)})`, REPORT_WIDTH));
    out.push(fit(`    by ${where}`, REPORT_WIDTH));
  }
  const shown = s.objects.slice(0, Math.max(0, view.top));
  if (shown.length === 0) return out.join('\n') + '\n';
  out.push(`  Largest static objects (${shown.length} of ${s.objectCount})`);
  out.push(...labelTable(['bytes', 'section', 'owner', 'object'], shown.map((o) => [formatBytes(o.size), o.section, OWNER_TEXT[o.owner], o.name]), '    '));
  return out.join('\n') + '\n';
}

/** Temporaries (`cc-memwrap report --temporary`): the first `top` sites. */
export function renderTemporaries(t: Temporaries, view: TextView): string {
  const shown = t.sites.slice(0, Math.max(0, view.top));
  const out = [
    '',
    `Temporaries: blocks freed within ${plural(t.within, 'event')} of their allocation (${shown.length} of ${plural(t.sites.length, 'site')})`,
    `  ${plural(t.blocks, 'block')} of ${formatCount(t.allocations)}, ${formatBytes(t.bytes)}`,
  ];
  if (shown.length === 0) out.push('  (no temporaries)');
  else {
    const rows = shown.map((s) => [formatCount(s.temporaries), formatBytes(s.bytes), percent(s.share), s.label]);
    out.push(...labelTable(['temps', 'bytes', 'of allocs', 'site'], rows, ''));
  }
  return out.join('\n') + '\n';
}

/** Per-call heap (`cc-memwrap report --calls F`): totals, then the first `top` invocations in order of entry; for a
 *  function whose calls were summarised or measured, which of its calls the trace holds. */
export function renderCalls(p: PerCall, view: TextView, summarised: Summary['summarisedFunctions'] = undefined): string {
  const shown = p.invocations.slice(0, Math.max(0, view.top));
  const t = p.totals;
  const out = [
    '',
    fit(`Heap per call of ${p.function} (${shown.length} of ${plural(t.calls, 'call')}; net = allocated - freed)`, REPORT_WIDTH),
  ];
  const built = summarised?.find((f) => f.name === p.function);
  if (built?.measured === true) out.push(fit('  measured (no heap work in its call tree): only its deepest calls are recorded', REPORT_WIDTH));
  else if (built !== undefined) out.push(fit('  summarised (a leaf call tree): its calls are not recorded, and do no heap work', REPORT_WIDTH));
  else if (p.pending) out.push(fit(`  calls ${PENDING_CALLS_WORDS} (others not counted)`, REPORT_WIDTH));
  if (t.calls === 0) {
    out.push('  (no calls)');
    return out.join('\n') + '\n';
  }
  out.push(`  callees included; outermost calls: ${formatBytes(t.bytesAllocated)} allocated, ${formatBytes(t.bytesFreed)} freed, net ${formatBytes(t.netBytes)}`);
  out.push(`  largest peak: ${formatBytes(t.maxPeakBytes)} (call #${(t.maxPeakCall ?? 0) + 1})`);
  const rows = shown.map((c, i) => [
    `#${i + 1}`,
    formatCount(c.enterEvent),
    String(c.thread),
    String(c.recursion),
    formatBytes(c.netBytes),
    formatBytes(c.peakBytes),
    formatBytes(c.bytesAllocated),
    formatBytes(c.bytesFreed),
    c.endEvent === null ? 'open at end' : `${formatCount(c.endEvent)}`,
  ]);
  out.push(...table(['call', 'entry', 'thread', 'nest', 'net', 'peak', 'allocated', 'freed', 'end'], rows, 8));
  return out.join('\n') + '\n';
}

/** The interval table (`cc-memwrap report --interval`): per interval its start, the values at its end, its max heap. */
export function renderIntervals(s: IntervalSeries, _view: TextView): string {
  const what = s.spec.unit === 'events' ? plural(s.spec.every, 'event') : formatNs(s.spec.every);
  const out = ['', `Memory per interval of ${what} (${plural(s.count, 'interval')}; values at the end of each)`];
  if (s.count === 0) {
    out.push('  (no events)');
    return out.join('\n') + '\n';
  }
  const rows: string[][] = [];
  for (let k = 0; k < s.count; k++) {
    const empty = s.endEvent[k]! < s.startEvent[k]!;
    rows.push([
      empty ? '-' : formatCount(s.startEvent[k]!),
      formatNs(s.startTime[k]!),
      formatBytes(s.heapRequested[k]!),
      formatBytes(s.maxHeapRequested[k]!),
      formatBytes(s.stack[k]!),
      formatBytes(s.static[k]!),
    ]);
  }
  out.push(...table(['start event', 'start time', 'heap', 'max heap', 'stack', 'static'], rows, 6));
  return out.join('\n') + '\n';
}
