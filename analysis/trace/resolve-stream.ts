// The streaming reader: a trace resolved into fold events (event-fold.ts) as it is read, never held whole. The records
// are streamed in the global order (event-stream.ts) and resolved exactly as the decoder's pass 3 does (decode.ts,
// resolve), keeping only the live blocks, by id, and the open frames of each thread, in slots that are reused once
// every fold has seen the event that ended them.
//
// What describes the run (sites, program, libraries, end, leak classes: run-facts.ts) the decoder collects in a first
// pass, in file order. A well-formed trace defines each site, the program and each library before any event names
// them, so one pass does: the facts are collected as they stream by, and the pass is checked at its end against every
// way it could differ from the decoder's reading (a problem of any kind, a fact that came after its use, a fold that
// wanted the event count first). If it could, the trace is read again the decoder's way: the facts first, then the
// events, with folds built anew.
//
// Memory: the slots of the live blocks and open frames, a window per thread, the site table; nothing per event.
// An event's time lies between its thread's TIME records around it, which may come long after it in the global order;
// when a fold asks for times, each thread has a second stream that reads ahead to its next TIME record.
import { ExtKind, Flag, Kind, LeakClass, SiteKind, isAllocatorKind, isEventKind, kindName } from './format.js';
import { readHeader, type TraceHeader } from './header.js';
import type { ByteSource } from './byte-source.js';
import { walkRecords, type RecordVisitor, type TraceRecord } from './records.js';
import { mergeStreams, streamRecords, threadStreams, type MergedReader, type MergedReaderFactory, type ThreadStream } from './event-stream.js';
import { applyLeakClasses, buildSites, hex, libraryNames, MAX_LIBRARY, RunFacts, runEnd, undefinedLibraries } from './run-facts.js';
import { NONE, type CallPath, type SiteTable, type SymbolNamer, type ThreadInfo } from '../model.js';
import { ProblemLog } from '../problems.js';
import { grown } from './typed-arrays.js';
import { LiveIds } from './live-ids.js';
import { emptyEvent } from '../model-fold.js';
import { eventCalls, type EventFold, type FoldBlocks, type FoldEvent, type FoldFrames, type FoldSource, type FoldTables, type TimeTicket, type TraceEnd, type TraceStart } from '../event-fold.js';

export interface StreamFoldOptions {
  /** Called now and then with the fraction of the pass done (0…1) and what it is doing. */
  onProgress?: (fraction: number, phase: string) => void;
  /** Bytes read per window and thread (tests use small ones). */
  window?: number;
  /** Told how a pass read the trace: once, or twice (the facts first) because once might not have been exact. */
  onReading?: (passes: 1 | 2) => void;
  /** Names addresses of the loaded objects (TraceStart.symbols). */
  symbols?: SymbolNamer;
  /**
   * Reads the records of a fold pass elsewhere (another thread, record-worker.ts) while this one resolves them and
   * runs the folds; null from it, or none given: this thread reads them.
   */
  reader?: MergedReaderFactory;
}

/** One thread as the first pass sees it. */
interface MetaThread {
  index: number;
  osTid: number | null;
  /** A heap record was seen, and whether an EXT/CALLER already applied to the latest. */
  heapSeen: boolean;
  callerTaken: boolean;
  /** An EXT/CALL_PATH already applied to the latest heap record. */
  pathTaken: boolean;
}

/**
 * The run's facts, threads and event count, and the problems of reading them (as the decoder's pass 2): a first pass
 * of their own, or told each record during a one-pass reading (`onUnit` / `onLibrary` then keep the start facts the
 * folds read up to date).
 */
class MetaPass implements RecordVisitor {
  /** Events counted in a pass of its own (a one-pass reading counts them in the fold pass, and tells calls and returns only `touch`). */
  events = 0;
  /** Blocks created and frames entered, counted with the events. */
  blocks = 0;
  frames = 0;
  readonly threads = new Map<number, MetaThread>();
  readonly facts: RunFacts;
  onUnit: (() => void) | null = null;
  onLibrary: (() => void) | null = null;

  constructor(private readonly problems: ProblemLog) {
    this.facts = new RunFacts(problems);
  }

  private last: MetaThread | null = null;

  private thread(index: number): MetaThread {
    // Records come in runs of one thread: the latest thread is the next record's as a rule.
    if (this.last !== null && this.last.index === index) return this.last;
    let t = this.threads.get(index);
    if (t === undefined) {
      t = { index, osTid: null, heapSeen: false, callerTaken: false, pathTaken: false };
      this.threads.set(index, t);
    }
    this.last = t;
    return t;
  }

  /**
   * What a one-pass reading tells it of a call or a return (most records): only the thread, which is the latest as a
   * rule; a call or a return adds nothing else to the facts.
   */
  touch(index: number): void {
    if (this.last === null || this.last.index !== index) this.thread(index);
  }

  record(r: TraceRecord): void {
    if (r.ignored) return;
    const t = this.thread(r.thread);
    const kind = r.kind;
    if (isEventKind(kind)) this.events++;
    if (kind === Kind.ENTER) this.frames++;
    else if (kind === Kind.ALLOC || (kind === Kind.REALLOC && !r.noBlock && !r.failed)) this.blocks++;
    switch (kind) {
      case Kind.ALLOC:
      case Kind.FREE:
      case Kind.REALLOC:
        t.heapSeen = true;
        t.callerTaken = false;
        t.pathTaken = false;
        break;
      case Kind.THREAD_BEGIN:
        if (t.osTid !== null) this.problems.add('thread-begin-twice', 'warning', r.offset, r.thread, 'second THREAD_BEGIN record for this thread');
        else t.osTid = r.osTid;
        break;
      case Kind.END:
        this.facts.endRecord(r);
        break;
      case Kind.EXT:
        if (r.subkind === ExtKind.LEAKS) {
          this.facts.leaksRecord(r);
        } else if (r.subkind === ExtKind.RANK) {
          this.facts.rankRecord(r);
        } else if (r.subkind === ExtKind.CALL_PATH) {
          if (!t.heapSeen || !t.callerTaken || t.pathTaken) this.facts.strayCallPath(r);
          else if (this.facts.callPathLibraries(r)) t.pathTaken = true;
        } else if (r.subkind === ExtKind.LIBRARY || r.subkind === ExtKind.CALLER) {
          if (this.facts.library(r)) {
            if (!t.heapSeen || t.callerTaken) {
              this.facts.strayCaller(r);
            } else {
              t.callerTaken = true;
              this.facts.calledLibrary(r);
            }
          } else if (r.subkind === ExtKind.LIBRARY) {
            this.onLibrary?.();
          }
        }
        break;
      case Kind.UNIT:
        this.facts.unit(r);
        this.onUnit?.();
        break;
      case Kind.PROGRAM:
        this.facts.programRecord(r);
        break;
    }
  }
}

/** The distinct call paths (EXT/CALL_PATH), one object each: they grow with the places a library allocates from. */
class CallPaths {
  private readonly byKey = new Map<string, CallPath>();

  intern(r: TraceRecord): CallPath {
    const key = `${r.pathFlags}|${r.pathLibs.join(',')}|${r.pathOffsets.join(',')}`;
    let path = this.byKey.get(key);
    if (path === undefined) {
      path = { flags: r.pathFlags, libraries: r.pathLibs.slice(), offsets: r.pathOffsets.slice() };
      this.byKey.set(key, path);
    }
    return path;
  }
}

/** A free list of slot numbers, and a stack of handles to release. */
class SlotStack {
  items = new Int32Array(64);
  count = 0;

  push(slot: number): void {
    if (this.count === this.items.length) this.items = grown(this.items, this.count + 1);
    this.items[this.count++] = slot;
  }
}


/** Slots handed out and given back: a free list, and growth by doubling of the columns a subclass holds. */
abstract class Slots {
  row = new Float64Array(64);
  used = 0;
  private readonly free = new SlotStack();

  take(): number {
    if (this.free.count > 0) return this.free.items[--this.free.count]!;
    if (this.used === this.row.length) this.grow(2 * this.used);
    return this.used++;
  }

  release(slot: number): void {
    this.free.push(slot);
  }

  /** Every column (`row` too) copied into arrays of `n`. */
  protected abstract grow(n: number): void;
}

/**
 * The live blocks' columns by slot (FoldBlocks), grown by doubling; freed slots are reused. Plain typed-array fields
 * of one class, so that every read in the hot loop sees one shape.
 */
class BlockSlots extends Slots implements FoldBlocks {
  id = new Float64Array(64);
  allocEvent = new Float64Array(64);
  requested = new Float64Array(64);
  usable = new Float64Array(64);
  address = new Float64Array(64);
  site = new Uint32Array(64);
  fn = new Uint8Array(64);
  thread = new Uint32Array(64);
  interposed = new Uint8Array(64);
  library = new Int32Array(64);
  entry = new Uint32Array(64);
  leakClass = new Uint8Array(64);
  /** 1 while the slot holds a live block. */
  inUse = new Uint8Array(64);

  protected grow(n: number): void {
    this.row = grown(this.row, n);
    this.id = grown(this.id, n);
    this.allocEvent = grown(this.allocEvent, n);
    this.requested = grown(this.requested, n);
    this.usable = grown(this.usable, n);
    this.address = grown(this.address, n);
    this.site = grown(this.site, n);
    this.fn = grown(this.fn, n);
    this.thread = grown(this.thread, n);
    this.interposed = grown(this.interposed, n);
    this.library = grown(this.library, n);
    this.entry = grown(this.entry, n);
    this.leakClass = grown(this.leakClass, n);
    this.inUse = grown(this.inUse, n);
  }
}

/** The open frames' columns by slot (FoldFrames), as BlockSlots. */
class FrameSlots extends Slots implements FoldFrames {
  thread = new Uint32Array(64);
  enter = new Float64Array(64);
  entrySite = new Uint32Array(64);
  depth = new Float64Array(64);
  parent = new Int32Array(64);

  protected grow(n: number): void {
    this.row = grown(this.row, n);
    this.thread = grown(this.thread, n);
    this.enter = grown(this.enter, n);
    this.entrySite = grown(this.entrySite, n);
    this.depth = grown(this.depth, n);
    this.parent = grown(this.parent, n);
  }
}

/**
 * The time of the j-th (from 0) of the k events a thread has between two of its clock readings, `from` and `to`: the
 * events are spread evenly between them (analysis/README.md, Time). Every reader that places events in time does it
 * by this one rule: a pass's times (ThreadClock, tickets) and the decoded model's (decode.ts).
 */
export function timeBetween(from: number, to: number, j: number, k: number): number {
  return from + ((to - from) / (k + 1)) * (j + 1);
}

/**
 * A thread's clock for a fold pass: a second stream of the thread's records, read ahead to the TIME records around
 * each of its events, so that an event's time is the decoder's interpolation between them (decode.ts, `clock`).
 */
class ThreadClock {
  /** Events of the thread before the previous / next TIME record; their times. */
  private prevCount = -1;
  private prevTime = 0;
  private nextCount = -1;
  private nextTime = 0;
  private hasNext = false;
  private seen = 0;

  constructor(private readonly scout: ThreadStream | null) {
    this.readNext();
  }

  /** Reads on to the next TIME record, counting the events before it. */
  private readNext(): void {
    const s = this.scout;
    this.hasNext = false;
    if (s === null) return;
    while (s.hasNext) {
      const r = s.peeked;
      if (!r.ignored) {
        if (r.kind === Kind.TIME) {
          this.nextCount = this.seen;
          this.nextTime = r.time;
          this.hasNext = true;
          s.advance();
          return;
        }
        if (isEventKind(r.kind)) this.seen++;
      }
      s.advance();
    }
  }

  /** The time of the thread's event number `ordinal` (0-based, in the thread's order); ordinals come in order. */
  timeOf(ordinal: number): number {
    while (this.hasNext && this.nextCount <= ordinal) {
      this.prevCount = this.nextCount;
      this.prevTime = this.nextTime;
      this.readNext();
    }
    if (this.prevCount < 0) return this.hasNext ? this.nextTime : 0;
    if (!this.hasNext) return this.prevTime;
    return timeBetween(this.prevTime, this.nextTime, ordinal - this.prevCount, this.nextCount - this.prevCount);
  }
}

/** A time asked for before the thread's next TIME record. */
interface PendingTime {
  time: number;
  ordinal: number;
}

/** One thread's state in a fold pass. */
interface PassThread {
  info: ThreadInfo;
  /** The latest TIME record in the stream so far: its time and the thread's events before it (-1: none yet). */
  timeCount: number;
  time: number;
  /** Times asked for since then (FoldTables.timeOf). */
  asked: PendingTime[];
  /** Handles of the open frames, innermost last. */
  frames: number[];
  stack: number;
  /** Events of this thread so far. */
  ordinal: number;
  clock: ThreadClock | null;
}

/** One fold pass: the records in the global order resolved into events for the folds. */
class FoldPass {
  private readonly blocks = new BlockSlots();
  private readonly frames = new FrameSlots();
  private readonly tables: FoldTables;
  private readonly live = new LiveIds();
  private readonly paths = new CallPaths();
  private readonly threads: PassThread[];
  private readonly rankOf: Map<number, number>;
  private readonly ev = emptyEvent();
  private pending = false;
  /** Blocks ended and frames closed by the pending event: released once the folds have seen it. */
  private readonly endedBlocks = new SlotStack();
  private readonly closedFrames = new SlotStack();
  /** The pending event's LINKED record: ids, partial flag, where (resolved when the event is handed out). */
  private linkedIds: number[] | null = null;
  private linkedPartial = false;
  private linkedOffset = 0;
  private readonly linkedOut: number[] = [];
  /** TIME records that came after the pending event, before it was handed out: thread rows and times. */
  private readonly laterTimes: number[] = [];
  private events = 0;
  private blockRows = 0;
  private frameRows = 0;
  private stackTotal = 0;
  private heapReq = 0;
  private heapUse = 0;
  private lost = 0;
  private statics = 0;
  private staticBytes = 0;
  private untracked = 0;
  private endEvent = NONE;
  private badBranches = 0;
  private firstBadBranch = 0;
  private branches = 0;
  /** Every fold's `event`, in order. */
  private readonly handOut: (e: FoldEvent, tables: FoldTables) => void;
  /** The folds that read branch outcomes (EventFold.branch) and clock readings (EventFold.clock). */
  private readonly branchFolds: EventFold[];
  private readonly timeFolds: EventFold[];
  private lastThread = -1;
  private lastRank = 0;

  /** One-pass reading: a use came before its fact (a library named before it was defined), so the pass may differ. */
  broken = false;

  constructor(
    private readonly run: StreamRun,
    private readonly folds: EventFold[],
    scouts: ThreadStream[] | null,
    /** One-pass reading: the run's facts, collected as the records stream by. */
    private readonly meta: MetaPass | null,
  ) {
    this.tables = { blocks: this.blocks, frames: this.frames, timeOf: (e) => this.timeOf(e) };
    this.branchFolds = folds.filter((f) => f.branch !== undefined);
    this.timeFolds = folds.filter((f) => f.clock !== undefined);
    this.handOut = eventCalls(folds);
    this.rankOf = new Map(run.threadIndices.map((index, rank) => [index, rank]));
    const scoutOf = new Map((scouts ?? []).map((s) => [s.index, s]));
    this.threads = run.threadIndices.map((index, rank) => ({
      info: { index, osTid: run.osTids[rank]!, beginEvent: NONE, endEvent: NONE, events: 0, maxStack: 0, maxStackEvent: NONE },
      timeCount: -1,
      time: 0,
      asked: [],
      frames: [],
      stack: 0,
      ordinal: 0,
      clock: scouts === null ? null : new ThreadClock(scoutOf.get(index) ?? null),
    }));
  }

  private rank(index: number): number {
    if (index !== this.lastThread) {
      this.lastThread = index;
      this.lastRank = this.rankOf.get(index) ?? 0;
    }
    return this.lastRank;
  }

  record(r: TraceRecord): void {
    if (r.ignored) return;
    const kind = r.kind;
    const meta = this.meta;
    if (meta !== null) {
      if (kind === Kind.ENTER || kind === Kind.EXIT) meta.touch(r.thread);
      else meta.record(r);
    }
    if (isEventKind(kind)) {
      if (this.pending) this.flush();
      this.resolve(r);
      this.pending = true;
      return;
    }
    if (kind === Kind.LINKED) {
      // The freeing event is the thread's latest, handed out only once its LINKED record has come.
      if (this.pending && this.ev.thread === this.rank(r.thread)) {
        this.linkedIds = r.ids.slice();
        this.linkedPartial = r.partial;
        this.linkedOffset = r.offset;
      }
    } else if (kind === Kind.EXT) {
      if (r.subkind === ExtKind.CALLER) this.caller(r);
      else if (r.subkind === ExtKind.CALL_PATH) this.callPath(r);
      else if (r.subkind === ExtKind.BRANCH) this.branch(r);
    } else if (kind === Kind.TIME) {
      // Applied once the pending event is out, so that a time its folds ask for is placed before this record.
      if (this.pending) this.laterTimes.push(this.rank(r.thread), r.time);
      else this.clock(this.rank(r.thread), r.time);
    }
  }

  /** The time of the event being handed out: now when every event gets one, else at its thread's next TIME. */
  private timeOf(e: FoldEvent): TimeTicket {
    const t = this.threads[e.thread]!;
    if (t.clock !== null) return { time: e.time };
    const asked = { time: t.timeCount < 0 ? 0 : t.time, ordinal: t.ordinal - 1 };
    t.asked.push(asked);
    return asked;
  }

  /** A TIME record of thread row `rank`: the times asked for since its previous one, interpolated; then the folds that read it. */
  private clock(rank: number, now: number): void {
    const t = this.threads[rank]!;
    for (const a of t.asked) {
      if (t.timeCount < 0) {
        a.time = now;
      } else {
        a.time = timeBetween(t.time, now, a.ordinal - t.timeCount, t.ordinal - t.timeCount);
      }
    }
    t.asked.length = 0;
    t.time = now;
    t.timeCount = t.ordinal;
    const folds = this.timeFolds;
    for (let f = 0; f < folds.length; f++) folds[f]!.clock!(rank, now);
  }

  /** EXT/CALLER: the library of the thread's heap event, if that is the one still to be handed out. */
  private caller(r: TraceRecord): void {
    if (this.meta !== null && !this.meta.facts.libraries.has(r.library)) this.broken = true;
    const e = this.ev;
    if (!this.pending || r.library >= MAX_LIBRARY || e.thread !== this.rank(r.thread) || e.library !== NONE) return;
    if (e.kind !== Kind.ALLOC && e.kind !== Kind.FREE && e.kind !== Kind.REALLOC) return;
    e.library = r.library;
    if (e.newBlock !== NONE) this.blocks.library[e.newBlock] = r.library;
  }

  /** EXT/CALL_PATH: the path of the thread's heap event, if that is still to be handed out and has its CALLER. */
  private callPath(r: TraceRecord): void {
    const e = this.ev;
    if (!this.pending || e.thread !== this.rank(r.thread) || e.library === NONE || e.callPath !== null) return;
    if (r.pathLibs.some((lib) => lib >= MAX_LIBRARY)) return;
    e.callPath = this.paths.intern(r);
  }

  /**
   * EXT/BRANCH: its site checked as the decoder does (branches are not events), and told to the folds that read them
   * after the latest event of its thread: that event is handed out first if it is still pending (the records that
   * complete it, CALLER, CALL_PATH and LINKED, come right after it, before any branch).
   */
  private branch(r: TraceRecord): void {
    this.branches++;
    const sites = this.run.sites;
    let site = r.site;
    if (!(site < sites.count && sites.kind[site] === SiteKind.BRANCH)) {
      if (this.badBranches++ === 0) this.firstBadBranch = site;
      site = 0;
    }
    const folds = this.branchFolds;
    if (folds.length === 0) return;
    const rank = this.rank(r.thread);
    if (this.pending && this.ev.thread === rank) this.flush();
    for (let f = 0; f < folds.length; f++) folds[f]!.branch!(rank, site, r.taken);
  }

  private checkSite(id: number, r: TraceRecord): number {
    if (id === 0) return 0;
    const sites = this.run.sites;
    if (id < sites.count && sites.kind[id] !== 0) return id;
    this.run.problems.add('unknown-site', 'warning', r.offset, r.thread, `${kindName(r.kind)} record names site ${id}, which no UNIT record defines`);
    return 0;
  }

  private endBlock(id: number, r: TraceRecord): number {
    const b = this.live.take(id);
    if (b === NONE) {
      this.run.problems.add('unknown-block', 'warning', r.offset, r.thread, `${kindName(r.kind)} record ends block ${hex(id)}, which is not live (never allocated, already freed, or lost)`);
      return NONE;
    }
    const B = this.blocks;
    B.inUse[b] = 0;
    this.heapReq -= B.requested[b]!;
    this.heapUse -= B.usable[b]!;
    this.endedBlocks.push(b);
    return b;
  }

  private setStack(t: PassThread, depth: number): void {
    this.stackTotal += depth - t.stack;
    t.stack = depth;
  }

  /** Closes up to `count` frames of the thread; returns the outermost closed, or NONE. */
  private closeFrames(t: PassThread, count: number): number {
    let last = NONE;
    for (let j = 0; j < count && t.frames.length > 0; j++) {
      last = t.frames.pop()!;
      this.closedFrames.push(last);
    }
    return last;
  }

  private innermostDepth(t: PassThread): number {
    return t.frames.length > 0 ? this.frames.depth[t.frames[t.frames.length - 1]!]! : 0;
  }

  /** The decoder's pass 3 for one event (decode.ts, resolve), into `ev`. */
  private resolve(r: TraceRecord): void {
    const e = this.ev;
    const kind = r.kind;
    const flags = r.flags;
    const rank = this.rank(r.thread);
    const t = this.threads[rank]!;
    const i = this.events++;
    let value = 0;
    let site = 0;
    let frame = t.frames.length > 0 ? t.frames[t.frames.length - 1]! : NONE;
    let newBlock = NONE;
    let oldBlock = NONE;
    e.untrackedAddress = 0;
    e.staticAddress = 0;
    e.library = NONE;
    e.callPath = null;
    switch (kind) {
      case Kind.THREAD_BEGIN:
        value = r.osTid;
        if (t.info.beginEvent === NONE) t.info.beginEvent = i;
        break;
      case Kind.ENTER: {
        site = this.checkSite(r.site, r);
        value = r.depth;
        const fr = this.frames.take();
        const F = this.frames;
        F.row[fr] = this.frameRows++;
        F.thread[fr] = rank;
        F.enter[fr] = i;
        F.entrySite[fr] = site;
        F.depth[fr] = value + (this.run.sites.stackBound?.[site] ?? 0); // the stack its summarised calls may add
        F.parent[fr] = frame;
        t.frames.push(fr);
        frame = fr;
        this.setStack(t, F.depth[fr]!);
        break;
      }
      case Kind.EXIT:
        site = this.checkSite(r.site, r);
        frame = this.closeFrames(t, 1);
        this.setStack(t, this.innermostDepth(t));
        break;
      case Kind.UNWIND:
        value = r.count;
        frame = this.closeFrames(t, value);
        this.setStack(t, this.innermostDepth(t));
        break;
      case Kind.THREAD_END:
        this.closeFrames(t, t.frames.length);
        this.setStack(t, 0);
        if (t.info.endEvent === NONE) t.info.endEvent = i;
        break;
      case Kind.LOST:
        value = r.count;
        this.lost += value;
        break;
      case Kind.STATIC:
        site = this.checkSite(r.site, r);
        value = r.size;
        e.staticAddress = r.address;
        this.statics++;
        this.staticBytes += value;
        break;
      case Kind.END:
        value = r.status;
        if (this.endEvent === NONE) this.endEvent = i;
        break;
      case Kind.ALLOC:
      case Kind.FREE:
      case Kind.REALLOC: {
        site = this.checkSite(r.site, r);
        if (kind === Kind.FREE) {
          if ((flags & Flag.FREE_UNTRACKED) !== 0) {
            e.untrackedAddress = r.address;
            this.untracked++;
            break;
          }
          oldBlock = this.endBlock(r.block, r);
          value = oldBlock === NONE ? 0 : this.blocks.requested[oldBlock]!;
          break;
        }
        value = r.size;
        if (kind === Kind.REALLOC) {
          if ((flags & Flag.REALLOC_FAILED) !== 0) break;
          if (r.block !== 0) oldBlock = this.endBlock(r.block, r);
          if ((flags & Flag.REALLOC_NO_BLOCK) !== 0) break;
        }
        newBlock = this.newBlock(r, i, rank, site, value, frame);
        break;
      }
    }
    e.index = i;
    e.kind = kind;
    e.flags = flags;
    e.thread = rank;
    e.site = site;
    e.value = value;
    e.newBlock = newBlock;
    e.oldBlock = oldBlock;
    e.frame = frame;
    e.stack = t.stack;
    e.stackTotal = this.stackTotal;
    e.heapRequested = this.heapReq;
    e.heapUsable = this.heapUse;
    e.time = t.clock === null ? 0 : t.clock.timeOf(t.ordinal);
    e.linked = null;
    e.linkedPartial = false;
    t.ordinal++;
    const info = t.info;
    info.events++;
    if (t.stack > info.maxStack || info.maxStackEvent === NONE) {
      info.maxStack = t.stack;
      info.maxStackEvent = i;
    }
  }

  private newBlock(r: TraceRecord, i: number, rank: number, site: number, value: number, frame: number): number {
    const id = r.seq;
    const b = this.blocks.take();
    if (this.live.set(id, b) !== NONE) {
      this.run.problems.add('block-reused', 'warning', r.offset, r.thread, `${kindName(r.kind)} creates block ${hex(id)}, which is already live`);
    }
    const B = this.blocks;
    const interposed = (r.flags & Flag.INTERPOSED) !== 0;
    const siteKind = this.run.sites.kind[site] ?? 0;
    B.row[b] = this.blockRows++;
    B.id[b] = id;
    B.allocEvent[b] = i;
    B.requested[b] = value;
    B.usable[b] = r.usable;
    B.address[b] = r.address;
    B.site[b] = site;
    B.fn[b] = interposed ? (r.fn > 255 ? 0 : r.fn) : isAllocatorKind(siteKind) ? siteKind : 0;
    B.thread[b] = rank;
    B.interposed[b] = interposed ? 1 : 0;
    B.library[b] = NONE;
    B.entry[b] = frame === NONE ? 0 : this.frames.entrySite[frame]!;
    B.leakClass[b] = LeakClass.NONE;
    B.inUse[b] = 1;
    this.heapReq += value;
    this.heapUse += r.usable;
    return b;
  }

  /** Hands the pending event to every fold, then frees the slots it ended. */
  private flush(): void {
    const e = this.ev;
    if (this.linkedIds !== null) this.resolveLinked();
    this.handOut(e, this.tables);
    this.pending = false;
    const ended = this.endedBlocks;
    for (let k = 0; k < ended.count; k++) this.blocks.release(ended.items[k]!);
    ended.count = 0;
    const closed = this.closedFrames;
    for (let k = 0; k < closed.count; k++) this.frames.release(closed.items[k]!);
    closed.count = 0;
    const times = this.laterTimes;
    if (times.length > 0) {
      for (let k = 0; k < times.length; k += 2) this.clock(times[k]!, times[k + 1]!);
      times.length = 0;
    }
  }

  private resolveLinked(): void {
    const e = this.ev;
    const out = this.linkedOut;
    out.length = 0;
    for (const id of this.linkedIds!) {
      const b = this.live.get(id);
      if (b === NONE) {
        this.run.problems.add('linked-unknown-block', 'warning', this.linkedOffset, this.threads[e.thread]!.info.index, `LINKED names block ${hex(id)}, which is not live`);
      } else {
        out.push(b);
      }
    }
    e.linked = out;
    e.linkedPartial = this.linkedPartial;
    this.linkedIds = null;
  }

  /** After the last record: the pending event out, the leak classes, the run's end (the folds are not finished yet). */
  end(): TraceEnd {
    if (this.pending) this.flush();
    const run = this.run;
    const problems = run.problems;
    const B = this.blocks;
    const leakScan = applyLeakClasses(run.facts, (id) => this.live.get(id), (b, cls) => (B.leakClass[b] = cls), problems);
    const end = runEnd(run.facts, run.header, this.endEvent, problems);
    undefinedLibraries(run.facts, problems);
    if (this.badBranches > 0) {
      problems.add('branch-site', 'warning', null, null, `${this.badBranches} BRANCH record(s) name a site that is not a branch site of any UNIT record (first: site ${this.firstBadBranch}); their site is dropped`);
    }
    const liveBlocks: number[] = [];
    for (let b = 0; b < this.blocks.used; b++) if (B.inUse[b] === 1) liveBlocks.push(b);
    liveBlocks.sort((a, b) => B.row[a]! - B.row[b]!);
    if (this.meta !== null) for (const t of this.threads) t.info.osTid = this.meta.threads.get(t.info.index)?.osTid ?? null;
    return {
      events: this.events,
      rank: run.facts.rank,
      threads: this.threads.map((t) => t.info),
      end,
      lostRecords: this.lost,
      leakScan,
      problems: problems.list(),
      blocksCreated: this.blockRows,
      statics: { count: this.statics, totalBytes: this.staticBytes },
      untrackedFrees: this.untracked,
      branches: this.branches,
      liveBlocks,
    };
  }

  /** Every fold's `finish`, with the run's end. */
  finish(end: TraceEnd): TraceEnd {
    for (const f of this.folds) f.finish?.(end, this.tables);
    return end;
  }
}

/** What the fold pass needs of the run's facts (complete in a two-pass reading, growing in a one-pass one). */
interface StreamRun {
  header: TraceHeader;
  facts: RunFacts;
  sites: SiteTable;
  /** Trace thread indices, sorted: the thread list's rows. */
  threadIndices: number[];
  osTids: (number | null)[];
  problems: ProblemLog;
}

/** Problems a one-pass reading raises as the decoder's reading does: the header's, and the run's end, last of all. */
const SAME_EITHER_WAY = new Set(['pointer-size', 'no-end']);

/**
 * A trace as a fold source (event-fold.ts). Each `run` reads the trace once when it can, twice when it must (see the
 * top of this file). Throws TraceRefusedError if the bytes are not a readable trace; never throws after the header.
 */
export function streamSource(source: ByteSource, options: StreamFoldOptions & { twoPasses?: boolean } = {}): FoldSource {
  const header = readHeader(source);
  const headerProblems = new ProblemLog();
  if (header.pointerSize !== 4 && header.pointerSize !== 8) {
    headerProblems.add('pointer-size', 'warning', 16, null, `header gives a pointer size of ${header.pointerSize} bytes; expected 4 or 8`);
  }
  const reading = { source, header, headerProblems, options };
  return {
    run: (build) => (options.twoPasses ? null : onePass(reading, build)) ?? twoPasses(reading, build),
  };
}

interface Reading {
  source: ByteSource;
  header: TraceHeader;
  headerProblems: ProblemLog;
  options: StreamFoldOptions;
}

const symbols = (r: Reading): { symbols?: SymbolNamer } => (r.options.symbols === undefined ? {} : { symbols: r.options.symbols });

/** Scouts for the threads' times when a fold reads every event's time, else null. */
function scoutsFor(r: Reading, folds: EventFold[]): ThreadStream[] | null {
  return folds.some((f) => f.needsTime === true) ? threadStreams(r.source, r.header, new ProblemLog(), r.options.window) : null;
}

/** The run's facts first, in a pass of their own; then the folds' pass. */
function twoPasses(r: Reading, build: (start: TraceStart) => EventFold[]): TraceEnd {
  const problems = r.headerProblems.copy();
  const progress = r.options.onProgress;
  const meta = new MetaPass(problems);
  walkRecords(r.source, r.header, meta, problems, {
    onProgress: progress && ((done, total) => progress((0.5 * done) / total, 'reading the run')),
  });
  const sites = buildSites(meta.facts, problems);
  const threadIndices = [...meta.threads.keys()].sort((a, b) => a - b);
  const run: StreamRun = { header: r.header, facts: meta.facts, sites, threadIndices, osTids: threadIndices.map((i) => meta.threads.get(i)!.osTid), problems };
  const start: TraceStart = { header: r.header, program: meta.facts.program, libraries: libraryNames(meta.facts), sites, ...symbols(r), events: meta.events, blocks: meta.blocks, frames: meta.frames, threads: threadIndices.length };
  const folds = build(start);
  const pass = new FoldPass(run, folds, scoutsFor(r, folds), null);
  const onProgress = progress && ((done: number, total: number) => progress(0.5 + (0.5 * done) / total, 'reading the events'));
  const reader = r.options.reader?.(r.source, r.header, r.options.window) ?? null;
  if (reader === null) {
    streamRecords(r.source, r.header, new ProblemLog(), (rec) => pass.record(rec), { window: r.options.window, onProgress });
  } else {
    try {
      reader.run(new ProblemLog(), (rec) => pass.record(rec), onProgress);
    } finally {
      reader.close();
    }
  }
  r.options.onReading?.(2);
  return pass.finish(pass.end());
}

/**
 * One pass with the facts collected as they come (the start facts the folds see are those before the first event but
 * a thread's beginning, kept up to date in place); null when it might differ from the two-pass reading, which is then to be done instead.
 */
function onePass(r: Reading, build: (start: TraceStart) => EventFold[]): TraceEnd | null {
  const problems = r.headerProblems.copy();
  const reader = r.options.reader?.(r.source, r.header, r.options.window) ?? null;
  try {
    return onePassWith(r, build, problems, reader);
  } finally {
    reader?.close();
  }
}

/** `onePass` with the records read here (`reader` null) or by `reader`. */
function onePassWith(r: Reading, build: (start: TraceStart) => EventFold[], problems: ProblemLog, reader: MergedReader | null): TraceEnd | null {
  // The chunk headers' problems (and those of each thread's first record) come first, as one thread meets them.
  const streams = reader === null ? threadStreams(r.source, r.header, problems, r.options.window) : null;
  const prelude = new RunFacts(new ProblemLog());
  streamRecords(r.source, r.header, new ProblemLog(), (rec) => {
    // A thread's first record is its THREAD_BEGIN; the program and the first units follow it.
    if (rec.ignored || rec.kind === Kind.THREAD_BEGIN) return true;
    if (isEventKind(rec.kind)) return false;
    if (rec.kind === Kind.UNIT) prelude.unit(rec);
    else if (rec.kind === Kind.PROGRAM) prelude.programRecord(rec);
    else if (rec.kind === Kind.EXT && rec.subkind === ExtKind.LIBRARY) prelude.library(rec);
    return true;
  }, { window: r.options.window });
  const sites = buildSites(prelude, new ProblemLog());
  const threadIndices = streams === null ? reader!.threads : streams.map((t) => t.index);
  const start: TraceStart = { header: r.header, program: prelude.program, libraries: libraryNames(prelude), sites, ...symbols(r), events: -1, blocks: -1, frames: -1, threads: threadIndices.length };
  const folds = build(start);
  if (folds.some((f) => f.needsEventCount === true)) return null;

  const meta = new MetaPass(problems);
  let siteProblems = 0;
  meta.onUnit = () => {
    const check = new ProblemLog();
    Object.assign(sites, buildSites(meta.facts, check));
    siteProblems += check.size;
  };
  meta.onLibrary = () => {
    start.libraries.length = 0;
    start.libraries.push(...libraryNames(meta.facts));
  };
  const run: StreamRun = { header: r.header, facts: meta.facts, sites, threadIndices, osTids: threadIndices.map(() => null), problems };
  const pass = new FoldPass(run, folds, scoutsFor(r, folds), meta);
  const progress = r.options.onProgress;
  const onProgress = progress && ((done: number, total: number) => progress(done / total, 'reading the events'));
  if (streams !== null) mergeStreams(streams, r.source.size, (rec) => pass.record(rec), onProgress);
  else reader!.run(problems, (rec) => pass.record(rec), onProgress);
  const end = pass.end();
  const exact =
    !pass.broken &&
    siteProblems === 0 &&
    meta.threads.size === threadIndices.length &&
    JSON.stringify(meta.facts.program) === JSON.stringify(start.program) &&
    problems.codes().every((code) => SAME_EITHER_WAY.has(code));
  if (!exact) return null;
  r.options.onReading?.(1);
  return pass.finish(end);
}
