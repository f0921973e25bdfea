// The rows of `cc-memwrap report --by …` and their groups: one grouper per `--by` value, which names the group(s) a heap event is charged to and makes each group's row the first time it is named.
import { NONE, type ThreadInfo } from './model.js';
import type { FoldEvent, FoldFrames, FoldTables, TraceEnd, TraceStart } from './event-fold.js';
import { allocationSiteLabel, interposedFunction, interposedLabel, siteInfo, siteLocation } from './sites.js';
import { Flag } from './trace/format.js';
import { grown } from './trace/typed-arrays.js';
import { byEntry, byLibraryFunction } from './library-calls.js';

export type AttributionBy = 'function' | 'site' | 'file' | 'thread' | 'library' | 'entry' | 'library-function';
/** Which function on an event's call path gets it: the innermost open frame, the outermost one below `main`, or every distinct one. */
export type AttributionMode = 'innermost' | 'outermost' | 'inclusive';

export const ATTRIBUTION_BY: readonly AttributionBy[] = ['function', 'site', 'file', 'thread', 'library', 'entry', 'library-function'];
export const ATTRIBUTION_MODES: readonly AttributionMode[] = ['innermost', 'outermost', 'inclusive'];

/** Allocator calls charged to a group. */
export interface AttributionCounts {
  /** ALLOC events by allocator: malloc; calloc; aligned_alloc, posix_memalign, memalign, valloc, pvalloc; strdup, strndup. */
  malloc: number;
  calloc: number;
  aligned: number;
  strdup: number;
  /** REALLOC events (realloc, reallocarray), failed ones and realloc(NULL, …) included. */
  realloc: number;
  /** FREE events that ended a block (frees of pointers that were not live blocks are not counted). */
  free: number;
}

export interface AttributionRow {
  /**
   * Stable identity of the group: "function:<entry site>", "site:<site>", "interposed:<entry site>", "file:<path>",
   * "thread:<index>", "library:<index>", "library:instrumented", "library:unknown", "none".
   */
  key: string;
  /** What a report shows: "demo.c:3 make_node", "demo.c:4 make_node → malloc", "main (via libc/uninstrumented)", "demo.c", "thread 0 (tid 1234)". */
  label: string;
  /** 'library': the loaded object's path (as its LIBRARY record has it); otherwise the source file (as the site table has it, absolute) and line of the function's entry or the allocation site; null where none applies. */
  file: string | null;
  line: number | null;
  /** The function ('function', 'site': the function containing the call or the attributed function), else null. */
  function: string | null;
  /** Trace thread index ('thread'), else null. */
  thread: number | null;
  /** Bytes allocated minus bytes freed by this group's events (requested sizes); negative when it frees what others allocated. */
  netBytes: number;
  /** Lowest and highest value of the running net over the run (starting at 0 before the first event). */
  minBytes: number;
  maxBytes: number;
  /** Requested bytes of blocks its events created, and of blocks its events ended. */
  bytesAllocated: number;
  bytesFreed: number;
  /**
   * Blocks its events made and ended: the viewer's "allocations" and "frees" (a realloc that gets a block ends one and
   * makes one, so it counts in both). null where only calls were counted (online mode's tables).
   */
  allocations: number | null;
  frees: number | null;
  counts: AttributionCounts;
}

const NO_FRAME = '<no instrumented frame>';
/** 'library' rows of heap calls made at instrumented sites, and of interposed calls whose caller is not known. */
export const INSTRUMENTED_CODE = '(instrumented code)';
export const UNKNOWN_LIBRARY = '(unknown library)';

/** The rows of one table, in order of first use, found by key. Their numbers stay 0 until the table is filled. */
export class GroupTable {
  readonly rows: AttributionRow[] = [];
  private readonly byKey = new Map<string, number>();

  /** The index of group `key`; its row is made from the other arguments the first time. */
  group(key: string, label: string, file: string | null = null, line: number | null = null, fn: string | null = null, thread: number | null = null): number {
    let g = this.byKey.get(key);
    if (g === undefined) {
      g = this.rows.push(emptyRow(key, label, file, line, fn, thread)) - 1;
      this.byKey.set(key, g);
    }
    return g;
  }
}

function emptyRow(key: string, label: string, file: string | null, line: number | null, fn: string | null, thread: number | null): AttributionRow {
  return {
    key,
    label,
    file,
    line,
    function: fn,
    thread,
    netBytes: 0,
    minBytes: 0,
    maxBytes: 0,
    bytesAllocated: 0,
    bytesFreed: 0,
    allocations: 0,
    frees: 0,
    counts: { malloc: 0, calloc: 0, aligned: 0, strdup: 0, realloc: 0, free: 0 },
  };
}

/** The groups one event is charged to: `ids[0 … count)`, reused from event to event. */
export class Charges {
  ids = new Int32Array(64);
  count = 0;

  add(g: number): void {
    if (this.count === this.ids.length) {
      const bigger = new Int32Array(this.ids.length * 2);
      bigger.set(this.ids);
      this.ids = bigger;
    }
    this.ids[this.count++] = g;
  }
}

/** Adds the group(s) of heap event `e` to `out` (which the caller has emptied). */
export type Grouper = (e: FoldEvent, tables: FoldTables, out: Charges) => void;

/**
 * Builds the grouper of one table. The grouper sees ENTER events too (`enter`), which the 'outermost' mode needs to
 * learn each open frame's outermost function; `finish` names groups only known at the end (threads).
 */
export interface GroupMaker {
  charge: Grouper;
  /** ENTER of frame handle `e.frame`: remember what later heap events on that frame need. */
  enter: ((e: FoldEvent, tables: FoldTables) => void) | null;
  /** Names the groups whose labels need the run's end facts. */
  finish: ((end: TraceEnd) => void) | null;
}

/** The grouper of each `--by` value; `mode` matters only to 'function' and 'file'. */
export const GROUPERS: Record<AttributionBy, (start: TraceStart, table: GroupTable, mode: AttributionMode) => GroupMaker> = {
  function: (start, table, mode) => byFrame(start, table, mode, functionOfEntry(start, table)),
  file: (start, table, mode) => byFrame(start, table, mode, fileOfEntry(start, table)),
  site: (start, table) => bySite(start, table),
  thread: (start, table) => byThread(start, table),
  library: (start, table) => byLibrary(start, table),
  entry: (start, table) => byEntry(start, table),
  'library-function': (start, table) => byLibraryFunction(start, table),
};

/** `compute` remembered for indices below `size` (an index beyond, from a damaged trace, is computed each time). */
function remembered(size: number, compute: (i: number) => number): (i: number) => number {
  const cache = new Int32Array(size).fill(NONE);
  return (i) => {
    if (i < size && cache[i] !== NONE) return cache[i]!;
    const g = compute(i);
    if (i < size) cache[i] = g;
    return g;
  };
}

/** The group of `key`, made on first use and then remembered (for the fixed rows: "none", "library:…"). */
function fixedGroup(table: GroupTable, key: string, label: string): () => number {
  let g = NONE;
  return () => (g === NONE ? (g = table.group(key, label)) : g);
}

/** 'function': the group of a function entry site. */
function functionOfEntry(start: TraceStart, table: GroupTable): (site: number) => number {
  const cwd = start.program?.cwd ?? null;
  return remembered(start.sites.count, (site) => {
    const info = siteInfo(start, site);
    if (info === null) return table.group(`unknown:${site}`, `<unknown function site ${site}>`);
    const name = info.name || info.func || '?';
    return table.group(`function:${site}`, `${siteLocation(info, cwd)} ${name}`, info.file, info.line, name);
  });
}

/** 'file': the group of the file a function entry site is in. */
function fileOfEntry(start: TraceStart, table: GroupTable): (site: number) => number {
  const cwd = start.program?.cwd ?? null;
  return remembered(start.sites.count, (site) => {
    const info = siteInfo(start, site);
    if (info === null) return table.group(`unknown:${site}`, `<unknown function site ${site}>`);
    const file = info.file ?? '?';
    const rel = siteLocation({ ...info, file }, cwd);
    return table.group(`file:${file}`, rel.slice(0, rel.lastIndexOf(':')), info.file);
  });
}

/**
 * 'function' and 'file': the group of the event's innermost frame, of the outermost frame below `main` on its path,
 * or of every frame on its path (each group once: recursion charges a function once).
 */
function byFrame(start: TraceStart, table: GroupTable, mode: AttributionMode, ofEntry: (site: number) => number): GroupMaker {
  const noFrame = fixedGroup(table, 'none', NO_FRAME);
  if (mode === 'innermost') {
    const charge: Grouper = (e, tables, out) => out.add(e.frame === NONE ? noFrame() : ofEntry(tables.frames.entrySite[e.frame]!));
    return { charge, enter: null, finish: null };
  }
  if (mode === 'outermost') {
    const top = new OutermostEntries(start);
    const charge: Grouper = (e, _tables, out) => out.add(e.frame === NONE ? noFrame() : ofEntry(top.entry[e.frame]!));
    return { charge, enter: (e, tables) => top.enter(e.frame, tables.frames), finish: null };
  }
  let stamp: Float64Array = new Float64Array(64).fill(-1);
  const charge: Grouper = (e, tables, out) => {
    if (e.frame === NONE) return out.add(noFrame());
    const { entrySite, parent } = tables.frames;
    for (let p = e.frame; p !== NONE; p = parent[p]!) {
      const g = ofEntry(entrySite[p]!);
      if (g >= stamp.length) stamp = grown(stamp, g + 1, -1);
      if (stamp[g] === e.index) continue;
      stamp[g] = e.index;
      out.add(g);
    }
  };
  return { charge, enter: null, finish: null };
}


/**
 * For each open frame (by handle), the entry site of the frame just below `main` on its path (or of its root when
 * `main` is not on it): learnt at the frame's ENTER from its parent's, which is open.
 */
class OutermostEntries {
  entry = new Uint32Array(64);
  private readonly mainness: Uint8Array; // 0 not yet known, 1 main, 2 not main

  constructor(private readonly start: TraceStart) {
    this.mainness = new Uint8Array(start.sites.count);
  }

  private isMain(site: number): boolean {
    if (site >= this.mainness.length) return false;
    if (this.mainness[site] === 0) {
      const info = siteInfo(this.start, site);
      this.mainness[site] = info !== null && (info.name || info.func) === 'main' ? 1 : 2;
    }
    return this.mainness[site] === 1;
  }

  enter(f: number, frames: FoldFrames): void {
    if (f === NONE) return;
    if (f >= this.entry.length) {
      const bigger = new Uint32Array(Math.max(this.entry.length * 2, f + 1));
      bigger.set(this.entry);
      this.entry = bigger;
    }
    const p = frames.parent[f]!;
    const own = frames.entrySite[f]!;
    this.entry[f] = p === NONE ? own : this.isMain(this.entry[p]!) ? own : this.entry[p]!;
  }
}

/** 'site': the record's allocation site, or for interposed records the function of the frame they are attributed to. */
function bySite(start: TraceStart, table: GroupTable): GroupMaker {
  const cwd = start.program?.cwd ?? null;
  const ofInterposed = remembered(start.sites.count, (site) => {
    const info = siteInfo(start, site);
    return table.group(`interposed:${site}`, interposedLabel(info), info?.file ?? null, info?.line ?? null, info === null ? null : interposedFunction(info));
  });
  const ofSite = remembered(start.sites.count, (site) => {
    const info = siteInfo(start, site);
    return table.group(`site:${site}`, allocationSiteLabel(info, site, cwd), info?.file ?? null, info?.line ?? null, info?.func || null);
  });
  const charge: Grouper = (e, tables, out) => {
    if ((e.flags & Flag.INTERPOSED) === 0) return out.add(ofSite(e.site));
    out.add(ofInterposed(e.frame === NONE ? 0 : tables.frames.entrySite[e.frame]!));
  };
  return { charge, enter: null, finish: null };
}

/** Names a 'thread' row: thread row `t` of the run, `info` its entry in the thread list (if any). */
function threadRow(row: AttributionRow, t: number, info: ThreadInfo | undefined): void {
  const index = info?.index ?? t;
  row.key = `thread:${index}`;
  row.label = `thread ${index}${info?.osTid != null ? ` (tid ${info.osTid})` : ''}`;
  row.thread = index;
}

/**
 * 'thread': the thread that made the call. A thread's index and OS id are in the thread list, known at the end: its
 * row is named then.
 */
function byThread(start: TraceStart, table: GroupTable): GroupMaker {
  const rowsOfThread: number[] = [];
  const ofThread = remembered(start.threads, (t) => {
    const g = table.group(`thread-row:${t}`, `thread row ${t}`);
    rowsOfThread[g] = t;
    return g;
  });
  const charge: Grouper = (e, _tables, out) => out.add(ofThread(e.thread));
  const finish = (end: TraceEnd): void => {
    rowsOfThread.forEach((t, g) => threadRow(table.rows[g]!, t, end.threads[t]));
  };
  return { charge, enter: null, finish };
}

/**
 * 'library': interposed events by the loaded object that called the allocator (EXT/CALLER), instrumented-site events
 * in one "(instrumented code)" row (a site does not say which object it was linked into), interposed events without
 * a CALLER record (older traces, addresses in no loaded object) in "(unknown library)".
 */
function byLibrary(start: TraceStart, table: GroupTable): GroupMaker {
  const { libraries } = start;
  const ofLibrary = remembered(libraries.length, (lib) => {
    const path = libraries[lib]!;
    const base = path.slice(path.lastIndexOf('/') + 1) || path || `(library ${lib})`;
    return table.group(`library:${lib}`, base, path === '' ? null : path);
  });
  const instrumented = fixedGroup(table, 'library:instrumented', INSTRUMENTED_CODE);
  const unknown = fixedGroup(table, 'library:unknown', UNKNOWN_LIBRARY);
  const charge: Grouper = (e, _tables, out) => {
    if ((e.flags & Flag.INTERPOSED) === 0) return out.add(instrumented());
    const lib = e.library;
    out.add(lib === NONE || lib >= libraries.length ? unknown() : ofLibrary(lib));
  };
  return { charge, enter: null, finish: null };
}
