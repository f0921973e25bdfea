// The streamed global order is the decoder's: the events come in the rows of Model.events, for traces built by hand
// and for a real program whose eight threads allocate at once, read whole or a few bytes at a time.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { memorySource, type ByteSource } from '../../analysis/trace/byte-source.js';
import { withFileSource } from '../../analysis/trace/file-source.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { mergeStreams, streamRecords, threadStreams, ThreadStream } from '../../analysis/trace/event-stream.js';
import { ChunkRecords, parseContext } from '../../analysis/trace/records.js';
import { Kind } from '../../analysis/trace/format.js';
import { readHeader } from '../../analysis/trace/header.js';
import { ProblemLog } from '../../analysis/problems.js';
import { basicTrace, killedTrace, rareRecordsTrace, twoThreadsTrace } from '../fixtures/scenarios.js';
import { buildInstrumented, programsDir, runTraced, scratch, traceOf } from '../support/programs.js';

const EVENT_KINDS = new Set<number>([Kind.THREAD_BEGIN, Kind.STATIC, Kind.ENTER, Kind.EXIT, Kind.UNWIND, Kind.ALLOC, Kind.FREE, Kind.REALLOC, Kind.END, Kind.THREAD_END, Kind.LOST]);

/** The events as "kind thread" lines, in the order streamed. */
function streamedEvents(source: ByteSource, window?: number): string[] {
  const rows: string[] = [];
  const header = readHeader(source);
  streamRecords(source, header, new ProblemLog(), (r) => {
    if (!r.ignored && EVENT_KINDS.has(r.kind)) rows.push(`${r.kind} ${r.thread} ${r.kind === Kind.ENTER ? r.depth : r.seq}`);
  }, { window });
  return rows;
}

/** The decoder's event rows in the same words (a row's value: depth for ENTER, else the thread's seq is not kept, so compare kinds and threads). */
function decodedEvents(bytes: Uint8Array): string[] {
  const m = decodeTrace(bytes);
  const rows: string[] = [];
  for (let i = 0; i < m.events.count; i++) rows.push(`${m.events.kind[i]} ${m.events.thread[i]}`);
  return rows;
}

const kindAndThread = (rows: string[]): string[] => rows.map((r) => r.split(' ').slice(0, 2).join(' '));

/** The first row where two long lists differ, with its neighbours ('' when they are equal): a short failure message. */
function firstDifference(a: string[], b: string[]): string {
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (a[i] !== b[i]) return `row ${i} of ${a.length} / ${b.length}: ${JSON.stringify(a.slice(Math.max(0, i - 2), i + 3))} vs ${JSON.stringify(b.slice(Math.max(0, i - 2), i + 3))}`;
  }
  return '';
}

/** Every record of a trace as a line of its fields, merged from `extra` empty streams besides the trace's own. */
function mergedRecords(bytes: Uint8Array, extra: number, window?: number): string[] {
  const source = memorySource(bytes);
  const header = readHeader(source);
  const problems = new ProblemLog();
  const streams = threadStreams(source, header, problems, window);
  const ctx = parseContext(header, problems);
  for (let k = 0; k < extra; k++) streams.push(new ThreadStream(1000 + k, [], new ChunkRecords(source, ctx)));
  const rows: string[] = [];
  mergeStreams(streams, source.size, (r) => {
    rows.push(JSON.stringify({ ...r, unit: null }));
  });
  for (const p of problems.list()) rows.push(JSON.stringify(p));
  return rows;
}

describe('records streamed in the global order', () => {
  it.each([
    ['basic', basicTrace().build()],
    ['killed', killedTrace().build()],
    ['rare records', rareRecordsTrace().build()],
  ])('%s: one thread read straight through gives the records the merge of several streams gives', (_, bytes) => {
    const straight = mergedRecords(bytes, 0);
    expect(straight.length).toBeGreaterThan(4);
    expect(firstDifference(straight, mergedRecords(bytes, 1))).toBe('');
    expect(firstDifference(mergedRecords(bytes, 0, 64), straight)).toBe('');
  });

  it.each([
    ['basic', basicTrace().build()],
    ['two threads', twoThreadsTrace().build()],
    ['killed', killedTrace().build()],
    ['rare records', rareRecordsTrace().build()],
  ])('%s: the decoder’s event order', (_, bytes) => {
    const streamed = streamedEvents(memorySource(bytes));
    expect(kindAndThread(streamed)).toEqual(decodedEvents(bytes));
  });

  describe('a real program with eight threads', () => {
    let trace = '';
    beforeAll(() => {
      const dir = scratch('event-stream');
      const exe = path.join(dir, 'threads');
      buildInstrumented('gcc', ['-O1', '-pthread'], [path.join(programsDir, 'threads.c')], exe);
      const traces = path.join(dir, 'traces');
      trace = traceOf(traces, runTraced(exe, [], traces).pid);
    }, 120_000);

    it('streams its 1.6 million heap events in the decoder’s order, from memory and from the file in small windows', () => {
      const bytes = new Uint8Array(readFileSync(trace));
      const decoded = decodedEvents(bytes);
      const threads = new Set(decoded.map((r) => r.split(' ')[1]));
      expect(threads.size).toBe(9);
      const fromMemory = streamedEvents(memorySource(bytes));
      expect(firstDifference(kindAndThread(fromMemory), decoded)).toBe('');
      const fromFile = withFileSource(trace, (s) => streamedEvents(s, 4096));
      expect(firstDifference(fromFile, fromMemory)).toBe('');
    }, 120_000);
  });
});
