// Hostile and damaged input: refused headers, truncation at every byte, corrupt and unknown records, random mutations; the decoder never throws after the header and never hangs.
import { describe, expect, test } from 'vitest';
import { decodeTrace, TraceRefusedError } from '../../analysis/trace/decode.js';
import { dumpTraceText } from '../../analysis/dump.js';
import type { Model } from '../../analysis/model.js';
import { Bytes, K, S, TraceBuilder } from '../fixtures/trace-builder.js';
import { DEMO_SITES, basicTrace, twoThreadsTrace } from '../fixtures/scenarios.js';
import { rng } from '../support/random.js';

const kindsOf = (m: Model): number[] => Array.from(m.events.kind);
/** The record kinds that are events (UNIT, LINKED, TIME, PROGRAM and EXT are not). */
const EVENT_KINDS = new Set<number>([K.THREAD_BEGIN, K.STATIC, K.ENTER, K.EXIT, K.UNWIND, K.ALLOC, K.FREE, K.REALLOC, K.END, K.THREAD_END, K.LOST]);

function refusal(bytes: Uint8Array): string {
  try {
    decodeTrace(bytes);
  } catch (e) {
    expect(e).toBeInstanceOf(TraceRefusedError);
    return (e as Error).message;
  }
  throw new Error('expected the trace to be refused');
}

/** Offsets where chunk headers start: a file cut there lost whole chunks and cannot tell. */
function chunkStarts(bytes: Uint8Array): number[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset);
  const out: number[] = [];
  for (let off = 64; off + 16 <= bytes.length; off += 16 + view.getUint32(off + 8, true)) out.push(off);
  return out;
}

describe('refused files', () => {
  test('bad magic', () => {
    const bytes = new TraceBuilder({ magic: 'ELF\x7f\0\0\0\0' }).build();
    expect(refusal(bytes)).toMatch(/^not a cc-memwrap trace: it starts with 45 4c 46 7f/);
    expect(refusal(new Uint8Array(0))).toMatch(/not a cc-memwrap trace: the file is empty/);
  });

  test('major version 2 is refused naming both versions', () => {
    const b = new TraceBuilder({ major: 2, minor: 3 });
    b.thread(0).threadBegin(1);
    expect(refusal(b.build())).toBe(
      'unsupported trace format version 2.3: this reader reads version 1.6 (major 1) only; a newer cc-memwrap wrote it',
    );
    expect(refusal(new TraceBuilder({ major: 2, littleEndian: false }).build())).toMatch(/version 2\.0/);
  });

  test('bad byte-order mark, short header, header size', () => {
    const bytes = new TraceBuilder().build();
    bytes[12] = 9;
    expect(refusal(bytes)).toMatch(/byte-order mark/);
    expect(refusal(new TraceBuilder().build().subarray(0, 40))).toBe(
      'truncated trace header: the file is 40 bytes, the header needs 64',
    );
    expect(refusal(new TraceBuilder({ headerSize: 32 }).build())).toMatch(/header size 32/);
  });

  test('a newer minor version is read; an unknown EXT subkind is skipped, naming both versions', () => {
    const b = new TraceBuilder({ minor: 7, complete: true });
    b.thread(0).threadBegin(1);
    b.thread(0).ext(9, [1, 2, 3]);
    b.thread(0).end(0, 0);
    const m = decodeTrace(b.build());
    expect(m.events.count).toBe(2);
    expect(m.problems[0]!.severity).toBe('warning');
    expect(m.problems[0]!.message).toMatch(/EXT record of unknown subkind 9 \(3 payload bytes\) skipped \(the trace is format 1\.7, newer than this reader's 1\.6\)/);
  });

  test('kind 0 in a 1.0 trace stops the thread as before', () => {
    const b = new TraceBuilder({ minor: 0 });
    b.thread(0).threadBegin(1);
    b.thread(0).ext(1, [0, 0]);
    const m = decodeTrace(b.build());
    expect(m.events.count).toBe(1);
    expect(m.problems[0]!.message).toMatch(/unknown record kind 0 \(tag 0x00\); thread 0's later records are skipped/);
  });
});

describe('truncation', () => {
  for (const [name, build] of [
    ['one thread', basicTrace],
    ['two threads', twoThreadsTrace],
  ] as const) {
    test(`${name}: cut at every byte offset`, () => {
      const full = build().build();
      const whole = decodeTrace(full);
      for (let k = 0; k < full.length; k++) {
        const cut = full.slice(0, k);
        if (k < 64) {
          expect(() => decodeTrace(cut)).toThrow(TraceRefusedError);
          continue;
        }
        const m = decodeTrace(cut);
        // Everything before the cut is kept: per thread, the events are a prefix of the whole trace's.
        for (const t of whole.threads) {
          const want = kindsOf(whole).filter((_, i) => whole.threads[whole.events.thread[i]!]!.index === t.index);
          const got = kindsOf(m).filter((_, i) => m.threads[m.events.thread[i]!]!.index === t.index);
          expect(want.slice(0, got.length)).toEqual(got);
        }
        if (k > 64 && !chunkStarts(full).includes(k)) {
          const errors = m.problems.filter((p) => p.severity === 'error');
          expect(errors.length, `cut at ${k}`).toBeGreaterThan(0);
          expect(errors[0]!.offset).not.toBeNull();
          expect(errors[0]!.message).toMatch(/^at offset 0x[0-9a-f]+ \(\d+\)/);
        }
        expect(dumpTraceText(cut)).toContain('problems:');
      }
    });
  }

  test('a cut record is named by offset and thread', () => {
    const b = new TraceBuilder();
    const t = b.thread(3);
    t.threadBegin(1);
    const at = t.mark();
    t.alloc({ site: 0, size: 100000, addr: 0x123456789a });
    const full = b.build();
    const m = decodeTrace(full.slice(0, full.length - 2));
    expect(m.events.count).toBe(1);
    const off = b.offsetOf(at);
    expect(m.problems[0]).toEqual({
      severity: 'error',
      offset: off,
      thread: 3,
      message: `at offset 0x${off.toString(16)} (${off}) (thread 3): the file ends (at 0x${(full.length - 2).toString(16)} (${full.length - 2})) inside this ALLOC record; thread 3's later records are skipped`,
    });
  });
});

describe('corrupt data', () => {
  test('unknown kind stops only that thread', () => {
    const b = new TraceBuilder({ complete: true });
    const t0 = b.thread(0);
    const t1 = b.thread(1);
    t0.threadBegin(1);
    t1.threadBegin(2);
    const bad = t1.mark();
    t1.raw([0xf0]); // kind 0
    t1.alloc({ site: 0, size: 1, addr: 1 });
    t0.alloc({ site: 0, size: 8, addr: 0x100 });
    t0.end(0, 0);
    const m = decodeTrace(b.build());
    expect(m.problems).toHaveLength(1);
    expect(m.problems[0]!.offset).toBe(b.offsetOf(bad));
    expect(m.problems[0]!.thread).toBe(1);
    expect(m.problems[0]!.message).toMatch(/unknown record kind 0 \(tag 0xf0\); thread 1's later records are skipped/);
    expect(m.blocks.count).toBe(1);
    expect(m.end.how).toBe('exit');
  });

  test('format 1.4 call records: a prediction from an empty slot and unknown flag bits stop the thread; 1.3 ignores the bits', () => {
    const predictedFirst = new TraceBuilder({ minor: 4 });
    const p = predictedFirst.thread(0);
    p.threadBegin(1);
    p.unit(1, DEMO_SITES);
    const bad = p.mark();
    p.raw([K.ENTER | 0x10]); // predicted, but nothing was entered yet
    p.alloc({ site: 0, size: 8, addr: 0x100 });
    let m = decodeTrace(predictedFirst.build());
    expect(m.problems.filter((x) => x.severity === 'error')).toHaveLength(1);
    expect(m.problems[0]!.offset).toBe(predictedFirst.offsetOf(bad));
    expect(m.problems[0]!.message).toMatch(/corrupt ENTER record: a predicted ENTER record, but the prediction table holds no site for it; thread 0's later records are skipped/);
    expect(m.blocks.count).toBe(0);

    for (const minor of [3, 4]) {
      const odd = new TraceBuilder({ minor });
      const t = odd.thread(0);
      t.threadBegin(1);
      t.unit(1, DEMO_SITES);
      t.raw([K.ENTER | 0x30, 0x01, 0x20]); // flag bits 3: no form of 1.4; in 1.3 the bits mean nothing (site 1, depth 16)
      t.exit(2);
      t.end(0, 0);
      m = decodeTrace(odd.build());
      if (minor === 3) {
        expect(m.problems).toEqual([]);
        expect(kindsOf(m)).toEqual([K.THREAD_BEGIN, K.ENTER, K.EXIT, K.END]);
      } else {
        expect(m.problems[0]!.message).toMatch(/corrupt ENTER record: ENTER record with flag bits 0x3, which no form of it has/);
        expect(kindsOf(m)).toEqual([K.THREAD_BEGIN]);
      }
    }
  });

  test('over-long varint, and the largest 10-byte one', () => {
    const b = new TraceBuilder();
    const t = b.thread(0);
    t.threadBegin(1);
    t.raw([K.LOST, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]); // 2^64 - 1: fine
    t.raw([K.LOST, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02]); // >= 2^64
    const m = decodeTrace(b.build());
    expect(m.lostRecords).toBe(2 ** 64);
    expect(m.problems[0]!.message).toMatch(/corrupt LOST record: a varint is longer than 10 bytes or above 2\^64/);
  });

  test('counts larger than the bytes left are refused without allocating', () => {
    for (const body of [
      new Bytes().byte(K.LINKED).u(2n ** 60n),
      new Bytes().byte(K.UNIT).u(1).u(2n ** 40n).u(0),
      new Bytes().byte(K.UNIT).u(1).u(1).u(2n ** 40n),
      new Bytes().byte(K.PROGRAM).u(2n ** 50n),
    ]) {
      const b = new TraceBuilder();
      b.thread(0).threadBegin(1);
      b.thread(0).free({ site: 0, block: 1 }); // so LINKED may follow
      b.thread(0).raw(body.bytes());
      const m = decodeTrace(b.build());
      expect(m.problems.some((p) => p.severity === 'error' && /cannot fit|runs past/.test(p.message))).toBe(true);
    }
  });

  test('site ids beyond the limit and bad string indices are warnings', () => {
    const b = new TraceBuilder({ complete: true });
    const t = b.thread(0);
    t.threadBegin(1);
    t.unitRaw(2 ** 40, ['a.c'], [[S.MALLOC, 0, 0, 0, 1]]);
    t.unitRaw(1, ['a.c'], [[S.MALLOC, 0, 7, 0, 1]]);
    t.end(0, 0);
    const m = decodeTrace(b.build());
    expect(m.problems.map((p) => p.message)).toEqual([
      expect.stringMatching(/UNIT claims site ids 1099511627776…1099511627776, above the limit/),
      expect.stringMatching(/UNIT site names string 7, but the unit has 1 strings/),
    ]);
    expect(m.sites.count).toBe(2);
  });

  test('chunk list: zero padding ends it quietly, garbage is an error, overfull chunks are clamped', () => {
    const padded = new TraceBuilder({ complete: true });
    padded.thread(0).threadBegin(1);
    padded.thread(0).end(0, 0);
    padded.tail(new Uint8Array(100));
    expect(decodeTrace(padded.build()).problems).toEqual([]);

    const zeroThenJunk = new TraceBuilder({ complete: true });
    zeroThenJunk.thread(0).threadBegin(1);
    zeroThenJunk.thread(0).end(0, 0);
    zeroThenJunk.tail([...new Uint8Array(16), 1, 2, 3]);
    expect(decodeTrace(zeroThenJunk.build()).problems).toEqual([]);

    const junk = new TraceBuilder({ complete: true });
    junk.thread(0).threadBegin(1);
    junk.thread(0).end(0, 0);
    junk.tail([0x4d, 0x57, 0x43, 0x00, ...new Uint8Array(20)]);
    const m = decodeTrace(junk.build());
    expect(m.problems.map((p) => p.message)).toEqual([expect.stringMatching(/expected a chunk header \("MWCK"\), found bytes 4d 57 43 00/)]);
    expect(m.end.how).toBe('exit');

    const overfull = new TraceBuilder({ complete: true });
    overfull.thread(0).chunk({ used: 1000 });
    overfull.thread(0).threadBegin(1);
    overfull.thread(0).end(0, 0);
    const o = decodeTrace(overfull.build());
    expect(o.problems[0]!.message).toMatch(/chunk claims 1000 used bytes but has a capacity of 5; reading 5/);
    expect(o.end.how).toBe('exit');
  });

  test('random byte mutations never throw after the header and never hang', () => {
    const sources = [basicTrace().build(), twoThreadsTrace().build()];
    const random = rng(12345);
    const start = performance.now();
    let refused = 0;
    let decoded = 0;
    for (let iter = 0; iter < 3000; iter++) {
      const src = sources[iter % sources.length]!;
      const bytes = src.slice();
      const flips = 1 + Math.floor(random() * 8);
      for (let j = 0; j < flips; j++) {
        const at = Math.floor(random() * bytes.length);
        bytes[at] = random() < 0.3 ? 0xff : Math.floor(random() * 256);
      }
      try {
        const m = decodeTrace(bytes);
        // Whatever survives is a consistent model: every record is at least a byte, every event a known event kind,
        // every block reference a row of the block table.
        expect(m.events.count).toBeLessThanOrEqual(bytes.length);
        for (let i = 0; i < m.events.count; i++) {
          expect(EVENT_KINDS.has(m.events.kind[i]!)).toBe(true);
          expect(m.events.newBlock[i]!).toBeLessThan(m.blocks.count);
          expect(m.events.oldBlock[i]!).toBeLessThan(m.blocks.count);
        }
        dumpTraceText(bytes);
        decoded++;
      } catch (e) {
        expect(e).toBeInstanceOf(TraceRefusedError);
        refused++;
      }
    }
    // Random garbage after a valid header, with plausible chunk headers.
    for (let iter = 0; iter < 500; iter++) {
      const b = new TraceBuilder();
      const body = Array.from({ length: 20 + Math.floor(random() * 200) }, () => Math.floor(random() * 256));
      b.thread(Math.floor(random() * 3)).raw(body);
      const m = decodeTrace(b.build());
      expect(m.events.count).toBeLessThanOrEqual(body.length);
    }
    console.log(`mutations: ${decoded} decoded, ${refused} refused, ${(performance.now() - start).toFixed(0)} ms`);
  });
});

describe('thread without sites or THREAD_BEGIN', () => {
  test('heap records before any UNIT and without THREAD_BEGIN still decode', () => {
    const b = new TraceBuilder({ complete: true });
    const t = b.thread(0);
    const a = t.alloc({ fn: S.MALLOC, size: 10, addr: 0x10 });
    t.free({ fn: S.FREE, block: a });
    t.unit(1, DEMO_SITES);
    t.end(0, 0);
    const m = decodeTrace(b.build());
    expect(m.problems).toEqual([]);
    expect(m.threads[0]!.osTid).toBeNull();
    expect(m.blocks.count).toBe(1);
  });
});
