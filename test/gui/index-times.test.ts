// Index mode's wall-time axis (gui/renderer/src/index-times.ts) on test/programs/timed-loop.c indexed in small
// buckets: never stepping back, exact at every bucket's first and last event, exact in the window of events
// fetched, and between them placed within its bucket's times; the chart's search by time agrees with the column.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { lowerBound, monotonicTimes } from '../../analysis/lod.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import type { IndexRange } from '../../analysis/event-index.js';
import { indexTimes } from '../../gui/renderer/src/index-times.js';
import { memoryIndex } from '../support/memory-index.js';
import { programsDir } from '../support/programs.js';
import { traceProgram } from './browser.js';

describe('index mode wall-time axis', () => {
  let bytes: Uint8Array;
  beforeAll(() => {
    bytes = new Uint8Array(readFileSync(traceProgram(path.join(programsDir, 'timed-loop.c')).trace));
  }, 120_000);

  it.each([64, 300])('buckets of %i events', (B) => {
    const model = decodeTrace(bytes);
    // Nanoseconds: the summaries keep the times as read, a window's events have them rounded.
    const whole = Array.from(monotonicTimes(model));
    const near = (t: number | undefined, e: number, what: string): void => expect(Math.abs(t! - whole[e]!), `${what}: event ${e}`).toBeLessThanOrEqual(0.5);
    const index = memoryIndex(bytes, B);
    const n = index.meta.events;
    expect(n).toBe(model.events.count);
    expect(whole[n - 1]! > whole[0]!).toBe(true);
    let win: IndexRange | null = null;
    const { times, eventAt } = indexTimes(index.meta, index.summary, () => win);
    expect(times.length).toBe(n);
    const check = (): void => {
      for (let e = 1; e < n; e++) expect(times[e]!, `event ${e}`).toBeGreaterThanOrEqual(times[e - 1]!);
      for (let k = 0; k * B < n; k++) {
        const last = Math.min(n, (k + 1) * B) - 1;
        near(times[k * B], k * B, 'first of a bucket');
        near(times[last], last, 'last of a bucket');
        for (let e = k * B; e <= last; e++) {
          expect(times[e]!).toBeGreaterThanOrEqual(whole[k * B]! - 0.5);
          expect(times[e]!).toBeLessThanOrEqual(whole[last]! + 0.5);
        }
      }
    };
    check();
    // A window starting and ending inside buckets: its events exact, the axis still non-decreasing around it.
    const [a, b] = [Math.floor(n / 3) + 5, Math.floor(n / 2) + 7];
    win = index.range(a, b);
    check();
    for (let e = a; e < b; e++) near(times[e], e, 'in the window');
    // The chart's search for the event at a time finds what a search through the column finds.
    for (let i = 0; i <= 50; i++) {
      const ns = times[0]! + ((times[n - 1]! - times[0]!) * i) / 50;
      expect(eventAt(ns), `${ns} ns`).toBe(lowerBound(times, ns));
    }
    expect(times[n]).toBeUndefined();
  });
});
