// Heap and stack by call path, folded over the streamed records in one or two passes: a tree of the call paths seen
// (functions from the entry sites of the open frames, outermost first), each with bytes allocated, allocations,
// bytes live at the heap's peak, bytes leaked at the end, and the most stack in use with that path open. Memory grows
// with call paths, sites, threads and live blocks, never with events.
import type { ByteSource } from './trace/byte-source.js';
import { streamRecords } from './trace/event-stream.js';
import { Kind, isEventKind } from './trace/format.js';
import type { TraceHeader } from './trace/header.js';
import type { TraceRecord } from './trace/records.js';
import { ProblemLog } from './problems.js';
import { LiveBlocks } from './trace/live-ids.js';
import { NONE } from './model.js';

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

export class PathNode {
  readonly children = new Map<string, PathNode>();
  readonly values: Record<CallPathMetric, number> = { allocated: 0, count: 0, peak: 0, leaked: 0, stack: 0 };
  /** Where the function is defined (its entry site), when known. */
  file: string | null = null;
  line: number | null = null;
  /** Its index among the nodes a PathFold has charged live blocks to (-1: none yet). */
  charged = -1;

  constructor(
    readonly name: string,
    readonly parent: PathNode | null,
  ) {}

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
}

/** A fold over the records that keeps per thread a stack of its open frames (one T each) and the live blocks. */
export interface FrameFold<T> {
  /** Per thread: a T for each open frame, innermost last. */
  readonly stacks: Map<number, T[]>;
  /** An ENTER on a thread whose open frames are `stack`: what the new frame holds. */
  enter(r: TraceRecord, stack: readonly T[]): T;
  /** A block made (ALLOC, or REALLOC's new block) while `stack` was open. */
  create(r: TraceRecord, stack: readonly T[]): void;
  /** A block ended (FREE of a live block, or REALLOC's old one). */
  end(block: number): void;
}

/** The open frames of `thread` (a function, not a closure per record: this runs for every record of a trace). */
function openFrames<T>(f: FrameFold<T>, thread: number): T[] {
  let s = f.stacks.get(thread);
  if (s === undefined) f.stacks.set(thread, (s = []));
  return s;
}

/** Hands one record to a FrameFold: frames opened and closed (EXIT, UNWIND, THREAD_END), blocks made and ended. */
export function foldFrames<T>(r: TraceRecord, f: FrameFold<T>): void {
  switch (r.kind) {
    case Kind.ENTER: {
      const s = openFrames(f, r.thread);
      s.push(f.enter(r, s));
      break;
    }
    case Kind.EXIT:
      openFrames(f, r.thread).pop();
      break;
    case Kind.UNWIND: {
      const s = openFrames(f, r.thread);
      s.length = Math.max(0, s.length - r.count);
      break;
    }
    case Kind.THREAD_END:
      f.stacks.delete(r.thread);
      break;
    case Kind.ALLOC:
      f.create(r, openFrames(f, r.thread));
      break;
    case Kind.FREE:
      if (!r.untracked) f.end(r.block);
      break;
    case Kind.REALLOC:
      if (r.failed) break;
      if (r.block !== 0) f.end(r.block);
      if (!r.noBlock) f.create(r, openFrames(f, r.thread));
      break;
  }
}

/** One pass over the records: the tree with everything but `peak`, the peak's event, and the blocks live at the end. */
class PathFold implements FrameFold<PathNode> {
  readonly root = new PathNode('', null);
  /** Site id → function name and definition, from the UNIT records read so far. */
  private readonly sites = new Map<number, { func: string; file: string; line: number }>();
  /** Per thread: the path node of each open frame, innermost last. */
  readonly stacks = new Map<number, PathNode[]>();
  /** The live blocks, each charged to a node of `charged` by its index there. */
  readonly live = new LiveBlocks();
  readonly charged: PathNode[] = [];
  heap = 0;
  peakBytes = 0;
  peakEvent: number | null = null;
  events = 0;

  constructor(
    /** Stop after this event (for the second pass, which snapshots the live blocks at the peak). */
    private readonly stopAfter: number | null = null,
  ) {}

  done = false;

  enter(r: TraceRecord, s: readonly PathNode[]): PathNode {
    const site = this.sites.get(r.site);
    const node = (s.length > 0 ? s[s.length - 1]! : this.root).child(site?.func ?? `site ${r.site}`);
    if (node.file === null && site !== undefined) {
      node.file = site.file;
      node.line = site.line;
    }
    node.values.stack = Math.max(node.values.stack, r.depth);
    return node;
  }

  /** Charged to the innermost open frame (below it, to UNINSTRUMENTED_FRAME, when only the interposed allocator saw it). */
  create(r: TraceRecord, s: readonly PathNode[]): void {
    const inner = s.length > 0 ? s[s.length - 1]! : this.root.child(NO_FRAME);
    const node = r.interposed ? inner.child(UNINSTRUMENTED_FRAME) : inner;
    node.values.allocated += r.size;
    node.values.count += 1;
    if (node.charged < 0) node.charged = this.charged.push(node) - 1;
    this.live.add(r.seq, node.charged, r.size);
    this.heap += r.size;
  }

  end(id: number): void {
    const b = this.live.take(id);
    if (b === NONE) return; // a block the trace never created: the decoder reports it
    this.heap -= this.live.size(b);
  }

  /** Takes one record; false once the event to stop after has been taken. */
  record(r: TraceRecord): boolean {
    if (this.done) return false;
    if (r.ignored) return true;
    if (r.kind === Kind.UNIT) {
      const u = r.unit!;
      for (let i = 0; i < u.kind.length; i++) {
        const id = u.base + i;
        if (!this.sites.has(id)) this.sites.set(id, { func: u.strings[u.func[i]!] ?? '?', file: u.strings[u.file[i]!] ?? '', line: u.line[i]! });
      }
    } else foldFrames(r, this);
    if (!isEventKind(r.kind)) return true;
    if (this.heap > this.peakBytes) {
      this.peakBytes = this.heap;
      this.peakEvent = this.events;
    }
    if (this.events === this.stopAfter) this.done = true;
    this.events++;
    return !this.done;
  }
}

/**
 * The call-path tree of a trace. Two passes over the records when `peak` is wanted: the first finds the heap's peak,
 * the second stops there and charges the blocks then live.
 */
export function callPaths(
  source: ByteSource,
  header: TraceHeader,
  problems: ProblemLog,
  options: { peak?: boolean; onProgress?: (fraction: number, phase: string) => void } = {},
): CallPaths {
  const progress = options.onProgress;
  const passes = options.peak === false ? 1 : 2;
  const p = new CallPathPasses();
  streamRecords(source, header, problems, (r) => p.first(r), {
    onProgress: progress && ((done, total) => progress(done / total / passes, 'reading records')),
  });
  if (passes === 2 && p.wantsSecond()) {
    // The same records again: their problems were logged by the first pass.
    streamRecords(source, header, new ProblemLog(), (r) => p.second(r), {
      onProgress: progress && ((done, total) => progress(0.5 + done / total / 2, 'blocks live at the peak')),
    });
  }
  return p.result();
}

/**
 * callPaths's two passes as record visitors, for a reader that drives them beside other folds over the same records
 * (analysis/panel-data.ts): `first` on every record, then, when `wantsSecond()`, `second` on every record again (it
 * returns false once the peak's event is taken), then `result()`.
 */
export class CallPathPasses {
  private readonly fold = new PathFold();
  private atPeak: PathFold | null = null;

  first(r: TraceRecord): boolean {
    return this.fold.record(r);
  }

  /** Whether the heap had a peak (blocks live at it to charge). */
  wantsSecond(): boolean {
    return this.fold.peakEvent !== null;
  }

  second(r: TraceRecord): boolean {
    this.atPeak ??= new PathFold(this.fold.peakEvent);
    return this.atPeak.record(r);
  }

  /** The tree, after the first pass (and the second, when it was read). */
  result(): CallPaths {
    const fold = this.fold;
    fold.live.forEach((charged, size) => (fold.charged[charged]!.values.leaked += size));
    const atPeak = this.atPeak;
    atPeak?.live.forEach((charged, size) => {
      // The second pass built its own tree: find the same path in the first one.
      let node = fold.root;
      for (const name of atPeak.charged[charged]!.path()) node = node.child(name);
      node.values.peak += size;
    });
    return { root: fold.root, peak: { bytes: fold.peakBytes, event: fold.peakEvent }, events: fold.events };
  }
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
