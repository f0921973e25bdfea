// Walks a trace's chunks and records in file order and resolves each thread's deltas (seq, address, depth, time, exit site) into absolute values.
import { CHUNK_HEADER_SIZE, CHUNK_MAGIC, ExtKind, Flag, Kind, LeaksFlag, READER_MAJOR, READER_MINOR, kindName } from './format.js';
import type { TraceHeader } from './header.js';
import { formatOffset, type ProblemLog } from '../problems.js';

/** One UNIT record: a translation unit's site table. Site `base + i` is described by the i-th entry of each array. */
export interface UnitTable {
  base: number;
  strings: string[];
  kind: number[];
  /** Indices into `strings`. */
  file: number[];
  func: number[];
  name: number[];
  line: number[];
}

export interface ChunkInfo {
  offset: number;
  thread: number;
  capacity: number;
  used: number;
  /** Payload bytes actually read: `used`, less what lies beyond the end of the file or the capacity. */
  readable: number;
}

/**
 * One decoded record, with absolute values. The walker reuses a single instance: copy what you keep.
 * Which fields are meaningful depends on `kind` (see the format page).
 */
export class TraceRecord {
  offset = 0;
  /** The trace's thread index (from the chunk header). */
  thread = 0;
  kind = 0;
  flags = 0;
  /** The thread's heap sequence number after this record (for heap records and THREAD_BEGIN, the record's own). */
  seq = 0;
  /** STATIC, ENTER, ALLOC, FREE, REALLOC: the site; EXIT: the absolute exit site. */
  site = 0;
  /** EXIT: the entry site of the frame it closes. */
  entrySite = 0;
  /** Interposed heap records: the allocator function (a site kind); otherwise 0. */
  fn = 0;
  interposed = false;
  /** ALLOC, REALLOC: requested size; STATIC: size. */
  size = 0;
  /** ALLOC, REALLOC (with a new block), STATIC, untracked FREE: address. */
  address = 0;
  /** ALLOC, REALLOC (with a new block): usable size. */
  usable = 0;
  /** FREE: id of the freed block (0 when untracked); REALLOC: id of the old block (0: the old pointer was NULL). */
  block = 0;
  /** FREE: the pointer was not a live block (flag bit 2). */
  untracked = false;
  /** REALLOC: no new block (flag bit 2). */
  noBlock = false;
  /** REALLOC: the call failed, nothing changed (flag bit 3). */
  failed = false;
  /** ENTER: stack bytes in use at the entry. */
  depth = 0;
  /** UNWIND: frames closed; LOST: records lost. */
  count = 0;
  /** LINKED: absolute ids of the linked blocks; EXT/LEAKS: absolute ids of the classified blocks. */
  ids: number[] = [];
  /** LINKED: the scan hit its limit; EXT/LEAKS: the classification is partial (flag bit 0). */
  partial = false;
  /** EXT: the subkind (`ExtKind`) and the payload length in bytes. */
  subkind = 0;
  payloadLength = 0;
  /** EXT/LEAKS: the class of each block of `ids` (`LeakClass`: 0 direct, 1 indirect, 2 still reachable). */
  classes: number[] = [];
  /** TIME: nanoseconds since the header's start time; `delta`: since the thread's previous TIME. */
  time = 0;
  delta = 0;
  /** END: how (0 exit, 1 signal) and the exit status or signal number. */
  how = 0;
  status = 0;
  /** THREAD_BEGIN: the OS thread id. */
  osTid = 0;
  /** UNIT: the site table. */
  unit: UnitTable | null = null;
  /** EXT/LIBRARY, EXT/CALLER: the library index. */
  library = 0;
  /** EXT/BRANCH: 1 = the condition was true (or the case label was jumped to), 0 = false; the site is in `site`. */
  taken = 0;
  /** PROGRAM: executable path and working directory; EXT/LIBRARY: the object's path. */
  path = '';
  cwd = '';
  /** A stray EXIT (no open frame; `site` then holds the raw delta) or LINKED (no freeing record before it), or an EXT of an unknown subkind (skipped by its length): reported as a problem, left out of the model. */
  ignored = false;
}

export interface RecordVisitor {
  chunk?(chunk: ChunkInfo): void;
  record(r: TraceRecord): void;
}

export interface WalkOptions {
  /** Called after every chunk with the bytes walked so far and the file size. */
  onProgress?: (done: number, total: number) => void;
}

/** Thrown inside a record when it cannot be read; caught per chunk. Not an Error: no stack to capture. */
class RecordStop {
  constructor(
    readonly code: 'truncated' | 'overlong' | 'corrupt' | 'unknown-kind' | 'ext-truncated',
    readonly detail: string,
  ) {}
}
const TRUNCATED = new RecordStop('truncated', '');
const OVERLONG = new RecordStop('overlong', 'a varint is longer than 10 bytes or above 2^64');

/** Bounded reads of `u`, `s` and `str` values within [p, end). */
class ByteReader {
  p = 0;
  end = 0;
  private readonly utf8 = new TextDecoder('utf-8');
  constructor(readonly b: Uint8Array) {}

  u(): number {
    const b = this.b;
    let p = this.p;
    if (p >= this.end) throw TRUNCATED;
    let byte = b[p++]!;
    if (byte < 0x80) {
      this.p = p;
      return byte;
    }
    let result = byte & 0x7f;
    let mul = 128;
    for (let i = 1; ; i++) {
      if (p >= this.end) throw TRUNCATED;
      byte = b[p++]!;
      if (i === 9) {
        if (byte > 1) throw OVERLONG;
        result += byte * mul;
        break;
      }
      result += (byte & 0x7f) * mul;
      if (byte < 0x80) break;
      mul *= 128;
    }
    this.p = p;
    return result;
  }

  /** Zig-zag decoded signed value. */
  s(): number {
    const v = this.u();
    return v % 2 === 0 ? v / 2 : -(v + 1) / 2;
  }

  str(): string {
    const n = this.u();
    if (n > this.end - this.p) throw TRUNCATED;
    const s = this.utf8.decode(this.b.subarray(this.p, this.p + n));
    this.p += n;
    return s;
  }

  /** A count of items that each take at least `minBytes`: refuse counts the remaining bytes cannot hold. */
  count(minBytes: number, what: string): number {
    const n = this.u();
    if (n * minBytes > this.end - this.p) {
      throw new RecordStop('corrupt', `${what} ${n} cannot fit in the ${this.end - this.p} bytes left in the chunk`);
    }
    return n;
  }
}

class ThreadCursor {
  seq = 0;
  addr = 0;
  depth = 0;
  time = 0;
  /** Site of the thread's latest EXT/BRANCH. */
  branch = 0;
  /** Entry sites of the open frames, innermost last. */
  readonly frames: number[] = [];
  stopped = false;
  /** The previous record (TIME aside) ended a block, so a LINKED record may follow. */
  canLink = false;
  constructor(readonly index: number) {}
}

/** EXT/BRANCH's one varint: the site as a delta from the thread's previous branch site, and the outcome. */
function readBranch(rd: ByteReader, r: TraceRecord, cur: ThreadCursor, payloadEnd: number, length: number): void {
  const end = rd.end;
  rd.end = payloadEnd;
  let v: number;
  try {
    v = rd.u();
  } catch (e) {
    if (e === TRUNCATED) throw new RecordStop('corrupt', `BRANCH fields run past the end of its ${length}-byte payload (${formatOffset(payloadEnd)})`);
    throw e;
  } finally {
    rd.end = end;
  }
  const zz = Math.floor(v / 2);
  const delta = zz % 2 === 0 ? zz / 2 : -(zz + 1) / 2;
  const site = cur.branch + delta;
  if (!Number.isSafeInteger(site) || site < 0 || site > 0xffffffff) {
    throw new RecordStop('corrupt', `its site delta ${delta} from the previous branch site ${cur.branch} gives no valid site id`);
  }
  cur.branch = site;
  r.site = site;
  r.taken = v % 2;
}

function isZero(bytes: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (bytes[i] !== 0) return false;
  return true;
}

function hasChunkMagic(bytes: Uint8Array, at: number): boolean {
  for (let i = 0; i < 4; i++) if (bytes[at + i] !== CHUNK_MAGIC.charCodeAt(i)) return false;
  return true;
}

/**
 * Calls `visitor.record` for every readable record, in file order. Never throws on bad data: problems go to `problems`,
 * and a thread whose stream cannot be read further is stopped (its later chunks are skipped).
 */
export function walkRecords(
  bytes: Uint8Array,
  header: TraceHeader,
  visitor: RecordVisitor,
  problems: ProblemLog,
  options: WalkOptions = {},
): void {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const le = header.littleEndian;
  const len = bytes.length;
  const rd = new ByteReader(bytes);
  const r = new TraceRecord();
  const cursors = new Map<number, ThreadCursor>();
  const versionNote =
    header.minor > READER_MINOR
      ? ` (the trace is format ${header.major}.${header.minor}, newer than this reader's ${READER_MAJOR}.${READER_MINOR})`
      : '';

  /** Decodes one chunk's records; returns false if the thread had to stop. */
  function walkChunk(cur: ThreadCursor, start: number, end: number, cutByEof: boolean): boolean {
    rd.end = end;
    rd.p = start;
    const thread = cur.index;
    while (rd.p < end) {
      const offset = rd.p;
      const tag = bytes[rd.p++]!;
      const kind = tag & 0x0f;
      const flags = tag >> 4;
      r.offset = offset;
      r.thread = thread;
      r.kind = kind;
      r.flags = flags;
      try {
        if (kind === Kind.ALLOC || kind === Kind.FREE || kind === Kind.REALLOC || kind === Kind.THREAD_BEGIN) {
          const next = (flags & Flag.SEQ_NEXT) !== 0 ? cur.seq + 1 : cur.seq + rd.u();
          if (next === cur.seq) {
            problems.add('seq-repeated', 'warning', offset, thread, `${kindName(kind)} record repeats sequence number 0x${next.toString(16)}`);
          }
          cur.seq = next;
          if (kind !== Kind.THREAD_BEGIN) {
            r.site = rd.u();
            r.interposed = (flags & Flag.INTERPOSED) !== 0;
            r.fn = r.interposed ? rd.u() : 0;
          }
        }
        r.seq = cur.seq;
        r.ignored = false;
        let linkable = false;
        switch (kind) {
          case Kind.THREAD_BEGIN:
            r.osTid = rd.u();
            break;
          case Kind.UNIT: {
            const base = rd.u();
            const n = rd.count(5, 'site count');
            const m = rd.count(1, 'string count');
            const unit: UnitTable = { base, strings: [], kind: [], file: [], func: [], name: [], line: [] };
            for (let i = 0; i < m; i++) unit.strings.push(rd.str());
            if (n * 5 > rd.end - rd.p) {
              throw new RecordStop('corrupt', `site count ${n} cannot fit in the ${rd.end - rd.p} bytes left in the chunk`);
            }
            for (let i = 0; i < n; i++) {
              unit.kind.push(rd.u());
              unit.file.push(rd.u());
              unit.func.push(rd.u());
              unit.name.push(rd.u());
              unit.line.push(rd.u());
            }
            r.unit = unit;
            break;
          }
          case Kind.STATIC:
            r.site = rd.u();
            r.address = rd.u();
            r.size = rd.u();
            break;
          case Kind.ENTER: {
            r.site = rd.u();
            const depth = cur.depth + rd.s();
            if (depth < 0) {
              problems.add('negative-depth', 'warning', offset, thread, `ENTER record gives a negative stack depth (${depth}); using 0`);
            }
            cur.depth = depth;
            r.depth = depth < 0 ? 0 : depth;
            cur.frames.push(r.site);
            break;
          }
          case Kind.EXIT: {
            const delta = rd.s();
            const entry = cur.frames.pop();
            if (entry === undefined) {
              problems.add('exit-without-frame', 'warning', offset, thread, 'EXIT record but no frame is open; ignored');
              r.ignored = true;
              r.entrySite = 0;
              r.site = delta;
            } else {
              r.entrySite = entry;
              r.site = entry + delta;
            }
            break;
          }
          case Kind.UNWIND: {
            const count = rd.u();
            const open = cur.frames.length;
            if (count > open) {
              problems.add('unwind-too-many', 'warning', offset, thread, `UNWIND of ${count} frames but only ${open} are open`);
            }
            r.count = Math.min(count, open);
            cur.frames.length = open - r.count;
            break;
          }
          case Kind.ALLOC:
            r.size = rd.u();
            cur.addr += rd.s();
            r.address = cur.addr;
            r.usable = r.size + rd.u();
            break;
          case Kind.FREE:
            r.untracked = (flags & Flag.FREE_UNTRACKED) !== 0;
            if (r.untracked) {
              r.address = rd.u();
              r.block = 0;
            } else {
              r.address = 0;
              r.block = cur.seq - rd.u();
              linkable = true;
            }
            break;
          case Kind.REALLOC: {
            const d = rd.u();
            r.block = d === 0 ? 0 : cur.seq - d;
            r.size = rd.u();
            r.noBlock = (flags & Flag.REALLOC_NO_BLOCK) !== 0;
            r.failed = (flags & Flag.REALLOC_FAILED) !== 0;
            if (r.noBlock) {
              r.address = 0;
              r.usable = 0;
            } else {
              cur.addr += rd.s();
              r.address = cur.addr;
              r.usable = r.size + rd.u();
            }
            linkable = r.block !== 0 && !r.failed;
            break;
          }
          case Kind.LINKED: {
            const count = rd.count(1, 'linked block count');
            const ids = new Array<number>(count);
            for (let i = 0; i < count; i++) ids[i] = cur.seq - rd.u();
            r.ids = ids;
            r.count = count;
            r.partial = (flags & Flag.LINKED_PARTIAL) !== 0;
            if (!cur.canLink) {
              problems.add('linked-without-free', 'warning', offset, thread, 'LINKED record does not follow a FREE or REALLOC that ended a block; ignored');
              r.ignored = true;
            }
            break;
          }
          case Kind.TIME:
            r.delta = rd.u();
            cur.time += r.delta;
            r.time = cur.time;
            break;
          case Kind.END:
            r.how = rd.u();
            r.status = rd.u();
            break;
          case Kind.THREAD_END:
            break;
          case Kind.PROGRAM:
            r.path = rd.str();
            r.cwd = rd.str();
            break;
          case Kind.LOST:
            r.count = rd.u();
            break;
          case Kind.EXT: {
            // Format 1.1: a 1.0 trace has no EXT records, so kind 0 there stays an unknown kind.
            if (header.major !== 1 || header.minor < 1) {
              throw new RecordStop('unknown-kind', `unknown record kind ${kind} (tag 0x${tag.toString(16).padStart(2, '0')})${versionNote}`);
            }
            r.subkind = rd.u();
            const length = rd.u();
            const payload = rd.p;
            if (length > end - payload) {
              throw new RecordStop('ext-truncated', `its payload of ${length} bytes (from ${formatOffset(payload)}) runs past ${formatOffset(end)}`);
            }
            r.payloadLength = length;
            const payloadEnd = payload + length;
            if (r.subkind === ExtKind.LEAKS) {
              rd.end = payloadEnd;
              try {
                const lflags = rd.u();
                const count = rd.count(2, 'classified block count');
                const ids = new Array<number>(count);
                const classes = new Array<number>(count);
                for (let i = 0; i < count; i++) {
                  ids[i] = cur.seq - rd.s();
                  classes[i] = rd.u();
                }
                r.ids = ids;
                r.classes = classes;
                r.count = count;
                r.partial = (lflags & LeaksFlag.PARTIAL) !== 0;
              } catch (e) {
                if (e === TRUNCATED) throw new RecordStop('corrupt', `LEAKS fields run past the end of its ${length}-byte payload (${formatOffset(payloadEnd)})`);
                throw e;
              } finally {
                rd.end = end;
              }
            } else if (r.subkind === ExtKind.LIBRARY || r.subkind === ExtKind.CALLER) {
              rd.end = payloadEnd;
              try {
                r.library = rd.u();
                r.path = r.subkind === ExtKind.LIBRARY ? rd.str() : '';
              } catch (e) {
                const name = r.subkind === ExtKind.LIBRARY ? 'LIBRARY' : 'CALLER';
                if (e === TRUNCATED) throw new RecordStop('corrupt', `${name} fields run past the end of its ${length}-byte payload (${formatOffset(payloadEnd)})`);
                throw e;
              } finally {
                rd.end = end;
              }
              // CALLER follows its heap record and that record's LINKED (if any); it does not break the FREE–LINKED pairing.
              if (r.subkind === ExtKind.CALLER) linkable = cur.canLink;
            } else if (r.subkind === ExtKind.BRANCH) {
              readBranch(rd, r, cur, payloadEnd, length);
            } else {
              problems.add('unknown-ext', 'warning', offset, thread, `EXT record of unknown subkind ${r.subkind} (${length} payload bytes) skipped${versionNote}`);
              r.ignored = true;
            }
            // Fields a newer minor appended to a known subkind are skipped too.
            rd.p = payloadEnd;
            break;
          }
          default:
            throw new RecordStop('unknown-kind', `unknown record kind ${kind} (tag 0x${tag.toString(16).padStart(2, '0')})${versionNote}`);
        }
        if (kind !== Kind.TIME) cur.canLink = linkable;
        visitor.record(r);
      } catch (e) {
        if (!(e instanceof RecordStop)) throw e;
        const rest = `thread ${thread}'s later records are skipped`;
        if (e.code === 'truncated' && cutByEof) {
          problems.add('truncated-file', 'error', offset, thread, `the file ends (at ${formatOffset(len)}) inside this ${kindName(kind)} record; ${rest}`);
        } else if (e.code === 'truncated') {
          problems.add('truncated-record', 'error', offset, thread, `${kindName(kind)} record runs past the end of its chunk's used bytes (${formatOffset(end)}); ${rest}`);
        } else if (e.code === 'ext-truncated') {
          const cause = cutByEof ? `the file ends at ${formatOffset(len)}` : "the chunk's used bytes end there";
          problems.add('truncated-ext', 'error', offset, thread, `truncated EXT record: ${e.detail} (${cause}); ${rest}`);
        } else if (e.code === 'unknown-kind') {
          problems.add('unknown-kind', 'error', offset, thread, `${e.detail}; ${rest}`);
        } else {
          problems.add(`record-${e.code}`, 'error', offset, thread, `corrupt ${kindName(kind)} record: ${e.detail}; ${rest}`);
        }
        cur.stopped = true;
        return false;
      }
    }
    return true;
  }

  let off = header.headerSize;
  while (off < len) {
    if (len - off < CHUNK_HEADER_SIZE) {
      if (!isZero(bytes, off, len)) {
        problems.add('truncated-file', 'error', off, null, `the file ends inside a chunk header (${len - off} of ${CHUNK_HEADER_SIZE} bytes)`);
      }
      break;
    }
    if (!hasChunkMagic(bytes, off)) {
      if (!isZero(bytes, off, off + CHUNK_HEADER_SIZE)) {
        const got = Array.from(bytes.subarray(off, off + 4), (b) => b.toString(16).padStart(2, '0')).join(' ');
        problems.add('bad-chunk', 'error', off, null, `expected a chunk header ("MWCK"), found bytes ${got}; the chunks after this point are not read`);
      }
      break;
    }
    const thread = view.getUint32(off + 4, le);
    const capacity = view.getUint32(off + 8, le);
    const used = view.getUint32(off + 12, le);
    const payload = off + CHUNK_HEADER_SIZE;
    let readable = used;
    if (used > capacity) {
      problems.add('chunk-overfull', 'error', off, thread, `chunk claims ${used} used bytes but has a capacity of ${capacity}; reading ${capacity}`);
      readable = capacity;
    }
    const cutByEof = payload + readable > len;
    if (cutByEof) readable = len - payload;
    visitor.chunk?.({ offset: off, thread, capacity, used, readable });
    let cur = cursors.get(thread);
    if (cur === undefined) {
      cur = new ThreadCursor(thread);
      cursors.set(thread, cur);
    }
    if (!cur.stopped) {
      const ok = walkChunk(cur, payload, payload + readable, cutByEof);
      if (ok && cutByEof) {
        problems.add('truncated-file', 'error', off, thread, `the file ends at ${formatOffset(len)}, inside this chunk's ${used} used bytes; the records after that point are lost`);
      }
    }
    off = payload + capacity;
    options.onProgress?.(Math.min(off, len), len);
  }
}
