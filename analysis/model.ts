// The columnar model of one trace: typed-array tables of events, blocks, frames, sites and statics, plus run-level facts.
import type { Problem } from './problems.js';
import type { TraceHeader } from './trace/header.js';

/** "No such row" in the Int32Array columns that refer to events, blocks or frames. */
export const NONE = -1;

/**
 * All events in one global order (see analysis/README.md). Row i of every column describes event i.
 * 74 bytes per event: each column is allocated once at its exact size by the decoder. Columns stay Float64Array where
 * the format allows values beyond 32 bits (sizes, times, stack depths are unbounded varints), so the model is exact.
 * `kind` uses the record kind numbers of the format (`Kind` in trace/format.ts): THREAD_BEGIN, STATIC, ENTER, EXIT,
 * UNWIND, ALLOC, FREE, REALLOC, END, THREAD_END, LOST. UNIT, LINKED, TIME and PROGRAM records are not events.
 */
export interface EventTable {
  count: number;
  kind: Uint8Array;
  /** The record's flag bits (tag >> 4). */
  flags: Uint8Array;
  /** Row in `Model.threads`. */
  thread: Uint32Array;
  /**
   * ENTER: entry site; EXIT: exit site; STATIC, ALLOC, FREE, REALLOC: the record's site (0 for interposed records).
   * 0 otherwise, and for sites no UNIT record defines.
   */
  site: Uint32Array;
  /** Nanoseconds since the header's start time, interpolated between the thread's TIME records. */
  time: Float64Array;
  /**
   * THREAD_BEGIN: OS thread id; STATIC: size; ENTER: stack depth at entry; UNWIND: frames closed;
   * ALLOC, REALLOC: requested size; FREE: requested size of the freed block (0 if untracked or unknown);
   * END: exit status or signal number; LOST: records lost; 0 otherwise.
   */
  value: Float64Array;
  /** ALLOC, REALLOC: the block created, or NONE. */
  newBlock: Int32Array;
  /** FREE, REALLOC: the block ended, or NONE (untracked, unknown, from NULL, failed). */
  oldBlock: Int32Array;
  /**
   * ENTER: the frame opened; EXIT: the frame closed; UNWIND: the outermost frame it closed;
   * any other event: the innermost open frame of its thread (the attribution of heap events). NONE if none.
   */
  frame: Int32Array;
  /** Stack bytes in use on the event's thread after the event (depth of its innermost open frame, else 0). */
  stack: Float64Array;
  /** Stack bytes in use summed over all threads after the event. */
  stackTotal: Float64Array;
  /** Live heap bytes after the event, requested and usable. */
  heapRequested: Float64Array;
  heapUsable: Float64Array;
  /**
   * ALLOC, FREE, REALLOC through the interposed allocator: index in `Model.libraries` of the loaded object that called
   * it (EXT/CALLER); NONE for other events, instrumented-site records and traces without CALLER records.
   */
  library: Int32Array;
}

/** Heap blocks in creation order (= order of their ids). */
export interface BlockTable {
  count: number;
  /** The block's id: the sequence number of the record that created it. */
  id: Float64Array;
  allocEvent: Int32Array;
  /** The FREE or REALLOC event that ended it, or NONE if it was live at the end of the trace. */
  freeEvent: Int32Array;
  requested: Float64Array;
  usable: Float64Array;
  address: Float64Array;
  /** Allocation site; 0 for interposed allocations. */
  site: Uint32Array;
  /** Allocator function as a site kind (`SiteKind.MALLOC` …): the site's kind, or the interposed record's function. */
  fn: Uint8Array;
  /** Row in `Model.threads` of the allocating thread. */
  thread: Uint32Array;
  /** 1 if the allocation came through the interposed allocator. */
  interposed: Uint8Array;
  /** Interposed allocations: index in `Model.libraries` of the calling loaded object (EXT/CALLER), else NONE. */
  library: Int32Array;
  /**
   * The runtime's classification at a normal exit (EXT/LEAKS, format 1.1), `LeakClass` of trace/format.ts:
   * 0 direct leak, 1 indirect leak, 2 still reachable; 255 not classified (freed, or no LEAKS record).
   */
  leakClass: Uint8Array;
}

/** Function frames, in order of entry. */
export interface FrameTable {
  count: number;
  thread: Uint32Array;
  /** The ENTER event. */
  enter: Int32Array;
  /** The EXIT, UNWIND or THREAD_END event that closed it; NONE: still open at the end of the run. */
  exit: Int32Array;
  entrySite: Uint32Array;
  /** Exit site for frames closed by EXIT, else 0. */
  exitSite: Uint32Array;
  /** Stack bytes in use at the entry, plus the most its function's summarised calls add (`SiteTable.stackBound`). */
  depth: Float64Array;
  /** The enclosing frame on the same thread, or NONE. */
  parent: Int32Array;
}

/** Sites indexed directly by global site id (row 0 and ids no UNIT defines have kind 0). */
export interface SiteTable {
  /** One past the largest defined site id. */
  count: number;
  kind: Uint8Array;
  /** Indices into `strings`, or NONE. */
  file: Int32Array;
  /** Enclosing function ("" at file scope). */
  func: Int32Array;
  /** Function / object / allocator name. */
  name: Int32Array;
  line: Uint32Array;
  strings: string[];
  /**
   * Per ENTRY site: the most stack the summarised calls of its function add to a frame's entry depth (its unit's
   * CALLS_BOUND site), so that a frame's depth bounds the stack while it is the innermost; absent when no function
   * was summarised.
   */
  stackBound?: Float64Array;
}

export interface StaticTable {
  count: number;
  site: Uint32Array;
  address: Float64Array;
  size: Float64Array;
  event: Int32Array;
  /** Sum of `size`. */
  totalBytes: number;
}

/** For each FREE/REALLOC followed by a LINKED record: the live blocks reachable from the freed block. */
export interface LinkedTable {
  count: number;
  /** The freeing event, ascending. */
  event: Int32Array;
  /** Set i's blocks are `blocks[start[i] .. start[i+1])`; `start` has count + 1 entries. */
  start: Int32Array;
  blocks: Int32Array;
  partial: Uint8Array;
}

/** FREE records whose pointer was not a live block (double free, non-heap pointer). */
export interface UntrackedFreeTable {
  count: number;
  event: Int32Array;
  address: Float64Array;
}

/**
 * Branch outcomes (EXT/BRANCH, format 1.2: programs built with `--mw-branches`); empty otherwise. Not events: they
 * take no row in `events` (so event counts, charts and timelines are the same with and without branches), but each
 * is placed after the latest event of its thread. Sorted by `after`, and within one `after` in the thread's order,
 * so walking events and branches together by `after` replays each thread exactly.
 */
export interface BranchTable {
  count: number;
  /** Global row of the latest event of its thread before it (NONE: none yet). */
  after: Int32Array;
  /** Row in `Model.threads`. */
  thread: Uint32Array;
  /** A site of kind `SiteKind.BRANCH`; 0 when no UNIT record defines the recorded site (a warning). */
  site: Uint32Array;
  /** 1: the condition was true, or the case label was jumped to; 0: the condition was false. */
  taken: Uint8Array;
}

export interface ThreadInfo {
  /** The trace's thread index (0 = the thread that started the recorder). */
  index: number;
  /** From THREAD_BEGIN, or null if the thread has none. */
  osTid: number | null;
  beginEvent: number;
  /** THREAD_END event, or NONE. */
  endEvent: number;
  events: number;
  /** Largest stack depth seen on this thread, and the event where. */
  maxStack: number;
  maxStackEvent: number;
}

export type EndHowName = 'exit' | 'signal' | 'unknown';

/** How the run ended: END record and the header's complete flag. */
export interface RunEnd {
  /** 'exit': END how 0; 'signal': END how 1; 'unknown': no END record (killed, e.g. SIGKILL, or crashed). */
  how: EndHowName;
  /** Exit status ('exit') or signal number ('signal'); null for 'unknown'. */
  code: number | null;
  /** The header's complete flag (set last by a normal exit). */
  complete: boolean;
  /** The END event, or NONE. */
  event: number;
}

/**
 * EXT/CALL_PATH (format 1.3): the return addresses from an interposed allocator's caller (inside a shared object) out
 * to the executable's code, innermost first, each as a library index and its offset from the object's load base (the
 * object's own virtual address, which its symbol tables use).
 */
export interface CallPath {
  /** `CallPathFlag` bits: REACHED (the last address is in the executable), CUT (at the runtime's limit). */
  flags: number;
  libraries: number[];
  offsets: number[];
}

/** Names an address of a loaded object from its symbol tables (the host reads them; the analysis stays pure). */
export interface SymbolNamer {
  /** The function holding `offset` (from the object's load base) in the object at `path`, or null. */
  name(path: string, offset: number): string | null;
}

export interface Model {
  header: TraceHeader;
  program: { path: string; cwd: string } | null;
  /** EXT/RANK (format 1.3): the MPI rank the launcher gave the process and the variable it came from; null when none. */
  rank: { rank: number; variable: string } | null;
  /** EXT/CALL_PATH (format 1.3): the distinct paths, and the path of each interposed heap event that has one. */
  callPaths: { paths: CallPath[]; ofEvent: Map<number, number> };
  /** Set by a host that can read the loaded objects (`report --by entry`, `--by library-function`); else absent. */
  symbols?: SymbolNamer;
  /**
   * Loaded objects (executable and shared objects) by library index, from EXT/LIBRARY records: their paths (the
   * executable's resolved). Empty for traces without them. An index never defined reads "(library N)".
   */
  libraries: string[];
  events: EventTable;
  blocks: BlockTable;
  frames: FrameTable;
  sites: SiteTable;
  statics: StaticTable;
  linked: LinkedTable;
  untrackedFrees: UntrackedFreeTable;
  branches: BranchTable;
  /** Sorted by trace thread index. */
  threads: ThreadInfo[];
  end: RunEnd;
  /** Sum of LOST counts. */
  lostRecords: number;
  /** Whether the trace holds an EXT/LEAKS record (classes in `blocks.leakClass`), and whether it was partial. */
  leakScan: { present: boolean; partial: boolean };
  problems: Problem[];
}
