// Heap and stack by call path, folded over the trace's events in one or two passes: a tree of the call paths seen
// (functions from the entry sites of the open frames, outermost first), each with bytes allocated, allocations,
// bytes live at the heap's peak, bytes leaked at the end, and the most stack in use with that path open. Memory grows
// with call paths, sites, threads and live blocks, never with events.
import type { EventFold, FoldEvent, FoldSource, FoldTables, TraceEnd, TraceStart } from './event-fold.js';
import { NONE, type SiteTable } from './model.js';
import { grown } from './trace/typed-arrays.js';

export const CALL_PATH_METRICS = ['allocated', 'count', 'peak', 'leaked', 'stack'] as const;
export type CallPathMetric = (typeof CALL_PATH_METRICS)[number];

export const METRIC_MEANING: Record<CallPathMetric, string> = {
  allocated: 'bytes allocated (requested) by the path, over the whole run',
  count: 'allocations made by the path',
  peak: 'bytes allocated by the path and still live at the heap peak (requested bytes, first time the peak is reached)',
  leaked: 'bytes allocated by the path and still live at the end of the trace',
  stack: 'the most stack bytes in use (from the thread stack base) while the path was the whole call stack',
};

/** Allocations inside libc or uninstrumented code hang below the innermost instrumented frame under this name. */
export const UNINSTRUMENTED_FRAME = '(libc or uninstrumented code)';
/** Allocations made while no instrumented frame was open (static constructors, libc at start-up). */
export const NO_FRAME = '(no instrumented frame)';
/**
 * Call paths are cut at this many frames: a deep recursion (thousands of frames) would make every export quadratic in
 * its depth (each path is written out whole) and nest the viewer's data as deep. The frames below are folded into one
 * node, DEEPER_FRAMES, whose values are theirs summed (the most, for the stack).
 */
export const MAX_PATH_DEPTH = 256;
export const DEEPER_FRAMES = `(frames deeper than ${MAX_PATH_DEPTH}, folded)`;

export class PathNode {
  readonly children = new Map<string, PathNode>();
  readonly values: Record<CallPathMetric, number> = { allocated: 0, count: 0, peak: 0, leaked: 0, stack: 0 };
  /** Where the function is defined (its entry site), when known. */
  file: string | null = null;
  line: number | null = null;
  /** Frames from the root (its children: 1). */
  readonly depth: number;

  constructor(
    readonly name: string,
    readonly parent: PathNode | null,
  ) {
    this.depth = parent === null ? 0 : parent.depth + 1;
  }

  child(name: string): PathNode {
    let c = this.children.get(name);
    if (c === undefined) this.children.set(name, (c = new PathNode(name, this)));
    return c;
  }

  /** Function names from the outermost frame down to this one. */
  path(): string[] {
    const names: string[] = [];
    for (let n: PathNode | null = this; n !== null && n.parent !== null; n = n.parent) names.push(n.name);
    return names.reverse();
  }
}

export interface CallPaths {
  root: PathNode;
  /** Requested bytes live at the heap's peak, and the event (in the trace's global order) where it was first reached. */
  peak: { bytes: number; event: number | null };
  events: number;
  /** Frames entered below MAX_PATH_DEPTH, folded into DEEPER_FRAMES nodes (0: no path was cut). */
  folded: number;
}

/**
 * The path node of every open frame and the node every live block is charged to, by the reader's handles (which are
 * reused once a frame closes or a block ends): a frame's node is its parent frame's node's child named by its function.
 */
class PathCharges {
  private frameNode: (PathNode | undefined)[] = [];
  private blockNode: (PathNode | undefined)[] = [];
  /** Frames entered below MAX_PATH_DEPTH. */
  folded = 0;

  constructor(
    private readonly root: PathNode,
    private readonly sites: SiteTable,
  ) {}

  /** A frame opened: its node (made on first sight, with where its function is defined); below MAX_PATH_DEPTH, the folded one. */
  enter(e: FoldEvent, frames: FoldTables['frames']): PathNode {
    const site = frames.entrySite[e.frame]!;
    const parent = frames.parent[e.frame]!;
    const above = parent === NONE ? this.root : this.frameNode[parent]!;
    if (above.depth >= MAX_PATH_DEPTH) {
      const folded = above.name === DEEPER_FRAMES ? above : above.child(DEEPER_FRAMES);
      this.frameNode[e.frame] = folded;
      this.folded++;
      return folded;
    }
    const S = this.sites;
    const known = site < S.count && S.kind[site] !== 0;
    const node = above.child(known ? (S.strings[S.func[site]!] ?? '?') : `site ${site}`);
    if (node.file === null && known) {
      node.file = S.strings[S.file[site]!] ?? '';
      node.line = S.line[site]!;
    }
    this.frameNode[e.frame] = node;
    return node;
  }

  /** A block made: charged to the innermost open frame (below it, to UNINSTRUMENTED_FRAME, when only the interposed allocator saw it). */
  create(e: FoldEvent, blocks: FoldTables['blocks']): PathNode {
    const inner = e.frame === NONE ? this.root.child(NO_FRAME) : this.frameNode[e.frame]!;
    const node = blocks.interposed[e.newBlock] === 1 ? inner.child(UNINSTRUMENTED_FRAME) : inner;
    this.blockNode[e.newBlock] = node;
    return node;
  }

  /** The node a live block is charged to. */
  of(block: number): PathNode {
    return this.blockNode[block]!;
  }
}

/**
 * The first pass: the tree with everything but `peak`, the heap's peak and its event, and the blocks live at the end
 * charged as leaked.
 */
export class CallPathFold implements EventFold {
  readonly root = new PathNode('', null);
  private readonly charges: PathCharges;
  peakBytes = 0;
  peakEvent: number | null = null;
  events = 0;

  constructor(start: TraceStart) {
    this.charges = new PathCharges(this.root, start.sites);
  }

  event(e: FoldEvent, tables: FoldTables): void {
    if (e.frame !== NONE && tables.frames.enter[e.frame] === e.index) {
      const node = this.charges.enter(e, tables.frames);
      node.values.stack = Math.max(node.values.stack, tables.frames.depth[e.frame]!);
    }
    if (e.newBlock !== NONE) {
      const node = this.charges.create(e, tables.blocks);
      node.values.allocated += tables.blocks.requested[e.newBlock]!;
      node.values.count += 1;
    }
    if (e.heapRequested > this.peakBytes) {
      this.peakBytes = e.heapRequested;
      this.peakEvent = e.index;
    }
  }

  finish(end: TraceEnd, tables: FoldTables): void {
    this.events = end.events;
    for (const h of end.liveBlocks) this.charges.of(h).values.leaked += tables.blocks.requested[h]!;
  }

  result(): CallPaths {
    return { root: this.root, peak: { bytes: this.peakBytes, event: this.peakEvent }, events: this.events, folded: this.charges.folded };
  }
}

/**
 * The second pass, up to the peak's event: the blocks live right after it, each charged as `peak` to the node the first
 * pass charged it to (the same paths come in the same order, so they are the first tree's nodes). Kept here until
 * `apply()`: a reader may run a pass again with new folds, and only the last one's count.
 */
export class CallPathPeakFold implements EventFold {
  private readonly charges: PathCharges;
  /** The live blocks' handles, 1 while live, by handle. */
  private live = new Uint8Array(64);
  private readonly peak = new Map<PathNode, number>();
  private done = false;
  private readonly peakEvent: number;

  constructor(start: TraceStart, first: CallPathFold) {
    this.charges = new PathCharges(first.root, start.sites);
    this.peakEvent = first.peakEvent ?? -1;
  }

  event(e: FoldEvent, tables: FoldTables): void {
    if (this.done) return;
    if (e.frame !== NONE && tables.frames.enter[e.frame] === e.index) this.charges.enter(e, tables.frames);
    if (e.oldBlock !== NONE) this.live[e.oldBlock] = 0;
    if (e.newBlock !== NONE) {
      this.charges.create(e, tables.blocks);
      this.live = grown(this.live, e.newBlock + 1);
      this.live[e.newBlock] = 1;
    }
    if (e.index !== this.peakEvent) return;
    this.done = true;
    for (let h = 0; h < this.live.length; h++) {
      if (this.live[h] !== 1) continue;
      const node = this.charges.of(h);
      this.peak.set(node, (this.peak.get(node) ?? 0) + tables.blocks.requested[h]!);
    }
  }

  /** The bytes live at the peak into the first tree's nodes (once, after the pass). */
  apply(): void {
    for (const [node, bytes] of this.peak) node.values.peak += bytes;
  }
}

/**
 * The call-path tree of a trace. Two passes when `peak` is wanted (and the heap has one): the first finds the heap's
 * peak, the second charges the blocks live there.
 */
export function callPaths(source: FoldSource, options: { peak?: boolean } = {}): CallPaths & { end: TraceEnd } {
  let first: CallPathFold | null = null;
  const end = source.run((start) => [(first = new CallPathFold(start))]);
  const fold = first as CallPathFold | null;
  if (fold === null) throw new Error('the trace was not read');
  if (options.peak !== false && fold.peakEvent !== null) {
    let atPeak: CallPathPeakFold | null = null;
    source.run((start) => [(atPeak = new CallPathPeakFold(start, fold))]);
    (atPeak as CallPathPeakFold | null)?.apply();
  }
  return { ...fold.result(), end };
}

/** The call-path tree as plain data (a viewer draws it as a flame graph): each node's own values, metrics in CALL_PATH_METRICS order. */
export interface FlameNode {
  name: string;
  file: string | null;
  line: number | null;
  values: number[];
  children: FlameNode[];
}

/** Where a tree too large to hand over whole keeps the paths it drops: one child of the nearest kept frame. */
export const OTHER_FRAME = '(other)';

export interface FlameTree {
  root: FlameNode;
  /** Nodes below the root in the call-path tree, and how many of them were folded into OTHER_FRAME children. */
  nodes: number;
  pruned: number;
}

/** Adds `v`'s values to `into`'s: sums, but the most for the stack (the deepest, not a total). */
function addValues(into: number[], v: readonly number[]): void {
  CALL_PATH_METRICS.forEach((m, i) => (into[i] = m === 'stack' ? Math.max(into[i]!, v[i]!) : into[i]! + v[i]!));
}

/**
 * The tree as FlameNodes, at most `maxNodes` of them: when there are more, the nodes of least weight (their share of
 * the whole for the metric where it is largest, children included) are folded into an OTHER_FRAME child of their
 * nearest kept ancestor, so every metric's total stays whole.
 */
export function flameTree(root: PathNode, maxNodes = 50_000): FlameTree {
  const order: PathNode[] = [];
  const todo = [...root.children.values()];
  while (todo.length > 0) {
    const n = todo.pop()!;
    order.push(n);
    todo.push(...n.children.values());
  }
  const own = (n: PathNode): number[] => CALL_PATH_METRICS.map((m) => n.values[m]);
  let keep: Set<PathNode> | null = null;
  if (order.length > maxNodes) {
    // Children come after their parents in `order`: walking it backwards sums each subtree before its parent.
    const inclusive = new Map<PathNode, number[]>();
    const total = CALL_PATH_METRICS.map(() => 0);
    for (let i = order.length - 1; i >= 0; i--) {
      const n = order[i]!;
      const v = own(n);
      for (const c of n.children.values()) addValues(v, inclusive.get(c)!);
      inclusive.set(n, v);
      if (n.parent === root) addValues(total, v);
    }
    const weight = (n: PathNode): number => Math.max(...inclusive.get(n)!.map((v, i) => (total[i]! > 0 ? v / total[i]! : 0)));
    const depths = new Map<PathNode, number>();
    for (const n of order) depths.set(n, n.parent === root ? 1 : depths.get(n.parent!)! + 1);
    const depth = (n: PathNode): number => depths.get(n)!;
    // A parent weighs at least as much as its children; on equal weight the shallower comes first, so parents stay.
    const ranked = order.map((n) => ({ n, w: weight(n), d: depth(n) })).sort((a, b) => b.w - a.w || a.d - b.d);
    keep = new Set(ranked.slice(0, maxNodes - 1).map((r) => r.n));
  }
  let pruned = 0;
  const make = (n: PathNode): FlameNode => ({ name: n.name, file: n.file, line: n.line, values: own(n), children: [] });
  const out = make(root);
  // Iterative: a deep recursion in the traced program makes a path as deep.
  const pending: [PathNode, FlameNode][] = [[root, out]];
  while (pending.length > 0) {
    const [n, into] = pending.pop()!;
    let other: FlameNode | null = null;
    for (const c of n.children.values()) {
      if (keep === null || keep.has(c)) {
        const node = make(c);
        into.children.push(node);
        pending.push([c, node]);
        continue;
      }
      other ??= { name: OTHER_FRAME, file: null, line: null, values: CALL_PATH_METRICS.map(() => 0), children: [] };
      const below = [c];
      while (below.length > 0) {
        const d = below.pop()!;
        pruned++;
        addValues(other.values, own(d));
        below.push(...d.children.values());
      }
    }
    if (other !== null) into.children.push(other);
  }
  return { root: out, nodes: order.length, pruned };
}
