// The report over several processes as text: one row per process and the totals, then each `--by` table summed over
// the processes and, below it, its groups process by process.
import type { ProcessesReport } from './processes.js';
import { renderAttribution, table, type TextView } from './report-text.js';
import { formatBytes, formatCount } from './units.js';

export function renderProcesses(p: ProcessesReport, view: TextView): string {
  const t = p.totals;
  const out = [`Traces       ${formatCount(p.processes.length)}, one per process`, '', 'Processes'];
  // A rank column when any process has one (MPI launchers give it; EXT/RANK).
  const ranked = p.processes.some((r) => r.rank !== null);
  const head = [...(ranked ? ['rank'] : []), 'pid', 'ppid', 'events', 'allocations', 'frees', 'allocated', 'peak heap', 'leaked', 'end'];
  const rows = p.processes.map((r) => [
    ...(ranked ? [r.rank === null ? '-' : String(r.rank)] : []),
    String(r.pid),
    String(r.ppid),
    formatCount(r.events),
    formatCount(r.allocations),
    formatCount(r.frees),
    formatBytes(r.bytesAllocated),
    formatBytes(r.peakHeap),
    formatBytes(r.leakedBytes),
    r.end,
  ]);
  const total = [...(ranked ? ['total'] : []), ranked ? '' : 'total', '', formatCount(t.events), formatCount(t.allocations), formatCount(t.frees), formatBytes(t.bytesAllocated), formatBytes(t.largestPeakHeap), formatBytes(t.leakedBytes), ''];
  out.push(...table(head, [...rows, total], head.length - 1), '  (the total of peak heap is the largest: processes peak at different times)');
  for (const r of p.processes) {
    if (r.errors + r.warnings > 0) out.push(`  pid ${r.pid}: ${formatCount(r.errors)} errors, ${formatCount(r.warnings)} warnings in ${r.file} (see stderr)`);
  }
  let text = out.join('\n') + '\n';
  if (p.by !== null) {
    const n = p.processes.length;
    text += renderAttribution({ ...p.by, rows: p.by.groups }, view, `, ${formatCount(n)} processes`);
    text += '  (summed over the processes; min and max: the lowest and highest net in any one)\n';
    const perProcess = p.by.groups.slice(0, Math.max(0, view.top)).flatMap((g) => g.perProcess.map(({ pid, rank, row }) => ({ ...row, label: `${g.label} (${rank === null ? '' : `rank ${rank}, `}pid ${pid})` })));
    text += renderAttribution({ ...p.by, rows: perProcess }, { ...view, top: perProcess.length }, ' and process');
  }
  return text;
}
