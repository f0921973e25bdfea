// The viewer's index of a trace: one fold over the streamed trace (trace/resolve-stream.ts) that keeps, per bucket of
// INDEX_BUCKET events, what the chart draws of it (event and time range, min/max of stack + static and of heap, the
// classes of event in it; for the libc toggle the heap of instrumented code's blocks alone, and for the thread filter
// a row of the thread table per thread with events in it), hands its sink a finer summary per INDEX_FINE events (the
// same extremes, classes and instrumented heap as Float32: the chart draws them for the part in view when a bucket is
// wider than a column), and writes every event
// resolved, delta-encoded and bucket by bucket, with what the viewer's detail of an event needs (its place, totals,
// frame, the blocks it made or ended with their allocation, its linked set), so any range of events is read back from
// its buckets without replaying the trace from its start. What only the future knows (the event that frees a block)
// goes to a column by block row that the host writes beside it; what only the end knows (leak classes, the frees that
// orphaned leaked blocks) is kept per live block.
//
// Memory while building: one bucket's bytes, the summaries (136 bytes per bucket, 40 more per thread with events in
// it), one batch of fine rows (128 KiB; the sink writes them out, the fine level is never held whole), per site two
// numbers, per thread three, and the folds' live blocks and open frames; nothing per event. Pure TypeScript: the host (host/index-cache.ts) owns the file.
import { eventClassBit, eventClassOfKind, frameEntryOf, placeOf, type EventDetail, type StackEntry } from './event-detail.js';
import type { EventFold, FoldEvent, FoldTables, TraceEnd, TraceStart } from './event-fold.js';
import { leakClassName } from './leaks.js';
import { OrphanFold, siteRef, type LinkedMember, type Run, type SiteRef } from './linked.js';
import { NONE, type SiteTable, type ThreadInfo } from './model.js';
import type { Problem } from './problems.js';
import { Flag, Kind, kindName } from './trace/format.js';
import { grown } from './trace/typed-arrays.js';
import { lowerBound } from './lod.js';

/** Format of the index file (runtime/INDEX-FORMAT.md); a cache of another version is built again. */
export const INDEX_VERSION = 6;
/** Events per bucket: 10^9 events make 61,036 buckets, about 11 MB of summaries for one thread. */
export const INDEX_BUCKET = 16384;
/** Events per fine summary: the chart draws the fine level for the part in view when a bucket is wider than a column. */
export const INDEX_FINE = 256;
/** Fields of a fine summary's row (Float32, FINE_FIELDS per row of INDEX_FINE events): what the chart draws only. */
export const F = {
  ABOVE_MIN: 0,
  ABOVE_MAX: 1,
  HEAP_MIN: 2,
  HEAP_MAX: 3,
  STATIC_MAX: 4,
  /** The classes of event in the row (eventClassBit), a small integer. */
  MASK: 5,
  /** Min/max of the heap of blocks allocated by instrumented code alone (the "libc heap" toggle unticked). */
  IHEAP_MIN: 6,
  IHEAP_MAX: 7,
} as const;
export const FINE_FIELDS = 8;
/** Fine rows a fold hands its sink at a time. */
const FINE_BATCH = 4096;

/** The free column's "not freed" (block rows and events are below 2^32 - 1: see MAX_INDEX_EVENTS). */
export const NOT_FREED = 0xffffffff;
/** The most events an index holds (its free column stores events as 32-bit numbers). */
export const MAX_INDEX_EVENTS = 0xfffffffe;

/** Fields of a bucket's row in the summary table (Float64, SUMMARY_FIELDS per bucket). */
export const S = {
  TIME_MIN: 0,
  TIME_MAX: 1,
  ABOVE_MIN: 2,
  ABOVE_MAX: 3,
  HEAP_MIN: 4,
  HEAP_MAX: 5,
  STATIC_MAX: 6,
  MASK: 7,
  /** Byte offset of the bucket's events from the start of the bucket section, and their length. */
  OFFSET: 8,
  LENGTH: 9,
  /** First block row and first frame row made in the bucket. */
  BLOCK_START: 10,
  FRAME_START: 11,
  STATIC_MIN: 12,
  /** Min, max and last value of the heap of blocks allocated by instrumented code alone (instrumentedHeap). */
  IHEAP_MIN: 13,
  IHEAP_MAX: 14,
  IHEAP_LAST: 15,
  /** The bucket's first row in the thread table (its rows run to the next bucket's first). */
  THREAD_START: 16,
} as const;
export const SUMMARY_FIELDS = 17;

/**
 * Fields of a row of the thread table (Float64, THREAD_FIELDS per row), which follows the summary table: one row per
 * bucket and thread with events in that bucket, the buckets in order. What the thread filter draws of a thread: its
 * own stack plus static bytes (chartSeries(model, thread).above) over all of the bucket's events, those before its
 * first event in the bucket and after its last one holding its stack as it was, and its stack after the bucket. In a
 * bucket without a row the thread's stack is that of its latest row (0 before its first), so its extremes there are
 * that plus the bucket's STATIC_MIN and STATIC_MAX: the table grows with buckets × threads active in each, not with
 * buckets × threads.
 */
export const T = {
  /** The thread's row in the thread list. */
  THREAD: 0,
  ABOVE_MIN: 1,
  ABOVE_MAX: 2,
  /** The thread's stack bytes after the bucket's last event. */
  STACK_LAST: 3,
  /** The classes of the thread's own events in the bucket (eventClassBit). */
  MASK: 4,
} as const;
export const THREAD_FIELDS = 5;

/** What the index knows of the run beyond its buckets: JSON, small (sites, threads, live blocks at the end). */
export interface IndexMeta {
  version: number;
  bucketSize: number;
  events: number;
  buckets: number;
  /** Events per fine summary, and the fine rows (Float32, FINE_FIELDS each; kept in the file, read by range). */
  fineSize: number;
  fines: number;
  blocks: number;
  frames: number;
  program: { path: string; cwd: string } | null;
  /** The site table as arrays (JSON). */
  sites: { count: number; kind: number[]; file: number[]; func: number[]; name: number[]; line: number[]; strings: string[] };
  threads: ThreadInfo[];
  /** Per site id: events recorded at it, and the first of them (-1: none): the page's search. */
  siteEvents: number[];
  siteFirst: number[];
  /** Blocks live at the end: rows, leak class numbers, the free that orphaned each (-1: none). */
  live: { rows: number[]; leakClass: number[]; orphanedBy: number[] };
  end: TraceEnd['end'];
  problems: Problem[];
  /** Largest values over the run (the chart's unzoomed axes). */
  maxAbove: number;
  maxHeap: number;
  /** Rows of the thread table (THREAD_FIELDS each, after the summary table). */
  threadRows: number;
  /** Blocks allocated inside libc or uninstrumented code, and the most bytes of them live at once (the libc toggle's status line). */
  libcBlocks: number;
  maxLibcHeap: number;
  /** Largest stack in use (all threads, static not counted): the report's peak stack. */
  maxStack: number;
  /** Static memory registered over the run (the report's static bytes). */
  staticBytes: number;
  /** The process, from the trace's header and its MPI rank: what the lanes page names a lane by. */
  process: { pid: number; ppid: number; /** Nanoseconds since the Unix epoch, as decimal text (a 64-bit number). */ startTimeNs: string; rank: { rank: number; variable: string } | null };
}

/** Where a build puts what it makes: each bucket's bytes in order, and the free of each block row. */
export interface IndexSink {
  bucket(bytes: Uint8Array): void;
  /** The next fine rows in order (FINE_FIELDS numbers each); the array is reused after the call. */
  fine(rows: Float32Array): void;
  freed(row: number, event: number): void;
}

// ---- varints ----

/** Bytes written one event at a time: `ensure` first (the writes themselves do not check for room). */
class ByteWriter {
  buf = new Uint8Array(1 << 16);
  at = 0;

  /** Room for `n` more bytes. */
  ensure(n: number): void {
    if (this.at + n > this.buf.length) {
      const b = new Uint8Array(Math.max(this.buf.length * 2, this.at + n));
      b.set(this.buf.subarray(0, this.at));
      this.buf = b;
    }
  }

  byte(v: number): void {
    this.buf[this.at++] = v;
  }

  /** An unsigned integer (up to 2^53): at most 8 bytes. */
  uint(v: number): void {
    const b = this.buf;
    if (v < 0x80) {
      b[this.at++] = v;
      return;
    }
    if (v < 0x80000000) {
      while (v >= 0x80) {
        b[this.at++] = (v & 0x7f) | 0x80;
        v >>>= 7;
      }
    } else {
      while (v >= 0x80) {
        b[this.at++] = (v % 0x80) | 0x80;
        v = Math.floor(v / 0x80);
      }
    }
    b[this.at++] = v;
  }

  /** A signed integer, zigzag. */
  int(v: number): void {
    this.uint(v >= 0 ? 2 * v : -2 * v - 1);
  }

  /** A number that may not be an integer: integers as zigzag (tag 0), anything else as a float64 (tag 1): at most 9 bytes. */
  num(v: number): void {
    if ((v | 0) === v && v < 0x10000000 && v > -0x10000000) {
      this.uint(v >= 0 ? v << 2 : (-v << 2) - 2);
    } else if (Number.isSafeInteger(v) && Math.abs(v) < 2 ** 51) {
      this.uint(v >= 0 ? 4 * v : -4 * v - 2);
    } else {
      this.byte(1);
      new DataView(this.buf.buffer, this.buf.byteOffset + this.at, 8).setFloat64(0, v, true);
      this.at += 8;
    }
  }

  take(): Uint8Array {
    const out = this.buf.slice(0, this.at);
    this.at = 0;
    return out;
  }
}

class ByteReader {
  at = 0;
  private readonly view: DataView;
  constructor(readonly buf: Uint8Array) {
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  byte(): number {
    if (this.at >= this.buf.length) throw new IndexDamagedError('a bucket ends early');
    return this.buf[this.at++]!;
  }

  uint(): number {
    let v = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      const b = this.byte();
      v += (b & 0x7f) * mul;
      if (b < 0x80) return v;
      mul *= 0x80;
    }
    throw new IndexDamagedError('a varint runs past 10 bytes');
  }

  int(): number {
    const u = this.uint();
    return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
  }

  num(): number {
    const u = this.uint();
    if (u === 1) {
      const v = this.view.getFloat64(this.at, true);
      this.at += 8;
      return v;
    }
    return u % 4 === 0 ? u / 4 : -(u + 2) / 4;
  }
}

/** An index file that does not read back as it was written (the host builds it again). */
export class IndexDamagedError extends Error {
  override name = 'IndexDamagedError';
}

// Bits of an event's second byte: what follows its fixed fields.
const HAS_NEW_BLOCK = 1;
const HAS_OLD_BLOCK = 2;
const HAS_LINKED = 4;
const NEW_FRAME = 8;
const LINKED_PARTIAL = 16;
/** The event's thread, place and flags differ from the usual (the previous event's thread, its own site, no flags). */
const OTHER_THREAD = 32;
const OWN_PLACE = 64;
const HAS_FLAGS = 128;

// Bits of an event's third byte: which of its numbers did not change (are not written).
const Z_TIME = 1;
const Z_VALUE = 2;
const Z_STACK = 4;
const Z_HEAP_R = 8;
const Z_HEAP_U = 16;
const Z_STATICS = 32;
const Z_FRAME = 64;

const HEAP_KIND = new Uint8Array(256);
for (const k of [Kind.ALLOC, Kind.FREE, Kind.REALLOC]) HEAP_KIND[k] = 1;

/**
 * The fold that builds an index: tells `sink` each bucket as it fills, and keeps the summaries and the meta facts. With
 * `events` false it builds only what the chart draws (the summaries, the fine rows, the meta's sites, threads, search
 * numbers, extremes and end): no bucket bytes, no frees, no times (the summaries' time fields are NaN, `blocks`,
 * `frames` and `live` are empty), which reads the trace once without the second reading times need and encodes
 * nothing per event — the viewer's first chart, drawn while the events are indexed.
 */
export class IndexFold implements EventFold {
  readonly needsTime: boolean;
  private readonly w = new ByteWriter();
  private summary = new Float64Array(SUMMARY_FIELDS * 64);
  private buckets = 0;
  private offset = 0;
  private inBucket = 0;
  private blocks = 0;
  private frames = 0;
  private statics = 0;
  private timeMax = -Infinity;
  private maxAbove = 0;
  private maxHeap = 0;
  private maxStack = 0;
  private siteEvents = new Float64Array(64);
  private siteFirst = new Float64Array(64).fill(NONE);
  private readonly orphans: OrphanFold;
  // Values of the previous event in the bucket (deltas).
  private p = { time: 0, thread: 0, stack: 0, heapR: 0, heapU: 0, statics: 0, frame: NONE, id: 0 };
  private readonly bitOfKind = new Uint8Array(256);
  private meta: IndexMeta | null = null;
  // The fine rows not yet handed to the sink (the current one last), and the events in the current one.
  private readonly fineRows = new Float32Array(FINE_FIELDS * FINE_BATCH);
  private fineAt = 0;
  private inFine = 0;
  private fines = 0;
  private fAboveMin = 0;
  private fAboveMax = 0;
  private fHeapMin = 0;
  private fHeapMax = 0;
  private fStaticMax = 0;
  private fMask = 0;
  // The current bucket's extremes and classes (its summary row, written when it closes).
  private bAboveMin = Infinity;
  private bAboveMax = -Infinity;
  private bHeapMin = Infinity;
  private bHeapMax = -Infinity;
  private bStaticMax = -Infinity;
  private bMask = 0;
  private bStaticMin = Infinity;
  // The heap of blocks allocated by instrumented code alone (instrumentedHeap), its extremes in the bucket and the fine
  // row, and what the blocks allocated elsewhere (inside libc, uninstrumented code) come to.
  private iheap = 0;
  private bIHeapMin = Infinity;
  private bIHeapMax = -Infinity;
  private fIHeapMin = 0;
  private fIHeapMax = 0;
  private libcBlocks = 0;
  private maxLibcHeap = 0;
  // The thread table (T): its rows so far, the current bucket's from `bucketRow0`; per thread row, its stack after its
  // latest event, its row in the current bucket (-1: none yet) and the position there of its latest event.
  private threadTable = new Float64Array(THREAD_FIELDS * 64);
  private threadRows = 0;
  private bucketRow0 = 0;
  private tStack = new Float64Array(64);
  private tRow = new Int32Array(64).fill(-1);
  private tLast = new Int32Array(64);
  // The latest event's thread in this bucket (-1: none yet), the offset of its row in the table and what is not yet
  // written there: its extremes and classes in the bucket, its stack and the position of its latest event.
  private curThread = -1;
  private curRow = 0;
  private curMin = 0;
  private curMax = 0;
  private curMask = 0;
  private curStack = 0;
  private curLast = 0;
  // Static bytes before the current bucket's first event, and where they changed in it (position, bytes after).
  private staticAtOpen = 0;
  private readonly staticChanges: number[] = [];

  constructor(
    private readonly start: TraceStart,
    private readonly sink: IndexSink,
    /** Events per bucket (tests use small ones). */
    private readonly bucketSize = INDEX_BUCKET,
    /** Events per fine summary (tests use small ones). */
    private readonly fineSize = INDEX_FINE,
    /** Whether every event is written (false: the summaries only). */
    private readonly events = true,
    /** Without the events: whether the summaries carry the buckets' times all the same (the lanes page's axis). */
    private readonly times = events,
  ) {
    this.needsTime = events || times;
    this.orphans = new OrphanFold(start);
    for (let k = 0; k < 256; k++) this.bitOfKind[k] = eventClassBit(eventClassOfKind(k));
  }

  private open(): void {
    const k = this.buckets;
    this.summary = grown(this.summary, SUMMARY_FIELDS * (k + 1));
    const r = this.summary.subarray(SUMMARY_FIELDS * k, SUMMARY_FIELDS * (k + 1));
    r[S.TIME_MIN] = this.needsTime ? Infinity : NaN;
    r[S.TIME_MAX] = this.needsTime ? -Infinity : NaN;
    this.bAboveMin = this.bHeapMin = Infinity;
    this.bAboveMax = this.bHeapMax = this.bStaticMax = -Infinity;
    this.bMask = 0;
    this.bStaticMin = this.bIHeapMin = Infinity;
    this.bIHeapMax = -Infinity;
    r[S.THREAD_START] = this.bucketRow0 = this.threadRows;
    this.curThread = -1;
    this.staticAtOpen = this.statics;
    this.staticChanges.length = 0;
    r[S.OFFSET] = this.offset;
    r[S.BLOCK_START] = this.blocks;
    r[S.FRAME_START] = this.frames;
    this.p = { time: 0, thread: 0, stack: 0, heapR: 0, heapU: 0, statics: 0, frame: NONE, id: 0 };
  }

  private close(): void {
    const r = SUMMARY_FIELDS * this.buckets;
    const s = this.summary;
    s[r + S.ABOVE_MIN] = this.bAboveMin;
    s[r + S.ABOVE_MAX] = this.bAboveMax;
    s[r + S.HEAP_MIN] = this.bHeapMin;
    s[r + S.HEAP_MAX] = this.bHeapMax;
    s[r + S.STATIC_MAX] = this.bStaticMax;
    s[r + S.MASK] = this.bMask;
    s[r + S.STATIC_MIN] = this.bStaticMin;
    s[r + S.IHEAP_MIN] = this.bIHeapMin;
    s[r + S.IHEAP_MAX] = this.bIHeapMax;
    s[r + S.IHEAP_LAST] = this.iheap;
    this.flushThread();
    this.closeThreads();
    if (this.events) {
      const bytes = this.w.take();
      this.summary[SUMMARY_FIELDS * this.buckets + S.LENGTH] = bytes.length;
      this.offset += bytes.length;
      this.sink.bucket(bytes);
    }
    this.buckets++;
    this.inBucket = 0;
  }

  event(e: FoldEvent, tables: FoldTables): void {
    if (e.index >= MAX_INDEX_EVENTS) throw new RangeError(`the trace has more than ${MAX_INDEX_EVENTS.toLocaleString('en-US')} events, more than an index holds`);
    if (this.inBucket === 0) this.open();
    if (!this.events) {
      if (e.kind === Kind.STATIC) this.statics += e.value;
      if (this.times) this.time(e);
      this.summarize(e, tables);
      return;
    }
    this.orphans.event(e, tables);
    const w = this.w;
    // The most one event writes besides its linked set (whose blocks make room each).
    w.ensure(256);
    const p = this.p;
    const { blocks, frames } = tables;
    const kind = e.kind;
    if (kind === Kind.STATIC) this.statics += e.value;
    const heap = HEAP_KIND[kind] === 1;
    const interposed = (e.flags & Flag.INTERPOSED) !== 0;
    const frameRow = e.frame === NONE ? NONE : frames.row[e.frame]!;
    const newFrame = frameRow !== NONE && frameRow === this.frames;
    // The site the event is named by: for an interposed heap event its attributed frame's entry site.
    const place = heap && interposed ? (e.frame === NONE ? 0 : frames.entrySite[e.frame]!) : e.site;
    let bits = 0;
    if (e.newBlock !== NONE) bits |= HAS_NEW_BLOCK;
    if (e.oldBlock !== NONE) bits |= HAS_OLD_BLOCK;
    if (e.linked !== null) bits |= HAS_LINKED | (e.linkedPartial ? LINKED_PARTIAL : 0);
    if (newFrame) bits |= NEW_FRAME;
    if (e.thread !== p.thread) bits |= OTHER_THREAD;
    if (place !== e.site) bits |= OWN_PLACE;
    if (e.flags !== 0) bits |= HAS_FLAGS;
    w.byte(kind);
    w.byte(bits);
    if (bits & HAS_FLAGS) w.byte(e.flags);
    if (bits & OTHER_THREAD) w.uint(e.thread);
    w.uint(e.site);
    if (bits & OWN_PLACE) w.uint(place);
    // Times to the nanosecond (the reader interpolates them between the runtime's clock readings).
    const time = Math.round(e.time);
    // The numbers that change, after a byte that says which do not (most events change two or three).
    const dTime = time - p.time;
    const dStack = e.stackTotal - p.stack;
    const dHeapR = e.heapRequested - p.heapR;
    const dHeapU = e.heapUsable - p.heapU - dHeapR;
    const dStatics = this.statics - p.statics;
    const dFrame = frameRow - p.frame;
    const zeros = (dTime === 0 ? Z_TIME : 0) | (e.value === 0 ? Z_VALUE : 0) | (dStack === 0 ? Z_STACK : 0) | (dHeapR === 0 ? Z_HEAP_R : 0) | (dHeapU === 0 ? Z_HEAP_U : 0) | (dStatics === 0 ? Z_STATICS : 0) | (dFrame === 0 ? Z_FRAME : 0);
    w.byte(zeros);
    if (!(zeros & Z_TIME)) w.num(dTime);
    if (!(zeros & Z_VALUE)) w.num(e.value);
    if (!(zeros & Z_STACK)) w.num(dStack);
    if (!(zeros & Z_HEAP_R)) w.num(dHeapR);
    if (!(zeros & Z_HEAP_U)) w.num(dHeapU);
    if (!(zeros & Z_STATICS)) w.num(dStatics);
    if (!(zeros & Z_FRAME)) w.int(dFrame);
    if (newFrame) {
      const parent = frames.parent[e.frame]!;
      w.int(parent === NONE ? -1 : frameRow - frames.row[parent]!);
      w.num(frames.entrySite[e.frame]! - e.site);
      w.num(frames.depth[e.frame]! - e.value);
      this.frames++;
    }
    // An ended block first: a realloc ends its old block and makes the new one in one event.
    if (e.oldBlock !== NONE) {
      this.blockRef(e.index, e.oldBlock, blocks);
      this.sink.freed(blocks.row[e.oldBlock]!, e.index);
    }
    if (e.linked !== null) {
      w.uint(e.linked.length);
      for (const h of e.linked) this.blockRef(e.index, h, blocks);
    }
    if (e.newBlock !== NONE) {
      const h = e.newBlock;
      w.num(blocks.id[h]! - p.id);
      p.id = blocks.id[h]!;
      w.num(blocks.requested[h]! - e.value);
      const ip = blocks.interposed[h] === 1;
      w.uint(ip ? blocks.entry[h]! : blocks.site[h]!);
      w.byte(ip ? 1 : 0);
      this.blocks++;
    }
    p.time = time;
    p.thread = e.thread;
    p.stack = e.stackTotal;
    p.heapR = e.heapRequested;
    p.heapU = e.heapUsable;
    p.statics = this.statics;
    p.frame = frameRow;
    this.time(e);
    this.summarize(e, tables);
  }

  /** The event's time in its bucket's range: the axis's time, never going back (the whole-trace viewer's). */
  private time(e: FoldEvent): void {
    if (e.time > this.timeMax) this.timeMax = e.time;
    const r = SUMMARY_FIELDS * this.buckets;
    if (this.timeMax < this.summary[r + S.TIME_MIN]!) this.summary[r + S.TIME_MIN] = this.timeMax;
    this.summary[r + S.TIME_MAX] = this.timeMax;
  }

  /** The event in its bucket's summary, its fine row and its site's numbers: what the chart draws (stack + static above the axis, the heap below) and the search counts. */
  private summarize(e: FoldEvent, tables: FoldTables): void {
    const bit = this.bitOfKind[e.kind]!;
    const statics = this.statics;
    const above = e.stackTotal + statics;
    const heap = e.heapRequested;
    // The heap of instrumented code's blocks, which only a heap event changes (an ended block first: a realloc ends
    // one and makes one); the bucket's and the fine row's extremes of it start at its first event.
    const ended = e.oldBlock;
    const made = e.newBlock;
    const changed = ended !== NONE || made !== NONE;
    if (changed) this.heapEvent(ended, made, tables.blocks, heap);
    const iheap = this.iheap;
    if (changed || this.inBucket === 0) {
      if (iheap < this.bIHeapMin) this.bIHeapMin = iheap;
      if (iheap > this.bIHeapMax) this.bIHeapMax = iheap;
    }
    // The event's thread's numbers in the bucket, kept in fields while its events follow one another.
    if (e.thread !== this.curThread) this.switchThread(e.thread);
    const mine = e.stack + statics;
    if (mine < this.curMin) this.curMin = mine;
    if (mine > this.curMax) this.curMax = mine;
    this.curMask |= bit;
    this.curStack = e.stack;
    this.curLast = this.inBucket;
    if (e.kind === Kind.STATIC) this.staticChanges.push(this.inBucket, statics);
    if (statics < this.bStaticMin) this.bStaticMin = statics;
    if (above < this.bAboveMin) this.bAboveMin = above;
    if (above > this.bAboveMax) this.bAboveMax = above;
    if (heap < this.bHeapMin) this.bHeapMin = heap;
    if (heap > this.bHeapMax) this.bHeapMax = heap;
    if (statics > this.bStaticMax) this.bStaticMax = statics;
    this.bMask |= bit;
    if (above > this.maxAbove) this.maxAbove = above;
    if (heap > this.maxHeap) this.maxHeap = heap;
    if (e.stackTotal > this.maxStack) this.maxStack = e.stackTotal;
    const site = e.site;
    if (site >= this.siteEvents.length) {
      this.siteEvents = grown(this.siteEvents, site + 1);
      this.siteFirst = grown(this.siteFirst, site + 1, NONE);
    }
    if (this.siteFirst[site] === NONE) this.siteFirst[site] = e.index;
    this.siteEvents[site]!++;
    // The fine summary of the event's row: min/max as the bucket's, kept exact until the row is written as Float32.
    if (this.inFine === 0) {
      this.fAboveMin = this.fAboveMax = above;
      this.fHeapMin = this.fHeapMax = heap;
      this.fIHeapMin = this.fIHeapMax = iheap;
      this.fStaticMax = statics;
      this.fMask = bit;
    } else {
      if (changed) {
        if (iheap < this.fIHeapMin) this.fIHeapMin = iheap;
        if (iheap > this.fIHeapMax) this.fIHeapMax = iheap;
      }
      if (above < this.fAboveMin) this.fAboveMin = above;
      if (above > this.fAboveMax) this.fAboveMax = above;
      if (heap < this.fHeapMin) this.fHeapMin = heap;
      if (heap > this.fHeapMax) this.fHeapMax = heap;
      if (statics > this.fStaticMax) this.fStaticMax = statics;
      this.fMask |= bit;
    }
    if (++this.inFine === this.fineSize) this.closeFine();

    if (++this.inBucket === this.bucketSize) this.close();
  }

  /** A heap event: the instrumented heap after it, and the blocks allocated elsewhere. */
  private heapEvent(ended: number, made: number, blocks: FoldTables['blocks'], heap: number): void {
    if (ended !== NONE && blocks.interposed[ended] === 0) this.iheap -= blocks.requested[ended]!;
    if (made !== NONE) {
      if (blocks.interposed[made] === 0) this.iheap += blocks.requested[made]!;
      else this.libcBlocks++;
    }
    if (heap - this.iheap > this.maxLibcHeap) this.maxLibcHeap = heap - this.iheap;
  }

  /** Writes the latest thread's numbers to its row, then takes thread t's (made at its first event in the bucket). */
  private switchThread(t: number): void {
    this.flushThread();
    const o = this.threadRow(t);
    const tt = this.threadTable;
    this.curThread = t;
    this.curRow = o;
    this.curMin = tt[o + T.ABOVE_MIN]!;
    this.curMax = tt[o + T.ABOVE_MAX]!;
    this.curMask = tt[o + T.MASK]!;
    this.curStack = this.tStack[t]!;
    this.curLast = this.tLast[t]!;
  }

  private flushThread(): void {
    const t = this.curThread;
    if (t < 0) return;
    const tt = this.threadTable;
    const o = this.curRow;
    tt[o + T.ABOVE_MIN] = this.curMin;
    tt[o + T.ABOVE_MAX] = this.curMax;
    tt[o + T.MASK] = this.curMask;
    this.tStack[t] = this.curStack;
    this.tLast[t] = this.curLast;
    this.curThread = -1;
  }

  /**
   * Thread row t's row of the current bucket (the offset of its numbers in the thread table), made at its first event
   * here: the events before it held the thread's stack as it was, with their static bytes (the bucket's extremes so far).
   */
  private threadRow(t: number): number {
    if (t >= this.tRow.length) {
      this.tRow = grown(this.tRow, t + 1, -1);
      this.tStack = grown(this.tStack, t + 1);
      this.tLast = grown(this.tLast, t + 1);
    }
    const row = this.tRow[t]!;
    if (row >= 0) return THREAD_FIELDS * row;
    this.tRow[t] = this.threadRows;
    const o = THREAD_FIELDS * this.threadRows++;
    const tt = (this.threadTable = grown(this.threadTable, o + THREAD_FIELDS));
    tt[o + T.THREAD] = t;
    const held = this.tStack[t]!;
    tt[o + T.ABOVE_MIN] = this.inBucket > 0 ? held + this.bStaticMin : Infinity;
    tt[o + T.ABOVE_MAX] = this.inBucket > 0 ? held + this.bStaticMax : -Infinity;
    tt[o + T.MASK] = 0;
    return o;
  }

  /**
   * The current bucket's rows of the thread table, finished: each thread's stack held after its last event here, with
   * the static bytes of the events after it (the value then, and each change after), and its stack at the end.
   */
  private closeThreads(): void {
    const tt = this.threadTable;
    const n = this.inBucket;
    const ch = this.staticChanges;
    for (let row = this.bucketRow0; row < this.threadRows; row++) {
      const o = THREAD_FIELDS * row;
      const t = tt[o + T.THREAD]!;
      const held = this.tStack[t]!;
      const p = this.tLast[t]!;
      if (p < n - 1) {
        let v = this.staticAtOpen;
        let lo = Infinity;
        let hi = -Infinity;
        for (let j = 0; j < ch.length; j += 2) {
          if (ch[j]! <= p) v = ch[j + 1]!;
          else {
            lo = Math.min(lo, ch[j + 1]!);
            hi = Math.max(hi, ch[j + 1]!);
          }
        }
        lo = Math.min(lo, v);
        hi = Math.max(hi, v);
        if (held + lo < tt[o + T.ABOVE_MIN]!) tt[o + T.ABOVE_MIN] = held + lo;
        if (held + hi > tt[o + T.ABOVE_MAX]!) tt[o + T.ABOVE_MAX] = held + hi;
      }
      tt[o + T.STACK_LAST] = held;
      this.tRow[t] = -1;
    }
  }

  private closeFine(): void {
    const r = this.fineRows;
    const o = FINE_FIELDS * this.fineAt;
    r[o + F.ABOVE_MIN] = this.fAboveMin;
    r[o + F.ABOVE_MAX] = this.fAboveMax;
    r[o + F.HEAP_MIN] = this.fHeapMin;
    r[o + F.HEAP_MAX] = this.fHeapMax;
    r[o + F.STATIC_MAX] = this.fStaticMax;
    r[o + F.MASK] = this.fMask;
    r[o + F.IHEAP_MIN] = this.fIHeapMin;
    r[o + F.IHEAP_MAX] = this.fIHeapMax;
    this.fines++;
    this.inFine = 0;
    if (++this.fineAt === FINE_BATCH) this.flushFine();
  }

  private flushFine(): void {
    if (this.fineAt > 0) this.sink.fine(this.fineRows.subarray(0, FINE_FIELDS * this.fineAt));
    this.fineAt = 0;
  }

  /** A block an event ended or links: its row and allocation back from here, id, size, allocation site. */
  private blockRef(event: number, h: number, blocks: FoldTables['blocks']): void {
    const w = this.w;
    w.ensure(64);
    w.uint(this.blocks - blocks.row[h]!);
    w.uint(event - blocks.allocEvent[h]!);
    w.num(blocks.id[h]! - this.p.id);
    w.num(blocks.requested[h]!);
    const ip = blocks.interposed[h] === 1;
    w.uint(ip ? blocks.entry[h]! : blocks.site[h]!);
    w.byte(ip ? 1 : 0);
  }

  finish(end: TraceEnd, tables: FoldTables): void {
    if (this.inBucket > 0) this.close();
    if (this.inFine > 0) this.closeFine();
    this.flushFine();
    const sites = this.start.sites;
    const live = { rows: [] as number[], leakClass: [] as number[], orphanedBy: [] as number[] };
    for (const h of this.events ? end.liveBlocks : []) {
      live.rows.push(tables.blocks.row[h]!);
      live.leakClass.push(tables.blocks.leakClass[h]!);
      live.orphanedBy.push(this.orphans.orphaningEvent(h));
    }
    this.meta = {
      version: INDEX_VERSION,
      bucketSize: this.bucketSize,
      events: end.events,
      buckets: this.buckets,
      fineSize: this.fineSize,
      fines: this.fines,
      blocks: this.blocks,
      frames: this.frames,
      program: this.start.program,
      sites: {
        count: sites.count,
        kind: Array.from(sites.kind.subarray(0, sites.count)),
        file: Array.from(sites.file.subarray(0, sites.count)),
        func: Array.from(sites.func.subarray(0, sites.count)),
        name: Array.from(sites.name.subarray(0, sites.count)),
        line: Array.from(sites.line.subarray(0, sites.count)),
        strings: sites.strings,
      },
      threads: end.threads,
      siteEvents: Array.from(this.siteEvents.subarray(0, Math.max(sites.count, 0))),
      siteFirst: Array.from(this.siteFirst.subarray(0, Math.max(sites.count, 0))),
      live,
      end: end.end,
      problems: end.problems,
      maxAbove: this.maxAbove,
      maxHeap: this.maxHeap,
      threadRows: this.threadRows,
      libcBlocks: this.libcBlocks,
      maxLibcHeap: this.maxLibcHeap,
      maxStack: this.maxStack,
      staticBytes: this.statics,
      process: { pid: this.start.header.pid, ppid: this.start.header.ppid, startTimeNs: this.start.header.startTimeNs.toString(), rank: end.rank },
    };
  }

  /** After `finish`: the meta facts and the summary table (SUMMARY_FIELDS numbers per bucket), the thread table after it (THREAD_FIELDS per row). */
  result(): { meta: IndexMeta; summary: Float64Array } {
    if (this.meta === null) throw new Error('the index fold has not finished');
    const out = new Float64Array(SUMMARY_FIELDS * this.buckets + THREAD_FIELDS * this.threadRows);
    out.set(this.summary.subarray(0, SUMMARY_FIELDS * this.buckets));
    out.set(this.threadTable.subarray(0, THREAD_FIELDS * this.threadRows), SUMMARY_FIELDS * this.buckets);
    return { meta: this.meta, summary: out };
  }
}

/** The site table of an index's meta, as the analyses read it. */
export function siteTableOf(meta: IndexMeta): SiteTable {
  const s = meta.sites;
  return {
    count: s.count,
    kind: Uint8Array.from(s.kind),
    file: Int32Array.from(s.file),
    func: Int32Array.from(s.func),
    name: Int32Array.from(s.name),
    line: Uint32Array.from(s.line),
    strings: s.strings,
  };
}

/** A block as an event's record names it. */
interface IndexBlock {
  row: number;
  allocEvent: number;
  id: number;
  requested: number;
  site: number;
  interposed: boolean;
}

/** Blocks named by a bucket's events, one column each (row -1: none). */
class BlockColumns {
  readonly row: Float64Array;
  readonly allocEvent: Float64Array;
  readonly id: Float64Array;
  readonly requested: Float64Array;
  readonly site: Uint32Array;
  readonly interposed: Uint8Array;
  constructor(n: number) {
    this.row = new Float64Array(n).fill(NONE);
    this.allocEvent = new Float64Array(n);
    this.id = new Float64Array(n);
    this.requested = new Float64Array(n);
    this.site = new Uint32Array(n);
    this.interposed = new Uint8Array(n);
  }

  get(i: number): IndexBlock | undefined {
    if (this.row[i] === NONE) return undefined;
    return { row: this.row[i]!, allocEvent: this.allocEvent[i]!, id: this.id[i]!, requested: this.requested[i]!, site: this.site[i]!, interposed: this.interposed[i] === 1 };
  }
}

/** One bucket read back: its events' columns (index i is event first + i), and the blocks and frames they name. */
export class IndexBucket {
  readonly kind: Uint8Array;
  readonly flags: Uint8Array;
  readonly thread: Uint32Array;
  readonly place: Uint32Array;
  readonly site: Uint32Array;
  readonly time: Float64Array;
  readonly value: Float64Array;
  readonly stackTotal: Float64Array;
  readonly heapRequested: Float64Array;
  readonly heapUsable: Float64Array;
  readonly statics: Float64Array;
  readonly frame: Int32Array;
  /** Frames entered in the bucket (rows frameStart …): entry site, depth, entering event, parent row. */
  readonly frameSite: number[] = [];
  readonly frameDepth: number[] = [];
  readonly frameEnter: number[] = [];
  readonly frameParent: number[] = [];
  /** Per event: the block it made, the one it ended; its linked set. */
  readonly made: BlockColumns;
  readonly ended: BlockColumns;
  readonly linked = new Map<number, { partial: boolean; blocks: IndexBlock[] }>();
  /** Per event its own thread's stack and the instrumented heap after it, and the threads' stacks before the bucket (IndexReader's, made when first asked). */
  series: { stack: Float64Array; iheap: Float64Array; before: Float64Array } | null = null;

  constructor(
    bytes: Uint8Array,
    readonly first: number,
    readonly count: number,
    blockStart: number,
    readonly frameStart: number,
  ) {
    this.kind = new Uint8Array(count);
    this.flags = new Uint8Array(count);
    this.thread = new Uint32Array(count);
    this.place = new Uint32Array(count);
    this.site = new Uint32Array(count);
    this.time = new Float64Array(count);
    this.value = new Float64Array(count);
    this.stackTotal = new Float64Array(count);
    this.heapRequested = new Float64Array(count);
    this.heapUsable = new Float64Array(count);
    this.statics = new Float64Array(count);
    this.frame = new Int32Array(count);
    this.made = new BlockColumns(count);
    this.ended = new BlockColumns(count);
    const r = new ByteReader(bytes);
    let time = 0;
    let thread = 0;
    let stack = 0;
    let heapR = 0;
    let heapU = 0;
    let statics = 0;
    let frame = NONE;
    let id = 0;
    let blocks = blockStart;
    let frames = frameStart;
    const block = (ev: number, into: BlockColumns, i: number): void => {
      into.row[i] = blocks - r.uint();
      into.allocEvent[i] = ev - r.uint();
      into.id[i] = id + r.num();
      into.requested[i] = r.num();
      into.site[i] = r.uint();
      into.interposed[i] = r.byte();
    };
    const scratch = new BlockColumns(1);
    for (let i = 0; i < count; i++) {
      const ev = first + i;
      const kind = r.byte();
      const bits = r.byte();
      this.kind[i] = kind;
      if (bits & HAS_FLAGS) this.flags[i] = r.byte();
      if (bits & OTHER_THREAD) thread = r.uint();
      this.thread[i] = thread;
      const site = r.uint();
      this.site[i] = site;
      this.place[i] = bits & OWN_PLACE ? r.uint() : site;
      const zeros = r.byte();
      this.time[i] = time += zeros & Z_TIME ? 0 : r.num();
      const value = zeros & Z_VALUE ? 0 : r.num();
      this.value[i] = value;
      this.stackTotal[i] = stack += zeros & Z_STACK ? 0 : r.num();
      const dr = zeros & Z_HEAP_R ? 0 : r.num();
      this.heapRequested[i] = heapR += dr;
      this.heapUsable[i] = heapU += dr + (zeros & Z_HEAP_U ? 0 : r.num());
      this.statics[i] = statics += zeros & Z_STATICS ? 0 : r.num();
      this.frame[i] = frame += zeros & Z_FRAME ? 0 : r.int();
      if (bits & NEW_FRAME) {
        const up = r.int();
        this.frameParent.push(up === -1 ? NONE : frames - up);
        this.frameSite.push(site + r.num());
        this.frameDepth.push(value + r.num());
        this.frameEnter.push(ev);
        frames++;
      }
      if (bits & HAS_OLD_BLOCK) block(ev, this.ended, i);
      if (bits & HAS_LINKED) {
        const n = r.uint();
        const set: IndexBlock[] = [];
        for (let k = 0; k < n; k++) {
          block(ev, scratch, 0);
          set.push(scratch.get(0)!);
        }
        this.linked.set(i, { partial: (bits & LINKED_PARTIAL) !== 0, blocks: set });
      }
      if (bits & HAS_NEW_BLOCK) {
        id += r.num();
        const m = this.made;
        m.row[i] = blocks;
        m.allocEvent[i] = ev;
        m.id[i] = id;
        m.requested[i] = value + r.num();
        m.site[i] = r.uint();
        m.interposed[i] = r.byte();
        blocks++;
      }
    }
    if (r.at !== bytes.length) throw new IndexDamagedError(`bucket of events ${first}… has ${bytes.length - r.at} bytes left over`);
  }
}

/** How an index reader reaches its file: a bucket's bytes, and the free column. */
export interface IndexStore {
  /** Bucket `bucket`'s bytes: `length` of them from `offset` in the bucket section. */
  bucketBytes(offset: number, length: number, bucket: number): Uint8Array;
  /** The event that freed block `row`, or NOT_FREED. */
  freeOf(row: number): number;
  /** Fine rows [first, first + count) (FINE_FIELDS numbers each). */
  fineRows(first: number, count: number): Float32Array;
}

/** Fine summaries of a range of rows (row k: events k × fineSize …), as the chart draws them. */
export interface FineRange {
  first: number;
  count: number;
  rows: Float32Array;
}

/** Fine rows as bytes for the page: count (u32), first row (f64), then the rows (Float32, FINE_FIELDS each). */
export function encodeFine(r: FineRange): Uint8Array {
  const out = new Uint8Array(16 + r.rows.byteLength);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, r.count, true);
  dv.setFloat64(8, r.first, true);
  out.set(new Uint8Array(r.rows.buffer, r.rows.byteOffset, r.rows.byteLength), 16);
  return out;
}

export function decodeFine(bytes: ArrayBuffer): FineRange {
  const dv = new DataView(bytes);
  const count = dv.getUint32(0, true);
  if (bytes.byteLength !== 16 + 4 * FINE_FIELDS * count) throw new IndexDamagedError(`fine rows: ${bytes.byteLength} bytes for ${count} rows`);
  return { first: dv.getFloat64(8, true), count, rows: new Float32Array(bytes, 16, FINE_FIELDS * count) };
}

/**
 * The events of a range as the chart draws them: series and kinds (a compact reply to the page), and what the page
 * needs to draw one thread's stack or the heap of instrumented code alone (the thread filter, the libc toggle): each
 * event's thread row and that thread's stack after it, the instrumented heap after it, and every thread's stack
 * before the range.
 */
export interface IndexRange {
  first: number;
  count: number;
  kinds: Uint8Array;
  above: Float64Array;
  heap: Float64Array;
  statics: Float64Array;
  times: Float64Array;
  thread: Uint32Array;
  /** The stack bytes of the event's own thread after it. */
  stack: Float64Array;
  /** The heap of blocks allocated by instrumented code alone (instrumentedHeap). */
  iheap: Float64Array;
  /** Per thread row, its stack bytes before event `first`. */
  stacksBefore: Float64Array;
}

/** Thread `thread`'s stack + static bytes over a range (chartSeries(model, thread).above for its events). */
export function threadAbove(r: IndexRange, thread: number): Float64Array {
  const out = new Float64Array(r.count);
  let cur = r.stacksBefore[thread] ?? 0;
  for (let i = 0; i < r.count; i++) {
    if (r.thread[i] === thread) cur = r.stack[i]!;
    out[i] = cur + r.statics[i]!;
  }
  return out;
}

/** Reads an index's buckets back, a few kept decoded. */
export class IndexReader {
  readonly run: Run;
  private readonly cache = new Map<number, IndexBucket>();
  private readonly live = new Map<number, number>();
  /** Per thread row, the buckets it has rows of the thread table in, its stack after each and its events' classes there (made when first asked). */
  private threadBuckets: { bucket: number[]; last: number[]; mask: number[] }[] | null = null;

  constructor(
    readonly meta: IndexMeta,
    readonly summary: Float64Array,
    private readonly store: IndexStore,
    /** Buckets kept decoded (about 2.4 MiB each): a window of the page's spans up to 33. */
    private readonly keep = 64,
  ) {
    this.run = { sites: siteTableOf(meta), program: meta.program };
    meta.live.rows.forEach((row, i) => this.live.set(row, i));
  }

  get events(): number {
    return this.meta.events;
  }

  bucket(k: number): IndexBucket {
    let b = this.cache.get(k);
    if (b !== undefined) {
      this.cache.delete(k);
      this.cache.set(k, b);
      return b;
    }
    const s = this.summary;
    const r = SUMMARY_FIELDS * k;
    const first = k * this.meta.bucketSize;
    const count = Math.min(this.meta.bucketSize, this.meta.events - first);
    b = new IndexBucket(this.store.bucketBytes(s[r + S.OFFSET]!, s[r + S.LENGTH]!, k), first, count, s[r + S.BLOCK_START]!, s[r + S.FRAME_START]!);
    this.cache.set(k, b);
    if (this.cache.size > this.keep) this.cache.delete(this.cache.keys().next().value!);
    return b;
  }

  /** The thread table (THREAD_FIELDS per row), after the summary table. */
  get threadTable(): Float64Array {
    return this.summary.subarray(SUMMARY_FIELDS * this.meta.buckets, SUMMARY_FIELDS * this.meta.buckets + THREAD_FIELDS * this.meta.threadRows);
  }

  /** Per thread row, its rows of the thread table by bucket. */
  private byThread(): { bucket: number[]; last: number[]; mask: number[] }[] {
    if (this.threadBuckets === null) {
      const tt = this.threadTable;
      const by = this.meta.threads.map(() => ({ bucket: [] as number[], last: [] as number[], mask: [] as number[] }));
      for (let j = 0; j < this.meta.buckets; j++) {
        const r0 = this.summary[SUMMARY_FIELDS * j + S.THREAD_START]!;
        const r1 = j + 1 < this.meta.buckets ? this.summary[SUMMARY_FIELDS * (j + 1) + S.THREAD_START]! : this.meta.threadRows;
        for (let row = r0; row < r1; row++) {
          const t = tt[THREAD_FIELDS * row + T.THREAD]!;
          while (by.length <= t) by.push({ bucket: [], last: [], mask: [] });
          by[t]!.bucket.push(j);
          by[t]!.last.push(tt[THREAD_FIELDS * row + T.STACK_LAST]!);
          by[t]!.mask.push(tt[THREAD_FIELDS * row + T.MASK]!);
        }
      }
      this.threadBuckets = by;
    }
    return this.threadBuckets;
  }

  /** Every thread's stack bytes before bucket k's first event, from the thread table. */
  stacksBefore(k: number): Float64Array {
    const by = this.byThread();
    const out = new Float64Array(by.length);
    by.forEach(({ bucket, last }, t) => {
      // The thread's latest bucket before k.
      const i = lowerBound(bucket, k);
      out[t] = i > 0 ? last[i - 1]! : 0;
    });
    return out;
  }

  /** The classes of thread row t's events in bucket k (0: it has none there). */
  threadMask(k: number, t: number): number {
    const rows = this.byThread()[t];
    if (rows === undefined) return 0;
    const i = lowerBound(rows.bucket, k);
    return rows.bucket[i] === k ? rows.mask[i]! : 0;
  }

  /**
   * Bucket k's events' own thread's stack and the instrumented heap after each (kept with the bucket): from each
   * thread's stack before the bucket, an event changes its own thread's stack by as much as it changes the stack of
   * all threads; from the instrumented heap before it, by the blocks of instrumented code it makes and ends.
   */
  private bucketSeries(k: number): { bucket: IndexBucket; stack: Float64Array; iheap: Float64Array; before: Float64Array } {
    const bk = this.bucket(k);
    if (bk.series !== null) return { bucket: bk, ...bk.series };
    const before = this.stacksBefore(k);
    const cur = before.slice();
    let total = 0;
    for (let t = 0; t < cur.length; t++) total += cur[t]!;
    let iheap = k > 0 ? this.summary[SUMMARY_FIELDS * (k - 1) + S.IHEAP_LAST]! : 0;
    const stack = new Float64Array(bk.count);
    const ih = new Float64Array(bk.count);
    for (let i = 0; i < bk.count; i++) {
      const t = bk.thread[i]!;
      const st = bk.stackTotal[i]!;
      stack[i] = cur[t] = (cur[t] ?? 0) + st - total;
      total = st;
      if (bk.ended.row[i] !== NONE && bk.ended.interposed[i] === 0) iheap -= bk.ended.requested[i]!;
      if (bk.made.row[i] !== NONE && bk.made.interposed[i] === 0) iheap += bk.made.requested[i]!;
      ih[i] = iheap;
    }
    bk.series = { stack, iheap: ih, before };
    return { bucket: bk, ...bk.series };
  }

  /** Events [a, b), at most `cap` of them, as the chart draws them. */
  range(a: number, b: number, cap = 1 << 20): IndexRange {
    const first = Math.max(0, Math.min(a, this.events));
    const end = Math.max(first, Math.min(b, this.events, first + cap));
    const n = end - first;
    const threads = this.meta.threads.length;
    const out: IndexRange = {
      first,
      count: n,
      kinds: new Uint8Array(n),
      above: new Float64Array(n),
      heap: new Float64Array(n),
      statics: new Float64Array(n),
      times: new Float64Array(n),
      thread: new Uint32Array(n),
      stack: new Float64Array(n),
      iheap: new Float64Array(n),
      stacksBefore: new Float64Array(threads),
    };
    const B = this.meta.bucketSize;
    for (let e = first; e < end; ) {
      const { bucket: bk, stack, iheap, before } = this.bucketSeries(Math.floor(e / B));
      const i0 = e - bk.first;
      const i1 = Math.min(bk.count, end - bk.first);
      if (e === first) {
        // Each thread's stack before the range: before its bucket, then through the bucket's events before it.
        out.stacksBefore.set(before.subarray(0, threads));
        for (let i = 0; i < i0; i++) if (bk.thread[i]! < threads) out.stacksBefore[bk.thread[i]!] = stack[i]!;
      }
      for (let i = i0; i < i1; i++) {
        const o = bk.first + i - first;
        out.kinds[o] = bk.kind[i]!;
        out.statics[o] = bk.statics[i]!;
        out.above[o] = bk.stackTotal[i]! + bk.statics[i]!;
        out.heap[o] = bk.heapRequested[i]!;
        out.times[o] = bk.time[i]!;
        out.thread[o] = bk.thread[i]!;
        out.stack[o] = stack[i]!;
        out.iheap[o] = iheap[i]!;
      }
      e = bk.first + i1;
    }
    // Times made non-decreasing as the whole-trace axis has them (monotonicTimes): from the end of the bucket before
    // the one holding `first`, through that bucket's events before `first`.
    const k0 = Math.floor(first / B);
    let max = k0 > 0 ? this.summary[SUMMARY_FIELDS * (k0 - 1) + S.TIME_MAX]! : -Infinity;
    if (n > 0 && first > k0 * B) {
      const bk = this.bucket(k0);
      for (let i = 0; i < first - bk.first; i++) max = Math.max(max, bk.time[i]!);
    }
    for (let i = 0; i < n; i++) out.times[i] = max = Math.max(max, out.times[i]!);
    return out;
  }

  /** The fine rows of events [a, b): at most `cap` of them, from the row holding event a. */
  fine(a: number, b: number, cap = 1 << 18): FineRange {
    const F_ = this.meta.fineSize;
    const lo = Math.max(0, Math.min(a, this.events));
    const hi = Math.max(lo, Math.min(b, this.events));
    const first = Math.floor(lo / F_);
    const end = hi > lo ? Math.min(Math.ceil(hi / F_), first + cap) : first;
    return { first, count: end - first, rows: end > first ? this.store.fineRows(first, end - first) : new Float32Array(0) };
  }

  /** The bucket holding frame row `f`, found by the frame rows each bucket starts at. */
  private frameAt(f: number): { site: number; depth: number; enter: number; parent: number } {
    let lo = 0;
    let hi = this.meta.buckets - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.summary[SUMMARY_FIELDS * mid + S.FRAME_START]! <= f) lo = mid;
      else hi = mid - 1;
    }
    const b = this.bucket(lo);
    const i = f - b.frameStart;
    if (i < 0 || i >= b.frameSite.length) throw new IndexDamagedError(`frame ${f} is not in the bucket of events ${b.first}…`);
    return { site: b.frameSite[i]!, depth: b.frameDepth[i]!, enter: b.frameEnter[i]!, parent: b.frameParent[i]! };
  }

  /** The frames open on event e's thread, innermost first (callStackAt). */
  callStack(e: number): StackEntry[] {
    const out: StackEntry[] = [];
    if (e < 0 || e >= this.events) return out;
    const b = this.bucket(Math.floor(e / this.meta.bucketSize));
    for (let f = b.frame[e - b.first]!; f !== NONE; ) {
      const fr = this.frameAt(f);
      out.push(frameEntryOf(this.run, f, fr.site, fr.depth, fr.enter));
      f = fr.parent;
    }
    return out;
  }

  private freeEvent(row: number): number | null {
    const f = this.store.freeOf(row);
    return f === NOT_FREED ? null : f;
  }

  private ref(b: IndexBlock, freeEvent: number | null, cache: Map<number, SiteRef>): { block: number; id: number; requestedBytes: number; allocation: SiteRef; freeEvent: number | null } {
    return { block: b.row, id: b.id, requestedBytes: b.requested, allocation: siteRef(this.run, b.site, b.interposed, cache), freeEvent };
  }

  /** Event e as the viewer explains it: the same object eventDetail(model, e, …) gives for the decoded trace. */
  detail(e: number): EventDetail {
    if (e < 0 || e >= this.events) throw new RangeError(`no event ${e}: the trace has ${this.events.toLocaleString('en-US')}`);
    const b = this.bucket(Math.floor(e / this.meta.bucketSize));
    const i = e - b.first;
    const kind = b.kind[i]!;
    const heap = HEAP_KIND[kind] === 1;
    const interposed = (b.flags[i]! & Flag.INTERPOSED) !== 0;
    const cache = new Map<number, SiteRef>();
    const made = b.made.get(i);
    const ended = b.ended.get(i);
    const set = b.linked.get(i);
    let created: EventDetail['created'] = null;
    if (made !== undefined) {
      const at = this.live.get(made.row);
      const orphan = at === undefined ? NONE : this.meta.live.orphanedBy[at]!;
      created = {
        ...this.ref(made, this.freeEvent(made.row), cache),
        leakClass: at === undefined ? null : leakClassName(this.meta.live.leakClass[at]!),
        orphanedBy: orphan === NONE ? null : { event: orphan, at: this.placeOfEvent(orphan) },
      };
    }
    let linked: EventDetail['linked'] = null;
    if (set !== undefined && (kind === Kind.FREE || kind === Kind.REALLOC)) {
      const blocks = set.blocks.map((m): LinkedMember & { allocEvent: number } => {
        const freeEvent = this.freeEvent(m.row);
        const at = this.live.get(m.row);
        const leaked = freeEvent === null;
        return { ...this.ref(m, freeEvent, cache), leaked, orphaned: leaked && at !== undefined && this.meta.live.orphanedBy[at] === e, allocEvent: m.allocEvent };
      });
      let orphaned = 0;
      let orphanedBytes = 0;
      for (const m of blocks) {
        if (!m.orphaned) continue;
        orphaned++;
        orphanedBytes += m.requestedBytes;
      }
      linked = {
        event: e,
        kind: kind === Kind.REALLOC ? 'realloc' : 'free',
        at: siteRef(this.run, b.place[i]!, interposed),
        freed: ended === undefined ? null : this.ref(ended, e, cache),
        partial: set.partial,
        blocks,
        orphaned,
        orphanedBytes,
      };
    }
    return {
      event: e,
      kind: kindName(kind),
      class: eventClassOfKind(kind),
      thread: this.meta.threads[b.thread[i]!]?.index ?? b.thread[i]!,
      timeNs: b.time[i]!,
      place: placeOf(this.run, kind, b.place[i]!, heap && interposed),
      bytes: heap || kind === Kind.ENTER ? b.value[i]! : null,
      heapRequested: b.heapRequested[i]!,
      heapUsable: b.heapUsable[i]!,
      stack: b.stackTotal[i]!,
      static: b.statics[i]!,
      created,
      ended: ended === undefined ? null : { ...this.ref(ended, e, cache), allocEvent: ended.allocEvent },
      linked,
      interposed,
    };
  }

  /** The place of a heap event (the orphaning free of a block). */
  private placeOfEvent(e: number): SiteRef {
    const b = this.bucket(Math.floor(e / this.meta.bucketSize));
    const i = e - b.first;
    return siteRef(this.run, b.place[i]!, (b.flags[i]! & Flag.INTERPOSED) !== 0);
  }

  /**
   * The nearest event after (1) or before (-1) `from` of class bit `bit` (eventClassBit), on thread row `thread` if
   * given: buckets without the class (on the thread: by its rows of the thread table) are skipped by their summaries.
   * null if none.
   */
  nextOfClass(from: number, direction: 1 | -1, bit: number, thread: number | null = null): number | null {
    const B = this.meta.bucketSize;
    let e = from + direction;
    while (e >= 0 && e < this.events) {
      const k = Math.floor(e / B);
      if (((thread === null ? this.summary[SUMMARY_FIELDS * k + S.MASK]! : this.threadMask(k, thread)) & bit) === 0) {
        e = direction === 1 ? (k + 1) * B : k * B - 1;
        continue;
      }
      const b = this.bucket(k);
      for (let i = e - b.first; i >= 0 && i < b.count; i += direction) {
        if ((thread === null || b.thread[i] === thread) && this.bitOf(b.kind[i]!) === bit) return b.first + i;
      }
      e = direction === 1 ? (k + 1) * B : k * B - 1;
    }
    return null;
  }

  private bitOf(kind: number): number {
    return eventClassBit(eventClassOfKind(kind));
  }
}

/** Columns a range's bytes leave out when the page can make them (RANGE_* bits of the header's flags). */
const RANGE_ONE_THREAD = 1;
const RANGE_NO_LIBC = 2;

/**
 * A range as bytes for the page: count (u32), threads (u32), first (f64), flags (u32, padded to 8), then kinds (padded
 * to 8), thread rows (u32, padded to 8), above, heap, statics, times, stack, iheap (f64 each), then stacksBefore (f64
 * per thread). A trace of one thread leaves out the thread rows and stacks (its stack is above − statics), a range
 * whose instrumented heap is its heap leaves out iheap: most replies are no larger than the chart alone needs.
 */
export function encodeRange(r: IndexRange): Uint8Array {
  const threads = r.stacksBefore.length;
  const n = r.count;
  let flags = threads <= 1 ? RANGE_ONE_THREAD : 0;
  let same = true;
  for (let i = 0; i < n && same; i++) same = r.iheap[i] === r.heap[i];
  if (same) flags |= RANGE_NO_LIBC;
  const pad = Math.ceil(n / 8) * 8;
  const padT = flags & RANGE_ONE_THREAD ? 0 : Math.ceil(n / 2) * 8;
  const cols = [r.above, r.heap, r.statics, r.times, ...(flags & RANGE_ONE_THREAD ? [] : [r.stack]), ...(flags & RANGE_NO_LIBC ? [] : [r.iheap]), r.stacksBefore];
  const out = new Uint8Array(24 + pad + padT + cols.reduce((sum, c) => sum + c.byteLength, 0));
  const dv = new DataView(out.buffer);
  dv.setUint32(0, n, true);
  dv.setUint32(4, threads, true);
  dv.setFloat64(8, r.first, true);
  dv.setUint32(16, flags, true);
  out.set(r.kinds, 24);
  if (padT > 0) out.set(new Uint8Array(r.thread.buffer, r.thread.byteOffset, r.thread.byteLength), 24 + pad);
  let at = 24 + pad + padT;
  for (const col of cols) {
    out.set(new Uint8Array(col.buffer, col.byteOffset, col.byteLength), at);
    at += col.byteLength;
  }
  return out;
}

export function decodeRange(bytes: ArrayBuffer): IndexRange {
  const dv = new DataView(bytes);
  const count = dv.getUint32(0, true);
  const threads = dv.getUint32(4, true);
  const first = dv.getFloat64(8, true);
  const flags = bytes.byteLength >= 24 ? dv.getUint32(16, true) : 0;
  const one = (flags & RANGE_ONE_THREAD) !== 0;
  const noLibc = (flags & RANGE_NO_LIBC) !== 0;
  const pad = Math.ceil(count / 8) * 8;
  const padT = one ? 0 : Math.ceil(count / 2) * 8;
  const columns = 4 + (one ? 0 : 1) + (noLibc ? 0 : 1);
  if (bytes.byteLength !== 24 + pad + padT + 8 * columns * count + 8 * threads || flags > 3) throw new IndexDamagedError(`events: ${bytes.byteLength} bytes for ${count} events of ${threads} threads`);
  const base = 24 + pad + padT;
  const f64 = (k: number): Float64Array => new Float64Array(bytes, base + 8 * count * k, count);
  const above = f64(0);
  const heap = f64(1);
  const statics = f64(2);
  let stack: Float64Array;
  if (one) {
    stack = new Float64Array(count);
    for (let i = 0; i < count; i++) stack[i] = above[i]! - statics[i]!;
  } else stack = f64(4);
  return {
    first,
    count,
    kinds: new Uint8Array(bytes, 24, count),
    thread: one ? new Uint32Array(count) : new Uint32Array(bytes, 24 + pad, count),
    above,
    heap,
    statics,
    times: f64(3),
    stack,
    iheap: noLibc ? heap : f64(one ? 4 : 5),
    stacksBefore: new Float64Array(bytes, base + 8 * columns * count, threads),
  };
}
