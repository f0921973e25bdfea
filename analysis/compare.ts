// Two runs compared (`cc-memwrap report A --compare B`, the viewer's compare page): each run's report as
// computeReport makes it, then B - A per total, per allocation site, per function and per budget. The two builds differ,
// so sites are matched by what they are, not by their ids: file, function and allocator, in line order (a define or an
// edit that adds lines moves a site without changing it; see matchSites). A site found in one run only is a row of its
// own with nothing on the other side.
import type { Model } from './model.js';
import { computeReport, summaryRequest, type ReportInputs, type ReportResult } from './report.js';
import { modelSource } from './model-fold.js';
import type { FoldSource } from './event-fold.js';
import type { SiteRow } from './summary.js';
import type { BudgetCheck, BudgetKind } from './budgets.js';

export const COMPARE_SCHEMA = 'cc-memwrap.compare/1';

/** One run's heap at a site or in a function. */
export interface HeapCounts {
  allocs: number;
  requestedBytes: number;
  /** Blocks still live at the end of the run, and their requested bytes. */
  liveBlocks: number;
  liveRequestedBytes: number;
}

/** A site or function in A, in B, or in both; `change` is B - A (a missing side counts as zero). */
export interface CompareRow {
  /** B's label where B has the row, else A's. */
  label: string;
  function: string | null;
  /** The line in each run (sites; null for functions and for allocations seen only by the interposed allocator). */
  lineA: number | null;
  lineB: number | null;
  a: HeapCounts | null;
  b: HeapCounts | null;
  change: HeapCounts;
}

export interface CompareTotal {
  name: string;
  unit: 'bytes' | 'count';
  a: number;
  b: number;
  change: number;
}

/** A budget checked on either run (null on a side where it was not checked). */
export interface CompareBudget {
  kind: BudgetKind;
  a: Pick<BudgetCheck, 'limitBytes' | 'maxBytes' | 'exceeded'> | null;
  b: Pick<BudgetCheck, 'limitBytes' | 'maxBytes' | 'exceeded'> | null;
}

export interface Comparison {
  a: { file: string; pid: number; cwd: string | null };
  b: { file: string; pid: number; cwd: string | null };
  totals: CompareTotal[];
  /** Largest change first. */
  sites: CompareRow[];
  functions: CompareRow[];
  /** Null when neither run had budgets. */
  budgets: { sourceA: string | null; sourceB: string | null; checks: CompareBudget[] } | null;
}

/** One run to compare: its model, the name it is shown by, and its budgets (the inputs of computeReport). */
export interface CompareRun {
  model: Model;
  file: string;
  inputs: ReportInputs;
}

/** Compares two runs: B - A. */
export function compareRuns(a: CompareRun, b: CompareRun): Comparison {
  return compareReports(compareReport(a), compareReport(b));
}

/**
 * The report of a run as compareReports needs it: every allocation site listed, no optional section, from its model
 * or from any fold source (a streamed trace). What it keeps grows with sites and budget ranges, not events.
 */
export function compareReport(run: CompareRun | (Omit<CompareRun, 'model'> & { source: FoldSource })): ReportResult {
  const request = summaryRequest(Number.MAX_SAFE_INTEGER);
  const source = 'source' in run ? run.source : modelSource(run.model);
  return computeReport(source, run.file, request, { budgets: run.inputs.budgets, frameSizes: null });
}

/** Compares two reports, each computed with every site listed (top at least its site count). */
export function compareReports(a: ReportResult, b: ReportResult): Comparison {
  const run = (r: ReportResult): Comparison['a'] => ({ file: r.file, pid: r.summary.process.pid, cwd: r.cwd });
  return {
    a: run(a),
    b: run(b),
    totals: totals(a, b),
    sites: sortByChange(matchSites(a.summary.topSites, b.summary.topSites)),
    functions: sortByChange(byFunction(a.summary.topSites, b.summary.topSites)),
    budgets: budgets(a, b),
  };
}

function totals(a: ReportResult, b: ReportResult): CompareTotal[] {
  const rows: [string, CompareTotal['unit'], (r: ReportResult) => number][] = [
    ['events', 'count', (r) => r.summary.events],
    ['allocations', 'count', (r) => r.summary.allocations],
    ['frees', 'count', (r) => r.summary.frees],
    ['heap requested', 'bytes', (r) => r.summary.bytesAllocated.requested],
    ['heap usable', 'bytes', (r) => r.summary.bytesAllocated.usable],
    ['peak heap', 'bytes', (r) => r.summary.peakHeap.requested.bytes],
    ['peak stack', 'bytes', (r) => r.summary.peakStack.bytes],
    ['static', 'bytes', (r) => r.summary.static.bytes],
    ['leaked blocks', 'count', (r) => r.summary.leaked.blocks],
    ['leaked', 'bytes', (r) => r.summary.leaked.requestedBytes],
  ];
  return rows.map(([name, unit, value]) => ({ name, unit, a: value(a), b: value(b), change: value(b) - value(a) }));
}

function countsOf(r: SiteRow): HeapCounts {
  return { allocs: r.allocs, requestedBytes: r.requestedBytes, liveBlocks: r.liveBlocks, liveRequestedBytes: r.liveRequestedBytes };
}

const ZERO: HeapCounts = { allocs: 0, requestedBytes: 0, liveBlocks: 0, liveRequestedBytes: 0 };

function row(label: string, fn: string | null, lines: [number | null, number | null], a: HeapCounts | null, b: HeapCounts | null): CompareRow {
  const x = a ?? ZERO;
  const y = b ?? ZERO;
  return {
    label,
    function: fn,
    lineA: lines[0],
    lineB: lines[1],
    a,
    b,
    change: {
      allocs: y.allocs - x.allocs,
      requestedBytes: y.requestedBytes - x.requestedBytes,
      liveBlocks: y.liveBlocks - x.liveBlocks,
      liveRequestedBytes: y.liveRequestedBytes - x.liveRequestedBytes,
    },
  };
}

/** What a site is apart from its line: file, function and allocator (or, seen only by the interposed allocator, its label). */
function identity(r: SiteRow): string {
  return r.kind === 'interposed' ? `interposed\0${r.label}` : `${r.file ?? '?'}\0${r.function ?? ''}\0${r.allocator ?? ''}`;
}

/**
 * Pairs the sites of A and B. Sites equal in file, function and allocator are paired in line order when both runs have
 * as many of them (lines that moved keep their order); when the counts differ, those on the same line are paired and
 * the rest, if then as many, in line order; any left stand alone.
 */
function matchSites(as: SiteRow[], bs: SiteRow[]): CompareRow[] {
  const out: CompareRow[] = [];
  const pair = (a: SiteRow, b: SiteRow): void => {
    out.push(row(b.label, b.function, [lineOf(a), lineOf(b)], countsOf(a), countsOf(b)));
  };
  const groupsB = groupByIdentity(bs);
  for (const [key, listA] of groupByIdentity(as)) {
    let restA = listA;
    let restB = groupsB.get(key) ?? [];
    groupsB.delete(key);
    if (restA.length !== restB.length) {
      const sameLine = (a: SiteRow): SiteRow | undefined => restB.find((b) => b.line === a.line);
      const paired = new Set<SiteRow>();
      for (const a of restA) {
        const b = sameLine(a);
        if (b !== undefined) {
          pair(a, b);
          paired.add(a).add(b);
        }
      }
      restA = restA.filter((a) => !paired.has(a));
      restB = restB.filter((b) => !paired.has(b));
    }
    if (restA.length === restB.length) restA.forEach((a, i) => pair(a, restB[i]!));
    else {
      for (const a of restA) out.push(row(a.label, a.function, [lineOf(a), null], countsOf(a), null));
      for (const b of restB) out.push(row(b.label, b.function, [null, lineOf(b)], null, countsOf(b)));
    }
  }
  for (const listB of groupsB.values()) for (const b of listB) out.push(row(b.label, b.function, [null, lineOf(b)], null, countsOf(b)));
  return out;
}

/** A site's line; none for allocations seen only by the interposed allocator (grouped by function, not by line). */
function lineOf(r: SiteRow): number | null {
  return r.kind === 'interposed' ? null : r.line;
}

/** Sites by identity(), each list in line order. */
function groupByIdentity(rows: SiteRow[]): Map<string, SiteRow[]> {
  const m = new Map<string, SiteRow[]>();
  for (const s of [...rows].sort((x, y) => (x.line ?? 0) - (y.line ?? 0))) {
    const list = m.get(identity(s)) ?? [];
    list.push(s);
    m.set(identity(s), list);
  }
  return m;
}

/** The sites' heap added up per function (the function containing the allocation, or the one charged for it). */
function byFunction(as: SiteRow[], bs: SiteRow[]): CompareRow[] {
  const sum = (rows: SiteRow[]): Map<string, HeapCounts> => {
    const m = new Map<string, HeapCounts>();
    for (const r of rows) {
      const name = r.function ?? '?';
      const c = m.get(name) ?? { ...ZERO };
      c.allocs += r.allocs;
      c.requestedBytes += r.requestedBytes;
      c.liveBlocks += r.liveBlocks;
      c.liveRequestedBytes += r.liveRequestedBytes;
      m.set(name, c);
    }
    return m;
  };
  const fa = sum(as);
  const fb = sum(bs);
  const names = [...new Set([...fa.keys(), ...fb.keys()])];
  return names.map((n) => row(n, n, [null, null], fa.get(n) ?? null, fb.get(n) ?? null));
}

/** Largest change in requested bytes first, then in allocations, then in live bytes; then by label. */
function sortByChange(rows: CompareRow[]): CompareRow[] {
  const size = (r: CompareRow): number[] => [Math.abs(r.change.requestedBytes), Math.abs(r.change.allocs), Math.abs(r.change.liveRequestedBytes)];
  return rows.sort((x, y) => {
    const sx = size(x);
    const sy = size(y);
    for (let i = 0; i < sx.length; i++) if (sx[i] !== sy[i]) return sy[i]! - sx[i]!;
    return x.label < y.label ? -1 : x.label > y.label ? 1 : 0;
  });
}

function budgets(a: ReportResult, b: ReportResult): Comparison['budgets'] {
  if (a.budgets === null && b.budgets === null) return null;
  const pick = (c: BudgetCheck | undefined): CompareBudget['a'] => (c === undefined ? null : { limitBytes: c.limitBytes, maxBytes: c.maxBytes, exceeded: c.exceeded });
  const kinds = [...new Set([...(a.budgets?.checks ?? []), ...(b.budgets?.checks ?? [])].map((c) => c.kind))];
  return {
    sourceA: a.budgets?.source ?? null,
    sourceB: b.budgets?.source ?? null,
    checks: kinds.map((kind) => ({
      kind,
      a: pick(a.budgets?.checks.find((c) => c.kind === kind)),
      b: pick(b.budgets?.checks.find((c) => c.kind === kind)),
    })),
  };
}
