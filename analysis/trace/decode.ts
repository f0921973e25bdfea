// Decodes trace bytes into the columnar Model: count the records and merge the threads' runs into one order (pass 1), walk the records again writing each event straight into its global row (pass 2), resolve blocks, frames and running totals (pass 3).
import { ALLOCATOR_KINDS, ExtKind, Flag, Kind, LeakClass, SiteKind, isEventKind, kindName } from './format.js';
import { readHeader, type TraceHeader } from './header.js';
import { memorySource, type ByteSource } from './byte-source.js';
import { IndexHeap } from './index-heap.js';
import { walkRecords, type RecordVisitor, type TraceRecord } from './records.js';
import { NONE, type BlockTable, type CallPath, type BranchTable, type EventTable, type FrameTable, type Model, type SiteTable, type StaticTable, type ThreadInfo } from '../model.js';
import { ProblemLog } from '../problems.js';
import { applyLeakClasses, buildSites, hex, libraryNames, RunFacts, runEnd, undefinedLibraries } from './run-facts.js';

export { TraceRefusedError } from './header.js';

export interface DecodeOptions {
  /** Called now and then with the fraction done (0…1) and what is being done. */
  onProgress?: (fraction: number, phase: string) => void;
}


const isHeapKind = (k: number): boolean => k === Kind.ALLOC || k === Kind.FREE || k === Kind.REALLOC;

/** `E.site` holds site ids up to this; a larger id (never a defined site) is kept exactly in `Collector.bigSites`. */
const SITE_BIG = 0xffffffff;

/**
 * One thread as pass 1 counts it. Its events form runs of equal merge key (the seq of the thread's latest heap or
 * THREAD_BEGIN record); the merge places whole runs, so a run's events occupy consecutive global rows.
 */
interface ThreadCount {
  index: number;
  events: number;
  heap: number;
  runs: number;
  runKey: Float64Array;
  runLen: Int32Array;
  /** After the merge: the global row of each run's first event. */
  runStart: Int32Array;
}

/** Pass 1: counts of events, heap records, frames and blocks, and each thread's runs of merge keys. */
class Counter implements RecordVisitor {
  n = 0;
  branches = 0;
  heap = 0;
  enters = 0;
  blocksCreated = 0;
  threads: ThreadCount[] = [];
  readonly rows = new Map<number, number>();
  private lastThread = -1;
  private lastRow = 0;

  rowOf(index: number): number {
    if (index === this.lastThread) return this.lastRow;
    let row = this.rows.get(index);
    if (row === undefined) {
      row = this.threads.length;
      this.rows.set(index, row);
      this.threads.push({ index, events: 0, heap: 0, runs: 0, runKey: new Float64Array(16), runLen: new Int32Array(16), runStart: new Int32Array(0) });
    }
    this.lastThread = index;
    this.lastRow = row;
    return row;
  }

  record(r: TraceRecord): void {
    if (r.ignored) return;
    const t = this.threads[this.rowOf(r.thread)]!;
    const kind = r.kind;
    if (kind === Kind.EXT && r.subkind === ExtKind.BRANCH) this.branches++;
    if (!isEventKind(kind)) return;
    this.n++;
    t.events++;
    const k = t.runs;
    if (k > 0 && t.runKey[k - 1] === r.seq) {
      t.runLen[k - 1]!++;
    } else {
      if (k === t.runKey.length) {
        const key = new Float64Array(2 * k);
        key.set(t.runKey);
        t.runKey = key;
        const len = new Int32Array(2 * k);
        len.set(t.runLen);
        t.runLen = len;
      }
      t.runKey[k] = r.seq;
      t.runLen[k] = 1;
      t.runs = k + 1;
    }
    if (isHeapKind(kind)) {
      t.heap++;
      this.heap++;
      if (kind === Kind.ALLOC || (kind === Kind.REALLOC && !r.noBlock && !r.failed)) this.blocksCreated++;
    } else if (kind === Kind.ENTER) {
      this.enters++;
    }
  }
}

/**
 * The merge into one global order. Key: (seq key, thread index, position in thread). Sets each run's first global row;
 * returns the thread rows sorted by trace thread index (rank → row).
 */
function mergeRuns(counter: Counter): number[] {
  const threads = counter.threads;
  const order = threads.map((_, row) => row).sort((a, b) => threads[a]!.index - threads[b]!.index);
  const T = order.length;
  for (const t of threads) t.runStart = new Int32Array(t.runs);
  if (T === 1) {
    const t = threads[0]!;
    for (let k = 0, g = 0; k < t.runs; k++) {
      t.runStart[k] = g;
      g += t.runLen[k]!;
    }
    return order;
  }
  const cursor = new Int32Array(T);
  // Thread ranks keyed by (key of the thread's next run, rank).
  const keyOf = (rank: number): number => threads[order[rank]!]!.runKey[cursor[rank]!]!;
  const heap = new IndexHeap((a, b) => {
    const ka = keyOf(a);
    const kb = keyOf(b);
    return ka < kb || (ka === kb && a < b);
  });
  for (let rank = 0; rank < T; rank++) if (threads[order[rank]!]!.runs > 0) heap.push(rank);
  let out = 0;
  while (heap.size > 0) {
    const rank = heap.pop();
    const t = threads[order[rank]!]!;
    const k = cursor[rank]!;
    t.runStart[k] = out;
    out += t.runLen[k]!;
    cursor[rank] = k + 1;
    if (k + 1 < t.runs) heap.push(rank);
  }
  return order;
}

interface ThreadTemp {
  index: number;
  osTid: number | null;
  /** Global row of the thread's latest event. */
  lastEvent: number;
  /** Time of the latest TIME record, and whether there was one. */
  lastTime: number;
  timeSeen: boolean;
  /** Global rows of the events since the latest TIME record (`pending[0 .. pendingN)`), to interpolate their times. */
  pending: Int32Array;
  pendingN: number;
  /** Heap row of the thread's latest ALLOC / FREE / REALLOC (the one an EXT/CALLER applies to), or NONE. */
  lastHeap: number;
  /** The next heap row of this thread (its heap rows are consecutive, in its order). */
  nextHeap: number;
  /** Run cursor: current run, next global row, events left in the run. */
  run: number;
  nextRow: number;
  left: number;
  counted: ThreadCount;
}

/**
 * Pass 2: records in file order, each event written straight into its global row of the final event columns.
 * Until pass 3, `E.site` holds the record's raw site (see SITE_BIG) and `E.newBlock` the heap row of heap events.
 */
class Collector implements RecordVisitor {
  /** Record offset per global row: Uint32Array when the file is under 4 GiB, exact either way. */
  readonly offset: Uint32Array | Float64Array;
  /** Global row → site id, for site ids above SITE_BIG. */
  readonly bigSites = new Map<number, number>();

  /** Heap records, each thread's consecutive and in its order. FREE: freed block id (0 if untracked); REALLOC: old block id (0 if none). */
  readonly hBlock: Float64Array;
  readonly hSeq: Float64Array;
  readonly hAddr: Float64Array;
  readonly hUsable: Float64Array;
  readonly hFn: Uint8Array;
  /** EXT/CALLER: library index of the heap record, or NONE. */
  readonly hLib: Int32Array;

  readonly threads: ThreadTemp[];
  /** Row → rank (position in trace thread index order). */
  readonly rowRank: Uint32Array;
  private lastThread = -1;
  private lastRow = 0;

  statics: { event: number; address: number }[] = [];
  /** LINKED records: the freeing event (global row), ids, partial flag, offset. */
  linked: { event: number; ids: number[]; partial: boolean; offset: number }[] = [];
  /** The global row of the first END event. */
  endEvent = NONE;
  readonly facts: RunFacts;
  /** EXT/CALL_PATH: the distinct paths, and per heap row the path's index. */
  readonly paths: CallPath[] = [];
  private readonly pathIds = new Map<string, number>();
  readonly hPath = new Map<number, number>();
  maxSeq = 0;
  /** EXT/BRANCH records in file order (each thread's in its order); `after` is filled in as they come. */
  readonly branches: BranchTable;

  constructor(
    private readonly problems: ProblemLog,
    private readonly counter: Counter,
    order: number[],
    readonly E: EventTable,
    fileBytes: number,
  ) {
    this.facts = new RunFacts(problems);
    const n = counter.n;
    this.offset = fileBytes <= 0xffffffff ? new Uint32Array(n) : new Float64Array(n);
    const nh = counter.heap;
    this.hBlock = new Float64Array(nh);
    this.hSeq = new Float64Array(nh);
    this.hAddr = new Float64Array(nh);
    this.hUsable = new Float64Array(nh);
    this.hFn = new Uint8Array(nh);
    this.hLib = new Int32Array(nh).fill(NONE);
    const nbr = counter.branches;
    this.branches = { count: 0, after: new Int32Array(nbr), thread: new Uint32Array(nbr), site: new Uint32Array(nbr), taken: new Uint8Array(nbr) };
    this.rowRank = new Uint32Array(order.length);
    order.forEach((row, rank) => (this.rowRank[row] = rank));
    let heapRow = 0;
    this.threads = counter.threads.map((t) => {
      const temp: ThreadTemp = {
        index: t.index,
        osTid: null,
        lastEvent: NONE,
        lastTime: 0,
        timeSeen: false,
        pending: new Int32Array(64),
        pendingN: 0,
        lastHeap: NONE,
        nextHeap: heapRow,
        run: -1,
        nextRow: 0,
        left: 0,
        counted: t,
      };
      heapRow += t.heap;
      return temp;
    });
  }

  private rowOf(index: number): number {
    if (index === this.lastThread) return this.lastRow;
    const row = this.counter.rows.get(index)!;
    this.lastThread = index;
    this.lastRow = row;
    return row;
  }

  private heapPush(t: ThreadTemp, block: number, seq: number, addr: number, usable: number, fn: number): number {
    const h = t.nextHeap++;
    this.hBlock[h] = block;
    this.hSeq[h] = seq;
    this.hAddr[h] = addr;
    this.hUsable[h] = usable;
    this.hFn[h] = fn > 255 ? 0 : fn;
    t.lastHeap = h;
    return h;
  }

  private event(r: TraceRecord, row: number, site: number, value: number, heapRow: number): number {
    const t = this.threads[row]!;
    if (t.left === 0) {
      const k = ++t.run;
      t.nextRow = t.counted.runStart[k]!;
      t.left = t.counted.runLen[k]!;
    }
    const g = t.nextRow++;
    t.left--;
    const E = this.E;
    E.kind[g] = r.kind;
    E.flags[g] = r.flags;
    E.thread[g] = this.rowRank[row]!;
    if (site < SITE_BIG) {
      E.site[g] = site;
    } else {
      E.site[g] = SITE_BIG;
      this.bigSites.set(g, site);
    }
    E.value[g] = value;
    E.newBlock[g] = heapRow;
    this.offset[g] = r.offset;
    E.time[g] = t.lastTime;
    if (t.pendingN === t.pending.length) {
      const p = new Int32Array(2 * t.pendingN);
      p.set(t.pending);
      t.pending = p;
    }
    t.pending[t.pendingN++] = g;
    t.lastEvent = g;
    return g;
  }

  record(r: TraceRecord): void {
    if (r.ignored) return;
    const row = this.rowOf(r.thread);
    if (r.seq > this.maxSeq) this.maxSeq = r.seq;
    const t = this.threads[row]!;
    switch (r.kind) {
      case Kind.ALLOC:
        this.event(r, row, r.site, r.size, this.heapPush(t, 0, r.seq, r.address, r.usable, r.fn));
        break;
      case Kind.FREE:
        this.event(r, row, r.site, 0, this.heapPush(t, r.block, r.seq, r.address, 0, r.fn));
        break;
      case Kind.REALLOC:
        this.event(r, row, r.site, r.size, this.heapPush(t, r.block, r.seq, r.address, r.usable, r.fn));
        break;
      case Kind.ENTER:
        this.event(r, row, r.site, r.depth, NONE);
        break;
      case Kind.EXIT:
        this.event(r, row, r.site, 0, NONE);
        break;
      case Kind.UNWIND:
      case Kind.LOST:
        this.event(r, row, 0, r.count, NONE);
        break;
      case Kind.STATIC:
        this.statics.push({ event: this.event(r, row, r.site, r.size, NONE), address: r.address });
        break;
      case Kind.THREAD_BEGIN: {
        if (t.osTid !== null) {
          this.problems.add('thread-begin-twice', 'warning', r.offset, r.thread, 'second THREAD_BEGIN record for this thread');
        } else {
          t.osTid = r.osTid;
        }
        this.event(r, row, 0, r.osTid, NONE);
        break;
      }
      case Kind.THREAD_END:
        this.event(r, row, 0, 0, NONE);
        break;
      case Kind.END: {
        const g = this.event(r, row, 0, r.status, NONE);
        if (this.facts.end === null) this.endEvent = g;
        this.facts.endRecord(r);
        break;
      }
      case Kind.TIME:
        this.clock(t, r.time);
        break;
      case Kind.LINKED:
        this.linked.push({ event: t.lastEvent, ids: r.ids, partial: r.partial, offset: r.offset });
        break;
      case Kind.EXT:
        if (r.subkind === ExtKind.LEAKS) {
          this.facts.leaksRecord(r);
        } else if (r.subkind === ExtKind.LIBRARY || r.subkind === ExtKind.CALLER) {
          this.library(r, t);
        } else if (r.subkind === ExtKind.BRANCH) {
          this.branch(r, row, t);
        } else if (r.subkind === ExtKind.RANK) {
          this.facts.rankRecord(r);
        } else if (r.subkind === ExtKind.CALL_PATH) {
          this.callPath(r, t);
        }
        break;
      case Kind.UNIT:
        this.facts.unit(r);
        break;
      case Kind.PROGRAM:
        this.facts.programRecord(r);
        break;
    }
  }

  /** EXT/LIBRARY (define an index) or EXT/CALLER (the library of the thread's latest heap record). */
  private library(r: TraceRecord, t: ThreadTemp): void {
    if (!this.facts.library(r)) return;
    if (t.lastHeap === NONE || this.hLib[t.lastHeap] !== NONE) {
      this.facts.strayCaller(r);
      return;
    }
    this.hLib[t.lastHeap] = r.library;
    this.facts.calledLibrary(r);
  }

  /** EXT/CALL_PATH: the path of the thread's latest heap record (which has a CALLER). */
  private callPath(r: TraceRecord, t: ThreadTemp): void {
    if (t.lastHeap === NONE || this.hLib[t.lastHeap] === NONE || this.hPath.has(t.lastHeap)) {
      this.facts.strayCallPath(r);
      return;
    }
    if (!this.facts.callPathLibraries(r)) return;
    const key = `${r.pathFlags}|${r.pathLibs.join(',')}|${r.pathOffsets.join(',')}`;
    let id = this.pathIds.get(key);
    if (id === undefined) {
      id = this.paths.push({ flags: r.pathFlags, libraries: r.pathLibs, offsets: r.pathOffsets }) - 1;
      this.pathIds.set(key, id);
    }
    this.hPath.set(t.lastHeap, id);
  }

  /** EXT/BRANCH: placed after the thread's latest event; the site is checked once the sites are known. */
  private branch(r: TraceRecord, row: number, t: ThreadTemp): void {
    const b = this.branches;
    const k = b.count++;
    b.after[k] = t.lastEvent;
    b.thread[k] = this.rowRank[row]!;
    b.site[k] = r.site;
    b.taken[k] = r.taken;
  }

  /** A TIME record: interpolate the events since the thread's previous one. */
  private clock(t: ThreadTemp, now: number): void {
    const pending = t.pending;
    const k = t.pendingN;
    const time = this.E.time;
    if (!t.timeSeen) {
      for (let j = 0; j < k; j++) time[pending[j]!] = now;
    } else {
      const from = t.lastTime;
      const step = (now - from) / (k + 1);
      for (let j = 0; j < k; j++) time[pending[j]!] = from + step * (j + 1);
    }
    t.pendingN = 0;
    t.lastTime = now;
    t.timeSeen = true;
  }
}



/** Maps live block ids to block rows: a dense array when ids are small enough, else a Map. */
class LiveBlocks {
  private readonly dense: Int32Array | null;
  private readonly map = new Map<number, number>();
  constructor(maxId: number, events: number) {
    this.dense = maxId <= 4 * events + 1024 && maxId < 2 ** 31 ? new Int32Array(maxId + 1) : null;
  }
  get(id: number): number {
    if (this.dense !== null) {
      return Number.isInteger(id) && id >= 0 && id < this.dense.length ? this.dense[id]! - 1 : NONE;
    }
    return this.map.get(id) ?? NONE;
  }
  set(id: number, row: number): void {
    if (this.dense !== null) this.dense[id] = row + 1;
    else this.map.set(id, row);
  }
  delete(id: number): void {
    if (this.dense !== null) this.dense[id] = 0;
    else this.map.delete(id);
  }
}

/** Decodes a whole trace. Throws TraceRefusedError if the file is not a readable trace; never throws after the header. */
export function decodeTrace(input: Uint8Array | ByteSource, options: DecodeOptions = {}): Model {
  const bytes = input instanceof Uint8Array ? memorySource(input) : input;
  const header = readHeader(bytes);
  const problems = new ProblemLog();
  const progress = options.onProgress;
  if (header.pointerSize !== 4 && header.pointerSize !== 8) {
    problems.add('pointer-size', 'warning', 16, null, `header gives a pointer size of ${header.pointerSize} bytes; expected 4 or 8`);
  }

  // Pass 1: count, so that every column is allocated once at its final size, and merge the threads' runs.
  const counter = new Counter();
  walkRecords(bytes, header, counter, new ProblemLog(), {
    onProgress: progress && ((done, total) => progress((0.2 * done) / total, 'counting records')),
  });
  progress?.(0.2, 'ordering events');
  const order = mergeRuns(counter);

  // Pass 2: the events into their global rows.
  const n = counter.n;
  const E: EventTable = {
    count: n,
    kind: new Uint8Array(n),
    flags: new Uint8Array(n),
    thread: new Uint32Array(n),
    site: new Uint32Array(n),
    time: new Float64Array(n),
    value: new Float64Array(n),
    newBlock: new Int32Array(n),
    oldBlock: new Int32Array(n),
    frame: new Int32Array(n),
    stack: new Float64Array(n),
    stackTotal: new Float64Array(n),
    heapRequested: new Float64Array(n),
    heapUsable: new Float64Array(n),
    library: new Int32Array(n).fill(NONE),
  };
  const c = new Collector(problems, counter, order, E, bytes.size);
  walkRecords(bytes, header, c, problems, {
    onProgress: progress && ((done, total) => progress(0.2 + (0.55 * done) / total, 'reading records')),
  });

  // Pass 3.
  progress?.(0.75, 'resolving blocks and frames');
  const sites = buildSites(c.facts, problems);
  return resolve(header, c, counter, order, sites, problems, progress);
}

function resolve(
  header: TraceHeader,
  c: Collector,
  counter: Counter,
  order: number[],
  sites: SiteTable,
  problems: ProblemLog,
  progress: DecodeOptions['onProgress'],
): Model {
  const E = c.E;
  const n = E.count;
  const threads: ThreadInfo[] = order.map((row) => ({
    index: c.threads[row]!.index,
    osTid: c.threads[row]!.osTid,
    beginEvent: NONE,
    endEvent: NONE,
    events: 0,
    maxStack: 0,
    maxStackEvent: NONE,
  }));
  const T = threads.length;
  const B = blockTable(counter.blocksCreated);
  const F = frameTable(counter.enters);
  const statics = staticTable(c.statics.length);
  const staticAddress = new Map<number, number>();
  for (const s of c.statics) staticAddress.set(s.event, s.address);
  const untracked = { event: [] as number[], address: [] as number[] };
  /** Heap event → index in `c.paths` (EXT/CALL_PATH). */
  const callPathOf = new Map<number, number>();
  // LINKED sets waiting for their freeing event (global row → list position).
  const linkOf = new Map<number, number>();
  c.linked.forEach((l, i) => linkOf.set(l.event, i));
  const L = { event: [] as number[], start: [0], blocks: [] as number[], partial: [] as number[] };

  const live = new LiveBlocks(c.maxSeq, n);
  const openFrames: number[][] = Array.from({ length: T }, () => []);
  const threadStack = new Float64Array(T);
  let stackTotal = 0;
  let heapReq = 0;
  let heapUse = 0;
  let lost = 0;
  let staticCount = 0;
  const where = (i: number): [number, number] => [c.offset[i]!, threads[E.thread[i]!]!.index];
  const rawSite = (i: number): number => (E.site[i] === SITE_BIG ? (c.bigSites.get(i) ?? SITE_BIG) : E.site[i]!);
  const checkSite = (id: number, f: number): number => {
    if (id === 0) return 0;
    if (id < sites.count && sites.kind[id] !== 0) return id;
    const [off, th] = where(f);
    problems.add('unknown-site', 'warning', off, th, `${kindName(E.kind[f]!)} record names site ${id}, which no UNIT record defines`);
    return 0;
  };
  const endBlock = (id: number, i: number, f: number): number => {
    const b = live.get(id);
    if (b === NONE) {
      const [off, th] = where(f);
      problems.add('unknown-block', 'warning', off, th, `${kindName(E.kind[f]!)} record ends block ${hex(id)}, which is not live (never allocated, already freed, or lost)`);
      return NONE;
    }
    live.delete(id);
    B.freeEvent[b] = i;
    heapReq -= B.requested[b]!;
    heapUse -= B.usable[b]!;
    return b;
  };
  const setStack = (rank: number, depth: number): void => {
    stackTotal += depth - threadStack[rank]!;
    threadStack[rank] = depth;
  };
  const closeFrames = (stack: number[], count: number, i: number): number => {
    let last = NONE;
    for (let j = 0; j < count && stack.length > 0; j++) {
      last = stack.pop()!;
      F.exit[last] = i;
    }
    return last;
  };
  const progressEvery = 1 << 20;

  for (let i = 0; i < n; i++) {
    if (progress && (i & (progressEvery - 1)) === 0 && i > 0) progress(0.75 + (0.25 * i) / n, 'resolving blocks and frames');
    const f = i;
    const kind = E.kind[i]!;
    const flags = E.flags[i]!;
    const rank = E.thread[i]!;
    const thread = threads[rank]!;
    const stack = openFrames[rank]!;
    let value = E.value[i]!;
    let site = 0;
    let frame = stack.length > 0 ? stack[stack.length - 1]! : NONE;
    let newBlock = NONE;
    let oldBlock = NONE;
    switch (kind) {
      case Kind.THREAD_BEGIN:
        if (thread.beginEvent === NONE) thread.beginEvent = i;
        break;
      case Kind.ENTER: {
        site = checkSite(rawSite(i), i);
        const fr = F.count++;
        F.thread[fr] = rank;
        F.enter[fr] = i;
        F.exit[fr] = NONE;
        F.entrySite[fr] = site;
        F.exitSite[fr] = 0;
        F.depth[fr] = value;
        F.parent[fr] = frame;
        stack.push(fr);
        frame = fr;
        setStack(rank, value);
        break;
      }
      case Kind.EXIT: {
        site = checkSite(rawSite(i), i);
        const fr = closeFrames(stack, 1, i);
        if (fr !== NONE) F.exitSite[fr] = site;
        frame = fr;
        setStack(rank, stack.length > 0 ? F.depth[stack[stack.length - 1]!]! : 0);
        break;
      }
      case Kind.UNWIND:
        frame = closeFrames(stack, value, i);
        setStack(rank, stack.length > 0 ? F.depth[stack[stack.length - 1]!]! : 0);
        break;
      case Kind.THREAD_END:
        closeFrames(stack, stack.length, i);
        setStack(rank, 0);
        if (thread.endEvent === NONE) thread.endEvent = i;
        break;
      case Kind.ALLOC:
      case Kind.FREE:
      case Kind.REALLOC: {
        const h = E.newBlock[i]!;
        site = checkSite(rawSite(i), i);
        E.library[i] = c.hLib[h]!;
        const path = c.hPath.get(h);
        if (path !== undefined) callPathOf.set(i, path);
        if (kind === Kind.FREE) {
          if ((flags & Flag.FREE_UNTRACKED) !== 0) {
            untracked.event.push(i);
            untracked.address.push(c.hAddr[h]!);
            break;
          }
          oldBlock = endBlock(c.hBlock[h]!, i, f);
          value = oldBlock === NONE ? 0 : B.requested[oldBlock]!;
          break;
        }
        if (kind === Kind.REALLOC) {
          if ((flags & Flag.REALLOC_FAILED) !== 0) break;
          const old = c.hBlock[h]!;
          if (old !== 0) oldBlock = endBlock(old, i, f);
          if ((flags & Flag.REALLOC_NO_BLOCK) !== 0) break;
        }
        const id = c.hSeq[h]!;
        if (live.get(id) !== NONE) {
          const [off, th] = where(f);
          problems.add('block-reused', 'warning', off, th, `${kindName(kind)} creates block ${hex(id)}, which is already live`);
        }
        const b = B.count++;
        const interposed = (flags & Flag.INTERPOSED) !== 0;
        const siteKind = sites.kind[site] ?? 0;
        B.id[b] = id;
        B.allocEvent[b] = i;
        B.freeEvent[b] = NONE;
        B.requested[b] = value;
        B.usable[b] = c.hUsable[h]!;
        B.address[b] = c.hAddr[h]!;
        B.site[b] = site;
        B.fn[b] = interposed ? c.hFn[h]! : ALLOCATOR_KINDS.has(siteKind) ? siteKind : 0;
        B.thread[b] = rank;
        B.interposed[b] = interposed ? 1 : 0;
        B.library[b] = c.hLib[h]!;
        live.set(id, b);
        heapReq += value;
        heapUse += B.usable[b]!;
        newBlock = b;
        break;
      }
      case Kind.STATIC: {
        site = checkSite(rawSite(i), i);
        const s = staticCount++;
        statics.site[s] = site;
        statics.address[s] = staticAddress.get(f) ?? 0;
        statics.size[s] = value;
        statics.event[s] = i;
        statics.totalBytes += value;
        break;
      }
      case Kind.LOST:
        lost += value;
        break;
    }
    E.site[i] = site;
    E.value[i] = value;
    E.newBlock[i] = newBlock;
    E.oldBlock[i] = oldBlock;
    E.frame[i] = frame;
    const depth = threadStack[rank]!;
    E.stack[i] = depth;
    E.stackTotal[i] = stackTotal;
    E.heapRequested[i] = heapReq;
    E.heapUsable[i] = heapUse;
    thread.events++;
    if (depth > thread.maxStack || thread.maxStackEvent === NONE) {
      thread.maxStack = depth;
      thread.maxStackEvent = i;
    }
    const li = linkOf.size === 0 ? undefined : linkOf.get(i);
    if (li !== undefined) {
      const l = c.linked[li]!;
      for (const id of l.ids) {
        const b = live.get(id);
        if (b === NONE) {
          problems.add('linked-unknown-block', 'warning', l.offset, thread.index, `LINKED names block ${hex(id)}, which is not live`);
        } else {
          L.blocks.push(b);
        }
      }
      L.event.push(i);
      L.partial.push(l.partial ? 1 : 0);
      L.start.push(L.blocks.length);
    }
  }

  const leakScan = applyLeakClasses(c.facts, (id) => live.get(id), (b, cls) => (B.leakClass[b] = cls), problems);

  const end = runEnd(c.facts, header, c.endEvent, problems);
  const libraries = libraryNames(c.facts);
  undefinedLibraries(c.facts, problems);
  const branches = sortBranches(c.branches, n);
  checkBranchSites(branches, sites, problems);
  progress?.(1, 'done');
  return {
    header,
    program: c.facts.program,
    rank: c.facts.rank,
    libraries,
    callPaths: { paths: c.paths, ofEvent: callPathOf },
    events: E,
    blocks: B,
    frames: F,
    sites,
    statics,
    linked: {
      count: L.event.length,
      event: Int32Array.from(L.event),
      start: Int32Array.from(L.start),
      blocks: Int32Array.from(L.blocks),
      partial: Uint8Array.from(L.partial),
    },
    untrackedFrees: {
      count: untracked.event.length,
      event: Int32Array.from(untracked.event),
      address: Float64Array.from(untracked.address),
    },
    branches,
    threads,
    end,
    lostRecords: lost,
    leakScan,
    problems: problems.list(),
  };
}

/** The block table, sized for `nb` blocks and filled by resolve(). */
function blockTable(nb: number): BlockTable {
  return {
    count: 0,
    id: new Float64Array(nb),
    allocEvent: new Int32Array(nb),
    freeEvent: new Int32Array(nb),
    requested: new Float64Array(nb),
    usable: new Float64Array(nb),
    address: new Float64Array(nb),
    site: new Uint32Array(nb),
    fn: new Uint8Array(nb),
    thread: new Uint32Array(nb),
    interposed: new Uint8Array(nb),
    library: new Int32Array(nb).fill(NONE),
    leakClass: new Uint8Array(nb).fill(LeakClass.NONE),
  };
}

/** The frame table, one row per ENTER. */
function frameTable(nf: number): FrameTable {
  return {
    count: 0,
    thread: new Uint32Array(nf),
    enter: new Int32Array(nf),
    exit: new Int32Array(nf),
    entrySite: new Uint32Array(nf),
    exitSite: new Uint32Array(nf),
    depth: new Float64Array(nf),
    parent: new Int32Array(nf),
  };
}

/** The static-object table, one row per STATIC. */
function staticTable(n: number): StaticTable {
  return {
    count: n,
    site: new Uint32Array(n),
    address: new Float64Array(n),
    size: new Float64Array(n),
    event: new Int32Array(n),
    totalBytes: 0,
  };
}

/**
 * Branches into the order of their `after` event (a stable counting sort: each thread's branches keep their order, and
 * one `after` event belongs to one thread). Branches before any event of their thread (NONE) come first.
 */
function sortBranches(b: BranchTable, events: number): BranchTable {
  const n = b.count;
  const start = new Int32Array(events + 2);
  for (let k = 0; k < n; k++) start[b.after[k]! + 2]!++;
  for (let e = 1; e < start.length; e++) start[e]! += start[e - 1]!;
  const out: BranchTable = { count: n, after: new Int32Array(n), thread: new Uint32Array(n), site: new Uint32Array(n), taken: new Uint8Array(n) };
  for (let k = 0; k < n; k++) {
    const to = start[b.after[k]! + 1]!++;
    out.after[to] = b.after[k]!;
    out.thread[to] = b.thread[k]!;
    out.site[to] = b.site[k]!;
    out.taken[to] = b.taken[k]!;
  }
  return out;
}

/** Sites a BRANCH names must be branch sites of some UNIT; others become site 0, with one warning for all. */
function checkBranchSites(b: BranchTable, sites: SiteTable, problems: ProblemLog): void {
  let bad = 0;
  let first = 0;
  for (let k = 0; k < b.count; k++) {
    const id = b.site[k]!;
    if (id < sites.count && sites.kind[id] === SiteKind.BRANCH) continue;
    if (bad++ === 0) first = id;
    b.site[k] = 0;
  }
  if (bad > 0) {
    problems.add('branch-site', 'warning', null, null, `${bad} BRANCH record(s) name a site that is not a branch site of any UNIT record (first: site ${first}); their site is dropped`);
  }
}
