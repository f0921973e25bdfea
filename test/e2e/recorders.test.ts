// While one thread of the program records, the runtime's heap index and sequence number take no atomic
// instructions (runtime/mw-threads.c, "one recording thread or several"). A thread that starts recording beside it
// — made by pthread_create, by C11's thrd_create (which no interposed pthread_create sees), or by glibc for a
// SIGEV_THREAD timer — must end that before its first record, while the main thread keeps allocating
// (test/programs/second-recorder.c). Had one of them raced the main thread, sequence numbers would repeat and blocks
// be lost from the index: the reader then warns, frees go untracked, and linked frees miss their payloads.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildInstrumented, must, programsDir, runTraced, scratch, traceOf, wrapper } from '../support/programs.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const MAIN_PAIRS = 3_000_000;
const THREAD_PAIRS = 300_000;
let exe = '';

beforeAll(() => {
  const dir = scratch('recorders');
  exe = path.join(dir, 'second-recorder');
  buildInstrumented('gcc', ['-O2', '-pthread'], [path.join(programsDir, 'second-recorder.c')], exe);
});

function linkedReport(trace: string): Json {
  return JSON.parse(must(process.execPath, [wrapper, 'report', '--json', '--linked', trace]).stdout) as Json;
}

describe('a second thread starts recording while the first allocates', () => {
  for (const [name, env] of [
    ['with the pre-fault thread', { MEMWRAP_PREFAULT: '1' }],
    ['without it', { MEMWRAP_PREFAULT: '0' }],
  ] as const) {
    it(`every pair recorded once, every free found in the index, every node's payload linked (${name})`, () => {
      for (let round = 0; round < 2; round++) {
        const dir = scratch('recorders-run');
        const ran = runTraced(exe, [], dir, { env });
        expect(ran.signal).toBeNull();
        expect(ran.status).toBe(0);
        expect(ran.stdout).toBe(`main ${MAIN_PAIRS} pairs, threads 3 x ${THREAD_PAIRS} pairs\n`);
        const trace = traceOf(dir, ran.pid);
        const r = linkedReport(trace);
        expect(r.problems).toMatchObject({ errors: 0, warnings: 0 });
        expect(r.lostRecords).toBe(0);
        expect(r.untrackedFrees).toBe(0);
        // 2 blocks a pair; glibc's own few (the timer's thread) come on top
        expect(r.allocations).toBeGreaterThanOrEqual(2 * (MAIN_PAIRS + 3 * THREAD_PAIRS));
        expect(r.allocations).toBeLessThan(2 * (MAIN_PAIRS + 3 * THREAD_PAIRS) + 100);
        const busy = (r.threads as Json[]).map((t) => t.events as number).filter((n) => n >= 4 * THREAD_PAIRS);
        expect(busy).toHaveLength(4);
        // each node's free found its payload, still live, through the index
        expect(r.linked.frees).toBe(MAIN_PAIRS + 3 * THREAD_PAIRS);
        expect(r.linked.orphanedBlocks).toBe(0);
      }
    });
  }
});
