// A big crafted trace (2 million records over 4 threads) decodes whole, its counts right; prints the time it took (its
// speed is measured by `npm run bench -- --only readers`, as a ratio to one pass of the reader: no test asserts a time).
import { expect, test } from 'vitest';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { summarize } from '../../analysis/summary.js';
import { S, TraceBuilder } from '../fixtures/trace-builder.js';
import { DEMO_SITES } from '../fixtures/scenarios.js';

/** Roughly `records` records: threads take turns in bursts, each burst a call that allocates, frees and returns. */
export function bigTrace(records: number, threads = 4): TraceBuilder {
  const b = new TraceBuilder({ complete: true });
  const ws = Array.from({ length: threads }, (_, i) => b.thread(i));
  ws[0]!.unit(1, DEMO_SITES);
  for (const [i, w] of ws.entries()) {
    w.threadBegin(1000 + i);
    w.time(1000);
    w.enter(1, 128);
  }
  const live: number[][] = ws.map(() => []);
  let n = 0;
  let addr = 0x10000;
  for (let burst = 0; n < records; burst++) {
    const t = burst % threads;
    const w = ws[t]!;
    if (burst % 64 === 0) w.chunk({ capacity: 4096 });
    for (let j = 0; j < 10; j++) {
      w.enter(3, 192 + (j % 3) * 16);
      const id = w.alloc({ site: 4, size: 16 + (j % 7) * 8, addr: (addr += 64) });
      live[t]!.push(id);
      if (live[t]!.length > 8) w.free({ site: 6, block: live[t]!.shift()! });
      else w.alloc({ fn: S.MALLOC, size: 32, addr: (addr += 64) });
      w.exit(5);
      n += 4;
    }
    w.time(250);
    n++;
  }
  for (const w of ws) {
    w.exit(2);
    w.threadEnd();
  }
  ws[0]!.end(0, 0);
  return b;
}

test('2 million records decode, every count right', () => {
  const t0 = performance.now();
  const bytes = bigTrace(2_000_000).build();
  const t1 = performance.now();
  const m = decodeTrace(bytes);
  const t2 = performance.now();
  const s = summarize(m);
  const t3 = performance.now();
  console.log(
    `big trace: ${(bytes.length / 1e6).toFixed(1)} MB, ${m.events.count.toLocaleString('en-US')} events, ` +
      `${m.blocks.count.toLocaleString('en-US')} blocks; built in ${(t1 - t0).toFixed(0)} ms, ` +
      `decoded in ${(t2 - t1).toFixed(0)} ms, summarized in ${(t3 - t2).toFixed(0)} ms`,
  );
  expect(m.problems).toEqual([]);
  expect(m.events.count).toBeGreaterThan(1_900_000);
  expect(s.valgrind.allocs).toBe(m.blocks.count);
}, 60_000);
