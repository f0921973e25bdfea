// The static worst-case stack: the deepest call path from `main` through the frame sizes and call graph the compiler
// gave at build time (the `.mw_stack` section, instrumenter/stack-usage.ts). Recursion makes it unbounded; a call
// through a function pointer or a frame of run-time size (alloca, a VLA) makes it unknown. Each is named, never
// dropped; calls to functions without frame sizes (libc, uninstrumented code) are listed as not counted.

export type FrameKind = 'static' | 'dynamic' | 'bounded';

/** One function of one unit, as the driver recorded it. */
export interface UnitFunction {
  id: string;
  name: string;
  file: string;
  line: number;
  bytes: number;
  kind: FrameKind;
}

export interface StackUnit {
  v: number;
  source: string;
  compiler: string;
  functions: UnitFunction[];
  /** null: the compiler gave frame sizes but no call graph (clang). */
  calls: Array<[string, string]> | null;
}

/** Something in the section that is not a unit line; the message names the line. */
export class StackDataError extends Error {
  override name = 'StackDataError';
}

/** The section's text: one JSON `StackUnit` per line (NUL padding between objects' sections is skipped). */
export function parseStackUnits(text: string): StackUnit[] {
  const units: StackUnit[] = [];
  text.split(/[\n\0]+/).forEach((line, i) => {
    if (line.trim() === '') return;
    let u: StackUnit;
    try {
      u = JSON.parse(line) as StackUnit;
    } catch (e) {
      throw new StackDataError(`frame-size line ${i + 1} is not JSON (${(e as Error).message})`);
    }
    if (u.v !== 1 || !Array.isArray(u.functions)) throw new StackDataError(`frame-size line ${i + 1} has an unknown layout (version ${String(u.v)})`);
    units.push(u);
  });
  return units;
}

/** One function on a path, outermost first. */
export interface StackStep {
  function: string;
  file: string;
  line: number;
  /** Its frame in bytes (the fixed part, for a dynamic frame). */
  frameBytes: number;
}

export interface WorstStack {
  root: string;
  /**
   * bounded: `bytes` is the worst case. unbounded: recursion is reachable. unknown: an indirect call, a frame of
   * run-time size, or no call graph is reachable. no-data: no frame sizes for the root.
   */
  status: 'bounded' | 'unbounded' | 'unknown' | 'no-data';
  /** The deepest path's total (a lower bound unless bounded); null for no-data. */
  bytes: number | null;
  path: StackStep[];
  /** Cycles reachable from the root, each as function names from the re-entered one back to it. */
  recursion: string[][];
  /** Reachable functions that call through a pointer. */
  indirectCalls: StackStep[];
  /** Reachable functions whose frame size is set at run time (alloca, VLA). */
  dynamicFrames: StackStep[];
  /** Reachable callees with no frame size (libc, uninstrumented objects), by name: their stack is not counted. */
  notCounted: string[];
  /** The compilers gave frame sizes but no call graph (clang): only the root's own frame is known. */
  noCallGraph: boolean;
  units: number;
  functions: number;
}

interface Node {
  fn: UnitFunction;
  callees: string[];
  unit: number;
}

/** The recorder's own entry points: they are not in the program being measured. */
const isRecorder = (id: string) => id.startsWith('__mw_');
const INDIRECT = '__indirect_call';

/** Nodes keyed `unit#id` and, for ids of external linkage (no "file:" prefix), also by plain id across units. */
function buildGraph(units: StackUnit[]): { nodes: Map<string, Node>; resolve: (unit: number, id: string) => string | null } {
  const nodes = new Map<string, Node>();
  const global = new Map<string, string>();
  units.forEach((u, k) => {
    for (const fn of u.functions) {
      const key = `${k}#${fn.id}`;
      nodes.set(key, { fn, callees: [], unit: k });
      if (!global.has(fn.id)) global.set(fn.id, key);
    }
    for (const [from, to] of u.calls ?? []) nodes.get(`${k}#${from}`)?.callees.push(to);
  });
  const resolve = (unit: number, id: string) => (nodes.has(`${unit}#${id}`) ? `${unit}#${id}` : global.get(id) ?? null);
  return { nodes, resolve };
}

const stepOf = (fn: UnitFunction): StackStep => ({ function: fn.name, file: fn.file, line: fn.line, frameBytes: fn.bytes });

/** The worst case from `root` (default main). */
export function worstCaseStack(units: StackUnit[], root = 'main'): WorstStack {
  const { nodes, resolve } = buildGraph(units);
  const result: WorstStack = {
    root, status: 'no-data', bytes: null, path: [], recursion: [], indirectCalls: [], dynamicFrames: [], notCounted: [],
    noCallGraph: units.some((u) => u.calls === null), units: units.length, functions: nodes.size,
  };
  const start = [...nodes.keys()].find((key) => nodes.get(key)!.fn.id === root) ?? null;
  if (start === null) return result;
  const best = new Map<string, { bytes: number; next: string | null }>();
  const onPath = new Set<string>();
  const trail: string[] = [];
  const notCounted = new Set<string>();
  const cycles = new Set<string>();
  // Depth-first, longest path to a leaf; an edge back onto the current path is recursion and is not followed. The
  // path is an explicit stack, not the JavaScript one: a program's call chain can be thousands of functions long.
  interface Visit {
    key: string;
    node: Node;
    /** The next callee to look at. */
    next: number;
    deepest: { bytes: number; next: string | null };
    indirect: boolean;
  }
  const open = (key: string): Visit => {
    const node = nodes.get(key)!;
    onPath.add(key);
    trail.push(key);
    if (node.fn.kind === 'dynamic') result.dynamicFrames.push(stepOf(node.fn));
    return { key, node, next: 0, deepest: { bytes: 0, next: null }, indirect: false };
  };
  const visit = (root: string): { bytes: number; next: string | null } => {
    const path: Visit[] = [open(root)];
    let below: { bytes: number; next: string | null } | null = null;
    for (;;) {
      const v = path[path.length - 1]!;
      if (below !== null) {
        // The callee just finished: its longest path counts for this caller.
        const target = v.node.callees[v.next - 1]!;
        if (below.bytes > v.deepest.bytes) v.deepest = { bytes: below.bytes, next: resolve(v.node.unit, target) };
        below = null;
      }
      if (v.next < v.node.callees.length) {
        const callee = v.node.callees[v.next++]!;
        if (isRecorder(callee)) continue;
        if (callee === INDIRECT) {
          v.indirect = true;
          continue;
        }
        const target = resolve(v.node.unit, callee);
        if (target === null) {
          notCounted.add(callee.replace(/^.*:/, ''));
          continue;
        }
        if (onPath.has(target)) {
          const cycle = trail.slice(trail.indexOf(target)).map((k) => nodes.get(k)!.fn.name);
          const text = [...cycle, cycle[0]!].join(' → ');
          if (!cycles.has(text)) (cycles.add(text), result.recursion.push([...cycle, cycle[0]!]));
          continue;
        }
        const done = best.get(target);
        if (done) {
          below = done;
          continue;
        }
        path.push(open(target));
        continue;
      }
      // Every callee seen: this function's longest path is known.
      if (v.indirect) result.indirectCalls.push(stepOf(v.node.fn));
      trail.pop();
      onPath.delete(v.key);
      const mine = { bytes: v.node.fn.bytes + v.deepest.bytes, next: v.deepest.next };
      best.set(v.key, mine);
      path.pop();
      if (path.length === 0) return mine;
      below = mine;
    }
  };
  result.bytes = visit(start).bytes;
  for (let key: string | null = start; key !== null; key = best.get(key)!.next) result.path.push(stepOf(nodes.get(key)!.fn));
  result.notCounted = [...notCounted].sort();
  result.status =
    result.recursion.length > 0 ? 'unbounded' : result.indirectCalls.length > 0 || result.dynamicFrames.length > 0 || result.noCallGraph ? 'unknown' : 'bounded';
  return result;
}
