// The records of all threads in the trace's one global order, read from the file as they are needed: each thread's
// chunks through a window of its own, the threads merged by their heap sequence numbers. Memory holds one window per
// thread and the list of chunk headers (one entry per chunk, a millionth of the trace), never the records.
//
// The order is the decoder's (decode.ts, mergeRuns): a thread's events form runs of equal merge key, the seq of the
// thread's latest heap or THREAD_BEGIN record; whole runs are placed in order of (key, thread index). The records
// that are not events (UNIT, TIME, LINKED, EXT …) travel with the run they are read in.
import type { ByteSource } from './byte-source.js';
import type { TraceHeader } from './header.js';
import { ChunkRecords, parseContext, scanChunks, ThreadCursor, TraceRecord, type ChunkEntry } from './records.js';
import { addRawSegment, rawTail, type RawSegments } from './raw-tail.js';
import { ProblemLog } from '../problems.js';
import { ExtKind, isEventKind, Kind } from './format.js';
import { readHeader } from './header.js';
import { IndexHeap } from './index-heap.js';

/** Window per thread: a whole chunk when there are few threads, less when there are many (memory grows with threads). */
const WINDOW_BUDGET = 256 << 20;
const WINDOW_MIN = 64 << 10;

/** One thread's stream: its chunks in file order, then its raw tail (raw-tail.ts), read one record ahead. */
export class ThreadStream {
  readonly cursor: ThreadCursor;
  readonly peeked = new TraceRecord();
  /** `peeked` holds the thread's next record. */
  hasNext = false;
  private next = 0;
  /** The raw tail's reader, once the chunks are read and the tail begun. */
  private tail: ChunkRecords | null = null;

  constructor(
    readonly index: number,
    private readonly chunks: ChunkEntry[],
    private readonly reader: ChunkRecords,
    /** The thread's raw segments and how to read its tail from them; undefined when it has none. */
    private readonly raw?: { segments: RawSegments; open: (cur: ThreadCursor, segments: RawSegments) => ChunkRecords | null },
  ) {
    this.cursor = new ThreadCursor(index);
    if (chunks.length > 0) reader.start(chunks[0]!);
    this.advance();
  }

  /** Reads the next record into `peeked`, moving on to the thread's next chunk when one ends, and last to its raw tail. */
  advance(): void {
    if (this.tail !== null) {
      this.hasNext = this.tail.next(this.cursor, this.peeked);
      return;
    }
    for (;;) {
      if (this.next < this.chunks.length && this.reader.next(this.cursor, this.peeked)) {
        this.hasNext = true;
        return;
      }
      this.next++;
      if (this.cursor.stopped || this.next >= this.chunks.length) {
        this.tail = this.cursor.stopped || this.raw === undefined ? null : this.raw.open(this.cursor, this.raw.segments);
        this.hasNext = this.tail !== null && this.tail.next(this.cursor, this.peeked);
        return;
      }
      this.reader.start(this.chunks[this.next]!);
    }
  }
}

export interface StreamOptions {
  /** Bytes read per window and thread (tests use small ones). */
  window?: number;
  /** Called after each chunk header pass and now and then while reading, with the bytes read so far. */
  onProgress?: (done: number, total: number) => void;
}

/**
 * A stream per thread that has chunks, by thread index, each through a window of its own (`window` bytes, or a share
 * of WINDOW_BUDGET). Problems of the chunk headers and of the records go to `problems`.
 */
export function threadStreams(source: ByteSource, header: TraceHeader, problems: ProblemLog, window?: number): ThreadStream[] {
  const byThread = new Map<number, ChunkEntry[]>();
  const raw = new Map<number, RawSegments>();
  scanChunks(
    source,
    header,
    problems,
    (c) => {
      let list = byThread.get(c.thread);
      if (list === undefined) byThread.set(c.thread, (list = []));
      list.push(c);
    },
    (c) => addRawSegment(raw, c),
  );
  const indices = [...byThread.keys()].sort((a, b) => a - b);
  const size = window ?? Math.max(WINDOW_MIN, Math.floor(WINDOW_BUDGET / Math.max(1, indices.length)));
  const ctx = parseContext(header, problems);
  const open = (cur: ThreadCursor, segments: RawSegments): ChunkRecords | null => {
    const tail = rawTail(source, header, cur, segments, problems);
    if (tail === null) return null;
    const reader = new ChunkRecords(tail.source, ctx);
    reader.start(tail.chunk);
    return reader;
  };
  return indices.map((i) => {
    const segments = raw.get(i);
    return new ThreadStream(i, byThread.get(i)!, new ChunkRecords(source, ctx, size), segments && { segments, open });
  });
}

/**
 * The records `mergeStreams` visits, read by someone else (another thread: record-worker.ts) and handed over here: the
 * same records, problems and progress calls in the same order.
 */
export interface MergedReader {
  /** The trace thread indices that have chunks, sorted (`threadStreams`' streams). */
  readonly threads: number[];
  /**
   * Calls `visit` with every readable record in the global order (the record object is reused), `onProgress` as
   * `mergeStreams` does, and adds the problems of reading to `problems` in the order one thread would meet them (the
   * chunk headers' first). Once.
   */
  run(problems: ProblemLog, visit: (r: TraceRecord) => void, onProgress?: (done: number, total: number) => void): void;
  /** Stops the reading and lets go of what it holds (after `run`, or instead of it). */
  close(): void;
}

/** Makes a MergedReader for a source, or null when the records are better read here. */
export type MergedReaderFactory = (source: ByteSource, header: TraceHeader, window: number | undefined) => MergedReader | null;

/**
 * Calls `visit` with every readable record in the global order, until it returns false. The record object is reused:
 * copy what you keep. Problems (damage, truncation) go to `problems`, each thread's in its own stream's order.
 */
export function streamRecords(
  source: ByteSource,
  header: TraceHeader,
  problems: ProblemLog,
  visit: (r: TraceRecord) => boolean | void,
  options: StreamOptions = {},
): void {
  mergeStreams(threadStreams(source, header, problems, options.window), source.size, visit, options.onProgress);
}

/** `streamRecords` over streams already opened (`threadStreams`) of a file of `total` bytes. */
export function mergeStreams(
  threads: ThreadStream[],
  total: number,
  visit: (r: TraceRecord) => boolean | void,
  onProgress?: (done: number, total: number) => void,
): void {
  let done = 0;
  let sinceProgress = 0;

  if (threads.length === 1) {
    // One thread (most programs): its records are the global order as they come, no runs to place.
    const s = threads[0]!;
    const r = s.peeked;
    while (s.hasNext) {
      if (visit(r) === false) return;
      if (onProgress !== undefined && ++sinceProgress === 1 << 16) {
        sinceProgress = 0;
        done = Math.max(done, r.offset);
        onProgress(done, total);
      }
      s.advance();
    }
    onProgress?.(total, total);
    return;
  }

  // Threads with a next record, by (the key of that record, thread index); ranks index `threads`.
  const heap = new IndexHeap((a, b) => {
    const ka = threads[a]!.peeked.seq;
    const kb = threads[b]!.peeked.seq;
    return ka < kb || (ka === kb && a < b);
  });
  for (let t = 0; t < threads.length; t++) if (threads[t]!.hasNext) heap.push(t);

  while (heap.size > 0) {
    const t = heap.top();
    const s = threads[t]!;
    const key = s.peeked.seq;
    // The whole run: every record of this thread read while its merge key stays the same.
    do {
      if (visit(s.peeked) === false) return;
      if (onProgress !== undefined && ++sinceProgress === 1 << 16) {
        sinceProgress = 0;
        done = Math.max(done, s.peeked.offset);
        onProgress(done, total);
      }
      s.advance();
    } while (s.hasNext && s.peeked.seq === key);
    if (s.hasNext) heap.topChanged();
    else heap.pop();
  }
  onProgress?.(total, total);
}

/**
 * The PROGRAM record, read from the first records of the trace (it follows the first thread's THREAD_BEGIN), with the
 * EXT/RANK an MPI launcher's process writes right after it; null when the trace has no PROGRAM before its first event.
 */
export function programRecord(source: ByteSource): { path: string; cwd: string; rank: number | null } | null {
  const header = readHeader(source);
  let found: { path: string; cwd: string; rank: number | null } | null = null;
  streamRecords(source, header, new ProblemLog(), (r) => {
    if (r.ignored || r.kind === Kind.THREAD_BEGIN || r.kind === Kind.TIME) return true;
    if (found !== null) {
      // The record after PROGRAM: its RANK, if the process has one; nothing further is read.
      if (r.kind === Kind.EXT && r.subkind === ExtKind.RANK) found.rank = r.rank;
      return false;
    }
    if (r.kind === Kind.PROGRAM) found = { path: r.path, cwd: r.cwd, rank: null };
    return !isEventKind(r.kind);
  });
  return found;
}
