// `cc-memwrap report` over the traces of several processes (MPI ranks, a parent and the children it forked, the
// programs of a test suite): one row per process and their totals, and `--by` tables added up across them, each
// group also per process. Traces are taken one at a time (`add`), so what is held is one row per process and one per
// group and process, never two traces' events.
import type { Attribution, AttributionRow } from './attribution.js';
import type { Summary } from './summary.js';

export interface ProcessRow {
  /** The trace as the user named it. */
  file: string;
  pid: number;
  ppid: number;
  /** The MPI rank the launcher gave the process (EXT/RANK), or null. */
  rank: number | null;
  program: string | null;
  /** How the run ended, short: "exit 0", "signal SIGSEGV", "no end recorded". */
  end: string;
  events: number;
  allocations: number;
  frees: number;
  /** Requested bytes. */
  bytesAllocated: number;
  peakHeap: number;
  peakStack: number;
  leakedBlocks: number;
  leakedBytes: number;
  errors: number;
  warnings: number;
}

export type ProcessTotals = Omit<ProcessRow, 'file' | 'pid' | 'ppid' | 'rank' | 'program' | 'end' | 'peakHeap' | 'peakStack'> & {
  /** The largest peak of any one process (peaks of different processes fall at different times: they do not add). */
  largestPeakHeap: number;
  largestPeakStack: number;
};

/** One group of a `--by` table over all processes: sums, and the extremes of any one process's running net. */
export interface MergedGroup {
  label: string;
  netBytes: number;
  bytesAllocated: number;
  bytesFreed: number;
  /** Lowest and highest running net reached in any one process. */
  minBytes: number;
  maxBytes: number;
  counts: AttributionRow['counts'];
  /** Blocks made and ended, summed (null when a process's row counted calls only). */
  allocations: number | null;
  frees: number | null;
  /** The group's row in each process that has it, in the order the traces were given. */
  perProcess: { pid: number; rank: number | null; row: AttributionRow }[];
}

export interface ProcessesReport {
  processes: ProcessRow[];
  totals: ProcessTotals;
  /** With --by: the groups (by label: site ids differ between programs), largest max first. */
  by: { by: Attribution['by']; mode: Attribution['mode']; groups: MergedGroup[] } | null;
}

export function processRow(file: string, s: Summary): ProcessRow {
  return {
    file,
    pid: s.process.pid,
    ppid: s.process.ppid,
    rank: s.process.rank,
    program: s.process.program,
    end: s.end.how === 'exit' ? `exit ${s.end.code}` : s.end.how === 'signal' ? `signal ${s.end.signalName ?? s.end.code}` : 'no end recorded',
    events: s.events,
    allocations: s.allocations,
    frees: s.frees,
    bytesAllocated: s.bytesAllocated.requested,
    peakHeap: s.peakHeap.requested.bytes,
    peakStack: s.peakStack.bytes,
    leakedBlocks: s.leaked.blocks,
    leakedBytes: s.leaked.requestedBytes,
    errors: s.problems.errors,
    warnings: s.problems.warnings,
  };
}

const ZERO_COUNTS = (): AttributionRow['counts'] => ({ malloc: 0, calloc: 0, realloc: 0, free: 0, aligned: 0, strdup: 0 });

/** Builds the report one process at a time. */
export class ProcessesBuilder {
  private readonly rows: ProcessRow[] = [];
  private readonly groups = new Map<string, MergedGroup>();
  private by: { by: Attribution['by']; mode: Attribution['mode'] } | null = null;

  add(file: string, summary: Summary, attribution: Attribution | null): void {
    const row = processRow(file, summary);
    this.rows.push(row);
    if (attribution === null) return;
    this.by = { by: attribution.by, mode: attribution.mode };
    for (const r of attribution.rows) {
      let g = this.groups.get(r.label);
      if (g === undefined) {
        g = { label: r.label, netBytes: 0, bytesAllocated: 0, bytesFreed: 0, minBytes: 0, maxBytes: 0, counts: ZERO_COUNTS(), allocations: 0, frees: 0, perProcess: [] };
        this.groups.set(r.label, g);
      }
      g.netBytes += r.netBytes;
      g.bytesAllocated += r.bytesAllocated;
      g.bytesFreed += r.bytesFreed;
      g.minBytes = Math.min(g.minBytes, r.minBytes);
      g.maxBytes = Math.max(g.maxBytes, r.maxBytes);
      for (const k of Object.keys(g.counts) as (keyof AttributionRow['counts'])[]) g.counts[k] += r.counts[k];
      g.allocations = g.allocations === null || r.allocations === null ? null : g.allocations + r.allocations;
      g.frees = g.frees === null || r.frees === null ? null : g.frees + r.frees;
      g.perProcess.push({ pid: row.pid, rank: row.rank, row: r });
    }
  }

  result(): ProcessesReport {
    const sum = (f: (r: ProcessRow) => number): number => this.rows.reduce((n, r) => n + f(r), 0);
    const totals: ProcessTotals = {
      events: sum((r) => r.events),
      allocations: sum((r) => r.allocations),
      frees: sum((r) => r.frees),
      bytesAllocated: sum((r) => r.bytesAllocated),
      largestPeakHeap: Math.max(0, ...this.rows.map((r) => r.peakHeap)),
      largestPeakStack: Math.max(0, ...this.rows.map((r) => r.peakStack)),
      leakedBlocks: sum((r) => r.leakedBlocks),
      leakedBytes: sum((r) => r.leakedBytes),
      errors: sum((r) => r.errors),
      warnings: sum((r) => r.warnings),
    };
    const groups = [...this.groups.values()].sort((a, b) => b.maxBytes - a.maxBytes || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
    return { processes: this.rows, totals, by: this.by === null ? null : { ...this.by, groups } };
  }
}
