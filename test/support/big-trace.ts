// A synthetic trace of many events (calls, allocations, frees, linked sets, a few leaks) for the index tests: large
// enough that building its index takes a while, made in memory by the trace builder.
import { DEMO_SITES } from '../fixtures/scenarios.js';
import { TraceBuilder } from '../fixtures/trace-builder.js';

/** About 6 events per round: `rounds` of enter, alloc, alloc, free with a linked set, exit; every 100th block leaks. */
export function bigTrace(rounds: number): Uint8Array {
  const b = new TraceBuilder({ complete: true, pid: 4321, ppid: 1 });
  const t = b.thread(0);
  t.threadBegin(4321);
  t.program('/home/student/demo', '/home/student');
  t.unit(1, DEMO_SITES);
  t.static(8, 0x601040, 400);
  t.enter(1, 128);
  let addr = 0x100000;
  for (let i = 0; i < rounds; i++) {
    if (i % 50 === 0) t.time(1000 + (i % 7));
    t.enter(3, 192 + (i % 5) * 16);
    const a = t.alloc({ site: 4, size: 24 + (i % 9), addr: (addr += 64), usable: 32 });
    const c = t.alloc({ site: 9, size: 100, addr: (addr += 128), usable: 104 });
    if (i % 100 !== 0) {
      t.free({ site: 6, block: a });
      t.linked([c]);
    }
    t.free({ site: 6, block: c });
    t.exit(5);
  }
  t.exit(2);
  t.end(0, 0);
  return b.build();
}
