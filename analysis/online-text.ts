// `cc-memwrap report` of an online-mode file (analysis/online.ts) as text and JSON: the run's heap totals, what the
// mode left out, and the --by function, library and thread tables in the same shape as a trace's report.
import type { Attribution } from './attribution.js';
import { ONLINE_BY, ONLINE_LEFT_OUT, onlineAttribution, type OnlineBy, type OnlineTables } from './online.js';
import { fit, renderAttribution, REPORT_WIDTH } from './report-text.js';
import { formatBytes, formatCount, plural } from './units.js';

/** JSON schema of the online report (analysis/README.md). */
export const ONLINE_REPORT_SCHEMA = 'cc-memwrap.online-report/1';

export interface OnlineReport {
  file: string;
  top: number;
  tables: OnlineTables;
  /** The tables asked for (--by), or all three. */
  attributions: Attribution[];
}

/** The report of an online file: the table of `by`, or all three. */
export function onlineReport(file: string, tables: OnlineTables, by: OnlineBy | null, top: number): OnlineReport {
  return { file, top, tables, attributions: (by === null ? ONLINE_BY : [by]).map((b) => onlineAttribution(tables, b)) };
}

/** What the run was and whether it ended normally, in words. */
function runLine(t: OnlineTables): string {
  if (t.end.how === 'exit' && t.end.complete) return t.end.description;
  const how = t.end.how === 'unknown' ? 'killed (e.g. SIGKILL) or crashed' : t.end.description;
  return `did not end normally: ${how}; the tables hold every heap call made until then`;
}

export function onlineText(r: OnlineReport): string {
  const t = r.tables;
  const out: string[] = [];
  const field = (name: string, value: string): void => {
    out.push(`${name.padEnd(13)}${value}`);
  };
  const info = ` (online tables ${t.format.version}, ${t.format.pointerSize * 8}-bit, pid ${t.process.pid})`;
  field('Tables', fit(r.file, REPORT_WIDTH - 13 - info.length) + info);
  if (t.process.program !== null) field('Program', fit(t.process.program, REPORT_WIDTH - 13));
  field('Run', runLine(t));
  field('Recorded', 'heap tables only (MEMWRAP_MODE=online), no events; left out:');
  for (const what of ONLINE_LEFT_OUT) field('', `- ${what}`);
  if (!t.format.interposed) field('', '- allocations inside libc and uninstrumented code (malloc not interposed)');
  if (t.incomplete) field('Incomplete', 'the runtime could not store every row or name (the file could not grow)');
  const T = t.totals;
  field('Threads', `${formatCount(t.threads.length)} with heap calls`);
  field('Allocations', `${formatCount(T.allocations)} (${formatBytes(T.bytesAllocated)} requested)`);
  const extra = [T.untrackedFrees > 0 ? `${formatCount(T.untrackedFrees)} untracked` : '', T.failedReallocs > 0 ? plural(T.failedReallocs, 'failed realloc') : ''].filter((x) => x !== '');
  field('Frees', `${formatCount(T.frees)} (${formatBytes(T.bytesFreed)})` + (extra.length > 0 ? `, ${extra.join(', ')}` : ''));
  field('Peak heap', `${formatBytes(T.peakHeap)} requested`);
  const live = T.allocations - T.frees;
  field('Live at end', `${plural(live, 'block')}, ${formatBytes(T.liveBytes)} requested ${t.end.how === 'exit' ? 'at exit' : 'when the run stopped'}`);
  if (t.problems.length > 0) field('Problems', `${plural(t.problems.length, 'problem')} in the file (see stderr)`);
  const view = { top: r.top, source: null, relativeTo: t.process.cwd };
  return out.join('\n') + '\n' + r.attributions.map((a) => renderAttribution(a, view)).join('');
}

export function onlineJson(r: OnlineReport): object {
  const t = r.tables;
  const table = (a: Attribution): object => ({ by: a.by, mode: a.mode, groups: a.rows.length, rows: a.rows.slice(0, Math.max(0, r.top)) });
  return {
    schema: ONLINE_REPORT_SCHEMA,
    file: r.file,
    online: true,
    leftOut: [...ONLINE_LEFT_OUT],
    format: t.format,
    process: t.process,
    end: { ...t.end, normal: t.end.how === 'exit' && t.end.complete },
    incomplete: t.incomplete,
    totals: { ...t.totals, liveBlocks: t.totals.allocations - t.totals.frees },
    threads: t.threads,
    problems: t.problems,
    ...(r.attributions.length === 1 ? { attribution: table(r.attributions[0]!) } : { tables: Object.fromEntries(r.attributions.map((a) => [a.by, table(a)])) }),
  };
}
