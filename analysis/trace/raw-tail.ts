// A thread's raw tail (a trace with raw segments, header flag RAW_SEGMENTS): the records a thread left in its ring of
// raw segments (MWRW chunks) that the runtime's encoder thread had not yet encoded when the run stopped — after
// SIGKILL, a crash, or in a thread still running at exit. They start at the thread's last EXT/RAW_MARK (segment, word) and run through its segments in
// number order to the first word that was never written. Each word is re-encoded here as the record it stands for
// (ENTER and EXIT in format 1.4's site-delta and long forms, from the thread's state where its chunks end; a blob's
// bytes as they are), so the one record parser reads them after the thread's chunks as one more chunk, held in memory.
import { memorySource, type ByteSource } from './byte-source.js';
import { Flag, Kind } from './format.js';
import type { TraceHeader } from './header.js';
import type { ChunkEntry, ThreadCursor } from './records.js';
import type { ProblemLog } from '../problems.js';

/** A thread's raw segments by their number. */
export type RawSegments = Map<number, ChunkEntry>;

/** Adds a raw segment to its thread's map (the first of a number counts; a later one is a stale copy). */
export function addRawSegment(byThread: Map<number, RawSegments>, c: ChunkEntry): void {
  let m = byThread.get(c.thread);
  if (m === undefined) byThread.set(c.thread, (m = new Map()));
  if (!m.has(c.segment!)) m.set(c.segment!, c);
}

/** Bytes of re-encoded records, grown as needed. */
class Out {
  bytes = new Uint8Array(1024);
  n = 0;
  room(k: number): void {
    if (this.n + k <= this.bytes.length) return;
    const b = new Uint8Array(Math.max(2 * this.bytes.length, this.n + k));
    b.set(this.bytes.subarray(0, this.n));
    this.bytes = b;
  }
  byte(v: number): void {
    this.room(1);
    this.bytes[this.n++] = v;
  }
  u(v: number): void {
    this.room(10);
    while (v >= 0x80) {
      this.bytes[this.n++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.bytes[this.n++] = v;
  }
  s(v: number): void {
    this.u(v >= 0 ? 2 * v : -2 * v - 1);
  }
}

/**
 * The thread's raw tail as a chunk of ordinary records in memory (with the source that holds it), or null when it has
 * none: no RAW_MARK, or nothing written after it. `cur` is the thread's state after its last chunk. A word that is
 * no word the runtime writes ends the tail, with a problem.
 */
export function rawTail(
  source: ByteSource,
  header: TraceHeader,
  cur: ThreadCursor,
  segments: RawSegments | undefined,
  problems: ProblemLog,
): { source: ByteSource; chunk: ChunkEntry } | null {
  const mark = cur.rawMark;
  if (mark === null || segments === undefined || cur.stopped) return null;
  const out = new Out();
  let site = cur.enterSite;
  let depth = cur.depth;
  const le = header.littleEndian;
  let first: ChunkEntry | undefined;
  for (let s = mark.segment, word = mark.word; ; s++, word = 0) {
    const seg = segments.get(s);
    if (seg === undefined) break;
    first ??= seg;
    const bytes = source.read(seg.payload, seg.readable);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    const words = Math.floor(bytes.length / 8);
    let i = word;
    for (; i < words; ) {
      const lo = view.getUint32(8 * i, le);
      const hi = view.getUint32(8 * i + 4, le);
      if (lo === 0 && hi === 0) break;
      const type = lo & 3;
      if (type === 1) {
        const enter = ((lo >>> 2) | ((hi & 3) << 30)) >>> 0;
        const d = hi >>> 2;
        // Format 1.4's site-delta form (the encoder thread writes 1.4 or later, so the compact forms are there).
        out.byte(Kind.ENTER | (Flag.ENTER_SITE_DELTA << 4));
        out.s((enter - site) | 0);
        out.s(d - depth);
        site = enter;
        depth = d;
        i++;
      } else if (type === 2) {
        out.byte(Kind.EXIT);
        out.s((lo >>> 2) | ((hi & 3) << 30) | 0);
        i++;
      } else if (lo === 0 && 8 * (i + 1) + hi <= bytes.length) {
        out.room(hi);
        out.bytes.set(bytes.subarray(8 * (i + 1), 8 * (i + 1) + hi), out.n);
        out.n += hi;
        i += 1 + Math.ceil(hi / 8);
      } else {
        problems.add('raw-word', 'error', seg.payload + 8 * i, cur.index, `raw segment ${s} holds a word no runtime writes (0x${hi.toString(16).padStart(8, '0')}${lo.toString(16).padStart(8, '0')}); thread ${cur.index}'s later records are skipped`);
        return finish(out, first, cur);
      }
    }
    // A segment the thread moved on from ends in unwritten words; one it was writing ends the tail (its next, if
    // there, is empty: a segment is written only after the one before it).
    if (i === word && s !== mark.segment) break;
  }
  return finish(out, first, cur);
}

function finish(out: Out, first: ChunkEntry | undefined, cur: ThreadCursor): { source: ByteSource; chunk: ChunkEntry } | null {
  if (out.n === 0 || first === undefined) return null;
  const bytes = out.bytes.subarray(0, out.n);
  // Offsets in the tail count from its first segment's payload, so that problems point near the words they came from.
  const base = first.payload;
  const inner = memorySource(bytes);
  const shifted: ByteSource = {
    size: base + bytes.length,
    window: Infinity,
    read: (offset, length) => inner.read(offset - base, length),
    clone: () => shifted,
  };
  return { source: shifted, chunk: { offset: first.offset, thread: cur.index, capacity: out.n, used: out.n, readable: out.n, payload: base, cutByEof: false } };
}
