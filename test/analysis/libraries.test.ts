// EXT/LIBRARY and EXT/CALLER (format 1.1): decoding into Model.libraries / blocks.library / events.library, the dump
// lines, skipping by older readers' path (unknown subkinds), `report --by library`, and one real program.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { attribute } from '../../analysis/attribution.js';
import { dumpTraceText } from '../../analysis/dump.js';
import { NONE } from '../../analysis/model.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { Kind, SiteKind } from '../../analysis/trace/format.js';
import { studentMain } from '../fixtures/scenarios.js';
import { TraceBuilder } from '../fixtures/trace-builder.js';
import { buildInstrumented, must, programsDir, runTraced, scratch, traceOf, wrapper } from '../support/programs.js';

const LIBC = '/lib/x86_64-linux-gnu/libc.so.6';
const LIBZ = '/usr/lib/libz.so.1';

/**
 * main (instrumented) allocates 10 at site 4; libc allocates 100 and 200 (interposed, CALLER 1), libz allocates 50
 * (CALLER 2, with a TIME between record and CALLER) and frees libc's 100 block (CALLER 2, after its LINKED);
 * one interposed allocation of 7 has no CALLER.
 */
function libTrace(opts: { subkinds?: [number, number] } = {}): TraceBuilder {
  const [lib, caller] = opts.subkinds ?? [2, 3];
  const { b, t } = studentMain({ minor: 1, complete: true });
  t.alloc({ site: 4, size: 10, addr: 0x1000 });
  const a = t.alloc({ fn: SiteKind.MALLOC, size: 100, addr: 0x2000 });
  t.ext(lib, libBytes(1, LIBC));
  t.ext(caller, [1]);
  t.alloc({ fn: SiteKind.CALLOC, size: 200, addr: 0x3000 });
  t.ext(caller, [1]);
  const c = t.alloc({ fn: SiteKind.MALLOC, size: 50, addr: 0x4000 });
  t.time(1000);
  t.ext(lib, libBytes(2, LIBZ));
  t.ext(caller, [2]);
  t.free({ fn: SiteKind.FREE, block: a });
  t.linked([c]);
  t.ext(caller, [2]);
  t.alloc({ fn: SiteKind.MALLOC, size: 7, addr: 0x5000 });
  t.unwind(1);
  t.end(0, 0);
  return b;
}

function libBytes(index: number, p: string): number[] {
  const s = new TextEncoder().encode(p);
  return [index, s.length, ...s];
}

describe('EXT/LIBRARY and EXT/CALLER decoding', () => {
  test('libraries and the caller of each interposed block and event', () => {
    const m = decodeTrace(libTrace().build());
    expect(m.problems).toEqual([]);
    expect(m.libraries).toEqual(['(library 0)', LIBC, LIBZ]);
    expect(Array.from(m.blocks.library)).toEqual([NONE, 1, 1, 2, NONE]);
    const heap = [...Array(m.events.count).keys()].filter((e) => [Kind.ALLOC, Kind.FREE, Kind.REALLOC].includes(m.events.kind[e] as 7));
    expect(heap.map((e) => m.events.library[e])).toEqual([NONE, 1, 1, 2, 2, NONE]);
    // the LINKED after the FREE still pairs with it
    expect(m.linked.count).toBe(1);
  });

  test('the builder helpers write the same bytes', () => {
    const b = new TraceBuilder({ minor: 1, complete: true });
    const t = b.thread(0);
    t.threadBegin(1);
    t.alloc({ fn: SiteKind.MALLOC, size: 1, addr: 0x10 });
    t.library(0, '/bin/x');
    t.caller(0);
    t.end(0, 0);
    const m = decodeTrace(b.build());
    expect(m.libraries).toEqual(['/bin/x']);
    expect(Array.from(m.blocks.library)).toEqual([0]);
    const dump = dumpTraceText(b.build());
    expect(dump).toContain('EXT LIBRARY length=8 library=0 path="/bin/x"');
    expect(dump).toContain('EXT CALLER length=1 library=0');
  });

  test('a CALLER with no heap record before it, or naming an undefined library, is a warning', () => {
    const b = new TraceBuilder({ minor: 1, complete: true });
    const t = b.thread(0);
    t.threadBegin(1);
    t.caller(0);
    t.alloc({ fn: SiteKind.MALLOC, size: 1, addr: 0x10 });
    t.caller(3);
    t.end(0, 0);
    const m = decodeTrace(b.build());
    expect(m.problems.map((p) => p.message)).toEqual([
      expect.stringMatching(/CALLER record does not follow a heap record of its thread; ignored/),
      expect.stringMatching(/^library 3 is named by a CALLER record but no LIBRARY record defines it/),
    ]);
    expect(m.libraries[3]).toBe('(library 3)');
  });

  test('a reader that does not know the subkinds skips them by length and decodes the rest the same', () => {
    // The same trace with the two records under subkinds this reader does not know: the path of an older 1.1 reader.
    const m = decodeTrace(libTrace({ subkinds: [40, 41] }).build());
    expect(m.problems.length).toBeGreaterThan(0);
    for (const p of m.problems) expect(p.message).toMatch(/EXT record of unknown subkind 4[01] \(\d+ payload bytes\) skipped/);
    expect(m.libraries).toEqual([]);
    expect(Array.from(m.blocks.library)).toEqual([NONE, NONE, NONE, NONE, NONE]);
    const known = decodeTrace(libTrace().build());
    expect(Array.from(m.blocks.requested)).toEqual(Array.from(known.blocks.requested));
    expect(Array.from(m.blocks.freeEvent).map((f) => f === NONE)).toEqual(Array.from(known.blocks.freeEvent).map((f) => f === NONE));
    expect(m.linked.count).toBe(1);
    // by library: everything interposed is of an unknown library
    expect(attribute(m, { by: 'library' }).map((r) => r.label).sort()).toEqual(['(instrumented code)', '(unknown library)']);
  });
});

describe('report --by library', () => {
  test('two libraries, instrumented code and an unknown caller', () => {
    const rows = attribute(decodeTrace(libTrace().build()), { by: 'library' });
    expect(rows.map((r) => [r.key, r.label, r.file, r.netBytes, r.maxBytes, r.bytesAllocated, r.bytesFreed, r.counts])).toEqual([
      ['library:1', 'libc.so.6', LIBC, 300, 300, 300, 0, { malloc: 1, calloc: 1, aligned: 0, strdup: 0, realloc: 0, free: 0 }],
      ['library:2', 'libz.so.1', LIBZ, -50, 50, 50, 100, { malloc: 1, calloc: 0, aligned: 0, strdup: 0, realloc: 0, free: 1 }],
      ['library:instrumented', '(instrumented code)', null, 10, 10, 10, 0, { malloc: 1, calloc: 0, aligned: 0, strdup: 0, realloc: 0, free: 0 }],
      ['library:unknown', '(unknown library)', null, 7, 7, 7, 0, { malloc: 1, calloc: 0, aligned: 0, strdup: 0, realloc: 0, free: 0 }],
    ]);
  });

  test('a real program: fopen and strdup through a pointer allocate in libc', () => {
    const dir = scratch('libraries');
    const exe = path.join(dir, 'prog');
    buildInstrumented('gcc', ['-O2', '-g'], [path.join(programsDir, 'libraries.c')], exe);
    const ran = runTraced(exe, [], dir);
    expect(ran.status).toBe(0);
    const trace = traceOf(dir, ran.pid);
    const m = decodeTrace(readFileSync(trace));
    expect(m.problems).toEqual([]);
    const report = JSON.parse(must(process.execPath, [wrapper, 'report', '--by', 'library', '--json', trace]).stdout) as {
      attribution: { by: string; rows: { label: string; file: string | null; counts: { malloc: number } }[] };
    };
    expect(report.attribution.by).toBe('library');
    const libc = report.attribution.rows.find((r) => r.label === 'libc.so.6');
    expect(libc).toBeDefined();
    expect(libc!.counts.malloc).toBeGreaterThanOrEqual(2); // the FILE and the string, at least
    const mine = report.attribution.rows.find((r) => r.label === '(instrumented code)');
    expect(mine?.counts.malloc).toBe(1);
  }, 120_000);
});
