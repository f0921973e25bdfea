// Renders a Comparison (compare.ts) as `cc-memwrap report A --compare B` prints it, in 80 columns: the two runs, the
// totals side by side with B - A, then sites and functions with the largest change first (each name on a line of its
// own above its numbers), then the budgets of either run.
import { COMPARE_SCHEMA, type CompareBudget, type Comparison, type CompareRow, type HeapCounts } from './compare.js';
import { fit, REPORT_WIDTH, table } from './report-text.js';
import { formatBytes, formatCount } from './units.js';

/** Bytes exactly below 1 MiB ("16,640 B", the numbers a lesson derives by hand), else as formatBytes. */
export function exactBytes(n: number): string {
  return Math.abs(n) < 1024 * 1024 ? `${formatCount(n)} B` : formatBytes(n);
}

/** A change with its sign: "+96 B", "-989", "0". */
export function signed(n: number, format: (n: number) => string): string {
  return n > 0 ? `+${format(n)}` : format(n);
}

/** "1,000 → 11", with "-" on a side that does not have the row. */
export function fromTo(a: HeapCounts | null, b: HeapCounts | null, value: (c: HeapCounts) => number, format: (n: number) => string): string {
  return `${a === null ? '-' : format(value(a))} → ${b === null ? '-' : format(value(b))}`;
}

/** What a row's label says beside its name: the side it is missing from, or the line it had in A when it moved. */
export function note(r: CompareRow): string {
  if (r.a === null) return ' (only in B)';
  if (r.b === null) return ' (only in A)';
  if (r.lineA !== null && r.lineB !== null && r.lineA !== r.lineB) return ` (line ${r.lineA} in A)`;
  return '';
}

function rowsTable(title: string, rows: CompareRow[], top: number): string[] {
  const shown = rows.slice(0, Math.max(0, top));
  const unchanged = rows.filter((r) => r.change.allocs === 0 && r.change.requestedBytes === 0 && r.change.liveRequestedBytes === 0 && r.a !== null && r.b !== null).length;
  const out = ['', `${title} (${shown.length} of ${rows.length}${unchanged > 0 ? `, ${unchanged} unchanged` : ''})`];
  if (rows.length === 0) out.push('  (no allocations in either run)');
  if (shown.length === 0) return out;
  const cells = shown.map((r) => [
    fromTo(r.a, r.b, (c) => c.allocs, formatCount),
    signed(r.change.allocs, formatCount),
    fromTo(r.a, r.b, (c) => c.requestedBytes, exactBytes),
    signed(r.change.requestedBytes, exactBytes),
    fromTo(r.a, r.b, (c) => c.liveRequestedBytes, exactBytes),
    signed(r.change.liveRequestedBytes, exactBytes),
  ]);
  const lines = table(['allocs', 'B - A', 'requested', 'B - A', 'live at end', 'B - A'], cells, 6);
  out.push('  ' + lines[0]!);
  shown.forEach((r, i) => out.push(fit(`  ${r.label}${note(r)}`, REPORT_WIDTH), '  ' + lines[i + 1]!));
  return out;
}

/** The comparison as text; `top` rows per table. */
export function compareText(c: Comparison, top: number): string {
  const name = (run: Comparison['a']): string => fit(run.file, REPORT_WIDTH - 15);
  const out = [`Compare      A ${name(c.a)}`, `  with       B ${name(c.b)}`, 'Every change is B - A.', ''];
  const rows = c.totals.map((t) => {
    const format = t.unit === 'bytes' ? exactBytes : formatCount;
    return [t.name, format(t.a), format(t.b), signed(t.change, format)];
  });
  // The name column is left-aligned: the numbers after it right-aligned by hand.
  const width = Math.max(...rows.map((r) => r[0]!.length));
  out.push('Totals', ...table([''.padEnd(width), 'A', 'B', 'B - A'], rows.map((r) => [r[0]!.padEnd(width), ...r.slice(1)]), 4));
  out.push(...rowsTable('Allocation sites, largest change first', c.sites, top));
  out.push(...rowsTable('Functions (heap allocated in them), largest change first', c.functions, top));
  if (c.budgets !== null) {
    const b = c.budgets;
    // A memwrap.json under the run's working directory is named from there, as the user would type it.
    const dir = c.a.cwd === null ? null : c.a.cwd.replace(/\/?$/, '/');
    const named = (s: string | null): string => (s === null ? 'none' : dir !== null && s.startsWith(dir) ? s.slice(dir.length) : s);
    const src = b.sourceA === b.sourceB ? named(b.sourceA) : `A: ${named(b.sourceA)}; B: ${named(b.sourceB)}`;
    out.push('', fit(`Budgets (${src})`, REPORT_WIDTH));
    for (const k of b.checks) out.push(`  ${budgetLine(k)}`);
  }
  return out.join('\n') + '\n';
}

/** "heap ≤ 1,024 B: max 2,048 B → 0 B (-2,048 B), EXCEEDED → ok". */
export function budgetLine(k: CompareBudget): string {
  const limits = k.a?.limitBytes === k.b?.limitBytes ? exactBytes(k.a!.limitBytes) : `${k.a === null ? '-' : exactBytes(k.a.limitBytes)} (A) / ${k.b === null ? '-' : exactBytes(k.b.limitBytes)} (B)`;
  const max = (side: CompareBudget['a']): string => (side === null ? '-' : exactBytes(side.maxBytes));
  const verdict = (side: CompareBudget['a']): string => (side === null ? 'not checked' : side.exceeded ? 'EXCEEDED' : 'ok');
  const change = k.a !== null && k.b !== null ? ` (${signed(k.b.maxBytes - k.a.maxBytes, exactBytes)})` : '';
  return `${k.kind} ≤ ${limits}: max ${max(k.a)} → ${max(k.b)}${change}, ${verdict(k.a)} → ${verdict(k.b)}`;
}

/** `report --compare --json`: the comparison with each list cut to `top`, its full length beside it. */
export function compareJson(c: Comparison, top: number): object {
  const n = Math.max(0, top);
  return {
    schema: COMPARE_SCHEMA,
    a: c.a,
    b: c.b,
    totals: c.totals,
    siteCount: c.sites.length,
    sites: c.sites.slice(0, n),
    functionCount: c.functions.length,
    functions: c.functions.slice(0, n),
    ...(c.budgets === null ? {} : { budgets: c.budgets }),
  };
}
