// One index file (analysis/event-index.ts's fold written out, layout in runtime/INDEX-FORMAT.md): built in one
// streamed pass under a temporary name and renamed when whole, and read back only as far as it verifies. Its header
// and meta section carry checksums checked when it is opened; each bucket, and each block of the free column and of
// the fine rows, a checksum of its own, checked when it is first read. Whatever does not verify is an IndexDamagedError
// naming the part and the file, never data: the cache (index-cache.ts) builds the file again.
import { closeSync, fstatSync, openSync, readdirSync, readSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import { FINE_FIELDS, IndexDamagedError, IndexFold, IndexReader, INDEX_BUCKET, INDEX_FINE, INDEX_VERSION, NOT_FREED, S, SUMMARY_FIELDS, THREAD_FIELDS, type IndexMeta, type IndexSink, type IndexStore } from '../analysis/event-index.js';
import { crc32c } from '../analysis/trace/crc32c.js';
import { FileSource } from '../analysis/trace/file-source.js';
import { readHeader } from '../analysis/trace/header.js';
import { streamSource } from '../analysis/trace/resolve-stream.js';
import { fileSymbolNamer } from './library-symbols.js';
import { openPrivate } from './private-files.js';

const MAGIC = 'MWINDEX\n';
/** The magic of a summaries file (the same layout with no bucket bytes and no free column). */
const SUMMARIES_MAGIC = 'MWINDXS\n';
/** The header's bytes: the buckets' events start here. */
export const INDEX_HEADER = 96;
const HEADER = INDEX_HEADER;
/** Header fields (byte offsets). */
const H = { VERSION: 8, BUCKET: 12, SIZE: 16, MTIME: 24, BUCKET_BYTES: 32, FREE_AT: 40, FREE_ROWS: 48, FINE_AT: 56, FINES: 64, META_AT: 72, META_BYTES: 80, HEADER_CRC: 88, META_CRC: 92 } as const;
/** Rows of the free column per checksum (64 KiB), and fine rows per checksum (64 KiB). */
export const FREE_BLOCK = 16384;
export const FINE_BLOCK = 2048;

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

/** The temporary names a build of `dest` in this process uses (the worker tells them to the main thread). */
export function temporaryPrefix(dest: string): string {
  return `${dest}.tmp-${process.pid}-`;
}

/** Temporary files of builds whose process is gone (a build killed outright): removed before a new build. */
export function removeStale(dest: string): void {
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

  /** Back to no rows: a reading started again (resolve-stream.ts reads a trace twice when once may not be exact). */
  reset(): void {
    this.base = 0;
    this.win.fill(NOT_FREED);
    this.patchCount = 0;
    this.patchesWritten = 0;
  }

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

export function writeAll(fd: number, bytes: Uint8Array, position: number | null): void {
  let done = 0;
  while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done, position === null ? null : position + done);
}

export function readAll(fd: number, into: Uint8Array, position: number): number {
  let got = 0;
  while (got < into.length) {
    const r = readSync(fd, into, got, into.length - got, position + got);
    if (r === 0) break;
    got += r;
  }
  return got;
}

// ---- building ----

export interface BuildProgress {
  fraction: number;
  /** Which file is being built: the summaries the chart draws (the first stage of the viewer's build), or the whole index with its events. */
  stage: 'summaries' | 'events';
  phase: string;
  events: number;
  /** Seconds since the build began. */
  seconds: number;
  /** Why a file that was there is built again (another version, the trace changed, damage), once, as the build starts. */
  note?: string;
}

/**
 * Builds the index of `trace` into `dest` in one streamed pass (synchronous: the viewer's hosts run it in a worker,
 * index-cache.ts). Returns the file's path.
 */
export function buildIndexFile(trace: string, dest: string, onProgress?: (p: BuildProgress) => void): string {
  return writeIndexFile(trace, dest, true, onProgress);
}

/**
 * Builds the summaries of `trace` into `dest`: the index's file without its events (IndexFold with `events` false), in
 * one streamed pass that reads the trace once and encodes nothing per event, so that the viewer draws its first chart
 * while the events are indexed. Returns the file's path.
 */
export function buildSummaryFile(trace: string, dest: string, onProgress?: (p: BuildProgress) => void, times = false): string {
  return writeIndexFile(trace, dest, false, onProgress, times);
}

/** The CRC-32 of each `block`-byte piece of `bytes` (the last may be shorter), appended to `into`. */
function blockCrcs(bytes: Uint8Array, block: number, into: number[]): void {
  for (let at = 0; at < bytes.length; at += block) into.push(crc32c(bytes.subarray(at, Math.min(bytes.length, at + block))));
}

function writeIndexFile(trace: string, dest: string, events: boolean, onProgress?: (p: BuildProgress) => void, times = events): string {
  const stage = events ? 'events' : 'summaries';
  removeStale(dest);
  const stamp = traceStamp(trace);
  const tmp = `${temporaryPrefix(dest)}${Math.random().toString(36).slice(2, 8)}`;
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
    let bucketCrcs: number[] = [];
    const frees = new FreeColumn(freesFd, `${tmp}.patches`);
    const sink: IndexSink = {
      bucket(bytes) {
        writeAll(fd, bytes, at);
        at += bytes.length;
        bucketCrcs.push(crc32c(bytes));
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
    });
    stream.run((start) => {
      // Each reading (a second one starts again when the first may not be exact) writes the file from its start.
      at = HEADER;
      fineAt = 0;
      bucketCrcs = [];
      frees.reset();
      fold = new IndexFold(start, sink, INDEX_BUCKET, INDEX_FINE, events, times);
      return [fold];
    });
    const { meta, summary } = (fold as IndexFold | null)!.result();
    frees.finish(meta.blocks);
    const bucketBytes = at - HEADER;
    const freeOffset = Math.ceil(at / 8) * 8;
    // The free column and the fine rows, copied after the buckets, a checksum per block.
    const buf = new Uint8Array(8 << 20);
    const copy = (from: number, bytes: number, to: number, what: string, block: number, crcs: number[]): void => {
      for (let off = 0; off < bytes; ) {
        const n = readAll(from, buf.subarray(0, Math.min(buf.length, bytes - off)), off);
        if (n === 0) throw new Error(`the ${what} came back short`);
        writeAll(fd, buf.subarray(0, n), to + off);
        blockCrcs(buf.subarray(0, n), block, crcs);
        off += n;
      }
    };
    const freeCrcs: number[] = [];
    copy(freesFd, meta.blocks * 4, freeOffset, 'free column', FREE_BLOCK * 4, freeCrcs);
    const fineOffset = Math.ceil((freeOffset + meta.blocks * 4) / 8) * 8;
    const fineBytes = meta.fines * FINE_FIELDS * 4;
    if (fineAt !== fineBytes) throw new Error(`the fine rows are ${fineAt} bytes, not ${fineBytes}`);
    const fineCrcs: number[] = [];
    copy(finesFd, fineBytes, fineOffset, 'fine rows', FINE_BLOCK * FINE_FIELDS * 4, fineCrcs);
    const metaOffset = Math.ceil((fineOffset + fineBytes) / 8) * 8;
    const section = metaSection(meta, summary, [...bucketCrcs, ...freeCrcs, ...fineCrcs]);
    writeAll(fd, section, metaOffset);
    const h = new Uint8Array(HEADER);
    const dv = new DataView(h.buffer);
    h.set(new TextEncoder().encode(events ? MAGIC : SUMMARIES_MAGIC), 0);
    dv.setUint32(H.VERSION, INDEX_VERSION, true);
    dv.setUint32(H.BUCKET, INDEX_BUCKET, true);
    dv.setFloat64(H.SIZE, stamp.size, true);
    dv.setFloat64(H.MTIME, stamp.mtimeMs, true);
    dv.setFloat64(H.BUCKET_BYTES, bucketBytes, true);
    dv.setFloat64(H.FREE_AT, freeOffset, true);
    dv.setFloat64(H.FREE_ROWS, meta.blocks, true);
    dv.setFloat64(H.FINE_AT, fineOffset, true);
    dv.setFloat64(H.FINES, meta.fines, true);
    dv.setFloat64(H.META_AT, metaOffset, true);
    dv.setFloat64(H.META_BYTES, section.length, true);
    dv.setUint32(H.HEADER_CRC, crc32c(h.subarray(0, H.HEADER_CRC)), true);
    dv.setUint32(H.META_CRC, crc32c(section), true);
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

/** The meta section: u32 JSON length, the JSON, padding to 8, the summary and thread tables (f64), the checksums (u32). */
function metaSection(meta: IndexMeta, summary: Float64Array, crcs: number[]): Uint8Array {
  const json = new TextEncoder().encode(JSON.stringify(meta));
  const tableAt = Math.ceil((4 + json.length) / 8) * 8;
  const out = new Uint8Array(tableAt + summary.byteLength + 4 * crcs.length);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, json.length, true);
  out.set(json, 4);
  out.set(new Uint8Array(summary.buffer, summary.byteOffset, summary.byteLength), tableAt);
  const crcAt = tableAt + summary.byteLength;
  crcs.forEach((c, i) => dv.setUint32(crcAt + 4 * i, c, true));
  return out;
}

// ---- reading ----

/** Why a file is not used as an index of the trace: not there, made for another version or state of the trace, or damaged. */
export class IndexFileRefused extends Error {
  override name = 'IndexFileRefused';
  constructor(
    readonly why: 'missing' | 'stale' | 'damaged',
    message: string,
  ) {
    super(message);
  }
}

/** An index file opened for reading: its meta, summaries and a reader of its buckets (a summaries file: no buckets). */
export class TraceIndex {
  private constructor(
    readonly file: string,
    private readonly fd: number,
    readonly reader: IndexReader,
    /** Whether the file holds the events (false: a summaries file, buildSummaryFile's). */
    readonly events: boolean,
    private readonly checked: Checked,
  ) {}

  get meta(): IndexMeta {
    return this.reader.meta;
  }

  get summary(): Float64Array {
    return this.reader.summary;
  }

  /**
   * Opens `file` if it is a whole index of `trace` as it is now (with `summaries`, a whole summaries file of it) whose
   * header and meta section verify; else throws IndexFileRefused saying why (missing, stale: another version or
   * another state of the trace, damaged: what does not verify).
   */
  static read(file: string, trace: string, summaries = false): TraceIndex {
    let fd: number;
    try {
      fd = openSync(file, 'r');
    } catch {
      throw new IndexFileRefused('missing', `${file}: not there`);
    }
    try {
      return TraceIndex.readOpen(file, fd, trace, summaries);
    } catch (e) {
      closeSync(fd);
      if (e instanceof IndexFileRefused) throw e;
      throw new IndexFileRefused('damaged', `${file}: ${(e as Error).message}`);
    }
  }

  /** `read`, or null when the file is not there or not usable for whatever reason. */
  static open(file: string, trace: string, summaries = false): TraceIndex | null {
    try {
      return TraceIndex.read(file, trace, summaries);
    } catch {
      return null;
    }
  }

  private static readOpen(file: string, fd: number, trace: string, summaries: boolean): TraceIndex {
    const damaged = (what: string): IndexFileRefused => new IndexFileRefused('damaged', `${file}: ${what}`);
    const size = fstatSync(fd).size;
    const h = new Uint8Array(HEADER);
    const magic = summaries ? SUMMARIES_MAGIC : MAGIC;
    if (readAll(fd, h, 0) < 8 || new TextDecoder().decode(h.subarray(0, 8)) !== magic) throw damaged(`not ${summaries ? 'a summaries file' : 'an index'} of cc-memwrap`);
    const dv = new DataView(h.buffer);
    if (dv.getUint32(H.VERSION, true) !== INDEX_VERSION) throw new IndexFileRefused('stale', `${file}: made by another version (index format ${dv.getUint32(H.VERSION, true)}, this one reads ${INDEX_VERSION})`);
    if (size < HEADER || crc32c(h.subarray(0, H.HEADER_CRC)) !== dv.getUint32(H.HEADER_CRC, true)) throw damaged('its header does not match its checksum');
    if (dv.getUint32(H.BUCKET, true) !== INDEX_BUCKET) throw new IndexFileRefused('stale', `${file}: made with buckets of ${dv.getUint32(H.BUCKET, true)} events`);
    const stamp = traceStamp(trace);
    if (dv.getFloat64(H.SIZE, true) !== stamp.size || dv.getFloat64(H.MTIME, true) !== stamp.mtimeMs) throw new IndexFileRefused('stale', `${file}: made for the trace as it was before it changed`);
    const metaOffset = dv.getFloat64(H.META_AT, true);
    const metaBytes = dv.getFloat64(H.META_BYTES, true);
    if (metaOffset + metaBytes !== size) throw damaged(`${size} bytes where its header says ${metaOffset + metaBytes}: cut short or added to`);
    const section = new Uint8Array(metaBytes);
    if (readAll(fd, section, metaOffset) < metaBytes) throw damaged('cut short');
    if (crc32c(section) !== dv.getUint32(H.META_CRC, true)) throw damaged('its meta section does not match its checksum');
    const sdv = new DataView(section.buffer);
    const len = sdv.getUint32(0, true);
    const meta = JSON.parse(new TextDecoder().decode(section.subarray(4, 4 + len))) as IndexMeta;
    const tableAt = Math.ceil((4 + len) / 8) * 8;
    const table = new Float64Array(section.buffer.slice(tableAt, tableAt + 8 * (meta.buckets * SUMMARY_FIELDS + meta.threadRows * THREAD_FIELDS)));
    const crcAt = tableAt + table.byteLength;
    const freeRows = dv.getFloat64(H.FREE_ROWS, true);
    const fines = dv.getFloat64(H.FINES, true);
    const freeBlocks = Math.ceil(freeRows / FREE_BLOCK);
    const fineBlocks = Math.ceil(fines / FINE_BLOCK);
    const bucketCount = summaries ? 0 : meta.buckets;
    if (crcAt + 4 * (bucketCount + freeBlocks + fineBlocks) !== metaBytes || fines !== meta.fines || (!summaries && freeRows !== meta.blocks)) throw damaged('its meta section does not add up');
    const crcs = new Uint32Array(section.buffer.slice(crcAt, metaBytes));
    const checked: Checked = {
      file,
      fd,
      buckets: crcs.subarray(0, bucketCount),
      free: { at: dv.getFloat64(H.FREE_AT, true), rows: freeRows, crcs: crcs.subarray(bucketCount, bucketCount + freeBlocks), done: new Uint8Array(freeBlocks) },
      fine: { at: dv.getFloat64(H.FINE_AT, true), rows: fines, crcs: crcs.subarray(bucketCount + freeBlocks), done: new Uint8Array(fineBlocks) },
    };
    const store = checkedStore(checked, summaries);
    return new TraceIndex(file, fd, new IndexReader(meta, table, store), !summaries, checked);
  }

  /** The bytes of buckets [k0, k1) as the file holds them, each verified (the HTML report's window carries them). */
  bucketRange(k0: number, k1: number): Uint8Array {
    const s = this.summary;
    const from = s[SUMMARY_FIELDS * k0 + S.OFFSET]!;
    const last = SUMMARY_FIELDS * (k1 - 1);
    const out = new Uint8Array(k1 > k0 ? s[last + S.OFFSET]! + s[last + S.LENGTH]! - from : 0);
    if (readAll(this.fd, out, HEADER + from) < out.length) throw new IndexDamagedError(`${this.file}: cut short in its buckets`);
    for (let k = k0; k < k1; k++) {
      const at = s[SUMMARY_FIELDS * k + S.OFFSET]! - from;
      verify(this.checked, out.subarray(at, at + s[SUMMARY_FIELDS * k + S.LENGTH]!), this.checked.buckets[k], `bucket ${k.toLocaleString('en-US')}`);
    }
    return out;
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** What is known to verify of an open index file, and the checksums of what is still to be read. */
interface Checked {
  file: string;
  fd: number;
  buckets: Uint32Array;
  free: { at: number; rows: number; crcs: Uint32Array; done: Uint8Array };
  fine: { at: number; rows: number; crcs: Uint32Array; done: Uint8Array };
}

/** Throws IndexDamagedError unless `bytes` match `crc`. */
function verify(c: Checked, bytes: Uint8Array, crc: number | undefined, what: string): void {
  if (crc === undefined || crc32c(bytes) !== crc) throw new IndexDamagedError(`${c.file}: ${what} does not match its checksum: the index is damaged`);
}

/** Block `b` of a section of `rowBytes`-byte rows, `block` rows a checksum, read and verified once. */
function verifyBlock(c: Checked, part: Checked['free'], b: number, block: number, rowBytes: number, what: string): void {
  if (part.done[b] === 1) return;
  const rows = Math.min(block, part.rows - b * block);
  const bytes = new Uint8Array(rows * rowBytes);
  if (readAll(c.fd, bytes, part.at + b * block * rowBytes) < bytes.length) throw new IndexDamagedError(`${c.file}: cut short in its ${what}`);
  verify(c, bytes, part.crcs[b], `${what} block ${b}`);
  part.done[b] = 1;
}

/** The reader's way to the file, each part verified before it is used. */
function checkedStore(c: Checked, summaries: boolean): IndexStore {
  const one = new Uint8Array(4);
  return {
    bucketBytes(offset, length, k) {
      if (summaries) throw new Error(`${c.file}: holds the summaries only, not the events`);
      const out = new Uint8Array(length);
      if (readAll(c.fd, out, HEADER + offset) < length) throw new IndexDamagedError(`${c.file}: cut short in its buckets`);
      verify(c, out, c.buckets[k], `bucket ${k.toLocaleString('en-US')}`);
      return out;
    },
    freeOf(row) {
      if (row < 0 || row >= c.free.rows) return NOT_FREED;
      verifyBlock(c, c.free, Math.floor(row / FREE_BLOCK), FREE_BLOCK, 4, 'free column');
      readAll(c.fd, one, c.free.at + row * 4);
      return new DataView(one.buffer).getUint32(0, true);
    },
    fineRows(first, count) {
      const rowBytes = FINE_FIELDS * 4;
      for (let b = Math.floor(first / FINE_BLOCK); b * FINE_BLOCK < first + count; b++) verifyBlock(c, c.fine, b, FINE_BLOCK, rowBytes, 'fine rows');
      const out = new Float32Array(FINE_FIELDS * count);
      if (readAll(c.fd, new Uint8Array(out.buffer), c.fine.at + first * rowBytes) < out.byteLength) throw new IndexDamagedError(`${c.file}: cut short in its fine rows`);
      return out;
    },
  };
}
