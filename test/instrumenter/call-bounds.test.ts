// The stack bounds of summarised call trees from a compiled unit's frame sizes (instrumenter/call-bounds.ts), on
// hand-made units: gcc's call graph with clones and inlined functions, clang's sizes without a graph, and each way a
// tree becomes unbounded (a frame of run-time size, a call nothing knows, a call of a recorded function, recursion
// the optimiser made).
import { describe, expect, it } from 'vitest';
import { boundLeafTrees, boundSectionBytes } from '../../instrumenter/call-bounds.js';
import { COMPILER_CALL_BYTES, knownCalls } from '../../instrumenter/known-calls.js';
import type { LeafTreeResult } from '../../instrumenter/rewrite.js';
import type { StackUnit, UnitFunction } from '../../analysis/worst-stack.js';

const fn = (name: string, bytes: number, kind: UnitFunction['kind'] = 'static'): UnitFunction => ({ id: `t.c:${name}`, name, file: 't.c', line: 1, bytes, kind });

function unit(functions: UnitFunction[], calls: Array<[string, string]> | null): StackUnit {
  return { v: 1, source: 't.c', compiler: calls === null ? 'stack-usage' : 'gcc-callgraph', functions, calls };
}

/** leaf ← mid ← caller (recorded); mid also calls memcpy; `extra` adds to the syntax tree's calls. */
function leaves(extra: Record<string, string[]> = {}): LeafTreeResult {
  const callees = new Map<string, string[]>([
    ['leaf', []],
    ['mid', ['leaf', 'memcpy']],
    ['caller', ['mid', 'printf']],
    ...Object.entries(extra),
  ]);
  return {
    summarised: new Set(['leaf', 'mid']),
    leaves: new Set(['leaf', 'mid']),
    callees,
    slots: [
      { kind: 'tree', name: 'leaf' },
      { kind: 'tree', name: 'mid' },
      { kind: 'caller', name: 'caller' },
    ],
  };
}

const known = knownCalls(true);

describe('bounds of summarised call trees', () => {
  it('adds the frames down the deepest path of gcc\'s graph, clones counted as their function', () => {
    const u = unit(
      [fn('leaf.constprop.0', 40), fn('mid', 100), fn('caller', 64)],
      [
        ['t.c:mid', 't.c:leaf.constprop.0'],
        ['t.c:mid', 'memcpy'],
        ['t.c:caller', 't.c:mid'],
        ['t.c:caller', '__mw_enter'],
      ],
    );
    const b = boundLeafTrees(u, leaves(), known);
    expect(b.unbounded).toEqual(new Set());
    // mid: its 100 and the larger of leaf (40) and memcpy (64); the caller's own frame is in its entry depth.
    expect(b.bytes).toEqual([40, 164, 164]);
  });

  it('follows the syntax tree where the optimiser inlined a function away', () => {
    // mid inlined into caller: no node, but leaf is called from the caller's frame.
    const u = unit([fn('leaf', 40), fn('caller', 200)], [['t.c:caller', 't.c:leaf']]);
    expect(boundLeafTrees(u, leaves(), known).bytes).toEqual([40, 64, 64]);
  });

  it('gives clang\'s frames room for a call the compiler adds at each level, having no graph', () => {
    const u = unit([fn('leaf', 40), fn('mid', 100), fn('caller', 64)], null);
    const b = boundLeafTrees(u, leaves(), known);
    expect(b.bytes).toEqual([40 + COMPILER_CALL_BYTES, 100 + 40 + COMPILER_CALL_BYTES, 100 + 40 + COMPILER_CALL_BYTES]);
  });

  it.each([
    ['a frame of run-time size', unit([fn('leaf', 40, 'dynamic'), fn('mid', 100)], [['t.c:mid', 't.c:leaf']]), ['leaf', 'mid']],
    ['a call nothing knows', unit([fn('leaf', 40), fn('mid', 100)], [['t.c:leaf', '__cyg_profile_func_enter']]), ['leaf', 'mid']],
    ['a call of the runtime', unit([fn('leaf', 40), fn('mid', 100)], [['t.c:mid', '__mw_enter']]), ['mid']],
    ['a call of a recorded function', unit([fn('leaf', 40), fn('mid', 100), fn('caller', 64)], [['t.c:mid', 't.c:caller']]), ['mid']],
    ['recursion the optimiser made', unit([fn('leaf', 40), fn('mid', 100)], [['t.c:leaf', 't.c:mid'], ['t.c:mid', 't.c:leaf']]), ['leaf', 'mid']],
  ])('leaves a tree unbounded for %s', (_, u, unbounded) => {
    expect([...boundLeafTrees(u, leaves(), known).unbounded].sort()).toEqual(unbounded);
  });

  it('does not know the library where it was not measured', () => {
    const u = unit([fn('leaf', 40), fn('mid', 100)], [['t.c:mid', 'memcpy']]);
    expect([...boundLeafTrees(u, leaves(), knownCalls(false)).unbounded]).toEqual(['mid']);
  });

  it('writes each bound as decimal digits in a 12-byte slot', () => {
    expect(boundSectionBytes([40, 1234567]).toString('latin1')).toBe('40\0\0\0\0\0\0\0\0\0\0' + '1234567\0\0\0\0\0');
  });
});
