// The streaming reader tells folds the same in one pass as in two, and the model decoded by a fold over it replays the
// same to folds: every event's fields, the blocks and frames it touches, the linked sets, the leak classes and the
// run's end, each event's time by either way of asking, for hand-built traces (damaged ones too), the committed fixture
// traces, and real programs (16 threads at once, signal handlers, longjmp, linked frees, leaks) read through small
// file windows.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { memorySource, type ByteSource } from '../../analysis/trace/byte-source.js';
import { withFileSource } from '../../analysis/trace/file-source.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { streamSource } from '../../analysis/trace/resolve-stream.js';
import { modelSource } from '../../analysis/model-fold.js';
import { NONE } from '../../analysis/model.js';
import type { EventFold, FoldEvent, FoldSource, FoldTables, TimeTicket, TraceEnd, TraceStart } from '../../analysis/event-fold.js';
import { packageRoot } from '../../package-root.js';
import { basicTrace, killedTrace, rareRecordsTrace, signalBigEndianTrace, twoThreadsTrace } from '../fixtures/scenarios.js';
import { buildInstrumented, programsDir, runTraced, scratch, traceOf } from '../support/programs.js';

/** Every event as a line of everything a fold can read about it; hashed per 4096 events to keep big runs small. */
class Transcript implements EventFold {
  readonly needsTime = true;
  readonly pieces: string[] = [];
  private lines: string[] = [];
  end = '';

  event(e: FoldEvent, t: FoldTables): void {
    const B = t.blocks;
    const F = t.frames;
    const block = (h: number): string =>
      h === NONE ? '-' : [B.row[h], B.id[h], B.allocEvent[h], B.requested[h], B.usable[h], B.address[h], B.site[h], B.fn[h], B.thread[h], B.interposed[h], B.library[h], B.entry[h]].join(',');
    const frame = (h: number): string =>
      h === NONE ? '-' : [F.row[h], F.thread[h], F.enter[h], F.entrySite[h], F.depth[h], F.parent[h] === NONE ? '-' : F.row[F.parent[h]!]].join(',');
    this.lines.push(
      [e.index, e.kind, e.flags, e.thread, e.site, e.time, e.value, block(e.newBlock), block(e.oldBlock), frame(e.frame), e.stack, e.stackTotal, e.heapRequested,
        e.heapUsable, e.library, e.untrackedAddress, e.staticAddress, e.linked === null ? '-' : e.linked.map((h) => B.row[h]).join('+'), e.linkedPartial, JSON.stringify(e.callPath)].join(' '),
    );
    if (this.lines.length === 4096) this.seal();
  }

  private seal(): void {
    const text = this.lines.join('\n');
    this.pieces.push(this.pieces.length < 4 ? text : createHash('sha1').update(text).digest('hex'));
    this.lines = [];
  }

  finish(end: TraceEnd, t: FoldTables): void {
    this.seal();
    const live = end.liveBlocks.map((h) => `${t.blocks.row[h]}:${t.blocks.leakClass[h]}`);
    this.end = JSON.stringify({ ...end, liveBlocks: live });
  }
}

/** Every event's time asked for as a ticket (no `needsTime`), read at the end: hashed as Transcript does. */
class TicketTimes implements EventFold {
  private readonly tickets: TimeTicket[] = [];
  times = '';

  event(e: FoldEvent, t: FoldTables): void {
    this.tickets.push(t.timeOf(e));
  }

  finish(): void {
    this.times = createHash('sha1').update(this.tickets.map((t) => t.time).join(' ')).digest('hex');
  }
}

function ticketTimes(source: FoldSource): string {
  let fold = new TicketTimes();
  source.run(() => [(fold = new TicketTimes())]);
  return fold.times;
}

/** The start facts as the folds saw them by the end (a one-pass reading completes them as it goes), and every event. */
function transcript(source: FoldSource): { start: string; pieces: string[]; end: string } {
  let fold = new Transcript();
  let start: TraceStart | null = null;
  source.run((s) => {
    start = s;
    return [(fold = new Transcript())];
  });
  const { events: _e, blocks: _b, frames: _f, ...facts } = start!;
  const text = JSON.stringify(facts, (_, v: unknown) => (ArrayBuffer.isView(v) ? Array.from(v as Uint8Array) : typeof v === 'bigint' ? v.toString() : v));
  return { start: text, pieces: fold.pieces, end: fold.end };
}

/**
 * Both streaming readings (one pass where it can be exact, and two passes) against the decoded model; returns how
 * many passes the reading that may take one took.
 */
function expectSame(bytes: Uint8Array, streamed: ByteSource): number {
  const model = transcript(modelSource(decodeTrace(bytes)));
  let passes = 0;
  for (const twoPasses of [false, true]) {
    const stream = transcript(streamSource(streamed, { twoPasses, onReading: (n) => void (twoPasses || (passes = n)) }));
    expect(stream.start).toBe(model.start);
    const n = Math.max(model.pieces.length, stream.pieces.length);
    for (let i = 0; i < n; i++) expect(stream.pieces[i], `events ${i * 4096}…`).toBe(model.pieces[i]);
    expect(stream.end).toBe(model.end);
    expect(ticketTimes(streamSource(streamed, { twoPasses }))).toBe(ticketTimes(modelSource(decodeTrace(bytes))));
  }
  return passes;
}

describe('the streaming reader resolves events as the decoder does', () => {
  it.each([
    ['basic', basicTrace().build()],
    ['two threads', twoThreadsTrace().build()],
    ['killed', killedTrace().build()],
    ['signal, big-endian', signalBigEndianTrace().build()],
    ['rare records', rareRecordsTrace().build()],
  ])('hand-built trace: %s', (_, bytes) => {
    expectSame(bytes, memorySource(bytes));
  });

  it('hands every event to every fold, in the order the folds were given, however many there are', () => {
    const bytes = twoThreadsTrace().build();
    const events = streamSource(memorySource(bytes)).run(() => []).events;
    expect(events).toBeGreaterThan(5);
    const sources: [string, () => FoldSource][] = [
      ['streamed', () => streamSource(memorySource(bytes))],
      ['decoded', () => modelSource(decodeTrace(bytes))],
    ];
    for (const [how, source] of sources) {
      for (let n = 0; n <= 11; n++) {
        const seen: string[] = [];
        const folds: EventFold[] = Array.from({ length: n }, (_, f) => ({ event: (e: FoldEvent) => void seen.push(`${e.index}:${f}`) }));
        source().run(() => folds);
        const expected = Array.from({ length: events }, (_, i) => Array.from({ length: n }, (_, f) => `${i}:${f}`)).flat();
        expect(seen, `${how}, ${n} folds`).toEqual(expected);
      }
    }
  });

  it('reads a well-formed trace once, a damaged one twice', () => {
    const clean = basicTrace().build();
    expect(expectSame(clean, memorySource(clean))).toBe(1);
    const damaged = new Uint8Array(readFileSync(path.join(packageRoot, 'test', 'fixtures', 'traces', 'invalid', 'truncated-mid-record.bin')));
    expect(expectSame(damaged, memorySource(damaged))).toBe(2);
  });

  const fixtures = path.join(packageRoot, 'test', 'fixtures', 'traces');
  const files = ['1.0', '1.2', '1.3', 'invalid'].flatMap((d) =>
    readdirSync(path.join(fixtures, d))
      .filter((f) => f.endsWith('.bin'))
      .map((f) => path.join(d, f)),
  );
  it.each(files)('fixture %s', (file) => {
    const bytes = new Uint8Array(readFileSync(path.join(fixtures, file)));
    let refused: unknown = null;
    try {
      decodeTrace(bytes);
    } catch (e) {
      refused = e;
    }
    if (refused !== null) {
      expect(() => streamSource(memorySource(bytes))).toThrow((refused as Error).message);
      return;
    }
    expectSame(bytes, memorySource(bytes));
  });

  describe('real programs, read from the file in small windows', () => {
    const traces = new Map<string, string>();
    beforeAll(() => {
      const dir = scratch('resolve-stream');
      const stress = path.join(dir, 'stress');
      buildInstrumented('gcc', ['-O1', '-pthread'], [path.join(programsDir, 'stress.c')], stress);
      for (const mode of ['threads', 'signal', 'longjmp']) {
        const out = path.join(dir, `stress-${mode}`);
        traces.set(`stress ${mode}`, traceOf(out, runTraced(stress, [mode], out).pid));
      }
      for (const name of ['leaks', 'bst']) {
        const exe = path.join(dir, name);
        buildInstrumented('gcc', ['-O0'], [path.join(programsDir, `${name}.c`)], exe);
        const out = path.join(dir, `${name}-traces`);
        traces.set(name, traceOf(out, runTraced(exe, [], out).pid));
      }
    }, 240_000);

    it.each(['stress threads', 'stress signal', 'stress longjmp', 'leaks', 'bst'])('%s', (name) => {
      const trace = traces.get(name)!;
      const bytes = new Uint8Array(readFileSync(trace));
      // Programs the runtime recorded are read in one pass.
      expect(withFileSource(trace, (s) => expectSame(bytes, s), 4096)).toBe(1);
    }, 240_000);
  });
});
