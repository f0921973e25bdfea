// The index file of a trace (`<trace>.mwindex`, analysis/event-index.ts): built once in one streamed pass, kept beside
// the trace (or in the user's cache folder when that folder cannot be written), used while the trace's size and
// modification time and the index's format version still match. Written under a temporary name and renamed when
// whole: an interrupted build (Ctrl-C, a kill) never leaves a cache that looks finished.
//
// The viewer builds it in two stages (openTraceIndexStaged): first `<index>.summaries`, the same layout with magic
// "MWINDXS\n", no bucket bytes and no free column (buildSummaryFile: one light pass, what the chart and the overview
// draw), then the whole index (buildIndexFile), after which the summaries file is removed. Each is written and renamed
// as above; a summaries file left by a build stopped in its second stage is whole, and the next build starts from it.
//
// File layout (little-endian):
//   0   "MWINDEX\n"        8   version u32        12  bucket size u32
//   16  trace size f64     24  trace mtime ms f64 32  bucket bytes f64 (the buckets start at 64)
//   40  free column offset f64, 48 its rows f64, 56 meta offset f64
//   64  fine rows offset f64
//   72  the buckets' events, one after the other
//   then the free column: per block row the event that freed it (u32, 0xffffffff: never)
//   then the fine rows (f32, FINE_FIELDS per INDEX_FINE events), read by range for the part of the run in view
//   then the meta: u32 JSON length, the JSON (IndexMeta), padding to 8, the summary table (f64, SUMMARY_FIELDS per bucket),
//   then the thread table (f64, THREAD_FIELDS per row: a row per bucket and thread with events in it)
import { closeSync, existsSync, fstatSync, openSync, readdirSync, readFileSync, readSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { makePrivateDir, openPrivate, writePrivateFile } from './private-files.js';
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { FINE_FIELDS, IndexFold, IndexReader, INDEX_VERSION, INDEX_BUCKET, INDEX_FINE, NOT_FREED, SUMMARY_FIELDS, THREAD_FIELDS, type IndexMeta, type IndexSink, type IndexStore } from '../analysis/event-index.js';
import { FileSource } from '../analysis/trace/file-source.js';
import { readHeader } from '../analysis/trace/header.js';
import { streamSource } from '../analysis/trace/resolve-stream.js';
import { fileSymbolNamer } from './library-symbols.js';
import type { FoldSource } from '../analysis/event-fold.js';
import { computeReport, summaryRequest, type ReportRequest } from '../analysis/report.js';
import { reportText } from '../analysis/report-text.js';
import { WORKER_LIMITS } from '../analysis/worker-limits.js';

const MAGIC = 'MWINDEX\n';
/** The magic of a summaries file (the same layout with no bucket bytes and no free column). */
const SUMMARIES_MAGIC = 'MWINDXS\n';
/** The header's bytes: the buckets' events start here. */
export const INDEX_HEADER = 72;
const HEADER = INDEX_HEADER;

/**
 * Traces larger than this open in index mode (MEMWRAP_VIEW_INDEX=1 forces it for any trace, =0 never uses it). A page
 * in whole mode holds about 117 bytes of JS heap per event, and format 1.4 encodes as little as about 1 byte per
 * event: at 4 MiB a trace holds up to about 4 million events, 453 MiB of heap in the page (README, "Traces of a
 * hundred million events and more"), where 8 MiB measured 900 MiB.
 */
export const INDEX_THRESHOLD = 4 << 20;

/** Whether the viewer opens a trace of `bytes` through its index. */
export function useIndex(bytes: number, env: NodeJS.ProcessEnv = process.env): boolean {
  const force = env.MEMWRAP_VIEW_INDEX;
  if (force === '1') return true;
  if (force === '0') return false;
  return bytes > INDEX_THRESHOLD;
}

/** Where the index of `trace` is kept: beside it when its folder can be written, else in the user's cache folder. */
export function indexPathFor(trace: string, env: NodeJS.ProcessEnv = process.env): string {
  const abs = path.resolve(trace);
  const beside = `${abs}.mwindex`;
  if (writableDir(path.dirname(abs))) return beside;
  const base = env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  const dir = path.join(base, 'cc-memwrap', 'index');
  makePrivateDir(dir);
  const hash = createHash('sha256').update(abs).digest('hex').slice(0, 16);
  return path.join(dir, `${path.basename(abs)}-${hash}.mwindex`);
}

function writableDir(dir: string): boolean {
  const probe = path.join(dir, `.mwindex-probe-${process.pid}-${Math.random().toString(36).slice(2)}`);
  try {
    closeSync(openSync(probe, 'wx'));
    unlinkSync(probe);
    return true;
  } catch {
    return false;
  }
}

/** The trace's size and modification time, which an index must match. */
export function traceStamp(trace: string): { size: number; mtimeMs: number } {
  const st = statSync(trace);
  return { size: st.size, mtimeMs: st.mtimeMs };
}

// ---- temporary files: removed on exit and on Ctrl-C, whatever stops the build ----

const temporaries = new Set<string>();
let hooked = false;

function removeTemporaries(): void {
  for (const t of temporaries) {
    try {
      unlinkSync(t);
    } catch {
      // already gone
    }
  }
  temporaries.clear();
}

export function track(file: string): void {
  temporaries.add(file);
  if (hooked) return;
  hooked = true;
  process.on('exit', removeTemporaries);
}

export function untrack(file: string): void {
  temporaries.delete(file);
}

/** Temporary files of builds whose process is gone (a build killed outright): removed before a new build. */
function removeStale(dest: string): void {
  const dir = path.dirname(dest);
  const prefix = `${path.basename(dest)}.tmp-`;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const n of names) {
    if (!n.startsWith(prefix)) continue;
    const pid = Number(/^(\d+)-/.exec(n.slice(prefix.length))?.[1]);
    if (Number.isInteger(pid) && pid !== process.pid && alive(pid)) continue;
    if (pid === process.pid && temporaries.has(path.join(dir, n))) continue;
    try {
      unlinkSync(path.join(dir, n));
    } catch {
      // another build removed it
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

// ---- the free column, written by block row while rows are still being made ----

/**
 * Frees arrive for recent blocks as a rule: a window of the latest rows is kept in memory and written out in order
 * as it slides; a free of an older row is written in place at the end (a list of such patches, kept in a file).
 */
class FreeColumn {
  static readonly WINDOW = 1 << 22;
  private base = 0;
  private readonly win = new Uint32Array(FreeColumn.WINDOW).fill(NOT_FREED);
  private readonly patches = new Uint32Array(1 << 16);
  private patchCount = 0;
  private patchFd: number | null = null;
  private patchesWritten = 0;

  constructor(
    private readonly fd: number,
    private readonly patchFile: string,
  ) {}

  freed(row: number, event: number): void {
    const W = FreeColumn.WINDOW;
    while (row >= this.base + W) this.slide();
    if (row >= this.base) this.win[row - this.base] = event;
    else {
      this.patches[this.patchCount++] = row;
      this.patches[this.patchCount++] = event;
      if (this.patchCount === this.patches.length) this.flushPatches();
    }
  }

  private slide(): void {
    const half = FreeColumn.WINDOW / 2;
    writeAll(this.fd, new Uint8Array(this.win.buffer, 0, half * 4), this.base * 4);
    this.win.copyWithin(0, half);
    this.win.fill(NOT_FREED, half);
    this.base += half;
  }

  private flushPatches(): void {
    if (this.patchCount === 0) return;
    if (this.patchFd === null) {
      track(this.patchFile);
      this.patchFd = openPrivate(this.patchFile, 'w+');
    }
    writeAll(this.patchFd, new Uint8Array(this.patches.buffer, 0, this.patchCount * 4), this.patchesWritten * 4);
    this.patchesWritten += this.patchCount;
    this.patchCount = 0;
  }

  /** Writes every row below `rows`, then the patches in place. */
  finish(rows: number): void {
    const W = FreeColumn.WINDOW;
    const n = Math.max(0, Math.min(W, rows - this.base));
    writeAll(this.fd, new Uint8Array(this.win.buffer, 0, n * 4), this.base * 4);
    const none = new Uint32Array(W).fill(NOT_FREED);
    for (let r = this.base + W; r < rows; r += W) writeAll(this.fd, new Uint8Array(none.buffer, 0, Math.min(W, rows - r) * 4), r * 4);
    this.flushPatches();
    if (this.patchFd === null) return;
    const chunk = new Uint32Array(1 << 16);
    const one = new Uint32Array(1);
    for (let at = 0; at < this.patchesWritten; at += chunk.length) {
      const m = Math.min(chunk.length, this.patchesWritten - at);
      readAll(this.patchFd, new Uint8Array(chunk.buffer, 0, m * 4), at * 4);
      for (let i = 0; i < m; i += 2) {
        one[0] = chunk[i + 1]!;
        writeAll(this.fd, new Uint8Array(one.buffer), chunk[i]! * 4);
      }
    }
    closeSync(this.patchFd);
    this.patchFd = null;
    unlinkSync(this.patchFile);
    untrack(this.patchFile);
  }
}

function writeAll(fd: number, bytes: Uint8Array, position: number | null): void {
  let done = 0;
  while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done, position === null ? null : position + done);
}

function readAll(fd: number, into: Uint8Array, position: number): number {
  let got = 0;
  while (got < into.length) {
    const r = readSync(fd, into, got, into.length - got, position + got);
    if (r === 0) break;
    got += r;
  }
  return got;
}

// ---- building ----

/** The report index mode's panel shows: the summary, the heap by function, the peaks, leaks at exit (20 rows each). */
export const INDEX_REPORT: ReportRequest = { ...summaryRequest(20, { by: 'function', mode: 'innermost' }), peak: true, leaks: true };

/** INDEX_REPORT's text, computed in one streamed pass over the trace (its memory follows live blocks, not events). */
export function indexReport(trace: string): string {
  const source = FileSource.open(trace);
  try {
    const stream: FoldSource = streamSource(source.clone(), { symbols: fileSymbolNamer });
    return reportText(computeReport(stream, path.basename(trace), INDEX_REPORT, { budgets: null, frameSizes: null }), null);
  } finally {
    source.close();
  }
}

export interface BuildProgress {
  fraction: number;
  /** Which file is being built: the summaries the chart draws (the first stage of the viewer's build), or the whole index with its events. */
  stage: 'summaries' | 'events';
  phase: string;
  events: number;
  /** Seconds since the build began. */
  seconds: number;
}

/**
 * Builds the index of `trace` into `dest` in one streamed pass (synchronous: the viewer's hosts run it in a worker,
 * buildIndexInWorker). Returns the file's path.
 */
export function buildIndexFile(trace: string, dest: string, onProgress?: (p: BuildProgress) => void): string {
  return writeIndexFile(trace, dest, true, onProgress);
}

/**
 * Builds the summaries of `trace` into `dest` (summariesPathFor of its index): the index's file without its events
 * (IndexFold with `events` false), in one streamed pass that reads the trace once and encodes nothing per event, so
 * that the viewer draws its first chart while the events are indexed. Returns the file's path.
 */
export function buildSummaryFile(trace: string, dest: string, onProgress?: (p: BuildProgress) => void, times = false): string {
  return writeIndexFile(trace, dest, false, onProgress, times);
}

/** Where the summaries of the index `indexFile` are kept while its events are built (removed once they are). */
export function summariesPathFor(indexFile: string): string {
  return `${indexFile}.summaries`;
}

function writeIndexFile(trace: string, dest: string, events: boolean, onProgress?: (p: BuildProgress) => void, times = events): string {
  const stage = events ? 'events' : 'summaries';
  removeStale(dest);
  const stamp = traceStamp(trace);
  const tmp = `${dest}.tmp-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const freesTmp = `${tmp}.frees`;
  const finesTmp = `${tmp}.fines`;
  track(tmp);
  track(freesTmp);
  track(finesTmp);
  // Private, as the trace is: the index repeats what it holds (host/private-files.ts).
  const fd = openPrivate(tmp, 'w+');
  const freesFd = openPrivate(freesTmp, 'w+');
  const finesFd = openPrivate(finesTmp, 'w+');
  const source = FileSource.open(trace);
  const t0 = Date.now();
  try {
    readHeader(source);
    let at = HEADER;
    let fineAt = 0;
    const frees = new FreeColumn(freesFd, `${tmp}.patches`);
    const sink: IndexSink = {
      bucket(bytes) {
        writeAll(fd, bytes, at);
        at += bytes.length;
      },
      freed: (row, event) => frees.freed(row, event),
      fine(rows) {
        writeAll(finesFd, new Uint8Array(rows.buffer, rows.byteOffset, rows.byteLength), fineAt);
        fineAt += rows.byteLength;
      },
    };
    let fold: IndexFold | null = null;
    const stream = streamSource(source.clone(), {
      symbols: fileSymbolNamer,
      onProgress: (fraction, phase) => onProgress?.({ fraction, stage, phase, events: 0, seconds: (Date.now() - t0) / 1000 }),
      onReading: (passes) => {
        // A second reading starts the index again from its first bucket.
        if (passes === 2) [at, fineAt] = [HEADER, 0];
      },
    });
    stream.run((start) => {
      at = HEADER;
      fineAt = 0;
      fold = new IndexFold(start, sink, INDEX_BUCKET, INDEX_FINE, events, times);
      return [fold];
    });
    const { meta, summary } = (fold as IndexFold | null)!.result();
    frees.finish(meta.blocks);
    const bucketBytes = at - HEADER;
    const freeOffset = Math.ceil(at / 8) * 8;
    // The free column and the fine rows, copied after the buckets.
    const buf = new Uint8Array(8 << 20);
    const copy = (from: number, bytes: number, to: number, what: string): void => {
      for (let off = 0; off < bytes; ) {
        const n = readAll(from, buf.subarray(0, Math.min(buf.length, bytes - off)), off);
        if (n === 0) throw new Error(`the ${what} came back short`);
        writeAll(fd, buf.subarray(0, n), to + off);
        off += n;
      }
    };
    copy(freesFd, meta.blocks * 4, freeOffset, 'free column');
    const fineOffset = Math.ceil((freeOffset + meta.blocks * 4) / 8) * 8;
    const fineBytes = meta.fines * FINE_FIELDS * 4;
    if (fineAt !== fineBytes) throw new Error(`the fine rows are ${fineAt} bytes, not ${fineBytes}`);
    copy(finesFd, fineBytes, fineOffset, 'fine rows');
    const metaOffset = Math.ceil((fineOffset + fineBytes) / 8) * 8;
    const json = new TextEncoder().encode(JSON.stringify(meta));
    const head = new Uint8Array(4);
    new DataView(head.buffer).setUint32(0, json.length, true);
    writeAll(fd, head, metaOffset);
    writeAll(fd, json, metaOffset + 4);
    const tableAt = Math.ceil((metaOffset + 4 + json.length) / 8) * 8;
    writeAll(fd, new Uint8Array(summary.buffer, summary.byteOffset, summary.byteLength), tableAt);
    const h = new Uint8Array(HEADER);
    const dv = new DataView(h.buffer);
    h.set(new TextEncoder().encode(events ? MAGIC : SUMMARIES_MAGIC), 0);
    dv.setUint32(8, INDEX_VERSION, true);
    dv.setUint32(12, INDEX_BUCKET, true);
    dv.setFloat64(16, stamp.size, true);
    dv.setFloat64(24, stamp.mtimeMs, true);
    dv.setFloat64(32, bucketBytes, true);
    dv.setFloat64(40, freeOffset, true);
    dv.setFloat64(48, meta.blocks, true);
    dv.setFloat64(56, metaOffset, true);
    dv.setFloat64(64, fineOffset, true);
    writeAll(fd, h, 0);
    closeSync(fd);
    renameSync(tmp, dest);
    untrack(tmp);
    onProgress?.({ fraction: 1, stage, phase: events ? 'index written' : 'summaries written', events: meta.events, seconds: (Date.now() - t0) / 1000 });
    return dest;
  } catch (e) {
    try {
      closeSync(fd);
    } catch {
      // closed already
    }
    try {
      unlinkSync(tmp);
    } catch {
      // not there
    }
    untrack(tmp);
    throw e;
  } finally {
    source.close();
    for (const [f, name] of [
      [freesFd, freesTmp],
      [finesFd, finesTmp],
    ] as const) {
      closeSync(f);
      try {
        unlinkSync(name);
      } catch {
        // not there
      }
      untrack(name);
    }
  }
}

// ---- reading ----

/** An index file opened for reading: its meta, summaries and a reader of its buckets (a summaries file: no buckets). */
export class TraceIndex {
  private constructor(
    readonly file: string,
    private readonly fd: number,
    readonly reader: IndexReader,
    /** Whether the file holds the events (false: a summaries file, buildSummaryFile's). */
    readonly events: boolean,
  ) {}

  get meta(): IndexMeta {
    return this.reader.meta;
  }

  get summary(): Float64Array {
    return this.reader.summary;
  }

  /**
   * Opens `file` if it is a whole index of `trace` as it is now (with `summaries`, a whole summaries file of it), else
   * null (missing, stale, another version, the other kind, damaged).
   */
  static open(file: string, trace: string, summaries = false): TraceIndex | null {
    if (!existsSync(file)) return null;
    const fd = openSync(file, 'r');
    try {
      const size = fstatSync(fd).size;
      const h = new Uint8Array(HEADER);
      if (readAll(fd, h, 0) < HEADER || new TextDecoder().decode(h.subarray(0, 8)) !== (summaries ? SUMMARIES_MAGIC : MAGIC)) throw new Error('not an index');
      const dv = new DataView(h.buffer);
      const stamp = traceStamp(trace);
      if (dv.getUint32(8, true) !== INDEX_VERSION || dv.getUint32(12, true) !== INDEX_BUCKET) throw new Error('another version');
      if (dv.getFloat64(16, true) !== stamp.size || dv.getFloat64(24, true) !== stamp.mtimeMs) throw new Error('the trace changed');
      const freeOffset = dv.getFloat64(40, true);
      const freeRows = dv.getFloat64(48, true);
      const metaOffset = dv.getFloat64(56, true);
      const fineOffset = dv.getFloat64(64, true);
      if (!(metaOffset + 4 <= size)) throw new Error('cut short');
      const lenBytes = new Uint8Array(4);
      readAll(fd, lenBytes, metaOffset);
      const len = new DataView(lenBytes.buffer).getUint32(0, true);
      if (metaOffset + 4 + len > size) throw new Error('cut short');
      const json = new Uint8Array(len);
      readAll(fd, json, metaOffset + 4);
      const meta = JSON.parse(new TextDecoder().decode(json)) as IndexMeta;
      const tableAt = Math.ceil((metaOffset + 4 + len) / 8) * 8;
      const table = new Float64Array(meta.buckets * SUMMARY_FIELDS + meta.threadRows * THREAD_FIELDS);
      if (readAll(fd, new Uint8Array(table.buffer), tableAt) < table.byteLength) throw new Error('cut short');
      if (!(fineOffset + meta.fines * FINE_FIELDS * 4 <= metaOffset)) throw new Error('damaged');
      const one = new Uint8Array(4);
      const store: IndexStore = {
        bucketBytes(offset, length) {
          if (summaries) throw new Error(`${file}: holds the summaries only, not the events`);
          const out = new Uint8Array(length);
          if (readAll(fd, out, HEADER + offset) < length) throw new Error(`${file}: cut short`);
          return out;
        },
        freeOf(row) {
          if (row < 0 || row >= freeRows) return NOT_FREED;
          readAll(fd, one, freeOffset + row * 4);
          return new DataView(one.buffer).getUint32(0, true);
        },
        fineRows(first, count) {
          const out = new Float32Array(FINE_FIELDS * count);
          if (readAll(fd, new Uint8Array(out.buffer), fineOffset + first * FINE_FIELDS * 4) < out.byteLength) throw new Error(`${file}: cut short`);
          return out;
        },
      };
      return new TraceIndex(file, fd, new IndexReader(meta, table, store), !summaries);
    } catch {
      closeSync(fd);
      return null;
    }
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** The worker script that builds an index off the main thread (compiled beside this file). */
const WORKER = fileURLToPath(new URL('./index-build-worker.js', import.meta.url));

/**
 * The index of `trace`: the cached one when it matches, else built (in a worker thread when the compiled worker is
 * there, so a server or window stays responsive) with progress told on the way.
 */
export async function openTraceIndex(trace: string, onProgress?: (p: BuildProgress) => void, dest = indexPathFor(trace)): Promise<TraceIndex> {
  const cached = TraceIndex.open(dest, trace);
  if (cached !== null) return cached;
  return buildStage(trace, dest, 'index', onProgress);
}

/** Builds the index (or the summaries file) of `trace` at `dest` in a worker when it is compiled, then opens it. */
async function buildStage(trace: string, dest: string, task: 'index' | 'summaries', onProgress?: (p: BuildProgress) => void, times = false): Promise<TraceIndex> {
  if (existsSync(WORKER)) await buildIndexInWorker(trace, dest, task, onProgress, times);
  else if (task === 'index') buildIndexFile(trace, dest, onProgress);
  else buildSummaryFile(trace, dest, onProgress, times);
  const built = TraceIndex.open(dest, trace, task === 'summaries');
  if (built === null) throw new Error(`${dest}: the ${task === 'index' ? 'index' : 'summaries'} just built cannot be read (did the trace change while it was read?)`);
  return built;
}

/** The index of a trace in two stages: what the chart draws first, the events after. */
export interface StagedIndex {
  /** The summaries: the whole index when it is cached, else its summaries file (cached, or built first). */
  summaries: Promise<TraceIndex>;
  /** The whole index, events and all: cached, or built once the summaries are there. */
  index: Promise<TraceIndex>;
}

/**
 * The index of `trace` for the viewer, summaries first: the cached index when it matches (both stages at once); else
 * the summaries file (summariesPathFor: cached, or built in one light pass), then the whole index built after it, the
 * summaries file removed once the index is there. `beforeEvents` (tests) holds the second stage until it resolves.
 * `times`: a summaries file built here carries the buckets' times (the lanes page's wall-time axis; a pass that reads
 * the trace's times costs more, so the viewer's first chart goes without).
 */
export function openTraceIndexStaged(trace: string, onProgress?: (p: BuildProgress) => void, dest = indexPathFor(trace), beforeEvents?: () => Promise<void>, times = false): StagedIndex {
  const cached = TraceIndex.open(dest, trace);
  const file = summariesPathFor(dest);
  removeStale(file);
  if (cached !== null) {
    // A build stopped between its index and the removal of its summaries leaves them: not needed now.
    try {
      unlinkSync(file);
    } catch {
      // none
    }
    return { summaries: Promise.resolve(cached), index: Promise.resolve(cached) };
  }
  const kept = TraceIndex.open(file, trace, true);
  const summaries = kept !== null ? Promise.resolve(kept) : buildStage(trace, file, 'summaries', onProgress, times);
  const index = summaries.then(async () => {
    await beforeEvents?.();
    const ix = await buildStage(trace, dest, 'index', onProgress);
    try {
      unlinkSync(file);
    } catch {
      // removed already
    }
    return ix;
  });
  return { summaries, index };
}

/**
 * INDEX_REPORT's text for the index file `index` of `trace`: read from `<index>.report` when it was made for the
 * trace as it is now, else computed (in a worker thread) and kept there, written under a temporary name and renamed.
 */
export async function cachedIndexReport(trace: string, index: string): Promise<string> {
  const file = `${index}.report`;
  const stamp = traceStamp(trace);
  try {
    const kept = JSON.parse(readFileSync(file, 'utf8')) as { version: number; size: number; mtimeMs: number; text: string };
    if (kept.version === INDEX_VERSION && kept.size === stamp.size && kept.mtimeMs === stamp.mtimeMs && typeof kept.text === 'string') return kept.text;
  } catch {
    // none yet, or not one of ours
  }
  const text = await indexReportInWorker(trace);
  const tmp = `${file}.tmp-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  try {
    track(tmp);
    writePrivateFile(tmp, JSON.stringify({ version: INDEX_VERSION, ...stamp, text }));
    renameSync(tmp, file);
  } catch {
    // a cache that cannot be written is computed again next time
  } finally {
    untrack(tmp);
  }
  return text;
}

/** INDEX_REPORT's text, computed in a worker thread when the compiled worker is there. */
export function indexReportInWorker(trace: string): Promise<string> {
  if (!existsSync(WORKER)) return Promise.resolve().then(() => indexReport(trace));
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, { workerData: { task: 'report', trace }, resourceLimits: WORKER_LIMITS });
    worker.on('message', (m: { type: 'report'; text: string } | { type: 'error'; message: string }) => (m.type === 'report' ? resolve(m.text) : reject(new Error(m.message))));
    worker.on('error', reject);
  });
}

/** Builds in a worker thread; Ctrl-C (SIGINT, SIGTERM) during the build removes its temporary files and exits. */
function buildIndexInWorker(trace: string, dest: string, task: 'index' | 'summaries', onProgress?: (p: BuildProgress) => void, times = false): Promise<void> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, { workerData: { task, trace, dest, times }, resourceLimits: WORKER_LIMITS });
    const onSignal = (signal: NodeJS.Signals): void => {
      void worker.terminate().then(() => {
        const dir = path.dirname(dest);
        const prefix = path.basename(temporaryPrefix(dest));
        for (const n of readdirSync(dir)) {
          if (!n.startsWith(prefix)) continue;
          try {
            unlinkSync(path.join(dir, n));
          } catch {
            // gone
          }
        }
        process.exit(signal === 'SIGINT' ? 130 : 143);
      });
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    const done = (): void => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    };
    worker.on('message', (m: { type: 'progress'; progress: BuildProgress } | { type: 'done' } | { type: 'error'; message: string }) => {
      if (m.type === 'progress') onProgress?.(m.progress);
      else if (m.type === 'done') {
        done();
        resolve();
      } else {
        done();
        reject(new Error(m.message));
      }
    });
    worker.on('error', (e) => {
      done();
      reject(e);
    });
  });
}

/** The temporary names a build of `dest` in this process uses (the worker tells them to the main thread). */
export function temporaryPrefix(dest: string): string {
  return `${dest}.tmp-${process.pid}-`;
}
