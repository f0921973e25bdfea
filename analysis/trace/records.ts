// Walks a trace's chunks and records in file order and resolves each thread's deltas (seq, address, depth, time, exit site) into absolute values.
import { CallPrediction, CHUNK_HEADER_SIZE, CHUNK_MAGIC, CHUNK_SEALED_HEAD, ExtKind, Flag, Kind, LeaksFlag, RAW_MAGIC, RAW_NO_THREAD, READER_MAJOR, READER_MINOR, SEAL_MAGIC, SEAL_PAYLOAD, kindName } from './format.js';
import { crc32c } from './crc32c.js';
import type { TraceHeader } from './header.js';
import { memorySource, type ByteSource } from './byte-source.js';
import { addRawSegment, rawTail, type RawSegments } from './raw-tail.js';
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
  /** EXT/RANK: the rank (its variable's name is in `path`). */
  rank = 0;
  /** EXT/CALL_PATH: flags (`CallPathFlag`), and per address its library index and offset from the object's load base. */
  pathFlags = 0;
  pathLibs: number[] = [];
  pathOffsets: number[] = [];
  /** EXT/BRANCH: 1 = the condition was true (or the case label was jumped to), 0 = false; the site is in `site`. */
  taken = 0;
  /** PROGRAM: executable path and working directory; EXT/LIBRARY: the object's path. */
  path = '';
  cwd = '';
  /** ENTER, EXIT: the flag bits of the tag, which in format 1.4 choose the record's form (`flags` is 0 for both). */
  form = 0;
  /** EXT/RAW_MARK: the raw segment and word from which the thread's records are still raw. */
  rawSegment = 0;
  rawWord = 0;
  /** A stray EXIT (no open frame; `site` then holds the raw delta) or LINKED (no freeing record before it), or an EXT of an unknown subkind (skipped by its length): reported as a problem, left out of the model. */
  ignored = false;
}

export interface RecordVisitor {
  chunk?(chunk: ChunkInfo): void;
  /** A raw segment (MWRW), in file order among the chunks. */
  rawSegment?(segment: ChunkEntry): void;
  /** A thread's raw tail begins: its records after its last RAW_MARK, read from its raw segments (raw-tail.ts). */
  rawTail?(thread: number, segment: number, word: number): void;
  record(r: TraceRecord): void;
}

export interface WalkOptions {
  /** Called after every chunk with the bytes walked so far and the file size. */
  onProgress?: (done: number, total: number) => void;
}

/** Thrown inside a record when it cannot be read; caught per chunk. Not an Error: no stack to capture. */
class RecordStop {
  constructor(
    readonly code: 'truncated' | 'more' | 'overlong' | 'corrupt' | 'unknown-kind' | 'ext-truncated',
    readonly detail: string,
  ) {}
}
const TRUNCATED = new RecordStop('truncated', '');
const OVERLONG = new RecordStop('overlong', 'a varint is longer than 10 bytes or above 2^64');
/** The record goes on past the window read so far, but not past its chunk: read a larger window and try again. */
const MORE = new RecordStop('more', '');

/**
 * Bounded reads of `u`, `s` and `str` values within [p, end) of a window `b` of the file, which starts at file offset
 * `base`. Positions are the window's own; `chunkEnd` is where the chunk's readable bytes end, in the same terms, which
 * lies past `end` when the window holds only part of the chunk (`more`).
 */
class ByteReader {
  b: Uint8Array = new Uint8Array(0);
  base = 0;
  p = 0;
  end = 0;
  chunkEnd = 0;
  private readonly utf8 = new TextDecoder('utf-8');

  get more(): boolean {
    return this.end < this.chunkEnd;
  }

  /** Running out of the window is the end of the record's bytes only when the window reaches the chunk's end. */
  private short(): RecordStop {
    return this.more ? MORE : TRUNCATED;
  }

  /** An unsigned varint: one to three bytes (values below 2^21, nearly all) read here, longer ones by `long`. */
  u(): number {
    const b = this.b;
    const p = this.p;
    const end = this.end;
    if (p + 2 < end) {
      const b0 = b[p]!;
      if (b0 < 0x80) {
        this.p = p + 1;
        return b0;
      }
      const b1 = b[p + 1]!;
      if (b1 < 0x80) {
        this.p = p + 2;
        return (b0 & 0x7f) | (b1 << 7);
      }
      const b2 = b[p + 2]!;
      if (b2 < 0x80) {
        this.p = p + 3;
        return (b0 & 0x7f) | ((b1 & 0x7f) << 7) | (b2 << 14);
      }
    }
    return this.long();
  }

  /** Any unsigned varint, each byte checked against the window's end. */
  private long(): number {
    const b = this.b;
    let p = this.p;
    if (p >= this.end) throw this.short();
    let byte = b[p++]!;
    if (byte < 0x80) {
      this.p = p;
      return byte;
    }
    let result = byte & 0x7f;
    let mul = 128;
    for (let i = 1; ; i++) {
      if (p >= this.end) throw this.short();
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
    if (v <= 0x7fffffff) return (v >>> 1) ^ -(v & 1);
    return v % 2 === 0 ? v / 2 : -(v + 1) / 2;
  }

  str(): string {
    const n = this.u();
    if (n > this.end - this.p) throw n > this.chunkEnd - this.p ? TRUNCATED : MORE;
    const s = this.utf8.decode(this.b.subarray(this.p, this.p + n));
    this.p += n;
    return s;
  }

  /**
   * Reads an EXT payload's fields (which the caller made sure the window holds) with its end as the limit: a field
   * running past it is a corrupt record, named with `name`, `length` and the payload's end.
   */
  inPayload<T>(payloadEnd: number, name: string, length: number, read: () => T): T {
    const end = this.end;
    const chunkEnd = this.chunkEnd;
    this.end = this.chunkEnd = payloadEnd;
    try {
      return read();
    } catch (e) {
      if (e === TRUNCATED) {
        throw new RecordStop('corrupt', `${name} fields run past the end of its ${length}-byte payload (${formatOffset(this.base + payloadEnd)})`);
      }
      throw e;
    } finally {
      this.end = end;
      this.chunkEnd = chunkEnd;
    }
  }

  /** A count of items that each take at least `minBytes`: refuse counts the remaining bytes cannot hold. */
  count(minBytes: number, what: string): number {
    const n = this.u();
    if (n * minBytes > this.chunkEnd - this.p) {
      throw new RecordStop('corrupt', `${what} ${n} cannot fit in the ${this.chunkEnd - this.p} bytes left in the chunk`);
    }
    if (n * minBytes > this.end - this.p) throw MORE;
    return n;
  }
}

export class ThreadCursor {
  seq = 0;
  addr = 0;
  depth = 0;
  time = 0;
  /** Site of the thread's latest EXT/BRANCH. */
  branch = 0;
  /** Entry sites of the open frames, innermost last. */
  readonly frames: number[] = [];
  /** Format 1.4: the site of the latest ENTER, the call history, and the prediction table (site, depth delta per slot). */
  enterSite = 0;
  history = 0;
  predict: Int32Array | null = null;
  stopped = false;
  /** The previous record (TIME aside) ended a block, so a LINKED record may follow. */
  canLink = false;
  /** The latest EXT/RAW_MARK: where the thread's raw tail begins; null when it has none. */
  rawMark: { segment: number; word: number } | null = null;
  constructor(readonly index: number) {}
}

/** EXT/BRANCH's one varint: the site as a delta from the thread's previous branch site, and the outcome. */
function readBranch(rd: ByteReader, r: TraceRecord, cur: ThreadCursor, payloadEnd: number, length: number): void {
  const v = rd.inPayload(payloadEnd, 'BRANCH', length, () => rd.u());
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

/** EXT/CALL_PATH's fields (format 1.3). */
function readCallPath(rd: ByteReader, r: TraceRecord, payloadEnd: number, length: number): void {
  rd.inPayload(payloadEnd, 'CALL_PATH', length, () => {
    r.pathFlags = rd.u();
    const count = rd.count(2, 'call path length');
    const libs = new Array<number>(count);
    const offsets = new Array<number>(count);
    for (let i = 0; i < count; i++) {
      libs[i] = rd.u();
      offsets[i] = rd.u();
    }
    r.pathLibs = libs;
    r.pathOffsets = offsets;
  });
}

function isZero(bytes: Uint8Array): boolean {
  return bytes.every((b) => b === 0);
}

function hasMagic(bytes: Uint8Array, magic: string): boolean {
  for (let i = 0; i < 4; i++) if (bytes[i] !== magic.charCodeAt(i)) return false;
  return true;
}

/** What parsing a record needs besides its bytes and its thread's state. */
export interface ParseContext {
  readonly header: TraceHeader;
  readonly problems: ProblemLog;
  /** Said after an unknown kind or subkind when the trace is newer than this reader. */
  readonly versionNote: string;
  /** Format 1.4 or later: ENTER and EXIT have their compact forms. */
  readonly compactCalls: boolean;
}

export function parseContext(header: TraceHeader, problems: ProblemLog): ParseContext {
  const versionNote =
    header.minor > READER_MINOR
      ? ` (the trace is format ${header.major}.${header.minor}, newer than this reader's ${READER_MAJOR}.${READER_MINOR})`
      : '';
  return { header, problems, versionNote, compactCalls: header.major === 1 && header.minor >= 4 };
}

/**
 * The fields of an EXT record (kind 0, format 1.1) into `r`; returns whether a LINKED record may follow. A function of
 * its own: its payload readers are closures, and a closure in parseRecord would make every record allocate a context.
 */
function parseExt(rd: ByteReader, cur: ThreadCursor, r: TraceRecord, ctx: ParseContext, offset: number, tag: number): boolean {
  const { header, problems, versionNote } = ctx;
  const kind = tag & 0x0f;
  let linkable = false;
  // Format 1.1: a 1.0 trace has no EXT records, so kind 0 there stays an unknown kind.
  if (header.major !== 1 || header.minor < 1) {
    throw new RecordStop('unknown-kind', `unknown record kind ${kind} (tag 0x${tag.toString(16).padStart(2, '0')})${versionNote}`);
  }
  r.subkind = rd.u();
  const length = rd.u();
  const payload = rd.p;
  if (length > rd.chunkEnd - payload) {
    throw new RecordStop(
      'ext-truncated',
      `its payload of ${length} bytes (from ${formatOffset(rd.base + payload)}) runs past ${formatOffset(rd.base + rd.chunkEnd)}`,
    );
  }
  if (length > rd.end - payload) throw MORE;
  r.payloadLength = length;
  const payloadEnd = payload + length;
  if (r.subkind === ExtKind.LEAKS) {
    rd.inPayload(payloadEnd, 'LEAKS', length, () => {
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
    });
  } else if (r.subkind === ExtKind.LIBRARY || r.subkind === ExtKind.CALLER) {
    const name = r.subkind === ExtKind.LIBRARY ? 'LIBRARY' : 'CALLER';
    rd.inPayload(payloadEnd, name, length, () => {
      r.library = rd.u();
      r.path = r.subkind === ExtKind.LIBRARY ? rd.str() : '';
    });
    // CALLER follows its heap record and that record's LINKED (if any); it does not break the FREE–LINKED pairing.
    if (r.subkind === ExtKind.CALLER) linkable = cur.canLink;
  } else if (r.subkind === ExtKind.BRANCH) {
    readBranch(rd, r, cur, payloadEnd, length);
  } else if (r.subkind === ExtKind.RANK) {
    rd.inPayload(payloadEnd, 'RANK', length, () => {
      r.rank = rd.u();
      r.path = rd.str();
    });
  } else if (r.subkind === ExtKind.CALL_PATH) {
    readCallPath(rd, r, payloadEnd, length);
    // Like CALLER, it follows a heap record (and that record's LINKED): the pairing stays.
    linkable = cur.canLink;
  } else if (r.subkind === ExtKind.SEAL) {
    // The chunk's checksum, checked where the chunks are listed (scanChunks); between a FREE at a chunk's end and its
    // LINKED at the next chunk's start, it does not break the pairing.
    linkable = cur.canLink;
  } else if (r.subkind === ExtKind.RAW_MARK) {
    rd.inPayload(payloadEnd, 'RAW_MARK', length, () => {
      r.rawSegment = rd.u();
      r.rawWord = rd.u();
    });
    cur.rawMark = { segment: r.rawSegment, word: r.rawWord };
    // Not an event and nothing wrong: left out of the model like a skipped record, and the pairing stays.
    r.ignored = true;
    linkable = cur.canLink;
  } else {
    problems.add('unknown-ext', 'warning', offset, cur.index, `EXT record of unknown subkind ${r.subkind} (${length} payload bytes) skipped${versionNote}`);
    r.ignored = true;
  }
  // Fields a newer minor appended to a known subkind are skipped too.
  rd.p = payloadEnd;
  return linkable;
}

const { BITS: PREDICT_BITS, HISTORY_MASK } = CallPrediction;

/**
 * ENTER's site and depth (depth before the negative check) into `r`, in any of its forms: format 1.0's (`u` site, `s`
 * depth delta), or 1.4's predicted (no fields: the thread's table at the slot its history picks) and site-delta forms.
 * Every field is read before the cursor changes, so a record read again whole (MORE) finds it unchanged; every form
 * teaches the table, as the runtime's writer does.
 */
function enterRecord(rd: ByteReader, cur: ThreadCursor, r: TraceRecord, flags: number, compact: boolean): void {
  let site: number;
  let delta: number;
  if (!compact) {
    site = rd.u();
    delta = rd.s();
  } else {
    const table = cur.predict ?? (cur.predict = new Int32Array(2 << PREDICT_BITS));
    const slot = 2 * (Math.imul(cur.history, 0x9e3779b1) >>> (32 - PREDICT_BITS));
    if (flags === Flag.ENTER_PREDICTED) {
      site = table[slot]! >>> 0;
      delta = table[slot + 1]!;
      if (site === 0) throw new RecordStop('corrupt', 'a predicted ENTER record, but the prediction table holds no site for it');
    } else if (flags === Flag.ENTER_SITE_DELTA) {
      const d = rd.s();
      delta = rd.s();
      site = (cur.enterSite + d) >>> 0;
    } else if (flags === 0) {
      site = rd.u();
      delta = rd.s();
    } else {
      throw new RecordStop('corrupt', `ENTER record with flag bits 0x${flags.toString(16)}, which no form of it has`);
    }
    table[slot] = site;
    table[slot + 1] = delta;
    cur.history = ((cur.history << 2) ^ site) & HISTORY_MASK;
  }
  cur.enterSite = site;
  r.form = flags;
  r.site = site;
  r.depth = cur.depth + delta;
  r.flags = 0;
}

/**
 * Reads the fields of the record whose tag byte was just read (at file offset `offset`) into `r`, and advances the
 * thread's state. Throws RecordStop when the bytes cannot be read as a record (MORE: the window holds too little).
 */
function parseRecord(rd: ByteReader, cur: ThreadCursor, r: TraceRecord, ctx: ParseContext, offset: number, tag: number): void {
  const { problems, versionNote } = ctx;
  const thread = cur.index;
  const kind = tag & 0x0f;
  const flags = tag >> 4;
  r.offset = offset;
  r.thread = thread;
  r.kind = kind;
  r.flags = flags;
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
        if (n * 5 > rd.chunkEnd - rd.p) {
          throw new RecordStop('corrupt', `site count ${n} cannot fit in the ${rd.chunkEnd - rd.p} bytes left in the chunk`);
        }
        if (n * 5 > rd.end - rd.p) throw MORE;
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
        enterRecord(rd, cur, r, flags, ctx.compactCalls);
        const depth = r.depth;
        if (depth < 0) {
          problems.add('negative-depth', 'warning', offset, thread, `ENTER record gives a negative stack depth (${depth}); using 0`);
        }
        cur.depth = depth;
        r.depth = depth < 0 ? 0 : depth;
        cur.frames.push(r.site);
        break;
      }
      case Kind.EXIT: {
        const compact = ctx.compactCalls;
        const delta = flags !== 0 && compact ? flags : rd.s();
        r.form = flags;
        r.flags = 0;
        if (compact) cur.history = ((cur.history << 2) ^ delta) & HISTORY_MASK;
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
      case Kind.ALLOC: {
        // Every field read before the thread's address moves: a record read again whole (MORE) must find it unmoved.
        r.size = rd.u();
        const delta = rd.s();
        r.usable = r.size + rd.u();
        cur.addr += delta;
        r.address = cur.addr;
        break;
      }
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
          const delta = rd.s();
          r.usable = r.size + rd.u();
          cur.addr += delta;
          r.address = cur.addr;
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
      case Kind.EXT:
        linkable = parseExt(rd, cur, r, ctx, offset, tag);
        break;
      default:
        throw new RecordStop('unknown-kind', `unknown record kind ${kind} (tag 0x${tag.toString(16).padStart(2, '0')})${versionNote}`);
    }
    if (kind !== Kind.TIME) cur.canLink = linkable;
}

/** One chunk as its header describes it, with what of it the file holds. */
export interface ChunkEntry extends ChunkInfo {
  /** File offset of the payload. */
  payload: number;
  /** The file ends before the chunk's used bytes do. */
  cutByEof: boolean;
  /** A raw segment (MWRW): its number in its thread's ring; `used` is then that number, `readable` the payload
   * bytes the file holds. Undefined for a chunk of records. */
  segment?: number;
}

/**
 * Calls `onChunk` for each chunk header in file order, up to the end of the chunk list (the end of the file, a zero
 * header, or damage, which goes to `problems`), and `onRaw` for each raw segment (MWRW) among them that belongs
 * to a thread.
 */
export function scanChunks(
  source: ByteSource,
  header: TraceHeader,
  problems: ProblemLog,
  onChunk: (c: ChunkEntry) => void,
  onRaw?: (c: ChunkEntry) => void,
): void {
  const len = source.size;
  let off = header.headerSize;
  const seals = new SealCheck(source, header, problems);
  while (off < len) {
    const head = source.read(off, CHUNK_HEADER_SIZE);
    if (head.length < CHUNK_HEADER_SIZE) {
      if (!isZero(head)) {
        problems.add('truncated-file', 'error', off, null, `the file ends inside a chunk header (${len - off} of ${CHUNK_HEADER_SIZE} bytes)`);
      }
      break;
    }
    const raw = hasMagic(head, RAW_MAGIC);
    if (!raw && !hasMagic(head, CHUNK_MAGIC)) {
      if (!isZero(head)) {
        const got = Array.from(head.subarray(0, 4), (b) => b.toString(16).padStart(2, '0')).join(' ');
        problems.add('bad-chunk', 'error', off, null, `expected a chunk header ("MWCK"), found bytes ${got}; the chunks after this point are not read`);
      }
      break;
    }
    const view = new DataView(head.buffer, head.byteOffset, CHUNK_HEADER_SIZE);
    const le = header.littleEndian;
    const thread = view.getUint32(4, le);
    const capacity = view.getUint32(8, le);
    const used = view.getUint32(12, le);
    const payload = off + CHUNK_HEADER_SIZE;
    if (raw) {
      if (thread !== RAW_NO_THREAD) onRaw?.({ offset: off, thread, capacity, used, readable: Math.min(capacity, len - payload), payload, cutByEof: payload + capacity > len, segment: used });
      off = payload + capacity;
      continue;
    }
    let readable = used;
    if (used > capacity) {
      problems.add('chunk-overfull', 'error', off, thread, `chunk claims ${used} used bytes but has a capacity of ${capacity}; reading ${capacity}`);
      readable = capacity;
    }
    const cutByEof = payload + readable > len;
    if (cutByEof) readable = len - payload;
    if (!cutByEof && readable === used) seals.check(off, thread, used);
    onChunk({ offset: off, thread, capacity, used, readable, payload, cutByEof });
    off = payload + capacity;
  }
}

/** The fixed bytes of a chunk's seal, its last record: EXT tag, subkind SEAL, payload length 8, the magic "MWSL". */
const SEAL_HEAD = [0x00, ExtKind.SEAL, SEAL_PAYLOAD, ...Array.from(SEAL_MAGIC, (c) => c.charCodeAt(0))];
/** The seal: its fixed bytes and the CRC. */
const SEAL_SIZE = SEAL_HEAD.length + 4;

/**
 * Checks the seal of each chunk (format 1.5, EXT/SEAL): a chunk whose used bytes end in a seal is verified against its
 * CRC-32C (of the chunk header's magic, thread index and capacity, then the payload before the seal); a chunk left
 * unsealed while its thread wrote on in a later chunk is damaged too (its used count cut the seal off). Damage is a
 * warning naming the chunk and its offset, never an error: the records are still read.
 */
class SealCheck {
  /** Per trace thread, its latest chunk that carried no seal, or nothing. */
  private readonly unsealed = new Map<number, number>();

  constructor(
    private readonly source: ByteSource,
    private readonly header: TraceHeader,
    private readonly problems: ProblemLog,
  ) {}

  check(offset: number, thread: number, used: number): void {
    const before = this.unsealed.get(thread);
    if (before !== undefined && this.header.minor >= 5) {
      this.problems.add('chunk-unsealed', 'warning', before, thread, `chunk of thread ${thread} at ${formatOffset(before)} carries no seal although the thread wrote on after it (at ${formatOffset(offset)}): its used count was damaged, and records at its end may be lost`);
    }
    this.unsealed.delete(thread);
    const payload = offset + CHUNK_HEADER_SIZE;
    if (used < SEAL_SIZE) return void this.unsealed.set(thread, offset);
    const tail = this.source.read(payload + used - SEAL_SIZE, SEAL_SIZE);
    const matching = tail.length < SEAL_SIZE ? 0 : SEAL_HEAD.filter((b, i) => tail[i] === b).length;
    // All but one of the seal's fixed bytes where they belong: a seal, damaged (an open chunk ends so by chance once in 2^48).
    if (matching === SEAL_HEAD.length - 1) {
      return void this.problems.add('chunk-checksum', 'warning', offset, thread, `chunk of thread ${thread} at ${formatOffset(offset)}: its seal (at ${formatOffset(payload + used - SEAL_SIZE)}) is damaged: the trace was damaged after it was written, and this chunk's records may be wrong`);
    }
    if (matching < SEAL_HEAD.length) return void this.unsealed.set(thread, offset);
    const v = new DataView(tail.buffer, tail.byteOffset + SEAL_HEAD.length, 4);
    const recorded = v.getUint32(0, this.header.littleEndian);
    let crc = crc32c(this.source.read(offset, CHUNK_SEALED_HEAD));
    for (let at = payload, end = payload + used - SEAL_SIZE; at < end; ) {
      const piece = this.source.read(at, Math.min(end - at, this.source.window));
      if (piece.length === 0) break;
      crc = crc32c(piece, crc);
      at += piece.length;
    }
    if (crc !== recorded) {
      this.problems.add('chunk-checksum', 'warning', offset, thread, `chunk of thread ${thread} at ${formatOffset(offset)}: its ${used} bytes do not match their checksum (CRC-32C): the trace was damaged after it was written, and this chunk's records may be wrong`);
    }
  }
}

/** A window's tail shorter than this is read again with the next window, so a record seldom straddles two. */
const TAIL = 64 << 10;

/**
 * Reads the records of one thread's chunks, one record at a time, through a window of its own. After the last
 * record of a chunk that the file cuts short, it reports that the rest was lost.
 */
export class ChunkRecords {
  private readonly rd = new ByteReader();
  private readonly source: ByteSource;
  private chunk: ChunkEntry | null = null;
  private size = 0;
  /** The file cuts the chunk short and that is still to be said when its last record has been read. */
  private cutPending = false;

  constructor(
    source: ByteSource,
    private readonly ctx: ParseContext,
    /** Bytes per window (at most the source's). */
    window = source.window,
  ) {
    this.source = source.clone();
    this.window = Math.min(window, source.window);
  }

  private readonly window: number;

  /** Reads the window that starts at file offset `from`: `size` bytes, or to the chunk's end if that is nearer. */
  private fill(from: number): void {
    const c = this.chunk!;
    const end = c.payload + c.readable;
    const rd = this.rd;
    rd.b = this.source.read(from, Math.min(end - from, this.size));
    rd.base = from;
    rd.p = 0;
    rd.end = rd.b.length;
    rd.chunkEnd = end - from;
  }

  start(chunk: ChunkEntry): void {
    this.chunk = chunk;
    this.cutPending = chunk.cutByEof;
    this.size = this.window;
    this.fill(chunk.payload);
  }

  /** The chunk's next record into `r`: false at the chunk's end, or when the thread's stream cannot be read further. */
  next(cur: ThreadCursor, r: TraceRecord): boolean {
    const rd = this.rd;
    const c = this.chunk!;
    if (cur.stopped) return false;
    for (;;) {
      if (rd.p >= rd.chunkEnd) {
        if (this.cutPending) {
          this.cutPending = false;
          this.ctx.problems.add('truncated-file', 'error', c.offset, c.thread, `the file ends at ${formatOffset(this.source.size)}, inside this chunk's ${c.used} used bytes; the records after that point are lost`);
        }
        return false;
      }
      if (rd.more && rd.end - rd.p < TAIL) this.fill(rd.base + rd.p);
      const offset = rd.base + rd.p;
      // A record read again from its start must find its thread's state as it was. Only `seq` moves before the
      // record's last field is read (addresses move after it): keeping a copy of an address here would box the double.
      const seqBefore = cur.seq;
      const tag = rd.b[rd.p++]!;
      try {
        parseRecord(rd, cur, r, this.ctx, offset, tag);
        return true;
      } catch (e) {
        if (!(e instanceof RecordStop)) throw e;
        if (e === MORE) {
          // Read the record again from its first byte, with a window at least twice the size of the one it overran.
          cur.seq = seqBefore;
          this.size = Math.max(this.size, 2 * rd.b.length);
          this.fill(offset);
          continue;
        }
        this.stop(e, cur, offset, tag & 0x0f);
        return false;
      }
    }
  }

  /** Says why the thread's stream ends at `offset`, and stops the thread. */
  private stop(e: RecordStop, cur: ThreadCursor, offset: number, kind: number): void {
    const c = this.chunk!;
    const problems = this.ctx.problems;
    const thread = cur.index;
    const len = this.source.size;
    const rest = `thread ${thread}'s later records are skipped`;
    if (e.code === 'truncated' && c.cutByEof) {
      problems.add('truncated-file', 'error', offset, thread, `the file ends (at ${formatOffset(len)}) inside this ${kindName(kind)} record; ${rest}`);
    } else if (e.code === 'truncated') {
      problems.add('truncated-record', 'error', offset, thread, `${kindName(kind)} record runs past the end of its chunk's used bytes (${formatOffset(c.payload + c.readable)}); ${rest}`);
    } else if (e.code === 'ext-truncated') {
      const cause = c.cutByEof ? `the file ends at ${formatOffset(len)}` : "the chunk's used bytes end there";
      problems.add('truncated-ext', 'error', offset, thread, `truncated EXT record: ${e.detail} (${cause}); ${rest}`);
    } else if (e.code === 'unknown-kind') {
      problems.add('unknown-kind', 'error', offset, thread, `${e.detail}; ${rest}`);
    } else {
      problems.add(`record-${e.code}`, 'error', offset, thread, `corrupt ${kindName(kind)} record: ${e.detail}; ${rest}`);
    }
    cur.stopped = true;
  }
}

/**
 * Calls `visitor.record` for every readable record, in file order. Never throws on bad data: problems go to `problems`,
 * and a thread whose stream cannot be read further is stopped (its later chunks are skipped).
 */
export function walkRecords(
  input: Uint8Array | ByteSource,
  header: TraceHeader,
  visitor: RecordVisitor,
  problems: ProblemLog,
  options: WalkOptions = {},
): void {
  const source = input instanceof Uint8Array ? memorySource(input) : input;
  const ctx = parseContext(header, problems);
  const reader = new ChunkRecords(source, ctx);
  const r = new TraceRecord();
  const cursors = new Map<number, ThreadCursor>();
  const raw = new Map<number, RawSegments>();
  scanChunks(
    source,
    header,
    problems,
    (chunk) => {
      visitor.chunk?.(chunk);
      let cur = cursors.get(chunk.thread);
      if (cur === undefined) {
        cur = new ThreadCursor(chunk.thread);
        cursors.set(chunk.thread, cur);
      }
      if (!cur.stopped) {
        reader.start(chunk);
        while (reader.next(cur, r)) visitor.record(r);
      }
      options.onProgress?.(Math.min(chunk.payload + chunk.capacity, source.size), source.size);
    },
    (segment) => {
      visitor.rawSegment?.(segment);
      addRawSegment(raw, segment);
    },
  );
  // Each thread's raw tail after all the chunks: the records a thread wrote last (raw segments).
  for (const [thread, cur] of [...cursors].sort((a, b) => a[0] - b[0])) {
    const tail = rawTail(source, header, cur, raw.get(thread), problems);
    if (tail === null) continue;
    visitor.rawTail?.(thread, cur.rawMark!.segment, cur.rawMark!.word);
    const tailReader = new ChunkRecords(tail.source, ctx);
    tailReader.start(tail.chunk);
    while (tailReader.next(cur, r)) visitor.record(r);
  }
}
