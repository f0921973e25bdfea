// The numbers `cc-memwrap report` prints (text or JSON), computed from the model: run end, totals, peaks, leaks, Valgrind-style counts, top sites.
import { Flag, Kind, siteKindName } from './trace/format.js';
import { NONE, type EndHowName, type Model } from './model.js';
import type { Problem } from './problems.js';
import { signalName } from './signals.js';
import { BlockGroups } from './block-groups.js';
import { allocatorName, siteInfo } from './sites.js';

export interface SiteRow {
  /** 'site': an instrumented allocation site; 'interposed': allocations seen only by the interposed allocator, grouped by the frame they are attributed to. */
  kind: 'site' | 'interposed';
  /** 'site': the allocation site id; 'interposed': the entry site of the attributed function (0: no instrumented frame was open). */
  site: number;
  file: string | null;
  line: number | null;
  /** 'site': the function containing the call; 'interposed': the attributed function. */
  function: string | null;
  /** 'site': the allocator called (malloc, calloc, …); 'interposed': null (see `allocators`). */
  allocator: string | null;
  /** Allocator functions seen in this group, e.g. ["malloc", "realloc"]. */
  allocators: string[];
  /** What a report shows: "demo.c:12 make_node → malloc" or "make_node (via libc/uninstrumented)". */
  label: string;
  allocs: number;
  requestedBytes: number;
  usableBytes: number;
  /** Blocks of this group still live at the end of the trace, and their requested bytes. */
  liveBlocks: number;
  liveRequestedBytes: number;
}

export interface Summary {
  /** `interposed`: the runtime defined malloc & co., so allocations inside libc and uninstrumented code are here too. */
  format: { version: string; littleEndian: boolean; pointerSize: number; interposed: boolean };
  process: { pid: number; ppid: number; startTimeNs: string; program: string | null; cwd: string | null; rank: number | null };
  end: {
    how: EndHowName;
    /** Exit status ('exit') or signal number ('signal'). */
    code: number | null;
    signalName: string | null;
    complete: boolean;
    description: string;
  };
  threads: { index: number; osTid: number | null; events: number; maxStackBytes: number; maxStackEvent: number | null; ended: boolean }[];
  events: number;
  /** Blocks created (ALLOC, REALLOC with a new block). */
  allocations: number;
  /** Blocks ended (FREE, REALLOC of an old block). */
  frees: number;
  /** FREE of pointers that were not live blocks (not counted in `frees`). */
  untrackedFrees: number;
  /** REALLOC calls that failed (nothing changed). */
  failedReallocs: number;
  bytesAllocated: { requested: number; usable: number };
  peakHeap: { requested: { bytes: number; event: number | null }; usable: { bytes: number; event: number | null } };
  /** Largest stack in use summed over threads; per thread in `threads`. */
  peakStack: { bytes: number; event: number | null };
  static: { objects: number; bytes: number };
  /** Blocks live at the end of the trace. */
  leaked: { blocks: number; requestedBytes: number; usableBytes: number };
  /** Counted as Valgrind's HEAP SUMMARY counts them. */
  valgrind: { allocs: number; frees: number; bytesAllocated: number; inUseAtExit: { bytes: number; blocks: number } };
  lostRecords: number;
  /** Number of groups; `topSites` holds the first `top` by requested bytes. */
  siteGroups: number;
  topSites: SiteRow[];
  problems: { errors: number; warnings: number; list: Problem[] };
}

export interface SummaryOptions {
  /** How many allocation sites to list (default 10). */
  top?: number;
}

/** How the run ended, in words. */
export function describeEnd(how: EndHowName, code: number | null, complete: boolean): string {
  if (how === 'exit') {
    return complete
      ? `normal exit, status ${code}`
      : `exit with status ${code} recorded, but the trace was not marked complete (the process died while exiting)`;
  }
  if (how === 'signal') {
    const name = code === null ? null : signalName(code);
    return `killed by signal ${code}${name ? ` (${name})` : ''}`;
  }
  return 'ended without a trailer: killed (e.g. SIGKILL) or crashed';
}

function maxOf(a: Float64Array): { bytes: number; event: number | null } {
  let best = 0;
  let at: number | null = null;
  for (let i = 0; i < a.length; i++) {
    if (a[i]! > best) {
      best = a[i]!;
      at = i;
    }
  }
  return { bytes: best, event: at };
}

function siteRows(model: Model): SiteRow[] {
  const { blocks } = model;
  const groups = new BlockGroups(model);
  const rows = new Map<string, SiteRow & { fns: Set<number> }>();
  for (let b = 0; b < blocks.count; b++) {
    const g = groups.siteOf(b);
    let row = rows.get(g.key);
    if (row === undefined) {
      const interposed = g.key.startsWith('interposed:');
      row = {
        kind: interposed ? 'interposed' : 'site',
        site: g.site,
        file: g.file,
        line: g.line,
        function: g.function,
        allocator: interposed ? null : allocatorName(siteInfo(model, g.site)),
        allocators: [],
        label: g.label,
        allocs: 0,
        requestedBytes: 0,
        usableBytes: 0,
        liveBlocks: 0,
        liveRequestedBytes: 0,
        fns: new Set(),
      };
      rows.set(g.key, row);
    }
    row.allocs++;
    row.requestedBytes += blocks.requested[b]!;
    row.usableBytes += blocks.usable[b]!;
    row.fns.add(blocks.fn[b]!);
    if (blocks.freeEvent[b] === NONE) {
      row.liveBlocks++;
      row.liveRequestedBytes += blocks.requested[b]!;
    }
  }
  const out: SiteRow[] = [];
  for (const { fns, ...row } of rows.values()) {
    row.allocators = [...fns].sort((a, b) => a - b).map(siteKindName);
    out.push(row);
  }
  out.sort((a, b) => b.requestedBytes - a.requestedBytes || b.allocs - a.allocs || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
  return out;
}

/** Computes every number of the report from the model. */
export function summarize(model: Model, options: SummaryOptions = {}): Summary {
  const top = options.top ?? 10;
  const { events, blocks } = model;
  let failedReallocs = 0;
  for (let i = 0; i < events.count; i++) {
    if (events.kind[i] === Kind.REALLOC && (events.flags[i]! & Flag.REALLOC_FAILED) !== 0) failedReallocs++;
  }
  let frees = 0;
  let requested = 0;
  let usable = 0;
  let liveBlocks = 0;
  let liveRequested = 0;
  let liveUsable = 0;
  for (let b = 0; b < blocks.count; b++) {
    requested += blocks.requested[b]!;
    usable += blocks.usable[b]!;
    if (blocks.freeEvent[b] === NONE) {
      liveBlocks++;
      liveRequested += blocks.requested[b]!;
      liveUsable += blocks.usable[b]!;
    } else {
      frees++;
    }
  }
  const rows = siteRows(model);
  const h = model.header;
  const errors = model.problems.filter((p) => p.severity === 'error').length;
  return {
    format: { version: `${h.major}.${h.minor}`, littleEndian: h.littleEndian, pointerSize: h.pointerSize, interposed: h.interposed },
    process: {
      pid: h.pid,
      ppid: h.ppid,
      startTimeNs: h.startTimeNs.toString(),
      program: model.program?.path ?? null,
      cwd: model.program?.cwd ?? null,
      rank: model.rank?.rank ?? null,
    },
    end: {
      how: model.end.how,
      code: model.end.code,
      signalName: model.end.how === 'signal' && model.end.code !== null ? signalName(model.end.code) : null,
      complete: model.end.complete,
      description: describeEnd(model.end.how, model.end.code, model.end.complete),
    },
    threads: model.threads.map((t) => ({
      index: t.index,
      osTid: t.osTid,
      events: t.events,
      maxStackBytes: t.maxStack,
      maxStackEvent: t.maxStackEvent === NONE ? null : t.maxStackEvent,
      ended: t.endEvent !== NONE,
    })),
    events: events.count,
    allocations: blocks.count,
    frees,
    untrackedFrees: model.untrackedFrees.count,
    failedReallocs,
    bytesAllocated: { requested, usable },
    peakHeap: { requested: maxOf(events.heapRequested), usable: maxOf(events.heapUsable) },
    peakStack: maxOf(events.stackTotal),
    static: { objects: model.statics.count, bytes: model.statics.totalBytes },
    leaked: { blocks: liveBlocks, requestedBytes: liveRequested, usableBytes: liveUsable },
    valgrind: {
      allocs: blocks.count,
      frees,
      bytesAllocated: requested,
      inUseAtExit: { bytes: liveRequested, blocks: liveBlocks },
    },
    lostRecords: model.lostRecords,
    siteGroups: rows.length,
    topSites: rows.slice(0, Math.max(0, top)),
    problems: { errors, warnings: model.problems.length - errors, list: model.problems },
  };
}

/** The schema tag of `--json` output; bump when a field changes meaning or disappears. */
export const SUMMARY_SCHEMA = 'cc-memwrap.report/1';
