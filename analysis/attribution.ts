// Attribution tables of `cc-memwrap report --by …`: heap bytes and allocator calls charged to functions, allocation sites, files or threads.
import { Flag, Kind, SiteKind } from './trace/format.js';
import { NONE, type Model } from './model.js';
import { allocationSiteLabel, interposedFunction, interposedLabel, siteInfo, siteLocation } from './sites.js';

export type AttributionBy = 'function' | 'site' | 'file' | 'thread' | 'library';
/** Which function on an event's call path gets it: the innermost open frame, the outermost one below `main`, or every distinct one. */
export type AttributionMode = 'innermost' | 'outermost' | 'inclusive';

export const ATTRIBUTION_BY: readonly AttributionBy[] = ['function', 'site', 'file', 'thread', 'library'];
export const ATTRIBUTION_MODES: readonly AttributionMode[] = ['innermost', 'outermost', 'inclusive'];

export interface AttributionOptions {
  by: AttributionBy;
  /** Default 'innermost'. Changes only 'function' and 'file' tables. */
  mode?: AttributionMode;
}

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

export interface Attribution {
  by: AttributionBy;
  mode: AttributionMode;
  /** Every group with at least one heap event, by max bytes descending, then label. */
  rows: AttributionRow[];
}

const NO_FRAME = '<no instrumented frame>';
/** 'library' rows of heap calls made at instrumented sites, and of interposed calls whose caller is not known. */
export const INSTRUMENTED_CODE = '(instrumented code)';
export const UNKNOWN_LIBRARY = '(unknown library)';

const [C_MALLOC, C_CALLOC, C_ALIGNED, C_STRDUP, C_REALLOC, C_FREE] = [0, 1, 2, 3, 4, 5] as const;
/** Numbers kept per group: net, min, max, allocated, freed, six counts. */
const STATS = 11;

/** The count an ALLOC of allocator `fn` (a site kind) goes to. */
function counterOf(fn: number): number {
  switch (fn) {
    case SiteKind.CALLOC:
      return C_CALLOC;
    case SiteKind.ALIGNED_ALLOC:
    case SiteKind.POSIX_MEMALIGN:
    case SiteKind.MEMALIGN:
    case SiteKind.VALLOC:
    case SiteKind.PVALLOC:
      return C_ALIGNED;
    case SiteKind.STRDUP:
    case SiteKind.STRNDUP:
      return C_STRDUP;
    case SiteKind.REALLOC:
    case SiteKind.REALLOCARRAY:
      return C_REALLOC;
    default:
      return C_MALLOC;
  }
}

function newRow(key: string, label: string, file: string | null, line: number | null, fn: string | null, thread: number | null): AttributionRow {
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

/** Told each heap event and the key of every group it is charged to (the same event can come once per group). */
export type AttributionVisitor = (event: number, key: string) => void;

/** The rows of one attribution table, sorted; see `attribution` for the options. */
export function attribute(model: Model, options: AttributionOptions): AttributionRow[] {
  return attribution(model, options).rows;
}

/**
 * Charges each heap event (ALLOC, FREE, REALLOC) to its group(s): the requested bytes of the block it creates are
 * added, those of the block it ends subtracted, so a function that frees what others allocated goes negative.
 * O(events) for 'innermost' and 'outermost', O(events × call depth) for 'inclusive'.
 */
export function attribution(model: Model, options: AttributionOptions, visit?: AttributionVisitor): Attribution {
  const by = options.by;
  const mode = options.mode ?? 'innermost';
  const { events, blocks, frames, sites } = model;
  const cwd = model.program?.cwd ?? null;
  const rows: AttributionRow[] = [];
  const byKey = new Map<string, number>();
  const group = (key: string, make: () => AttributionRow): number => {
    let g = byKey.get(key);
    if (g === undefined) {
      g = rows.push(make()) - 1;
      byKey.set(key, g);
    }
    return g;
  };

  // Group of a function entry site (by 'function' or 'file'), cached per site id.
  const entryGroup = new Int32Array(sites.count).fill(NONE);
  const noFrameGroup = (): number =>
    group('none', () => newRow('none', NO_FRAME, null, null, null, null));
  const groupOfEntry = (site: number): number => {
    if (site < entryGroup.length && entryGroup[site] !== NONE) return entryGroup[site]!;
    const info = siteInfo(model, site);
    let g: number;
    if (info === null) g = group(`unknown:${site}`, () => newRow(`unknown:${site}`, `<unknown function site ${site}>`, null, null, null, null));
    else if (by === 'file') {
      const file = info.file ?? '?';
      const rel = siteLocation({ ...info, file }, cwd);
      g = group(`file:${file}`, () => newRow(`file:${file}`, rel.slice(0, rel.lastIndexOf(':')), info.file, null, null, null));
    } else {
      const name = info.name || info.func || '?';
      g = group(`function:${site}`, () => newRow(`function:${site}`, `${siteLocation(info, cwd)} ${name}`, info.file, info.line, name, null));
    }
    if (site < entryGroup.length) entryGroup[site] = g;
    return g;
  };

  // 'outermost': for each frame, the frame just below main on its path (or its root when main is not on it).
  let top: Int32Array | null = null;
  if (mode === 'outermost' && (by === 'function' || by === 'file')) {
    top = new Int32Array(frames.count);
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
  }

  // 'site': the record's site, or for interposed records the attributed frame's function.
  const siteGroup = new Int32Array(sites.count).fill(NONE);
  const interposedGroup = new Int32Array(sites.count).fill(NONE);
  const groupOfSite = (e: number): number => {
    if ((events.flags[e]! & Flag.INTERPOSED) !== 0) {
      const f = events.frame[e]!;
      const site = f === NONE ? 0 : frames.entrySite[f]!;
      if (site < interposedGroup.length && interposedGroup[site] !== NONE) return interposedGroup[site]!;
      const info = siteInfo(model, site);
      const fn = interposedFunction(info);
      const g = group(`interposed:${site}`, () =>
        newRow(`interposed:${site}`, interposedLabel(info), info?.file ?? null, info?.line ?? null, info === null ? null : fn, null),
      );
      if (site < interposedGroup.length) interposedGroup[site] = g;
      return g;
    }
    const site = events.site[e]!;
    if (site < siteGroup.length && siteGroup[site] !== NONE) return siteGroup[site]!;
    const info = siteInfo(model, site);
    const g = group(`site:${site}`, () =>
      newRow(
        `site:${site}`,
        allocationSiteLabel(info, site, cwd),
        info?.file ?? null,
        info?.line ?? null,
        info?.func || null,
        null,
      ),
    );
    if (site < siteGroup.length) siteGroup[site] = g;
    return g;
  };

  const threadGroup = new Int32Array(model.threads.length).fill(NONE);
  const groupOfThread = (e: number): number => {
    const t = events.thread[e]!;
    if (threadGroup[t] !== NONE) return threadGroup[t]!;
    const info = model.threads[t];
    const index = info?.index ?? t;
    const label = `thread ${index}${info?.osTid != null ? ` (tid ${info.osTid})` : ''}`;
    const g = group(`thread:${index}`, () => newRow(`thread:${index}`, label, null, null, null, index));
    threadGroup[t] = g;
    return g;
  };

  // 'library': interposed events by the loaded object that called the allocator (EXT/CALLER), instrumented-site events
  // in one "(instrumented code)" row (a site does not say which object it was linked into), interposed events without
  // a CALLER record (older traces, addresses in no loaded object) in "(unknown library)".
  const libraryGroup = new Int32Array(model.libraries.length).fill(NONE);
  const groupOfLibrary = (e: number): number => {
    if ((events.flags[e]! & Flag.INTERPOSED) === 0) {
      return group('library:instrumented', () => newRow('library:instrumented', INSTRUMENTED_CODE, null, null, null, null));
    }
    const lib = events.library[e]!;
    if (lib === NONE || lib >= libraryGroup.length) {
      return group('library:unknown', () => newRow('library:unknown', UNKNOWN_LIBRARY, null, null, null, null));
    }
    if (libraryGroup[lib] !== NONE) return libraryGroup[lib]!;
    const path = model.libraries[lib]!;
    const base = path.slice(path.lastIndexOf('/') + 1) || path || `(library ${lib})`;
    const g = group(`library:${lib}`, () => newRow(`library:${lib}`, base, path === '' ? null : path, null, null, null));
    libraryGroup[lib] = g;
    return g;
  };

  // The groups of event e into `out`; returns how many.
  let out = new Int32Array(64);
  const stamp: number[] = [];
  const resolve = (e: number): number => {
    if (by === 'thread') {
      out[0] = groupOfThread(e);
      return 1;
    }
    if (by === 'site') {
      out[0] = groupOfSite(e);
      return 1;
    }
    if (by === 'library') {
      out[0] = groupOfLibrary(e);
      return 1;
    }
    const f = events.frame[e]!;
    if (f === NONE) {
      out[0] = noFrameGroup();
      return 1;
    }
    if (mode === 'innermost') {
      out[0] = groupOfEntry(frames.entrySite[f]!);
      return 1;
    }
    if (top !== null) {
      out[0] = groupOfEntry(frames.entrySite[top[f]!]!);
      return 1;
    }
    // inclusive: every distinct group on the path, once each (recursion charges a function once).
    let n = 0;
    for (let p = f; p !== NONE; p = frames.parent[p]!) {
      const g = groupOfEntry(frames.entrySite[p]!);
      if (stamp[g] === e) continue;
      stamp[g] = e;
      if (n === out.length) {
        const bigger = new Int32Array(out.length * 2);
        bigger.set(out);
        out = bigger;
      }
      out[n++] = g;
    }
    return n;
  };

  // Per-group numbers in typed arrays (grown as groups appear); row objects are filled at the end.
  // stat[g * STATS + …]: net, min, max, allocated, freed, then the counts in COUNT order.
  let stat = new Float64Array(16 * STATS);
  const { kind, newBlock, oldBlock } = events;
  for (let e = 0; e < events.count; e++) {
    const k = kind[e]!;
    if (k !== Kind.ALLOC && k !== Kind.FREE && k !== Kind.REALLOC) continue;
    const nb = newBlock[e]!;
    const ob = oldBlock[e]!;
    const added = nb === NONE ? 0 : blocks.requested[nb]!;
    const freed = ob === NONE ? 0 : blocks.requested[ob]!;
    let counter = -1;
    if (k === Kind.FREE) counter = ob === NONE ? -1 : C_FREE;
    else if (k === Kind.REALLOC) counter = C_REALLOC;
    else if (nb !== NONE) counter = counterOf(blocks.fn[nb]!);
    const n = resolve(e);
    if (visit !== undefined) for (let i = 0; i < n; i++) visit(e, rows[out[i]!]!.key);
    if (rows.length * STATS > stat.length) {
      const bigger = new Float64Array(Math.max(stat.length * 2, rows.length * STATS));
      bigger.set(stat);
      stat = bigger;
    }
    for (let i = 0; i < n; i++) {
      const at = out[i]! * STATS;
      const net = (stat[at] = stat[at]! + added - freed);
      if (net < stat[at + 1]!) stat[at + 1] = net;
      if (net > stat[at + 2]!) stat[at + 2] = net;
      stat[at + 3] = stat[at + 3]! + added;
      stat[at + 4] = stat[at + 4]! + freed;
      if (counter >= 0) stat[at + 5 + counter] = stat[at + 5 + counter]! + 1;
    }
  }
  for (let g = 0; g < rows.length; g++) {
    const row = rows[g]!;
    const at = g * STATS;
    row.netBytes = stat[at]!;
    row.minBytes = stat[at + 1]!;
    row.maxBytes = stat[at + 2]!;
    row.bytesAllocated = stat[at + 3]!;
    row.bytesFreed = stat[at + 4]!;
    const c = row.counts;
    c.malloc = stat[at + 5 + C_MALLOC]!;
    c.calloc = stat[at + 5 + C_CALLOC]!;
    c.aligned = stat[at + 5 + C_ALIGNED]!;
    c.strdup = stat[at + 5 + C_STRDUP]!;
    c.realloc = stat[at + 5 + C_REALLOC]!;
    c.free = stat[at + 5 + C_FREE]!;
  }

  rows.sort((a, b) => b.maxBytes - a.maxBytes || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
  return { by, mode, rows };
}
