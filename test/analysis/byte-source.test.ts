// A trace read from its file a window at a time reads exactly as the same bytes read whole: every record, every
// problem (with its offset), every event. Small windows make records straddle windows and chunks outgrow them.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dumpTraceText } from '../../analysis/dump.js';
import type { Model } from '../../analysis/model.js';
import { FileSource, withFileSource } from '../../analysis/trace/file-source.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { basicTrace, rareRecordsTrace, twoThreadsTrace } from '../fixtures/scenarios.js';
import { TraceBuilder } from '../fixtures/trace-builder.js';
import { rng } from '../support/random.js';

const dir = mkdtempSync(path.join(tmpdir(), 'mw-byte-source-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const fixtures = path.join(import.meta.dirname, '..', 'fixtures', 'traces');
const binaries = readdirSync(fixtures, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.bin'))
  .sort();

/** Windows from one byte (every record straddles) to larger than any chunk here. */
const WINDOWS = [1, 3, 16, 100, 4096];

let files = 0;
function onDisk(bytes: Uint8Array): string {
  const file = path.join(dir, `t${files++}.mwtrace`);
  writeFileSync(file, bytes);
  return file;
}

/** The dump, or the reason the trace is refused. */
function dumpOrRefusal(read: () => string): string {
  try {
    return read();
  } catch (e) {
    return `refused: ${(e as Error).message}`;
  }
}

function dumpFromFile(file: string, window: number): string {
  return dumpOrRefusal(() => withFileSource(file, (s) => dumpTraceText(s), window));
}

/** What a report reads of a model: problems, counts and every event's columns. */
function modelText(m: Model): string {
  const e = m.events;
  const rows = [`problems ${JSON.stringify(m.problems)}`, `events ${e.count} blocks ${m.blocks.count} frames ${m.frames.count}`];
  for (let i = 0; i < e.count; i++) {
    rows.push([e.kind[i], e.thread[i], e.site[i], e.value[i], e.stack[i], e.heapRequested[i], e.heapUsable[i], e.newBlock[i], e.oldBlock[i], e.time[i]].join(' '));
  }
  return rows.join('\n');
}

/** A trace with records far larger than the small windows: a UNIT of 300 sites and a LINKED of 500 blocks. */
function bigRecordsTrace(): Uint8Array {
  const b = new TraceBuilder({ complete: true });
  const t = b.thread(0);
  t.threadBegin(7);
  t.unit(
    1,
    Array.from({ length: 300 }, (_, i) => ({ kind: i === 0 ? 1 : 2, file: `src/file-${i % 7}.c`, func: `function_${i}`, name: i === 0 ? 'main' : 'malloc', line: 10 + i })),
  );
  t.enter(1, 64);
  const blocks = Array.from({ length: 501 }, (_, i) => t.alloc({ site: 2, size: 16 + i, addr: 0x10000 + 64 * i }));
  t.free({ site: 3, block: blocks[0]! });
  t.linked(blocks.slice(1));
  t.exit(1);
  t.end(0, 0);
  return b.build();
}

describe('a trace read from its file a window at a time', () => {
  it.each(binaries)('%s dumps the same at every window size', (name) => {
    const bytes = new Uint8Array(readFileSync(path.join(fixtures, name)));
    const whole = dumpOrRefusal(() => dumpTraceText(bytes));
    const file = onDisk(bytes);
    for (const w of WINDOWS) expect(dumpFromFile(file, w), `window ${w}`).toBe(whole);
  });

  it('reads records larger than the window, and chunks of several threads, exactly', () => {
    for (const bytes of [bigRecordsTrace(), basicTrace().build(), twoThreadsTrace().build(), rareRecordsTrace().build()]) {
      const whole = dumpTraceText(bytes);
      const model = modelText(decodeTrace(bytes));
      const file = onDisk(bytes);
      for (const w of WINDOWS) {
        expect(dumpFromFile(file, w), `window ${w}`).toBe(whole);
        expect(withFileSource(file, (s) => modelText(decodeTrace(s)), w), `window ${w}`).toBe(model);
      }
    }
    expect(dumpTraceText(bigRecordsTrace())).toContain('LINKED count=500');
  });

  it('a cut or damaged trace gives the same records and problems, at the same offsets', () => {
    const random = rng(20261125);
    const originals = [bigRecordsTrace(), rareRecordsTrace().build(), twoThreadsTrace().build()];
    for (let k = 0; k < 120; k++) {
      const original = originals[k % originals.length]!;
      const damaged = original.slice(0, 64 + Math.floor(random() * (original.length - 64)));
      if (k % 2 === 1) for (let j = 0; j < 3; j++) damaged[64 + Math.floor(random() * (damaged.length - 64))] = Math.floor(random() * 256);
      const file = onDisk(damaged);
      const whole = dumpTraceText(damaged);
      const window = WINDOWS[k % WINDOWS.length]!;
      expect(dumpFromFile(file, window), `case ${k}, window ${window}`).toBe(whole);
      expect(withFileSource(file, (s) => modelText(decodeTrace(s)), window), `case ${k}`).toBe(modelText(decodeTrace(damaged)));
    }
  });

  it('holds one window, not the file', () => {
    const bytes = bigRecordsTrace();
    const file = onDisk(bytes);
    const source = FileSource.open(file, 100);
    try {
      expect(source.size).toBe(bytes.length);
      expect(source.read(10, 50)).toEqual(bytes.subarray(10, 60));
      expect(source.read(bytes.length - 5, 50)).toEqual(bytes.subarray(bytes.length - 5));
    } finally {
      source.close();
    }
  });

  it('refuses a directory or a missing file with the error readFile gives', () => {
    expect(() => FileSource.open(dir)).toThrow(/EISDIR/);
    expect(() => FileSource.open(path.join(dir, 'missing'))).toThrow(/ENOENT/);
  });
});
