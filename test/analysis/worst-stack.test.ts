// The static worst-case stack over hand-made units, the parsers of the compiler's side files, and the ELF section
// reader, each with the input it must refuse.
import { describe, expect, it } from 'vitest';
import { parseStackUnits, StackDataError, worstCaseStack, type StackUnit, type UnitFunction } from '../../analysis/worst-stack.js';
import { elfSection, ElfError } from '../../analysis/elf-section.js';
import { parseCallgraphInfo, parseStackUsage } from '../../instrumenter/stack-usage.js';

const fn = (id: string, bytes: number, kind: UnitFunction['kind'] = 'static'): UnitFunction => ({
  id, name: id.replace(/^.*:/, ''), file: '/src/a.c', line: 1, bytes, kind,
});
const unit = (functions: UnitFunction[], calls: Array<[string, string]> | null): StackUnit => ({ v: 1, source: '/src/a.c', compiler: 'gcc-callgraph', functions, calls });

describe('worstCaseStack', () => {
  it('takes the deepest path from main, adding frame sizes, across units', () => {
    const a = unit([fn('main', 48), fn('a.c:parse', 100), fn('a.c:small', 10)], [['main', 'a.c:parse'], ['main', 'a.c:small'], ['a.c:parse', 'emit'], ['main', '__mw_enter'], ['a.c:parse', 'printf']]);
    const b = unit([fn('emit', 200)], [['emit', 'memcpy']]);
    const w = worstCaseStack([a, b]);
    expect(w).toMatchObject({ status: 'bounded', bytes: 348, recursion: [], indirectCalls: [], dynamicFrames: [], notCounted: ['memcpy', 'printf'] });
    expect(w.path.map((s) => [s.function, s.frameBytes])).toEqual([['main', 48], ['parse', 100], ['emit', 200]]);
  });

  it("a static function is found in its own unit before another unit's function of the same name", () => {
    const a = unit([fn('main', 10), fn('a.c:helper', 5)], [['main', 'a.c:helper']]);
    const b = unit([fn('b.c:helper', 500)], []);
    expect(worstCaseStack([a, b]).bytes).toBe(15);
  });

  it('names mutual recursion as unbounded, and still gives the path without the cycle', () => {
    const w = worstCaseStack([unit([fn('main', 16), fn('even', 32), fn('odd', 32)], [['main', 'even'], ['even', 'odd'], ['odd', 'even']])]);
    expect(w.status).toBe('unbounded');
    expect(w.recursion).toEqual([['even', 'odd', 'even']]);
    expect(w.bytes).toBe(80);
  });

  it('a call through a pointer or a run-time-sized frame makes it unknown, and says where', () => {
    const w = worstCaseStack([unit([fn('main', 16), fn('vla', 64, 'dynamic')], [['main', '__indirect_call'], ['main', 'vla']])]);
    expect(w.status).toBe('unknown');
    expect(w.indirectCalls.map((s) => s.function)).toEqual(['main']);
    expect(w.dynamicFrames.map((s) => s.function)).toEqual(['vla']);
    // a frame bounded at compile time counts as a known size
    expect(worstCaseStack([unit([fn('main', 16, 'bounded')], [])]).status).toBe('bounded');
  });

  it('frame sizes without a call graph (clang) give only main, as unknown', () => {
    const w = worstCaseStack([{ ...unit([fn('main', 40), fn('f', 400)], null), compiler: 'stack-usage' }]);
    expect(w).toMatchObject({ status: 'unknown', noCallGraph: true, bytes: 40 });
  });

  it('a call chain 50,000 functions long: walked without the JavaScript stack, the whole chain its path', () => {
    const n = 50_000;
    const fns = [fn('main', 8), ...Array.from({ length: n }, (_, i) => fn(`f${i}`, 2))];
    const calls: Array<[string, string]> = [['main', 'f0'], ...Array.from({ length: n - 1 }, (_, i): [string, string] => [`f${i}`, `f${i + 1}`])];
    const w = worstCaseStack([unit(fns, calls)]);
    expect(w).toMatchObject({ status: 'bounded', bytes: 8 + 2 * n });
    expect(w.path).toHaveLength(n + 1);
  });

  it('without main there is nothing to start from', () => {
    expect(worstCaseStack([unit([fn('f', 8)], [])])).toMatchObject({ status: 'no-data', bytes: null, path: [] });
  });
});

describe('parseStackUnits', () => {
  it('reads one unit per line, skipping the NUL padding the linker may put between objects', () => {
    const line = JSON.stringify(unit([fn('main', 8)], []));
    expect(parseStackUnits(`${line}\n\0\0\0${line}\n`)).toHaveLength(2);
  });
  it('refuses a line that is not JSON, or of another version, naming the line', () => {
    expect(() => parseStackUnits('{"v":1,"functions":[]}\n{oops')).toThrow(StackDataError);
    expect(() => parseStackUnits('{"v":1,"functions":[]}\n{oops')).toThrow(/^frame-size line 2 is not JSON \(/);
    expect(() => parseStackUnits('{"v":7,"functions":[]}')).toThrow(/line 1 has an unknown layout \(version 7\)/);
  });
});

describe("the compiler's side files", () => {
  it('gcc -fcallgraph-info=su: functions with sizes, declared-only nodes left out, edges kept', () => {
    const ci = [
      'graph: { title: "t.c"',
      'node: { title: "t.c:leaf" label: "leaf\\nt.c:3:12\\n144 bytes (static)" }',
      'node: { title: "memset" label: "memset\\n/usr/include/string.h:61:14" shape : ellipse }',
      'edge: { sourcename: "t.c:leaf" targetname: "memset" label: "t.c:3:39" }',
      'node: { title: "vla" label: "vla\\nt.c:7:6\\n64 bytes (dynamic,bounded)" }',
      'edge: { sourcename: "vla" targetname: "__indirect_call" label: "t.c:7:38" }',
      '}',
    ].join('\n');
    expect(parseCallgraphInfo(ci)).toEqual({
      functions: [
        { id: 't.c:leaf', name: 'leaf', file: 't.c', line: 3, bytes: 144, kind: 'static' },
        { id: 'vla', name: 'vla', file: 't.c', line: 7, bytes: 64, kind: 'bounded' },
      ],
      calls: [['t.c:leaf', 'memset'], ['vla', '__indirect_call']],
    });
  });
  it('-fstack-usage: gcc (file:line:column:name) and clang (file:line:name) lines', () => {
    expect(parseStackUsage('t.c:3:12:leaf\t144\tstatic\nt.c:7:vla\t40\tdynamic\nnot a line\n')).toEqual([
      { id: 'leaf', name: 'leaf', file: 't.c', line: 3, bytes: 144, kind: 'static' },
      { id: 'vla', name: 'vla', file: 't.c', line: 7, bytes: 40, kind: 'dynamic' },
    ]);
  });
});

describe('elfSection', () => {
  it('refuses what is not ELF, and a section table past the end', () => {
    expect(() => elfSection(new TextEncoder().encode('#!/bin/sh\necho not a program\n'.padEnd(64)), '.mw_stack')).toThrow(new ElfError('not an ELF file'));
    const cut = new Uint8Array(64);
    cut.set([0x7f, 0x45, 0x4c, 0x46, 2, 1]);
    new DataView(cut.buffer).setBigUint64(0x28, 4096n, true); // section table at 4096 in a 64-byte file
    new DataView(cut.buffer).setUint16(0x3c, 3, true);
    expect(() => elfSection(cut, '.mw_stack')).toThrow(/section table points past the end of the file/);
  });
});
