// Format 1.3: EXT/RANK (the MPI rank, into Model.rank and the summary's process.rank) and EXT/CALL_PATH (return
// addresses of interposed calls made inside libraries), the `--by entry` and `--by library-function` groupings over
// them, the symbol reader that names the addresses (checked against nm on a real library), and the per-process table's
// rank column.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { attribute } from '../../analysis/attribution.js';
import { dumpTraceText } from '../../analysis/dump.js';
import { ElfSymbols } from '../../analysis/elf-symbols.js';
import type { Model } from '../../analysis/model.js';
import { ProcessesBuilder } from '../../analysis/processes.js';
import { renderProcesses } from '../../analysis/processes-text.js';
import { renderAttribution, renderReport } from '../../analysis/report-text.js';
import { summarize } from '../../analysis/summary.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { SiteKind } from '../../analysis/trace/format.js';
import { librarySymbols } from '../../host/library-symbols.js';
import { studentMain } from '../fixtures/scenarios.js';

const EXE = '/home/student/demo';
const LIB = '/usr/lib/libx.so.1';

/** A namer for LIB: [0x100, 0x200) helper, [0x200, 0x300) MPI_Init, [0x300, 0x400) MPI_Finalize; nothing else named. */
function named(m: Model): Model {
  m.symbols = {
    name: (path, offset) => {
      if (path !== LIB) return null;
      const pc = offset - 1;
      return pc >= 0x100 && pc < 0x200 ? 'helper' : pc >= 0x200 && pc < 0x300 ? 'MPI_Init' : pc >= 0x300 && pc < 0x400 ? 'MPI_Finalize' : null;
    },
  };
  return m;
}

/**
 * main: an instrumented allocation of 10; inside MPI_Init (via helper) 100 and, from an unnamed function, 50; inside
 * MPI_Finalize the free of the 100; 7 by the allocator called from the executable (CALLER 0, no path); 3 from a
 * library thread (path not reaching the executable); 5 without any CALLER.
 */
function callTrace(rank: number | null): Uint8Array {
  const { b, t } = studentMain({ minor: 3, complete: true, pid: 4000 + (rank ?? 0), ppid: 1 });
  if (rank !== null) t.rank(rank, 'PMI_RANK');
  t.alloc({ site: 4, size: 10, addr: 0x1000 });
  const a = t.alloc({ fn: SiteKind.MALLOC, size: 100, addr: 0x2000 });
  t.library(1, LIB).caller(1).library(0, EXE).callPath([[1, 0x110], [1, 0x210], [0, 0x50]]);
  t.alloc({ fn: SiteKind.CALLOC, size: 50, addr: 0x3000 });
  t.caller(1).callPath([[1, 0x5000], [1, 0x220], [0, 0x60]]);
  t.free({ fn: SiteKind.FREE, block: a });
  t.caller(1).callPath([[1, 0x310], [0, 0x70]]);
  t.alloc({ fn: SiteKind.MALLOC, size: 7, addr: 0x4000 });
  t.caller(0);
  t.alloc({ fn: SiteKind.MALLOC, size: 3, addr: 0x5000 });
  t.caller(1).callPath([[1, 0x150]], 0);
  t.alloc({ fn: SiteKind.MALLOC, size: 5, addr: 0x6000 });
  t.unwind(1);
  t.end(0, 0);
  return b.build();
}

const rows = (m: Model, by: 'entry' | 'library-function'): Record<string, [number, number, number]> =>
  Object.fromEntries(attribute(m, { by }).map((r) => [r.label, [r.bytesAllocated, r.bytesFreed, r.netBytes]]));

describe('EXT/RANK', () => {
  test('the rank is in the model and the summary; a trace without one has null', () => {
    const m = decodeTrace(callTrace(2));
    expect(m.problems).toEqual([]);
    expect(m.rank).toEqual({ rank: 2, variable: 'PMI_RANK' });
    expect(summarize(m).process.rank).toBe(2);
    expect(summarize(decodeTrace(callTrace(null))).process.rank).toBeNull();
    expect(dumpTraceText(callTrace(2))).toContain('EXT RANK length=10 rank=2 from="PMI_RANK"');
    expect(renderReport(summarize(m), 't.mwtrace')).toMatch(/^MPI rank {5}2$/m);
    expect(renderReport(summarize(decodeTrace(callTrace(null))), 't.mwtrace')).not.toContain('MPI rank');
  });

  test('the per-process table has a rank column when a process has a rank, and none otherwise', () => {
    const table = (ranks: (number | null)[]): string => {
      const p = new ProcessesBuilder();
      for (const r of ranks) p.add(`t${r}`, summarize(decodeTrace(callTrace(r))), null);
      return renderProcesses(p.result(), { top: 10, source: null, relativeTo: null });
    };
    const ranked = table([1, 0]);
    expect(ranked).toMatch(/^\s+rank\s+pid\s+ppid\s+events/m);
    expect(ranked).toMatch(/^\s+1\s+4001\s+1\s/m);
    expect(ranked).toMatch(/^\s+0\s+4000\s+1\s/m);
    expect(ranked).toMatch(/^\s+total\s+\d/m);
    expect(table([null])).not.toMatch(/\brank\b/);
  });
});

describe('EXT/CALL_PATH and the library-call groupings', () => {
  test('decoded: one path per distinct record, attached to its heap event; the dump line', () => {
    const m = decodeTrace(callTrace(0));
    expect(m.problems).toEqual([]);
    expect(m.callPaths.paths).toHaveLength(4);
    expect(m.callPaths.ofEvent.size).toBe(4);
    expect(m.callPaths.paths[0]).toEqual({ flags: 1, libraries: [1, 1, 0], offsets: [0x110, 0x210, 0x50] });
    expect(dumpTraceText(callTrace(0))).toContain('EXT CALL_PATH length=10 reached path=1+0x110,1+0x210,0+0x50');
  });

  test('--by entry: the library function the program called, with allocated, freed and net (negative for the finalizer)', () => {
    const m = named(decodeTrace(callTrace(0)));
    expect(rows(m, 'entry')).toEqual({
      'MPI_Init (libx.so.1)': [150, 0, 150],
      'MPI_Finalize (libx.so.1)': [0, 100, -100],
      '(instrumented code)': [10, 0, 10],
      '(allocator called from the program)': [7, 0, 7],
      '(not called from the program)': [3, 0, 3],
      '(no call path recorded)': [5, 0, 5],
    });
    const text = renderAttribution({ by: 'entry', mode: 'innermost', rows: attribute(m, { by: 'entry' }) }, { top: 10, source: null, relativeTo: null });
    expect(text).toMatch(/allocated\s+freed\s+net\s+min\s+max/);
    expect(text).toMatch(/MPI_Finalize \(libx\.so\.1\)\n\s+0 B\s+100 B\s+-100 B\s+-100 B\s+0 B\s/);
  });

  test('--by library-function: the innermost named function; an unnamed address is skipped for the next named one', () => {
    const m = named(decodeTrace(callTrace(0)));
    const r = rows(m, 'library-function');
    // 100 from MPI_Init's helper, 3 from the library's own thread (its innermost named function is helper too)
    expect(r['helper (libx.so.1)']).toEqual([103, 0, 103]);
    expect(r['MPI_Init (libx.so.1)']).toEqual([50, 0, 50]);
    expect(r['MPI_Finalize (libx.so.1)']).toEqual([0, 100, -100]);
    // without symbols, addresses: the entry is named by library and offset
    const bare = decodeTrace(callTrace(0));
    expect(rows(bare, 'entry')['libx.so.1+0x210']).toEqual([100, 0, 100]);
  });

  test('a trace of format 1.2 (no RANK, no CALL_PATH) reads as before: no rank, the library calls as "no call path"', () => {
    const { b, t } = studentMain({ minor: 2, complete: true });
    t.alloc({ fn: SiteKind.MALLOC, size: 9, addr: 0x10 });
    t.library(1, LIB).caller(1);
    t.unwind(1);
    t.end(0, 0);
    const m = decodeTrace(b.build());
    expect(m.problems).toEqual([]);
    expect(m.rank).toBeNull();
    expect(rows(m, 'entry')).toEqual({ '(no call path recorded)': [9, 0, 9] });
  });
});

describe('the symbol tables of a real library', () => {
  const libc = ['/lib/x86_64-linux-gnu/libc.so.6', '/usr/lib/x86_64-linux-gnu/libc.so.6'].find((p) => existsSync(p));
  test.skipIf(libc === undefined)('every function nm -D lists is named at its start + 1 (aliases: the shortest name)', () => {
    const syms = librarySymbols(libc!) as ElfSymbols;
    expect(syms).not.toBeNull();
    const nm = execFileSync('nm', ['-D', '--defined-only', libc!], { encoding: 'utf8' });
    const funcs = new Map<number, string[]>();
    for (const line of nm.split('\n')) {
      const m = /^([0-9a-f]+) [TtWiI] (\S+?)(@.*)?$/.exec(line);
      if (m === null) continue;
      const at = parseInt(m[1]!, 16);
      funcs.set(at, [...(funcs.get(at) ?? []), m[2]!]);
    }
    expect(funcs.size).toBeGreaterThan(500);
    for (const [at, names] of funcs) {
      const shortest = names.slice().sort((a, b) => a.length - b.length || (a < b ? -1 : 1))[0];
      expect(syms.functionAt(at + 1), `0x${at.toString(16)} ${names.join(' ')}`).toBe(shortest);
    }
  });
});
