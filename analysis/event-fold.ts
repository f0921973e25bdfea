// The contract between the trace readers and the analyses. An analysis is a fold over the events in the global order
// (analysis/README.md): it is told each event with everything the model's row would say about it, plus the heap blocks
// and the frame it touches, and keeps only what it needs. Two readers drive folds: `foldModel` (model-fold.ts) walks a
// decoded Model (the viewer, small traces), `foldTrace` (trace/resolve-stream.ts) resolves a trace file as it streams,
// holding the live blocks and open frames only, so that an analysis of a billion events needs no more memory than one
// of a thousand. One fold, two readers: every number is computed by the same code either way.
import type { Problem } from './problems.js';
import type { TraceHeader } from './trace/header.js';
import type { CallPath, EndHowName, Model, RunEnd, SiteTable, SymbolNamer, ThreadInfo } from './model.js';

/** Columns readable by index: typed arrays of either reader. */
export type Column = { readonly [i: number]: number; readonly length: number };

/**
 * The heap blocks a fold can see, by block handle. With a decoded model a handle is the block's row (every block is
 * kept); while streaming it is a slot that holds a live block and is reused once the block has ended and every fold
 * has seen the event that ended it. Read the columns through this object each time: a streaming reader may replace
 * them with bigger ones between events.
 */
export interface FoldBlocks {
  /** The block's row: its number in creation order (the model's block row, the same in both readers). */
  readonly row: Column;
  readonly id: Column;
  readonly allocEvent: Column;
  readonly requested: Column;
  readonly usable: Column;
  readonly address: Column;
  /** Allocation site; 0 for interposed allocations. */
  readonly site: Column;
  /** Allocator function as a site kind (see BlockTable.fn). */
  readonly fn: Column;
  /** Row in the thread list of the allocating thread. */
  readonly thread: Column;
  readonly interposed: Column;
  readonly library: Column;
  /** The entry site of the innermost instrumented frame open at the allocation (0: none): the function it is charged to. */
  readonly entry: Column;
  /** The runtime's leak class (BlockTable.leakClass); final only in `finish`. */
  readonly leakClass: Column;
}

/** The frames a fold can see, by frame handle: every frame of a model, the open frames while streaming. */
export interface FoldFrames {
  /** The frame's row: its number in order of entry (the model's frame row). */
  readonly row: Column;
  readonly thread: Column;
  readonly enter: Column;
  readonly entrySite: Column;
  /** Stack bytes in use at the entry, plus the most its function's summarised calls add (`SiteTable.stackBound`). */
  readonly depth: Column;
  /** Handle of the enclosing frame on the same thread, or NONE. */
  readonly parent: Column;
}

/**
 * One event as both readers give it; the object is reused from event to event. Fields are the model's event columns
 * (EventTable), with blocks and frames as handles into `FoldTables`.
 */
export interface FoldEvent {
  /** The event's row in the global order. */
  index: number;
  kind: number;
  flags: number;
  /** Row in the thread list (threads sorted by trace thread index). */
  thread: number;
  site: number;
  time: number;
  value: number;
  /** Block handles (NONE: none). An ended block's columns stay readable until the next event. */
  newBlock: number;
  oldBlock: number;
  /** Frame handle (NONE: none). A frame closed by this event stays readable until the next event. */
  frame: number;
  stack: number;
  stackTotal: number;
  heapRequested: number;
  heapUsable: number;
  library: number;
  /** FREE of a pointer that was not a live block (FREE_UNTRACKED): the pointer. */
  untrackedAddress: number;
  /** STATIC: the object's address. */
  staticAddress: number;
  /** An interposed heap event inside a shared library: the return addresses out to the program (EXT/CALL_PATH), or null. */
  callPath: CallPath | null;
  /** The live blocks reachable from the block this event freed (a LINKED record), or null; handles, valid now. */
  linked: number[] | null;
  linkedPartial: boolean;
}

/** The time of an event, asked for during a pass: `time` holds it by the time the folds finish (at once, for a model). */
export interface TimeTicket {
  readonly time: number;
}

/** What a fold can look up at any event, and at the end. */
export interface FoldTables {
  readonly blocks: FoldBlocks;
  readonly frames: FoldFrames;
  /**
   * The time of event `e` (the one being told), known by `finish`. A streaming reader learns it at the thread's next
   * TIME record: for the times of a few events (a peak's), this costs nothing where `needsTime` reads twice.
   */
  timeOf(e: FoldEvent): TimeTicket;
}

/** The run's facts known before the first event: everything a fold needs to name sites and size its tables. */
export interface TraceStart {
  header: TraceHeader;
  program: Model['program'];
  libraries: string[];
  sites: SiteTable;
  /** Names addresses of the loaded objects (`--by entry`), when the host can read them. */
  symbols?: SymbolNamer;
  /**
   * Number of events the trace holds; -1 when a streaming reader reads the trace once and counts them as it goes (a
   * fold that needs the count before the end says so: `needsEventCount`). TraceEnd.events has it always.
   */
  events: number;
  /** Blocks created and frames entered, counted with the events (-1 when they are: a fold sized by them grows instead). */
  blocks: number;
  frames: number;
  /** Number of threads (rows of the thread list). */
  threads: number;
}

/** The run's facts after the last event. */
export interface TraceEnd {
  events: number;
  /** EXT/RANK: the MPI rank the launcher gave the process, or null. */
  rank: Model['rank'];
  threads: ThreadInfo[];
  end: RunEnd;
  lostRecords: number;
  leakScan: Model['leakScan'];
  problems: Problem[];
  /** Blocks created (the block rows used). */
  blocksCreated: number;
  statics: { count: number; totalBytes: number };
  untrackedFrees: number;
  /** EXT/BRANCH records (format 1.2, --mw-branches): 0 when the program was built without them. */
  branches: number;
  /** Handles of the blocks live at the end, in creation order. */
  liveBlocks: number[];
}

export interface EventFold {
  /**
   * The fold reads `FoldEvent.time`. A streaming reader gives times only to passes whose folds ask for them (it
   * reads each thread's records twice for that); elsewhere `time` is 0.
   */
  readonly needsTime?: boolean;
  /** The fold reads `TraceStart.events` before the end (a streaming reader then counts the events first). */
  readonly needsEventCount?: boolean;
  event(e: FoldEvent, tables: FoldTables): void;
  /**
   * A branch outcome (EXT/BRANCH): told after the latest event of its thread and before that thread's next event (the
   * model's `branches` order; the order between threads is not kept). `site` is 0 when the record names no branch site.
   * Readers call it only on folds that have it.
   */
  branch?(thread: number, site: number, taken: number): void;
  /**
   * A clock reading (a TIME record) of thread row `thread`, nanoseconds since the header's start time: told after the
   * latest event of its thread and before that thread's next event. What a fold that keeps every event's time needs to
   * place the thread's events between its readings (the decoded model's `events.time`). Streaming readers only.
   */
  clock?(thread: number, time: number): void;
  /** After the last event. */
  finish?(end: TraceEnd, tables: FoldTables): void;
}

/** The facts a fold's constructor gets. */
export type FoldFactory<F extends EventFold> = (start: TraceStart) => F;

export type { EndHowName };

/**
 * A trace to fold. A decoded model can be walked any number of times; a streamed trace is read again for each pass, so
 * an analysis asks for as few as it can (one, or two when it needs a point the first finds).
 */
export interface FoldSource {
  /**
   * One pass: `build` makes the folds from the run's start facts, every event goes to every fold, then `finish`;
   * returns the run's end facts. A streaming source may call `build` a second time when it finds that its first
   * reading cannot be exact (resolve-stream.ts): read results from the folds of the last call.
   */
  run(build: (start: TraceStart) => EventFold[]): TraceEnd;
}

/**
 * A function that calls every fold's `event` in order, each from a call site of its own: one loop's call site would
 * see every fold's class, a megamorphic call per fold and event when a report runs five folds or more. The
 * readers hand events out with it.
 */
export function eventCalls(folds: EventFold[]): (e: FoldEvent, tables: FoldTables) => void {
  const [a, b, c, d] = folds;
  switch (folds.length) {
    case 0:
      return () => {};
    case 1:
      return (e, t) => a!.event(e, t);
    case 2:
      return (e, t) => {
        a!.event(e, t);
        b!.event(e, t);
      };
    case 3:
      return (e, t) => {
        a!.event(e, t);
        b!.event(e, t);
        c!.event(e, t);
      };
    default: {
      const rest = eventCalls(folds.slice(4));
      return (e, t) => {
        a!.event(e, t);
        b!.event(e, t);
        c!.event(e, t);
        d!.event(e, t);
        rest(e, t);
      };
    }
  }
}
