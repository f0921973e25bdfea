// Format 1.5's chunk seals (EXT/SEAL): a sealed chunk's bytes are checked against its CRC-32C wherever chunks are read,
// so damage inside a sealed chunk is always said (a warning naming the chunk and its offset, never fatal); a seal
// changes nothing else the reader computes; and a trace the runtime stopped (a full disk) says so.
import { describe, expect, test } from 'vitest';
import { crc32c } from '../../analysis/trace/crc32c.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { dumpTraceText } from '../../analysis/dump.js';
import type { Model } from '../../analysis/model.js';
import { runReport } from '../../cli/report.js';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { specCrc32c, TraceBuilder } from '../fixtures/trace-builder.js';
import { DEMO_SITES } from '../fixtures/scenarios.js';
import { capture } from '../fixtures/cli-capture.js';
import { scratch } from '../support/programs.js';

/** Two threads, each chunk sealed as the runtime seals it (a FREE at one chunk's end, its LINKED at the next's start). */
function sealedTrace(seal: boolean, minor = seal ? 5 : 4): TraceBuilder {
  const b = new TraceBuilder({ complete: true, minor, pid: 77, ppid: 1 });
  const t = b.thread(0);
  const w = b.thread(1);
  const cut = (x: typeof t): void => void (seal ? x.seal() : x.chunk());
  t.threadBegin(77);
  t.program('/home/student/demo', '/home/student');
  t.unit(1, DEMO_SITES);
  t.enter(1, 128);
  const a = t.alloc({ site: 4, size: 24, addr: 0x5000, usable: 24 });
  const n = t.alloc({ site: 4, size: 24, addr: 0x5020, usable: 24 });
  cut(t);
  w.threadBegin(78);
  w.enter(10, 256);
  const wb = w.alloc({ site: 12, size: 64, addr: 0x9000, usable: 64 });
  cut(w);
  t.time(1000);
  t.free({ site: 6, block: a });
  cut(t);
  t.linked([n]);
  w.free({ site: 6, block: wb });
  w.exit(11);
  w.threadEnd();
  if (seal) w.seal();
  t.free({ site: 6, block: n });
  t.exit(2);
  t.end(0, 0);
  if (seal) t.seal();
  return b;
}

/** The events of a model as text rows (what every analysis reads). */
function events(m: Model): string[] {
  const e = m.events;
  return Array.from({ length: e.count }, (_, i) => [e.kind[i], e.thread[i], e.site[i], e.value[i], e.stack[i], e.heapRequested[i], e.newBlock[i], e.oldBlock[i]].join(' '));
}

const warnings = (m: Model, code: RegExp): string[] => m.problems.filter((p) => code.test(p.message)).map((p) => p.message);

describe('CRC-32C', () => {
  test('the check value, the spec\'s bitwise form, pieces', () => {
    const nine = new TextEncoder().encode('123456789');
    expect(crc32c(nine)).toBe(0xe3069283);
    expect(specCrc32c(nine)).toBe(0xe3069283);
    const bytes = Uint8Array.from({ length: 1000 }, (_, i) => (i * 2654435761) >>> 24);
    expect(crc32c(bytes)).toBe(specCrc32c(bytes));
    expect(crc32c(bytes.subarray(333), crc32c(bytes.subarray(0, 333)))).toBe(crc32c(bytes));
    expect(crc32c(new Uint8Array(0))).toBe(0);
  });
});

describe('sealed chunks', () => {
  const plain = sealedTrace(false).build();
  const sealed = sealedTrace(true).build();

  test('a sealed trace reads as the same events, with no problem; dump shows each seal', () => {
    const m = decodeTrace(sealed);
    expect(m.problems).toEqual([]);
    expect(events(m)).toEqual(events(decodeTrace(plain)));
    expect(dumpTraceText(sealed).match(/SEAL length=8/g)).toHaveLength(5);
  });

  test('every bit flipped in any sealed chunk is said: a checksum warning naming the chunk, or an error', () => {
    const view = new DataView(sealed.buffer);
    const silent: string[] = [];
    let checked = 0;
    for (let off = 64; off + 16 <= sealed.length; off += 16 + view.getUint32(off + 8, true)) {
      const used = view.getUint32(off + 12, true);
      // The header's thread index and capacity, and every payload byte the seal covers or holds.
      const positions = [...Array.from({ length: 8 }, (_, i) => off + 4 + i), ...Array.from({ length: used }, (_, i) => off + 16 + i)];
      for (const at of positions) {
        for (const bit of [0x01, 0x10, 0x80]) {
          const bytes = sealed.slice();
          bytes[at] ^= bit;
          const m = decodeTrace(bytes);
          checked++;
          const said = m.problems.some((p) => p.severity === 'error') || warnings(m, /do not match their checksum|seal .* is damaged|carries no seal/).length > 0;
          if (!said) silent.push(`offset ${at} ^ 0x${bit.toString(16)}`);
        }
      }
    }
    expect(checked).toBeGreaterThan(300);
    expect(silent).toEqual([]);
  });

  test('the warning names the thread, the chunk and its offset; it is not fatal', () => {
    const bytes = sealed.slice();
    const view = new DataView(bytes.buffer);
    const second = 64 + 16 + view.getUint32(64 + 8, true);
    bytes[second + 16 + 3] ^= 0x40; // inside thread 1's first chunk
    const m = decodeTrace(bytes);
    const at = `0x${second.toString(16)} (${second})`;
    expect(warnings(m, /checksum/)).toEqual([
      `at offset ${at} (thread 1): chunk of thread 1 at ${at}: its ${view.getUint32(second + 12, true)} bytes do not match their checksum (CRC-32C): the trace was damaged after it was written, and this chunk's records may be wrong`,
    ]);
    // Not fatal: the other thread's events are all there.
    const ofThread0 = (x: Model): string[] => events(x).filter((row) => row.split(' ')[1] === '0').map((row) => row.split(' ').slice(0, 4).join(' '));
    expect(ofThread0(m)).toEqual(ofThread0(decodeTrace(sealed)));
  });

  test('a used count cut short of its seal, in a chunk its thread wrote on after: said; the last chunk of a thread may be open', () => {
    const bytes = sealed.slice();
    const view = new DataView(bytes.buffer);
    view.setUint32(64 + 12, view.getUint32(64 + 12, true) - 11, true);
    expect(warnings(decodeTrace(bytes), /carries no seal although the thread wrote on after it/)).toHaveLength(1);
    // A 1.4 trace has no seals to miss.
    expect(decodeTrace(plain).problems).toEqual([]);
    // A crash leaves each thread's last chunk open: nothing to say.
    const open = sealedTrace(true).build();
    expect(decodeTrace(open).problems).toEqual([]);
  });
});

describe('a trace the runtime stopped', () => {
  test('report says recording stopped, why and at which event; the JSON says it too', async () => {
    const b = new TraceBuilder({ minor: 5, stoppedErrno: 28 });
    const t = b.thread(0);
    t.threadBegin(1);
    t.program('/p', '/');
    t.unit(1, DEMO_SITES);
    t.enter(1, 128);
    t.alloc({ site: 4, size: 24, addr: 0x5000, usable: 24 });
    const file = path.join(scratch('stopped'), 'stopped.mwtrace');
    writeFileSync(file, b.build());
    const r = await capture(runReport, [file]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^Run {10}recording stopped: disk full, ENOSPC, at event 3; the program ran on unrecorded$/m);
    expect(r.err).toContain('no END record: recording stopped (disk full, ENOSPC) before the program ended');
    const j = JSON.parse((await capture(runReport, [file, '--json'])).out) as { end: { stopped: unknown } };
    expect(j.end.stopped).toEqual({ errno: 28, reason: 'disk full, ENOSPC', event: 3 });
  });
});
