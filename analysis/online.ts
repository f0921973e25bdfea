// Online mode's file (MEMWRAP_MODE=online, runtime/ONLINE-FORMAT.md): the heap tables the runtime kept instead of a
// trace — per function, per library, per thread — and the run's heap totals, read into the rows `report --by` prints.
// Rows are named by the same groupers as a trace's (attribution-groups.ts), from the UNIT, EXT/LIBRARY and PROGRAM
// records the runtime copied into the file, so a row's key and label are those of the same row of a trace.
import { GroupTable, GROUPERS, Charges, type AttributionRow } from './attribution-groups.js';
import type { Attribution } from './attribution.js';
import type { FoldTables, TraceEnd, TraceStart } from './event-fold.js';
import { emptyEvent, modelStart } from './model-fold.js';
import { NONE, type EndHowName, type ThreadInfo } from './model.js';
import { describeEnd } from './summary.js';
import { signalName } from './signals.js';
import { decodeTrace } from './trace/decode.js';
import { BYTE_ORDER_MARK, CHUNK_HEADER_SIZE, CHUNK_MAGIC, Flag, HEADER_SIZE, Kind, READER_MAJOR, READER_MINOR, TRACE_MAGIC } from './trace/format.js';
import { formatOffset } from './problems.js';

export const ONLINE_MAGIC = 'MWONLINE';
export const ONLINE_MAJOR = 1;
export const ONLINE_MINOR = 0;
export const ONLINE_HEADER_SIZE = 128;
const SEGMENT_MAGIC = 'MWOS';
const SEGMENT_HEAD = 16;
const SEG_NAMES = 1;
const SEG_ENTRIES = 2;
const ENTRY_SIZE = 112;
const E_FUNCTION = 1;
const E_LIBRARY = 2;
const E_THREAD = 3;
const LIB_INSTRUMENTED = 0xfffffffe;
const LIB_UNKNOWN = 0xffffffff;

/** The tables online mode keeps: the `--by` values it can answer. */
export const ONLINE_BY = ['function', 'library', 'thread'] as const;
export type OnlineBy = (typeof ONLINE_BY)[number];

/** What a run in online mode did not record, in the words the report uses. */
export const ONLINE_LEFT_OUT = [
  'events (no timeline, no event numbers, no viewer)',
  'allocation sites (--by site, file, entry, library-function; top sites)',
  'usable sizes and peak stack',
  'blocks (--peak, --linked, --leaks classes, --leak-causes, --temporary)',
  'budgets over time, --calls, --interval, --stack',
] as const;

/** The file cannot be read as online tables at all. */
export class OnlineRefusedError extends Error {
  override readonly name = 'OnlineRefusedError';
}

/** Whether `bytes` (the file's first bytes) start like an online-mode file. */
export function isOnlineFile(bytes: Uint8Array): boolean {
  if (bytes.length < ONLINE_MAGIC.length) return false;
  for (let i = 0; i < ONLINE_MAGIC.length; i++) if (bytes[i] !== ONLINE_MAGIC.charCodeAt(i)) return false;
  return true;
}

export interface OnlineTotals {
  /** Blocks made (malloc & co., realloc with a new block) and ended (free, realloc of a live block). */
  allocations: number;
  frees: number;
  untrackedFrees: number;
  failedReallocs: number;
  /** Requested bytes of the blocks made and of those ended. */
  bytesAllocated: number;
  bytesFreed: number;
  /** Requested bytes live at the end (or when the run stopped), and their largest value over the run. */
  liveBytes: number;
  peakHeap: number;
}

export interface OnlineTables {
  format: { version: string; littleEndian: boolean; pointerSize: number; interposed: boolean };
  process: { pid: number; ppid: number; startTimeNs: string; program: string | null; cwd: string | null };
  end: { how: EndHowName; code: number | null; signalName: string | null; complete: boolean; description: string };
  /** The runtime could not store every table entry or name (file growth failed): rows or names may be missing. */
  incomplete: boolean;
  totals: OnlineTotals;
  /** Threads that made heap calls, by index. */
  threads: { index: number; osTid: number }[];
  /** What the file holds beside what is wrong with it; each message names the byte offset. */
  problems: string[];
  /** The names (sites, libraries, program) as a trace's start facts. */
  start: TraceStart;
  entries: OnlineEntry[];
}

interface OnlineEntry {
  kind: number;
  key: number;
  aux: number;
  net: number;
  min: number;
  max: number;
  allocated: number;
  freed: number;
  counts: number[];
}

/** Reads an online-mode file; throws OnlineRefusedError when its header cannot be read, else lists problems. */
export function readOnline(bytes: Uint8Array): OnlineTables {
  if (!isOnlineFile(bytes)) throw new OnlineRefusedError(`not an online-mode file: it does not start with "${ONLINE_MAGIC}"`);
  if (bytes.length < 16) throw new OnlineRefusedError(`truncated online tables header: the file is ${bytes.length} bytes, the header needs ${ONLINE_HEADER_SIZE}`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let le: boolean;
  if (view.getUint32(12, true) === BYTE_ORDER_MARK) le = true;
  else if (view.getUint32(12, false) === BYTE_ORDER_MARK) le = false;
  else throw new OnlineRefusedError(`corrupt online tables header: byte-order mark at offset 12 is 0x${view.getUint32(12, true).toString(16)}, expected 0x01020304`);
  const major = view.getUint16(8, le);
  const minor = view.getUint16(10, le);
  if (major !== ONLINE_MAJOR) {
    throw new OnlineRefusedError(`unsupported online tables version ${major}.${minor}: this reader reads version ${ONLINE_MAJOR}.${ONLINE_MINOR}` + (major > ONLINE_MAJOR ? '; a newer cc-memwrap wrote it' : ''));
  }
  if (bytes.length < ONLINE_HEADER_SIZE) throw new OnlineRefusedError(`truncated online tables header: the file is ${bytes.length} bytes, the header needs ${ONLINE_HEADER_SIZE}`);
  const headerSize = view.getUint16(18, le);
  if (headerSize < ONLINE_HEADER_SIZE || headerSize > bytes.length) {
    throw new OnlineRefusedError(`corrupt online tables header: header size ${headerSize} at offset 18 (the file is ${bytes.length} bytes, the header at least ${ONLINE_HEADER_SIZE})`);
  }
  const problems: string[] = [];
  const u64 = (at: number): number => Number(view.getBigUint64(at, le));
  const i64 = (at: number): number => Number(view.getBigInt64(at, le));
  const flags = view.getUint8(17);
  const endByte = view.getUint8(28);
  const code = view.getUint32(40, le);
  const how: EndHowName = endByte === 1 ? 'exit' : endByte === 2 ? 'signal' : 'unknown';
  if (endByte > 2) problems.push(`at offset ${formatOffset(28)}: unknown end ${endByte}`);
  const complete = (flags & 1) !== 0;
  const endCode = how === 'unknown' ? null : code;
  const totals: OnlineTotals = {
    allocations: u64(48),
    frees: u64(56),
    untrackedFrees: u64(64),
    failedReallocs: u64(72),
    bytesAllocated: u64(80),
    bytesFreed: u64(88),
    liveBytes: i64(96),
    peakHeap: i64(104),
  };

  // Segments: names log pieces and entries, one after the other up to the first unused (zero) space.
  const names: { bytes: Uint8Array; offset: number }[] = [];
  const entries: OnlineEntry[] = [];
  const seen = new Set<string>();
  let off = headerSize;
  while (off + SEGMENT_HEAD <= bytes.length) {
    const magic = String.fromCharCode(...bytes.subarray(off, off + 4));
    if (magic === '\0\0\0\0') break;
    if (magic !== SEGMENT_MAGIC) {
      problems.push(`at offset ${formatOffset(off)}: not a segment (expected "${SEGMENT_MAGIC}"); the rest of the file is skipped`);
      break;
    }
    const kind = view.getUint32(off + 4, le);
    const cap = view.getUint32(off + 8, le);
    let used = view.getUint32(off + 12, le);
    const payload = off + SEGMENT_HEAD;
    if (used > cap) {
      problems.push(`at offset ${formatOffset(off)}: segment uses ${used} bytes of ${cap}; read up to its capacity`);
      used = cap;
    }
    if (payload + used > bytes.length) {
      problems.push(`at offset ${formatOffset(off)}: segment cut short: ${used} bytes used, ${Math.max(0, bytes.length - payload)} in the file`);
      used = Math.max(0, bytes.length - payload);
    }
    if (kind === SEG_NAMES) names.push({ bytes: bytes.subarray(payload, payload + used), offset: payload });
    else if (kind === SEG_ENTRIES) {
      if (used % ENTRY_SIZE !== 0) problems.push(`at offset ${formatOffset(off)}: entries segment of ${used} bytes, not a whole number of ${ENTRY_SIZE}-byte entries`);
      for (let at = payload; at + ENTRY_SIZE <= payload + used; at += ENTRY_SIZE) {
        const e: OnlineEntry = {
          kind: view.getUint32(at, le),
          key: u64(at + 8),
          aux: u64(at + 16),
          net: i64(at + 24),
          min: i64(at + 32),
          max: i64(at + 40),
          allocated: u64(at + 48),
          freed: u64(at + 56),
          counts: [0, 1, 2, 3, 4, 5].map((c) => u64(at + 64 + 8 * c)),
        };
        if (e.kind < E_FUNCTION || e.kind > E_THREAD) {
          problems.push(`at offset ${formatOffset(at)}: entry of unknown kind ${e.kind}, skipped`);
          continue;
        }
        const id = `${e.kind}:${e.key}`;
        if (seen.has(id)) {
          problems.push(`at offset ${formatOffset(at)}: a second entry for the same ${['', 'function', 'library', 'thread'][e.kind]} (key ${e.key}), skipped`);
          continue;
        }
        seen.add(id);
        entries.push(e);
      }
    } else problems.push(`at offset ${formatOffset(off)}: segment of unknown kind ${kind}, skipped`);
    if (cap === 0) break;
    off = payload + cap;
  }

  const start = namesAsStart(names, le, view.getUint8(16), problems);
  const threads = entries.filter((e) => e.kind === E_THREAD).map((e) => ({ index: e.key, osTid: e.aux })).sort((a, b) => a.index - b.index);
  return {
    format: { version: `${major}.${minor}`, littleEndian: le, pointerSize: view.getUint8(16), interposed: (flags & 2) === 0 },
    process: {
      pid: view.getUint32(20, le),
      ppid: view.getUint32(24, le),
      startTimeNs: view.getBigUint64(32, le).toString(),
      program: start.program?.path || null,
      cwd: start.program?.cwd || null,
    },
    end: {
      how,
      code: endCode,
      signalName: how === 'signal' && endCode !== null ? signalName(endCode) : null,
      complete,
      description: describeEnd(how, endCode, complete),
    },
    incomplete: (flags & 4) !== 0,
    totals,
    threads,
    problems,
    start,
    entries,
  };
}

/**
 * The names log as a trace's start facts: its records (UNIT, EXT/LIBRARY, PROGRAM, in the trace encoding) put in one
 * chunk of a trace made in memory and decoded by the trace reader, so sites and libraries are read exactly as there.
 */
function namesAsStart(pieces: { bytes: Uint8Array; offset: number }[], le: boolean, pointerSize: number, problems: string[]): TraceStart {
  const body = pieces.reduce((n, p) => n + p.bytes.length, 0);
  // THREAD_BEGIN (seq 1, tid 0) first, END (exit 0) last: the chunk reads as a whole run of one thread.
  const begin = [Kind.THREAD_BEGIN | (Flag.SEQ_NEXT << 4), 0];
  const end = [Kind.END, 0, 0];
  const payload = begin.length + body + end.length;
  const trace = new Uint8Array(HEADER_SIZE + CHUNK_HEADER_SIZE + payload);
  const v = new DataView(trace.buffer);
  for (let i = 0; i < TRACE_MAGIC.length; i++) trace[i] = TRACE_MAGIC.charCodeAt(i);
  v.setUint16(8, READER_MAJOR, le);
  v.setUint16(10, READER_MINOR, le);
  v.setUint32(12, BYTE_ORDER_MARK, le);
  trace[16] = pointerSize;
  trace[17] = 1;
  v.setUint16(18, HEADER_SIZE, le);
  let at = HEADER_SIZE;
  for (let i = 0; i < 4; i++) trace[at + i] = CHUNK_MAGIC.charCodeAt(i);
  v.setUint32(at + 4, 0, le);
  v.setUint32(at + 8, payload, le);
  v.setUint32(at + 12, payload, le);
  at += CHUNK_HEADER_SIZE;
  trace.set(begin, at);
  at += begin.length;
  const first = at;
  for (const p of pieces) {
    trace.set(p.bytes, at);
    at += p.bytes.length;
  }
  trace.set(end, at);
  // A problem's offset in the trace made here, as the offset in the file of the same byte.
  const fileOffset = (o: number): number | null => {
    let rel = o - first;
    if (rel < 0) return null;
    for (const p of pieces) {
      if (rel < p.bytes.length) return p.offset + rel;
      rel -= p.bytes.length;
    }
    return null;
  };
  const model = decodeTrace(trace);
  const found = model.problems.map((p) => ({
    at: p.offset === null ? null : fileOffset(p.offset),
    what: p.message
      .replace(/^at offset [^:]*: /, '')
      .replace(/ \(thread 0\)/g, '')
      .replace(/thread 0's later records are skipped/, 'the later names are skipped'),
  }));
  // Problems outside the file's bytes (the END this reader added went unread) follow from one inside, when there is one.
  const inFile = found.filter((p) => p.at !== null);
  for (const p of inFile.length > 0 ? inFile : found) problems.push(`${p.at === null ? 'names' : `at offset ${formatOffset(p.at)}`}: in the names: ${p.what}`);
  return { ...modelStart(model), events: 0, threads: 0 };
}

/** One table of the file as `report --by` rows: sorted as a trace's (max bytes descending, then label). */
export function onlineAttribution(t: OnlineTables, by: OnlineBy): Attribution {
  const kind = by === 'function' ? E_FUNCTION : by === 'library' ? E_LIBRARY : E_THREAD;
  const mine = t.entries.filter((e) => e.kind === kind);
  const table = new GroupTable();
  const threadInfos: ThreadInfo[] = mine.map((e) => ({ index: e.key, osTid: e.aux === 0 ? null : e.aux, beginEvent: NONE, endEvent: NONE, events: 0, maxStack: 0, maxStackEvent: NONE }));
  const start: TraceStart = { ...t.start, threads: mine.length };
  const maker = GROUPERS[by](start, table, 'innermost');
  // Each entry named as the grouper names a heap event that belongs to it.
  const frames = { row: [0], thread: [0], enter: [0], entrySite: [0], depth: [0], parent: [NONE] };
  const tables = { frames } as unknown as FoldTables;
  const e = emptyEvent();
  e.kind = Kind.ALLOC;
  const out = new Charges();
  const groupOf: number[] = [];
  mine.forEach((entry, i) => {
    e.frame = NONE;
    e.flags = 0;
    e.library = NONE;
    e.thread = i;
    if (kind === E_FUNCTION && entry.key !== 0) {
      e.frame = 0;
      frames.entrySite[0] = entry.key;
    } else if (kind === E_LIBRARY && entry.key !== LIB_INSTRUMENTED) {
      e.flags = Flag.INTERPOSED;
      e.library = entry.key === LIB_UNKNOWN ? NONE : entry.key;
    }
    out.count = 0;
    maker.charge(e, tables, out);
    groupOf[i] = out.ids[0]!;
  });
  maker.finish?.({ threads: threadInfos } as unknown as TraceEnd);
  // Online mode counts calls, not blocks: its rows say so with null.
  const rows: AttributionRow[] = table.rows.map((r) => ({ ...r, allocations: null, frees: null, counts: { ...r.counts } }));
  mine.forEach((entry, i) => {
    const row = rows[groupOf[i]!]!;
    row.netBytes += entry.net;
    row.minBytes = Math.min(row.minBytes, entry.min);
    row.maxBytes = Math.max(row.maxBytes, entry.max);
    row.bytesAllocated += entry.allocated;
    row.bytesFreed += entry.freed;
    const c = row.counts;
    c.malloc += entry.counts[0]!;
    c.calloc += entry.counts[1]!;
    c.aligned += entry.counts[2]!;
    c.strdup += entry.counts[3]!;
    c.realloc += entry.counts[4]!;
    c.free += entry.counts[5]!;
  });
  rows.sort((a, b) => b.maxBytes - a.maxBytes || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
  return { by, mode: 'innermost', rows };
}
