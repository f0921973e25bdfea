// Decodes trace bytes into the columnar Model: walk the records (pass 1), merge the threads into one order (pass 2), resolve blocks, frames and running totals (pass 3).
import { ExtKind, Flag, Kind, LeakClass, SiteKind, kindName } from './format.js';
import { parseHeader, type TraceHeader } from './header.js';
import { walkRecords, type RecordVisitor, type TraceRecord, type UnitTable } from './records.js';
import { NONE, type Model, type RunEnd, type SiteTable, type ThreadInfo } from '../model.js';
import { ProblemLog } from '../problems.js';

export { TraceRefusedError } from './header.js';

export interface DecodeOptions {
  /** Called now and then with the fraction done (0…1) and what is being done. */
  onProgress?: (fraction: number, phase: string) => void;
}

/** Site ids above this are refused (a UNIT claiming them is skipped): the site table is a dense array. */
export const MAX_SITE_ID = 1 << 24;
/** Library indices at or above this are refused (EXT/LIBRARY and EXT/CALLER naming them are ignored). */
export const MAX_LIBRARY = 1 << 16;

type Typed = Uint8Array | Uint32Array | Int32Array | Float64Array;
function grown<T extends Typed>(a: T, n: number): T {
  const b = new (a.constructor as new (n: number) => T)(n);
  b.set(a as never);
  return b;
}

interface ThreadTemp {
  index: number;
  osTid: number | null;
  /** File-order index of the thread's latest event. */
  lastEvent: number;
  /** Time of the latest TIME record, and whether there was one. */
  lastTime: number;
  timeSeen: boolean;
  /** Events since the latest TIME record, waiting for the next one to interpolate their times. */
  pending: number[];
  /** Heap row of the thread's latest ALLOC / FREE / REALLOC (the one an EXT/CALLER applies to), or NONE. */
  lastHeap: number;
}

/** Pass 1: records in file order into growable temporary columns. */
class Collector implements RecordVisitor {
  n = 0;
  private cap = 1024;
  kind = new Uint8Array(this.cap);
  flags = new Uint8Array(this.cap);
  /** Row in `threads` (first-seen order). */
  thread = new Uint32Array(this.cap);
  /** Sequence number of the thread's latest heap / THREAD_BEGIN record at or before the event. */
  seqKey = new Float64Array(this.cap);
  site = new Float64Array(this.cap);
  value = new Float64Array(this.cap);
  time = new Float64Array(this.cap);
  offset = new Float64Array(this.cap);
  /** Row in the heap columns below for ALLOC / FREE / REALLOC, else NONE. */
  heapRow = new Int32Array(this.cap);

  hn = 0;
  private hcap = 1024;
  /** FREE: freed block id (0 if untracked); REALLOC: old block id (0 if none). */
  hBlock = new Float64Array(this.hcap);
  hSeq = new Float64Array(this.hcap);
  hAddr = new Float64Array(this.hcap);
  hUsable = new Float64Array(this.hcap);
  hFn = new Uint8Array(this.hcap);
  /** EXT/CALLER: library index of the heap record, or NONE. */
  hLib = new Int32Array(this.hcap);

  threads: ThreadTemp[] = [];
  private rows = new Map<number, number>();
  private lastThread = -1;
  private lastRow = 0;

  units: { unit: UnitTable; offset: number; thread: number }[] = [];
  statics: { event: number; address: number }[] = [];
  /** LINKED records: the freeing event (file order), ids, partial flag, offset. */
  linked: { event: number; ids: number[]; partial: boolean; offset: number }[] = [];
  end: { event: number; how: number; status: number } | null = null;
  /** EXT/LEAKS records: ids, classes, partial flag, where. */
  leaks: { ids: number[]; classes: number[]; partial: boolean; offset: number; thread: number }[] = [];
  program: { path: string; cwd: string } | null = null;
  /** EXT/LIBRARY: path by library index (the first definition counts). */
  libraries = new Map<number, string>();
  /** Library indices CALLER records name. */
  called = new Set<number>();
  maxLibrary = -1;
  maxSeq = 0;
  blocksCreated = 0;
  enters = 0;

  constructor(
    private readonly problems: ProblemLog,
    expectedRecords: number,
  ) {
    this.resize(Math.max(1024, Math.min(expectedRecords, 1 << 22)));
  }

  private resize(cap: number): void {
    this.cap = cap;
    this.kind = grown(this.kind, cap);
    this.flags = grown(this.flags, cap);
    this.thread = grown(this.thread, cap);
    this.seqKey = grown(this.seqKey, cap);
    this.site = grown(this.site, cap);
    this.value = grown(this.value, cap);
    this.time = grown(this.time, cap);
    this.offset = grown(this.offset, cap);
    this.heapRow = grown(this.heapRow, cap);
  }

  private heapPush(block: number, seq: number, addr: number, usable: number, fn: number): number {
    if (this.hn === this.hcap) {
      const cap = this.hcap * 2;
      this.hcap = cap;
      this.hBlock = grown(this.hBlock, cap);
      this.hSeq = grown(this.hSeq, cap);
      this.hAddr = grown(this.hAddr, cap);
      this.hUsable = grown(this.hUsable, cap);
      this.hFn = grown(this.hFn, cap);
      this.hLib = grown(this.hLib, cap);
    }
    const h = this.hn++;
    this.hBlock[h] = block;
    this.hSeq[h] = seq;
    this.hAddr[h] = addr;
    this.hUsable[h] = usable;
    this.hFn[h] = fn > 255 ? 0 : fn;
    this.hLib[h] = NONE;
    return h;
  }

  private rowOf(index: number): number {
    if (index === this.lastThread) return this.lastRow;
    let row = this.rows.get(index);
    if (row === undefined) {
      row = this.threads.length;
      this.rows.set(index, row);
      this.threads.push({ index, osTid: null, lastEvent: NONE, lastTime: 0, timeSeen: false, pending: [], lastHeap: NONE });
    }
    this.lastThread = index;
    this.lastRow = row;
    return row;
  }

  private event(r: TraceRecord, row: number, site: number, value: number, heapRow: number): number {
    if (this.n === this.cap) this.resize(this.cap * 2);
    const f = this.n++;
    this.kind[f] = r.kind;
    this.flags[f] = r.flags;
    this.thread[f] = row;
    this.seqKey[f] = r.seq;
    this.site[f] = site;
    this.value[f] = value;
    this.offset[f] = r.offset;
    this.heapRow[f] = heapRow;
    const t = this.threads[row]!;
    this.time[f] = t.lastTime;
    t.pending.push(f);
    t.lastEvent = f;
    if (heapRow !== NONE) t.lastHeap = heapRow;
    return f;
  }

  record(r: TraceRecord): void {
    if (r.ignored) return;
    const row = this.rowOf(r.thread);
    if (r.seq > this.maxSeq) this.maxSeq = r.seq;
    switch (r.kind) {
      case Kind.ALLOC:
        this.blocksCreated++;
        this.event(r, row, r.site, r.size, this.heapPush(0, r.seq, r.address, r.usable, r.fn));
        break;
      case Kind.FREE:
        this.event(r, row, r.site, 0, this.heapPush(r.block, r.seq, r.address, 0, r.fn));
        break;
      case Kind.REALLOC:
        if (!r.noBlock && !r.failed) this.blocksCreated++;
        this.event(r, row, r.site, r.size, this.heapPush(r.block, r.seq, r.address, r.usable, r.fn));
        break;
      case Kind.ENTER:
        this.enters++;
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
        const t = this.threads[row]!;
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
        const f = this.event(r, row, 0, r.status, NONE);
        if (this.end === null) this.end = { event: f, how: r.how, status: r.status };
        else this.problems.add('end-twice', 'warning', r.offset, r.thread, 'second END record; the first one counts');
        break;
      }
      case Kind.TIME:
        this.clock(row, r.time);
        break;
      case Kind.LINKED:
        this.linked.push({ event: this.threads[row]!.lastEvent, ids: r.ids, partial: r.partial, offset: r.offset });
        break;
      case Kind.EXT:
        if (r.subkind === ExtKind.LEAKS) {
          this.leaks.push({ ids: r.ids, classes: r.classes, partial: r.partial, offset: r.offset, thread: r.thread });
        } else if (r.subkind === ExtKind.LIBRARY || r.subkind === ExtKind.CALLER) {
          this.library(r, row);
        }
        break;
      case Kind.UNIT:
        if (r.unit !== null) this.units.push({ unit: r.unit, offset: r.offset, thread: r.thread });
        break;
      case Kind.PROGRAM:
        if (this.program === null) this.program = { path: r.path, cwd: r.cwd };
        else this.problems.add('program-twice', 'warning', r.offset, r.thread, 'second PROGRAM record; the first one counts');
        break;
    }
  }

  /** EXT/LIBRARY (define an index) or EXT/CALLER (the library of the thread's latest heap record). */
  private library(r: TraceRecord, row: number): void {
    const name = r.subkind === ExtKind.LIBRARY ? 'LIBRARY' : 'CALLER';
    if (r.library >= MAX_LIBRARY) {
      this.problems.add('library-range', 'warning', r.offset, r.thread, `${name} names library ${r.library}, above the limit ${MAX_LIBRARY}; ignored`);
      return;
    }
    if (r.library > this.maxLibrary) this.maxLibrary = r.library;
    if (r.subkind === ExtKind.LIBRARY) {
      if (this.libraries.has(r.library)) {
        this.problems.add('library-redefined', 'warning', r.offset, r.thread, `LIBRARY redefines library ${r.library}; the first definition counts`);
      } else {
        this.libraries.set(r.library, r.path);
      }
      return;
    }
    const t = this.threads[row]!;
    if (t.lastHeap === NONE || this.hLib[t.lastHeap] !== NONE) {
      this.problems.add('caller-without-heap', 'warning', r.offset, r.thread, 'CALLER record does not follow a heap record of its thread; ignored');
      return;
    }
    this.hLib[t.lastHeap] = r.library;
    this.called.add(r.library);
  }

  /** A TIME record: interpolate the events since the thread's previous one. */
  private clock(row: number, now: number): void {
    const t = this.threads[row]!;
    const pending = t.pending;
    const k = pending.length;
    if (!t.timeSeen) {
      for (let j = 0; j < k; j++) this.time[pending[j]!] = now;
    } else {
      const from = t.lastTime;
      const step = (now - from) / (k + 1);
      for (let j = 0; j < k; j++) this.time[pending[j]!] = from + step * (j + 1);
    }
    pending.length = 0;
    t.lastTime = now;
    t.timeSeen = true;
  }
}

/** Pass 2: the permutation from global order to file order. Key: (seqKey, thread index, position in thread). */
function mergeOrder(c: Collector, rowRank: Uint32Array): Int32Array {
  const n = c.n;
  const T = c.threads.length;
  const perm = new Int32Array(n);
  if (T <= 1) {
    for (let i = 0; i < n; i++) perm[i] = i;
    return perm;
  }
  // Group file-order indices by thread rank, keeping file order within a thread.
  const start = new Int32Array(T + 1);
  for (let f = 0; f < n; f++) start[rowRank[c.thread[f]!]! + 1]!++;
  for (let t = 0; t < T; t++) start[t + 1]! += start[t]!;
  const byThread = new Int32Array(n);
  const fill = start.slice(0, T);
  for (let f = 0; f < n; f++) byThread[fill[rowRank[c.thread[f]!]!]!++] = f;
  const cursor = start.slice(0, T);
  const seqKey = c.seqKey;
  // Binary min-heap of thread ranks keyed by (seqKey of the thread's next event, rank).
  const heap: number[] = [];
  const keyOf = (t: number): number => seqKey[byThread[cursor[t]!]!]!;
  const less = (a: number, b: number): boolean => {
    const ka = keyOf(a);
    const kb = keyOf(b);
    return ka < kb || (ka === kb && a < b);
  };
  const push = (t: number): void => {
    let i = heap.length;
    heap.push(t);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!less(heap[i]!, heap[p]!)) break;
      [heap[i], heap[p]] = [heap[p]!, heap[i]!];
      i = p;
    }
  };
  const pop = (): number => {
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && less(heap[l]!, heap[m]!)) m = l;
        if (r < heap.length && less(heap[r]!, heap[m]!)) m = r;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m]!, heap[i]!];
        i = m;
      }
    }
    return top;
  };
  for (let t = 0; t < T; t++) if (start[t]! < start[t + 1]!) push(t);
  let out = 0;
  while (heap.length > 0) {
    const t = pop();
    const end = start[t + 1]!;
    let cur = cursor[t]!;
    const key = seqKey[byThread[cur]!]!;
    while (cur < end && seqKey[byThread[cur]!] === key) perm[out++] = byThread[cur++]!;
    cursor[t] = cur;
    if (cur < end) push(t);
  }
  return perm;
}

function buildSites(c: Collector, problems: ProblemLog): SiteTable {
  let count = 1;
  const accepted: typeof c.units = [];
  for (const u of c.units) {
    const n = u.unit.kind.length;
    if (u.unit.base + n > MAX_SITE_ID) {
      problems.add('site-range', 'warning', u.offset, u.thread, `UNIT claims site ids ${u.unit.base}…${u.unit.base + n - 1}, above the limit ${MAX_SITE_ID}; its sites are ignored`);
      continue;
    }
    accepted.push(u);
    count = Math.max(count, u.unit.base + n);
  }
  const sites: SiteTable = {
    count,
    kind: new Uint8Array(count),
    file: new Int32Array(count).fill(NONE),
    func: new Int32Array(count).fill(NONE),
    name: new Int32Array(count).fill(NONE),
    line: new Uint32Array(count),
    strings: [],
  };
  const stringIds = new Map<string, number>();
  const intern = (s: string): number => {
    let id = stringIds.get(s);
    if (id === undefined) {
      id = sites.strings.length;
      sites.strings.push(s);
      stringIds.set(s, id);
    }
    return id;
  };
  for (const { unit, offset, thread } of accepted) {
    const local = unit.strings.map(intern);
    const str = (i: number): number => {
      const id = local[i];
      if (id === undefined) {
        problems.add('bad-string-index', 'warning', offset, thread, `UNIT site names string ${i}, but the unit has ${local.length} strings`);
        return NONE;
      }
      return id;
    };
    for (let i = 0; i < unit.kind.length; i++) {
      const id = unit.base + i;
      if (id === 0 || sites.kind[id] !== 0) {
        problems.add('site-redefined', 'warning', offset, thread, id === 0 ? 'UNIT defines site 0, which means "no site"; ignored' : `UNIT redefines site ${id}; the first definition counts`);
        continue;
      }
      const kind = unit.kind[i]!;
      sites.kind[id] = kind > 255 || kind === 0 ? 255 : kind;
      sites.file[id] = str(unit.file[i]!);
      sites.func[id] = str(unit.func[i]!);
      sites.name[id] = str(unit.name[i]!);
      sites.line[id] = Math.min(unit.line[i]!, 0xffffffff);
    }
  }
  return sites;
}

const ALLOCATOR_KINDS = new Set<number>([
  SiteKind.MALLOC,
  SiteKind.CALLOC,
  SiteKind.REALLOC,
  SiteKind.REALLOCARRAY,
  SiteKind.ALIGNED_ALLOC,
  SiteKind.POSIX_MEMALIGN,
  SiteKind.MEMALIGN,
  SiteKind.VALLOC,
  SiteKind.STRDUP,
  SiteKind.STRNDUP,
  SiteKind.PVALLOC,
]);

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
export function decodeTrace(bytes: Uint8Array, options: DecodeOptions = {}): Model {
  const header = parseHeader(bytes);
  const problems = new ProblemLog();
  const progress = options.onProgress;
  if (header.pointerSize !== 4 && header.pointerSize !== 8) {
    problems.add('pointer-size', 'warning', 16, null, `header gives a pointer size of ${header.pointerSize} bytes; expected 4 or 8`);
  }

  // Pass 1.
  const c = new Collector(problems, bytes.length >> 2);
  walkRecords(bytes, header, c, problems, {
    onProgress: progress && ((done, total) => progress((0.7 * done) / total, 'reading records')),
  });
  // Thread rows sorted by trace thread index.
  const T = c.threads.length;
  const order = c.threads.map((_, row) => row).sort((a, b) => c.threads[a]!.index - c.threads[b]!.index);
  const rowRank = new Uint32Array(T);
  order.forEach((row, rank) => (rowRank[row] = rank));

  // Pass 2.
  progress?.(0.7, 'ordering events');
  const perm = mergeOrder(c, rowRank);

  // Pass 3.
  progress?.(0.8, 'resolving blocks and frames');
  const sites = buildSites(c, problems);
  return resolve(header, c, perm, rowRank, order, sites, problems, progress);
}

function resolve(
  header: TraceHeader,
  c: Collector,
  perm: Int32Array,
  rowRank: Uint32Array,
  order: number[],
  sites: SiteTable,
  problems: ProblemLog,
  progress: DecodeOptions['onProgress'],
): Model {
  const n = c.n;
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
  const E = {
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
  const nb = c.blocksCreated;
  const B = {
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
  const nf = c.enters;
  const F = {
    count: 0,
    thread: new Uint32Array(nf),
    enter: new Int32Array(nf),
    exit: new Int32Array(nf),
    entrySite: new Uint32Array(nf),
    exitSite: new Uint32Array(nf),
    depth: new Float64Array(nf),
    parent: new Int32Array(nf),
  };
  const statics = {
    count: c.statics.length,
    site: new Uint32Array(c.statics.length),
    address: new Float64Array(c.statics.length),
    size: new Float64Array(c.statics.length),
    event: new Int32Array(c.statics.length),
    totalBytes: 0,
  };
  const staticAddress = new Map<number, number>();
  for (const s of c.statics) staticAddress.set(s.event, s.address);
  const untracked = { event: [] as number[], address: [] as number[] };
  // LINKED sets waiting for their freeing event (file order index → list position).
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
  const hex = (v: number): string => `0x${v.toString(16)}`;
  const where = (f: number): [number, number] => [c.offset[f]!, c.threads[c.thread[f]!]!.index];
  const checkSite = (id: number, f: number): number => {
    if (id === 0) return 0;
    if (id < sites.count && sites.kind[id] !== 0) return id;
    const [off, th] = where(f);
    problems.add('unknown-site', 'warning', off, th, `${kindName(c.kind[f]!)} record names site ${id}, which no UNIT record defines`);
    return 0;
  };
  const endBlock = (id: number, i: number, f: number): number => {
    const b = live.get(id);
    if (b === NONE) {
      const [off, th] = where(f);
      problems.add('unknown-block', 'warning', off, th, `${kindName(c.kind[f]!)} record ends block ${hex(id)}, which is not live (never allocated, already freed, or lost)`);
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
  const endFile = c.end?.event ?? NONE;
  let endEvent = NONE;

  for (let i = 0; i < n; i++) {
    if (progress && (i & (progressEvery - 1)) === 0 && i > 0) progress(0.8 + (0.2 * i) / n, 'resolving blocks and frames');
    const f = perm[i]!;
    const kind = c.kind[f]!;
    const flags = c.flags[f]!;
    const rank = rowRank[c.thread[f]!]!;
    const thread = threads[rank]!;
    const stack = openFrames[rank]!;
    let value = c.value[f]!;
    let site = 0;
    let frame = stack.length > 0 ? stack[stack.length - 1]! : NONE;
    let newBlock = NONE;
    let oldBlock = NONE;
    switch (kind) {
      case Kind.THREAD_BEGIN:
        if (thread.beginEvent === NONE) thread.beginEvent = i;
        break;
      case Kind.ENTER: {
        site = checkSite(c.site[f]!, f);
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
        site = checkSite(c.site[f]!, f);
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
        const h = c.heapRow[f]!;
        site = checkSite(c.site[f]!, f);
        E.library[i] = c.hLib[h]!;
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
        site = checkSite(c.site[f]!, f);
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
    E.kind[i] = kind;
    E.flags[i] = flags;
    E.thread[i] = rank;
    E.site[i] = site;
    E.time[i] = c.time[f]!;
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
    if (f === endFile) endEvent = i;
    const li = linkOf.size === 0 ? undefined : linkOf.get(f);
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

  // LEAKS: classes of the blocks live at the end (written right before END, after every heap record of its thread).
  const leakScan = { present: c.leaks.length > 0, partial: false };
  if (c.leaks.length > 1) {
    const l = c.leaks[1]!;
    problems.add('leaks-twice', 'warning', l.offset, l.thread, 'second EXT/LEAKS record; the first one counts');
  }
  const leaks = c.leaks[0];
  if (leaks !== undefined) {
    leakScan.partial = leaks.partial;
    let unknown = 0;
    let firstUnknown = 0;
    for (let i = 0; i < leaks.ids.length; i++) {
      const id = leaks.ids[i]!;
      const b = live.get(id);
      if (b === NONE) {
        if (unknown++ === 0) firstUnknown = id;
        continue;
      }
      const cls = leaks.classes[i]!;
      if (cls > LeakClass.REACHABLE) {
        problems.add('leaks-class', 'warning', leaks.offset, leaks.thread, `LEAKS gives block ${hex(id)} the unknown class ${cls}; left unclassified`);
        continue;
      }
      B.leakClass[b] = cls;
    }
    if (unknown > 0) {
      problems.add('leaks-unknown-block', 'warning', leaks.offset, leaks.thread, `LEAKS names ${unknown} block(s) that are not live at the end of the trace (first: ${hex(firstUnknown)})`);
    }
  }

  let end: RunEnd = { how: 'unknown', code: null, complete: header.complete, event: NONE };
  if (c.end !== null) {
    const e = c.end;
    const event = endEvent;
    if (e.how === 0 || e.how === 1) {
      end = { how: e.how === 0 ? 'exit' : 'signal', code: e.status, complete: header.complete, event };
    } else {
      const [off, th] = where(e.event);
      problems.add('end-how', 'warning', off, th, `END record has an unknown "how" value ${e.how}`);
      end = { how: 'unknown', code: null, complete: header.complete, event };
    }
  } else {
    problems.add('no-end', 'warning', null, null, header.complete
      ? 'the header is marked complete but there is no END record'
      : 'no END record: the program was killed (e.g. SIGKILL) or crashed before the runtime could record its end');
  }
  // Libraries: dense by index; an index used by CALLER but never defined gets a placeholder name.
  const libraries: string[] = [];
  for (let k = 0; k <= c.maxLibrary; k++) {
    const path = c.libraries.get(k);
    if (path === undefined) {
      libraries.push(`(library ${k})`);
      if (c.called.has(k)) problems.add('library-undefined', 'warning', null, null, `library ${k} is named by a CALLER record but no LIBRARY record defines it`);
    } else {
      libraries.push(path);
    }
  }
  progress?.(1, 'done');
  return {
    header,
    program: c.program,
    libraries,
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
    threads,
    end,
    lostRecords: lost,
    leakScan,
    problems: problems.list(),
  };
}
