// The rows of `cc-memwrap report --by …` and their groups: one grouper per `--by` value, which names the group(s) a heap event is charged to and makes each group's row the first time it is named.
import { NONE, type Model } from './model.js';
import { allocationSiteLabel, interposedFunction, interposedLabel, siteInfo, siteLocation } from './sites.js';
import { Flag } from './trace/format.js';
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
export type Grouper = (e: number, out: Charges) => void;

/** The grouper of each `--by` value; `mode` matters only to 'function' and 'file'. */
export const GROUPERS: Record<AttributionBy, (model: Model, table: GroupTable, mode: AttributionMode) => Grouper> = {
  function: (model, table, mode) => byFrame(model, table, mode, functionOfEntry(model, table)),
  file: (model, table, mode) => byFrame(model, table, mode, fileOfEntry(model, table)),
  site: (model, table) => bySite(model, table),
  thread: (model, table) => byThread(model, table),
  library: (model, table) => byLibrary(model, table),
  entry: (model, table) => byEntry(model, table),
  'library-function': (model, table) => byLibraryFunction(model, table),
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

/** 'function': the group of a function entry site. */
function functionOfEntry(model: Model, table: GroupTable): (site: number) => number {
  const cwd = model.program?.cwd ?? null;
  return remembered(model.sites.count, (site) => {
    const info = siteInfo(model, site);
    if (info === null) return table.group(`unknown:${site}`, `<unknown function site ${site}>`);
    const name = info.name || info.func || '?';
    return table.group(`function:${site}`, `${siteLocation(info, cwd)} ${name}`, info.file, info.line, name);
  });
}

/** 'file': the group of the file a function entry site is in. */
function fileOfEntry(model: Model, table: GroupTable): (site: number) => number {
  const cwd = model.program?.cwd ?? null;
  return remembered(model.sites.count, (site) => {
    const info = siteInfo(model, site);
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
function byFrame(model: Model, table: GroupTable, mode: AttributionMode, ofEntry: (site: number) => number): Grouper {
  const { frame } = model.events;
  const { entrySite, parent } = model.frames;
  const noFrame = (): number => table.group('none', NO_FRAME);
  if (mode === 'innermost') return (e, out) => out.add(frame[e] === NONE ? noFrame() : ofEntry(entrySite[frame[e]!]!));
  if (mode === 'outermost') {
    const top = outermostFrames(model);
    return (e, out) => out.add(frame[e] === NONE ? noFrame() : ofEntry(entrySite[top[frame[e]!]!]!));
  }
  const stamp: number[] = [];
  return (e, out) => {
    if (frame[e] === NONE) return out.add(noFrame());
    for (let p = frame[e]!; p !== NONE; p = parent[p]!) {
      const g = ofEntry(entrySite[p]!);
      if (stamp[g] === e) continue;
      stamp[g] = e;
      out.add(g);
    }
  };
}

/** For each frame, the frame just below `main` on its path (or its root when `main` is not on it). */
function outermostFrames(model: Model): Int32Array {
  const { frames, sites } = model;
  const top = new Int32Array(frames.count);
  const mainness = new Uint8Array(sites.count); // 0 not yet known, 1 main, 2 not main
  const isMain = (f: number): boolean => {
    const site = frames.entrySite[f]!;
    if (site >= mainness.length) return false;
    if (mainness[site] === 0) {
      const info = siteInfo(model, site);
      mainness[site] = info !== null && (info.name || info.func) === 'main' ? 1 : 2;
    }
    return mainness[site] === 1;
  };
  for (let f = 0; f < frames.count; f++) {
    const p = frames.parent[f]!;
    // Frames are in order of entry, so a parent's row is already filled.
    top[f] = p === NONE ? f : isMain(top[p]!) ? f : top[p]!;
  }
  return top;
}

/** 'site': the record's allocation site, or for interposed records the function of the frame they are attributed to. */
function bySite(model: Model, table: GroupTable): Grouper {
  const { events, frames } = model;
  const cwd = model.program?.cwd ?? null;
  const ofInterposed = remembered(model.sites.count, (site) => {
    const info = siteInfo(model, site);
    return table.group(`interposed:${site}`, interposedLabel(info), info?.file ?? null, info?.line ?? null, info === null ? null : interposedFunction(info));
  });
  const ofSite = remembered(model.sites.count, (site) => {
    const info = siteInfo(model, site);
    return table.group(`site:${site}`, allocationSiteLabel(info, site, cwd), info?.file ?? null, info?.line ?? null, info?.func || null);
  });
  return (e, out) => {
    if ((events.flags[e]! & Flag.INTERPOSED) === 0) return out.add(ofSite(events.site[e]!));
    const f = events.frame[e]!;
    out.add(ofInterposed(f === NONE ? 0 : frames.entrySite[f]!));
  };
}

/** 'thread': the thread that made the call. */
function byThread(model: Model, table: GroupTable): Grouper {
  const ofThread = remembered(model.threads.length, (t) => {
    const info = model.threads[t];
    const index = info?.index ?? t;
    return table.group(`thread:${index}`, `thread ${index}${info?.osTid != null ? ` (tid ${info.osTid})` : ''}`, null, null, null, index);
  });
  return (e, out) => out.add(ofThread(model.events.thread[e]!));
}

/**
 * 'library': interposed events by the loaded object that called the allocator (EXT/CALLER), instrumented-site events
 * in one "(instrumented code)" row (a site does not say which object it was linked into), interposed events without
 * a CALLER record (older traces, addresses in no loaded object) in "(unknown library)".
 */
function byLibrary(model: Model, table: GroupTable): Grouper {
  const { events, libraries } = model;
  const ofLibrary = remembered(libraries.length, (lib) => {
    const path = libraries[lib]!;
    const base = path.slice(path.lastIndexOf('/') + 1) || path || `(library ${lib})`;
    return table.group(`library:${lib}`, base, path === '' ? null : path);
  });
  return (e, out) => {
    if ((events.flags[e]! & Flag.INTERPOSED) === 0) return out.add(table.group('library:instrumented', INSTRUMENTED_CODE));
    const lib = events.library[e]!;
    out.add(lib === NONE || lib >= libraries.length ? table.group('library:unknown', UNKNOWN_LIBRARY) : ofLibrary(lib));
  };
}
