// Trace fuzzing on real traces: traces written by real programs, cut at
// random places and with random bytes changed, go through the reader and
// through every command that reads a trace (report with all its tables,
// JSON, export, dump). None may throw, hang or fail with an internal error:
// a damaged trace gets a clear message, and what the reader could not take
// is named with its byte offset.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runDump } from '../../cli/dump.js';
import { runExport } from '../../cli/export.js';
import { runReport } from '../../cli/report.js';
import type { Model } from '../../analysis/model.js';
import { decodeTrace, TraceRefusedError } from '../../analysis/trace/decode.js';
import { capture } from '../fixtures/cli-capture.js';
import { buildInstrumented, programsDir, runTraced, samplesDir, scratch, traceOf } from '../support/programs.js';
import { rng } from '../support/random.js';

const programs = [
  { source: path.join(samplesDir, 'linked-list.c'), args: [] },
  { source: path.join(samplesDir, 'recursion.c'), args: [] },
  { source: path.join(programsDir, 'leaks.c'), args: [] },
  { source: path.join(programsDir, 'stress.c'), args: ['signal'] },
];

const dir = scratch('fuzz');
/** More damaged traces on demand: MEMWRAP_FUZZ_SCALE=10 npx vitest run test/e2e/fuzz-traces.test.ts */
const scale = Math.max(1, Number(process.env.MEMWRAP_FUZZ_SCALE ?? 1) || 1);
const originals: Uint8Array[] = [];

beforeAll(() => {
  for (const [i, p] of programs.entries()) {
    const exe = path.join(dir, `prog-${i}`);
    buildInstrumented('gcc', ['-O0', '-pthread'], [p.source], exe);
    const traces = path.join(dir, `traces-${i}`);
    const ran = runTraced(exe, p.args, traces);
    // A plain Uint8Array: Buffer's slice() would share the bytes it damages.
    originals.push(new Uint8Array(readFileSync(traceOf(traces, ran.pid))));
  }
});

/** The offset of the first byte where `damaged` differs from `original` (its length if it is only shorter). */
function firstDifference(original: Uint8Array, damaged: Uint8Array): number {
  for (let i = 0; i < damaged.length; i++) if (damaged[i] !== original[i]) return i;
  return damaged.length;
}

/**
 * The first `n` events of the given trace threads (all when null) as rows of the columns a report reads. Damage can
 * make a chunk name a thread that never ran; its records sort among the real thread's by their sequence numbers.
 */
function eventsOf(m: Model, n: number, threads: ReadonlySet<number> | null = null): string[] {
  const e = m.events;
  const rows: string[] = [];
  for (let i = 0; i < e.count && rows.length < n; i++) {
    const thread = m.threads[e.thread[i]!]!.index;
    if (threads !== null && !threads.has(thread)) continue;
    rows.push([e.kind[i], thread, e.site[i], e.value[i], e.stack[i], e.heapRequested[i], e.heapUsable[i], e.newBlock[i], e.oldBlock[i]].join(' '));
  }
  return rows;
}

/** A damaged copy: cut short, bytes changed, or both. */
function damage(original: Uint8Array, random: () => number): Uint8Array {
  const cut = random() < 0.4 ? Math.floor(random() * original.length) : original.length;
  const bytes = original.slice(0, cut);
  if (random() < 0.8) {
    const flips = 1 + Math.floor(random() * 12);
    for (let j = 0; j < flips && bytes.length > 0; j++) {
      // Most damage after the 64-byte header, where the reader must go on.
      const at = random() < 0.9 ? 64 + Math.floor(random() * Math.max(1, bytes.length - 64)) : Math.floor(random() * 64);
      if (at < bytes.length) bytes[at] = random() < 0.3 ? 0xff : Math.floor(random() * 256);
    }
  }
  return bytes;
}

const COMMANDS: Array<{ name: string; run: (file: string) => Promise<{ code: number; out: string; err: string }> }> = [
  { name: 'report', run: (f) => capture(runReport, [f, '--peak', '--linked', '--leaks', '--temporary', '--by', 'function', '--budget', 'heap=1K,stack=1K']) },
  { name: 'report --json', run: (f) => capture(runReport, [f, '--json', '--peak', '--linked', '--leaks', '--by', 'site', '--calls', 'main', '--interval', '5']) },
  { name: 'export massif', run: (f) => capture(runExport, [f, '--format', 'massif']) },
  { name: 'export csv', run: (f) => capture(runExport, [f, '--format', 'csv']) },
  { name: 'dump', run: (f) => capture(runDump, [f]) },
];

describe('damaged real traces', () => {
  it('the reader keeps what came before the damage and names its offset', () => {
    const random = rng(7);
    let refused = 0;
    let withErrors = 0;
    let comparedPrefixes = 0;
    for (let i = 0; i < 400 * scale; i++) {
      const original = originals[i % originals.length]!;
      const bytes = damage(original, random);
      let model;
      try {
        model = decodeTrace(bytes);
      } catch (e) {
        // Only the header can make the reader refuse a file outright.
        expect(e).toBeInstanceOf(TraceRefusedError);
        refused++;
        continue;
      }
      for (const p of model.problems.filter((q) => q.severity === 'error')) {
        if (p.offset === null) {
          expect(p.message).toMatch(/^\d+ more problems like the above \([a-z-]+\) not shown$/);
        } else {
          expect(p.message).toMatch(/^at offset 0x[0-9a-f]+ \(\d+\)( \(thread \d+\))?: \S/);
          expect(p.message.startsWith(`at offset 0x${p.offset.toString(16)} (${p.offset})`)).toBe(true);
        }
      }
      if (model.problems.some((q) => q.severity === 'error')) withErrors++;
      // Everything recorded before the first damaged byte reads exactly as from the undamaged file cut there
      // (these programs are single-threaded, so their events are the thread's records in file order; a thread that
      // damage made up is left out).
      const first = firstDifference(original, bytes);
      if (first >= 64) {
        const prefix = decodeTrace(original.slice(0, first));
        expect(model.events.count).toBeGreaterThanOrEqual(prefix.events.count);
        const real = new Set(prefix.threads.map((t) => t.index));
        expect(eventsOf(model, prefix.events.count, real)).toEqual(eventsOf(prefix, prefix.events.count));
        comparedPrefixes++;
      }
    }
    // The damage must really reach both outcomes, or the test tests nothing.
    expect(refused).toBeGreaterThan(0);
    expect(withErrors).toBeGreaterThan(0);
    expect(comparedPrefixes).toBeGreaterThan(100);
  });

  it('every command answers a damaged trace with output or a clear message, never an internal error', async () => {
    const random = rng(99);
    const outcomes = new Map<string, number>();
    for (let i = 0; i < 150 * scale; i++) {
      const file = path.join(dir, `damaged-${i}.mwtrace`);
      writeFileSync(file, damage(originals[i % originals.length]!, random));
      for (const command of COMMANDS) {
        const result = await command.run(file);
        const where = `${command.name} on ${file}`;
        // 0: read (what could be read); 2: refused, in one line naming the
        // file. An analysis that threw would reject this await instead.
        expect([0, 2], `${where}: ${result.err}`).toContain(result.code);
        if (result.code === 2) expect(result.err, where).toMatch(new RegExp(`^cc-memwrap (report|export|dump): ${file}: [^\\n]+\\n$`));
        outcomes.set(`${command.name} ${result.code}`, (outcomes.get(`${command.name} ${result.code}`) ?? 0) + 1);
      }
    }
    // Each command saw files it could read and files it had to refuse.
    for (const command of COMMANDS) {
      expect(outcomes.get(`${command.name} 0`), command.name).toBeGreaterThan(0);
      expect(outcomes.get(`${command.name} 2`), command.name).toBeGreaterThan(0);
    }
  });
});
