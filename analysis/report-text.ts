// Renders a Summary as the aligned plain-text report of `cc-memwrap report` (fits 80 columns).
import type { Attribution } from './attribution.js';
import type { Summary } from './summary.js';
import { formatBytes, formatCount, plural } from './units.js';

export const REPORT_WIDTH = 80;

/** Cuts `s` to `width` columns, keeping its end (file:line and names matter more than leading directories). */
function fit(s: string, width: number): string {
  return s.length <= width ? s : '…' + s.slice(s.length - width + 1);
}

/** Right-aligned columns, the last one left-aligned. */
function table(head: string[], rows: string[][], rightAligned: number): string[] {
  const widths = head.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? '').length)));
  const line = (cells: string[]): string =>
    cells
      .map((cell, c) => (c < rightAligned ? cell.padStart(widths[c]!) : c === cells.length - 1 ? cell : cell.padEnd(widths[c]!)))
      .join('  ')
      .trimEnd();
  return [line(head), ...rows.map(line)].map((l) => '  ' + l);
}

function at(event: number | null): string {
  return event === null ? '' : ` at event ${formatCount(event)}`;
}

/** The report text; `file` names the trace in the first line. */
export function renderReport(s: Summary, file: string): string {
  const out: string[] = [];
  const field = (name: string, value: string): void => {
    out.push(`${name.padEnd(13)}${value}`);
  };
  const traceInfo = ` (format ${s.format.version}, ${s.format.pointerSize * 8}-bit, pid ${s.process.pid})`;
  field('Trace', fit(file, REPORT_WIDTH - 13 - traceInfo.length) + traceInfo);
  if (s.process.program !== null) field('Program', fit(s.process.program, REPORT_WIDTH - 13));
  field('Run', s.end.description);
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
    const used = Math.max(...rows.map((r) => r[0]!.length), 9) + Math.max(...rows.map((r) => r[1]!.length), 6) + Math.max(...rows.map((r) => r[2]!.length), 7);
    const labelWidth = REPORT_WIDTH - 2 - used - 6;
    for (const r of rows) r[3] = fit(r[3]!, labelWidth);
    out.push(...table(['requested', 'allocs', 'leaked', 'site'], rows, 3));
  }
  return out.join('\n') + '\n';
}

const COUNT_COLUMNS = ['malloc', 'calloc', 'realloc', 'free', 'aligned', 'strdup'] as const;

/**
 * An attribution table (`cc-memwrap report --by …`), its first `top` rows: net, min and max bytes, the allocator
 * counts that are not all zero, and the group's label (cut to fit 80 columns, or, when the numbers leave too little
 * room for the labels, on a line of its own above each row's numbers).
 */
export function renderAttribution(a: Attribution, top: number): string {
  const shown = a.rows.slice(0, Math.max(0, top));
  const what = a.by === 'site' ? 'allocation site' : a.by;
  const how = a.by === 'function' || a.by === 'file' ? `, ${a.mode}` : '';
  const out = ['', `Heap by ${what}${how} (${shown.length} of ${a.rows.length}; net = allocated - freed)`];
  if (shown.length === 0) {
    out.push('  (no heap events)');
    return out.join('\n') + '\n';
  }
  const counts = COUNT_COLUMNS.filter((c) => shown.some((r) => r.counts[c] !== 0));
  const head = ['net', 'min', 'max', ...counts, a.by];
  const rows = shown.map((r) => [
    formatBytes(r.netBytes),
    formatBytes(r.minBytes),
    formatBytes(r.maxBytes),
    ...counts.map((c) => formatCount(r.counts[c])),
    r.label,
  ]);
  const numeric = head.length - 1;
  let used = 2 + 2 * numeric;
  for (let c = 0; c < numeric; c++) used += Math.max(head[c]!.length, ...rows.map((r) => r[c]!.length));
  const labelWidth = REPORT_WIDTH - used;
  if (rows.every((r) => r[numeric]!.length <= labelWidth) || labelWidth >= 32) {
    for (const r of rows) r[numeric] = fit(r[numeric]!, labelWidth);
    out.push(...table(head, rows, numeric));
  } else {
    // Too many columns: each row's label on its own line above its numbers.
    const lines = table(head.slice(0, numeric), rows.map((r) => r.slice(0, numeric)), numeric);
    out.push(lines[0]!);
    rows.forEach((r, i) => out.push('  ' + fit(r[numeric]!, REPORT_WIDTH - 2), lines[i + 1]!));
  }
  return out.join('\n') + '\n';
}
