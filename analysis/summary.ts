// The numbers `cc-memwrap report` prints (text or JSON), one fold over the events: run end, totals, peaks, leaks, Valgrind-style counts, top sites.
import { Flag, Kind, MEASURED_TREE, SiteKind, siteKindName } from './trace/format.js';
import { NONE, type EndHowName, type Model } from './model.js';
import type { Problem } from './problems.js';
import { signalName } from './signals.js';
import type { EventFold, FoldEvent, FoldTables, TraceEnd, TraceStart } from './event-fold.js';
import { foldModel, modelStart } from './model-fold.js';
import { GroupIndex, grown } from './group-index.js';
import { allocatorName, siteInfo } from './sites.js';
import { describeStop } from './trace/run-facts.js';

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
    /** The runtime stopped recording (the header's STOPPED flag): why, and at which event the trace ends; else null. */
    stopped: { errno: number; reason: string; event: number } | null;
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
  /** Functions built with their calls left out (`--mw-no-calls`), by file and name; absent when none was. */
  uncalledFunctions?: { name: string; file: string | null; line: number }[];
  /**
   * Functions whose calls were not recorded because their whole call tree is known (`--mw-calls=leaves`), by file and
   * name, with the most stack that tree takes (null: unknown); absent when none was. Peak stack counts the most
   * their calls can add to each recorded caller's frame. `measured`: the function is in recursion that does no heap
   * work, so no bound exists before the run; its calls were recorded only when deeper than any call recorded since
   * the thread's last record that is not a call's, which keeps the peak stack exact (stackBytes null).
   */
  summarisedFunctions?: { name: string; file: string | null; line: number; stackBytes: number | null; measured?: true }[];
  /**
   * Recorded functions whose calls were written only when a record was made inside one or it reached deeper than any
   * call recorded since the thread's last record that is not a call's (`--mw-calls=heap`): how many (by file and
   * name). The heap,
   * leaks, linked frees and peak stack are as with every call recorded; the other calls are not in the trace, so call
   * counts are of the calls written. Absent when none was built so.
   */
  pendingCalls?: { functions: number };
}

export interface SummaryOptions {
  /** How many allocation sites to list (default 10). */
  top?: number;
}

/**
 * How the run ended, in words. `stopped`: the runtime stopped recording (the header's STOPPED flag). `firmware`: the
 * trace came from a target without an operating system (its header's pid is 0, runtime/TRACE-FORMAT.md), which ends by
 * a fault, a lockup or a reset rather than by a signal, and whose trace written through a stream (memwrap_write)
 * cannot be marked complete after its END.
 */
export function describeEnd(how: EndHowName, code: number | null, complete: boolean, stopped: { errno: number; event: number } | null = null, firmware = false): string {
  // The runtime could not grow the file: the run went on, unrecorded; how it ended is not in the trace.
  if (stopped !== null) return `recording stopped: ${describeStop(stopped.errno)}, at event ${stopped.event.toLocaleString('en-US')}; the program ran on unrecorded`;
  if (how === 'exit') {
    return complete || firmware
      ? `normal exit, status ${code}`
      : `exit with status ${code} recorded, but the trace was not marked complete (the process died while exiting)`;
  }
  if (how === 'unknown' && firmware) return STOPPED_FIRMWARE;
  if (how === 'signal') {
    const name = code === null ? null : signalName(code);
    return `killed by signal ${code}${name ? ` (${name})` : ''}`;
  }
  return 'ended without a trailer: killed (e.g. SIGKILL) or crashed';
}

/** A firmware's run that ended without END: what the report says of it. */
export const STOPPED_FIRMWARE = 'stopped before its end was recorded (a fault, a lockup, a reset or a debugger): the trace holds what the runtime wrote out until then';

/** Every number of the report, as a fold over the events: state grows with the allocation site groups only. */
export class SummaryFold implements EventFold {
  private readonly top: number;
  private readonly index: GroupIndex;
  private failedReallocs = 0;
  private requested = 0;
  private usable = 0;
  private peakRequested = 0;
  private peakRequestedAt = NONE;
  private peakUsable = 0;
  private peakUsableAt = NONE;
  private peakStack = 0;
  private peakStackAt = NONE;
  // Per site group (numbers of `index`): blocks, requested and usable bytes, and the allocator kinds seen as bits.
  private allocs: number[] = [];
  private groupRequested: number[] = [];
  private groupUsable: number[] = [];
  private allocatorBits = new Int32Array(0);
  private end: TraceEnd | null = null;
  private live: { blocks: number; requested: number; usable: number; byGroup: number[]; requestedByGroup: number[] } | null = null;

  constructor(
    private readonly start: TraceStart,
    options: SummaryOptions = {},
  ) {
    this.top = options.top ?? 10;
    this.index = new GroupIndex(start);
  }

  event(e: FoldEvent, tables: FoldTables): void {
    // The maxima are over every event: the stack moves on calls and returns.
    if (e.heapRequested > this.peakRequested) {
      this.peakRequested = e.heapRequested;
      this.peakRequestedAt = e.index;
    }
    if (e.heapUsable > this.peakUsable) {
      this.peakUsable = e.heapUsable;
      this.peakUsableAt = e.index;
    }
    if (e.stackTotal > this.peakStack) {
      this.peakStack = e.stackTotal;
      this.peakStackAt = e.index;
    }
    const kind = e.kind;
    if (kind === Kind.REALLOC && (e.flags & Flag.REALLOC_FAILED) !== 0) this.failedReallocs++;
    const h = e.newBlock;
    if (h === NONE || (kind !== Kind.ALLOC && kind !== Kind.REALLOC)) return;
    const blocks = tables.blocks;
    const requested = blocks.requested[h]!;
    const usable = blocks.usable[h]!;
    this.requested += requested;
    this.usable += usable;
    const g = this.index.siteGroup(blocks, h);
    if (g === this.allocs.length) {
      this.allocs.push(0);
      this.groupRequested.push(0);
      this.groupUsable.push(0);
      this.allocatorBits = grown(this.allocatorBits, 8 * (g + 1));
    }
    this.allocs[g]!++;
    this.groupRequested[g]! += requested;
    this.groupUsable[g]! += usable;
    const fn = blocks.fn[h]!;
    this.allocatorBits[8 * g + (fn >>> 5)]! |= 1 << (fn & 31);
  }

  finish(end: TraceEnd, tables: FoldTables): void {
    this.end = end;
    const { blocks } = tables;
    const live = { blocks: 0, requested: 0, usable: 0, byGroup: this.allocs.map(() => 0), requestedByGroup: this.allocs.map(() => 0) };
    for (const h of end.liveBlocks) {
      live.blocks++;
      live.requested += blocks.requested[h]!;
      live.usable += blocks.usable[h]!;
      const g = this.index.siteGroup(blocks, h);
      live.byGroup[g]!++;
      live.requestedByGroup[g]! += blocks.requested[h]!;
    }
    this.live = live;
  }

  private siteRows(): SiteRow[] {
    const live = this.live!;
    const out: SiteRow[] = [];
    this.index.refs.forEach((g, i) => {
      const interposed = g.key.startsWith('interposed:');
      const allocators: string[] = [];
      for (let fn = 0; fn < 256; fn++) if ((this.allocatorBits[8 * i + (fn >>> 5)]! & (1 << (fn & 31))) !== 0) allocators.push(siteKindName(fn));
      out.push({
        kind: interposed ? 'interposed' : 'site',
        site: g.site,
        file: g.file,
        line: g.line,
        function: g.function,
        allocator: interposed ? null : allocatorName(siteInfo(this.start, g.site)),
        allocators,
        label: g.label,
        allocs: this.allocs[i]!,
        requestedBytes: this.groupRequested[i]!,
        usableBytes: this.groupUsable[i]!,
        liveBlocks: live.byGroup[i]!,
        liveRequestedBytes: live.requestedByGroup[i]!,
      });
    });
    out.sort((a, b) => b.requestedBytes - a.requestedBytes || b.allocs - a.allocs || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
    return out;
  }

  /** The summary; after `finish`. */
  result(): Summary {
    const end = this.end!;
    const live = this.live!;
    const frees = end.blocksCreated - live.blocks;
    const rows = this.siteRows();
    const h = this.start.header;
    const program = this.start.program;
    const run = end.end;
    const errors = end.problems.filter((p) => p.severity === 'error').length;
    const peak = (bytes: number, at: number): { bytes: number; event: number | null } => ({ bytes, event: at === NONE ? null : at });
    return {
      format: { version: `${h.major}.${h.minor}`, littleEndian: h.littleEndian, pointerSize: h.pointerSize, interposed: h.interposed },
      process: {
        pid: h.pid,
        ppid: h.ppid,
        startTimeNs: h.startTimeNs.toString(),
        program: program?.path ?? null,
        cwd: program?.cwd ?? null,
        rank: end.rank?.rank ?? null,
      },
      end: {
        how: run.how,
        code: run.code,
        signalName: run.how === 'signal' && run.code !== null ? signalName(run.code) : null,
        complete: run.complete,
        stopped: h.stoppedErrno === null ? null : { errno: h.stoppedErrno, reason: describeStop(h.stoppedErrno), event: end.events },
        description: describeEnd(run.how, run.code, run.complete, h.stoppedErrno === null ? null : { errno: h.stoppedErrno, event: end.events }, h.pid === 0),
      },
      threads: end.threads.map((t) => ({
        index: t.index,
        osTid: t.osTid,
        events: t.events,
        maxStackBytes: t.maxStack,
        maxStackEvent: t.maxStackEvent === NONE ? null : t.maxStackEvent,
        ended: t.endEvent !== NONE,
      })),
      events: end.events,
      allocations: end.blocksCreated,
      frees,
      untrackedFrees: end.untrackedFrees,
      failedReallocs: this.failedReallocs,
      bytesAllocated: { requested: this.requested, usable: this.usable },
      peakHeap: { requested: peak(this.peakRequested, this.peakRequestedAt), usable: peak(this.peakUsable, this.peakUsableAt) },
      peakStack: peak(this.peakStack, this.peakStackAt),
      static: { objects: end.statics.count, bytes: end.statics.totalBytes },
      leaked: { blocks: live.blocks, requestedBytes: live.requested, usableBytes: live.usable },
      valgrind: {
        allocs: end.blocksCreated,
        frees,
        bytesAllocated: this.requested,
        inUseAtExit: { bytes: live.requested, blocks: live.blocks },
      },
      lostRecords: end.lostRecords,
      siteGroups: rows.length,
      topSites: rows.slice(0, Math.max(0, this.top)),
      problems: { errors, warnings: end.problems.length - errors, list: end.problems },
      ...uncalled(this.start.sites),
      ...summarised(this.start.sites),
      ...pendingCalls(this.start.sites),
    };
  }
}

/** The UNCALLED sites of the table (one per function and unit), one entry per function and file. */
function uncalled(sites: TraceStart['sites']): Pick<Summary, 'uncalledFunctions'> {
  const list = functionsOfKind(sites, SiteKind.UNCALLED, (id) => ({ name: sites.strings[sites.name[id]!] ?? '?' }));
  return list.length === 0 ? {} : { uncalledFunctions: list };
}

/** The SUMMARISED sites of the table (func = the function, name = its tree's stack in decimal), one entry per function and file. */
function summarised(sites: TraceStart['sites']): Pick<Summary, 'summarisedFunctions'> {
  const list = functionsOfKind(sites, SiteKind.SUMMARISED, (id) => {
    const bound = sites.strings[sites.name[id]!] ?? '';
    const name = sites.strings[sites.func[id]!] ?? '?';
    if (bound === MEASURED_TREE) return { name, stackBytes: null, measured: true as const };
    return { name, stackBytes: /^\d{1,10}$/.test(bound) ? Number(bound) : null };
  });
  return list.length === 0 ? {} : { summarisedFunctions: list };
}

/** How many functions have a PENDING_CALLS site (one per function and unit), each once per file. */
function pendingCalls(sites: TraceStart['sites']): Pick<Summary, 'pendingCalls'> {
  const n = functionsOfKind(sites, SiteKind.PENDING_CALLS, (id) => ({ name: sites.strings[sites.func[id]!] ?? '?' })).length;
  return n === 0 ? {} : { pendingCalls: { functions: n } };
}

/** The sites of one kind, each function once per file (a header's static function is in every unit), by name and file. */
function functionsOfKind<T extends { name: string }>(sites: TraceStart['sites'], kind: number, read: (id: number) => T): (T & { file: string | null; line: number })[] {
  const seen = new Map<string, T & { file: string | null; line: number }>();
  for (let id = 1; id < sites.count; id++) {
    if (sites.kind[id] !== kind) continue;
    const entry = read(id);
    const file = sites.strings[sites.file[id]!] ?? null;
    const key = `${file}\0${entry.name}`;
    if (!seen.has(key)) seen.set(key, { ...entry, file, line: sites.line[id]! });
  }
  return [...seen.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : (a.file ?? '') < (b.file ?? '') ? -1 : 1));
}

/** Computes every number of the report from the model. */
export function summarize(model: Model, options: SummaryOptions = {}): Summary {
  const fold = new SummaryFold(modelStart(model), options);
  foldModel(model, [fold]);
  return fold.result();
}

/** The schema tag of `--json` output; bump when a field changes meaning or disappears. */
export const SUMMARY_SCHEMA = 'cc-memwrap.report/1';
