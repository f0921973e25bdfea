// The stack bounds of summarised call trees (leaf-calls.ts), from the frame
// sizes the compiler gave for the unit just compiled (stack-usage.ts), and
// the bytes the driver writes over the unit's `__mw_bounds` slots.
//
// A function's depth is recorded at its entry, its own frame included, so
// what a recorded caller's summarised calls add is the largest tree among
// them: tree(f) = f's frame + the largest tree it calls. gcc's call graph
// (`.ci`) is of the optimised code: a summarised function inlined everywhere
// has no node, and its calls are made from its callers' frames, so the
// syntax tree's calls are followed too and the larger figure kept. Clang
// gives frame sizes only: the syntax tree's calls then, with room for one
// call the compiler adds by itself (memcpy for a struct copy). A frame of
// run-time size, a call the graph shows and nothing knows, or a call of a
// recorded function makes the tree unbounded: the driver builds the unit
// again with that function recorded.
import type { LeafTreeResult } from './rewrite.js';
import { COMPILER_CALL_BYTES, type KnownCalls } from './known-calls.js';
import { BOUND_SLOT_BYTES } from './sites.js';
import type { StackUnit, UnitFunction } from '../analysis/worst-stack.js';

export interface LeafBounds {
  /** Per slot, in order: the bound in bytes. Meaningful only when `unbounded` is empty. */
  readonly bytes: number[];
  /** Summarised functions whose tree could not be bounded. */
  readonly unbounded: ReadonlySet<string>;
}

const UNBOUNDED = Number.POSITIVE_INFINITY;

/** The bounds of every slot of the unit, from its compiled frame sizes and call graph. */
export function boundLeafTrees(unit: StackUnit, leaves: LeafTreeResult, known: KnownCalls): LeafBounds {
  const byBase = new Map<string, UnitFunction[]>();
  const byId = new Map<string, UnitFunction>();
  for (const f of unit.functions) {
    byId.set(f.id, f);
    const base = baseName(f.name);
    byBase.set(base, [...(byBase.get(base) ?? []), f]);
  }
  const edges = new Map<string, string[]>();
  for (const [from, to] of unit.calls ?? []) edges.set(from, [...(edges.get(from) ?? []), to]);
  const graph = unit.calls !== null;

  const nodeMemo = new Map<string, number>();
  const treeOfNode = (f: UnitFunction): number => {
    const done = nodeMemo.get(f.id);
    if (done !== undefined) return done;
    nodeMemo.set(f.id, UNBOUNDED); // a cycle through optimised code stays unbounded
    let deepest = 0;
    for (const to of edges.get(f.id) ?? []) {
      const callee = byId.get(to);
      const bytes = callee === undefined ? externalBytes(to) : leaves.leaves.has(baseName(callee.name)) ? treeOfNode(callee) : UNBOUNDED;
      deepest = Math.max(deepest, bytes);
    }
    const total = f.kind === 'dynamic' ? UNBOUNDED : f.bytes + deepest;
    nodeMemo.set(f.id, total);
    return total;
  };
  const externalBytes = (name: string): number => (name.startsWith('__mw_') ? UNBOUNDED : known.bytes(name) ?? UNBOUNDED);

  const memo = new Map<string, number>();
  const tree = (name: string): number => {
    const done = memo.get(name);
    if (done !== undefined) return done;
    memo.set(name, UNBOUNDED);
    const calls = leaves.callees.get(name) ?? [];
    const syntax = Math.max(0, ...calls.map((c) => (leaves.leaves.has(c) ? tree(c) : known.bytes(c) ?? UNBOUNDED)));
    const nodes = byBase.get(name) ?? [];
    const total = graph
      ? Math.max(syntax, ...nodes.map(treeOfNode))
      : Math.max(0, ...nodes.map((f) => (f.kind === 'dynamic' ? UNBOUNDED : f.bytes))) + Math.max(syntax, COMPILER_CALL_BYTES);
    memo.set(name, total);
    return total;
  };

  const unbounded = new Set<string>();
  for (const name of leaves.summarised) if (tree(name) === UNBOUNDED) unbounded.add(name);
  const bytes = leaves.slots.map((slot) =>
    slot.kind === 'tree' ? tree(slot.name) : Math.max(0, ...(leaves.callees.get(slot.name) ?? []).filter((c) => leaves.summarised.has(c)).map(tree)),
  );
  return { bytes, unbounded };
}

/** gcc names its clones `f.constprop.0`, `f.isra.0`, `f.part.0`, `f.cold`: the function is the part before the dot. */
function baseName(name: string): string {
  const dot = name.indexOf('.');
  return dot < 0 ? name : name.slice(0, dot);
}

/** The slots' bytes as the section holds them: decimal digits, NUL-padded. */
export function boundSectionBytes(bytes: readonly number[]): Buffer {
  const out = Buffer.alloc(bytes.length * BOUND_SLOT_BYTES);
  bytes.forEach((b, i) => out.write(String(b), i * BOUND_SLOT_BYTES, 'latin1'));
  return out;
}
