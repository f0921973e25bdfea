// A trace as a Valgrind Massif output file (massif.out.<pid>), for ms_print and massif-visualizer: heap and stack snapshots, with heap trees by allocation site.
import type { EventFold, FoldBlocks, FoldEvent, FoldTables, TraceStart } from './event-fold.js';
import { foldModel, modelStart } from './model-fold.js';
import { NONE, type Model } from './model.js';
import { allocationSiteLabel, allocatorName, interposedLabel, siteInfo, siteLocation } from './sites.js';
import { peakEvent, type EventSeries } from './timeline.js';
import { GroupIndex, grown } from './group-index.js';

export interface MassifOptions {
  /** The `desc:` line (Massif puts its arguments there). Default: "cc-memwrap export". */
  desc?: string;
  /** The `cmd:` line. Default: the program path recorded in the trace, else "(unknown)". */
  cmd?: string;
  /** Evenly spaced snapshots over the run (default 100); the peak comes on top. */
  snapshots?: number;
  /** Take snapshots after these events instead (plus the peak); out-of-range ones are dropped. */
  events?: ArrayLike<number>;
  /** Every how many snapshots one has a heap tree (default 10, as Massif's --detailed-freq). */
  detailedEvery?: number;
  /** Sites below this percentage of the snapshot's heap are merged into one node (default 1, as Massif's --threshold). */
  threshold?: number;
}

/** Bytes within one snapshot's heap tree: the live blocks after an event, grouped by allocation site. */
interface TreeNode {
  bytes: number;
  label: string;
}

/** Massif's text is line-based: a label keeps to one line. */
function oneLine(s: string): string {
  return s.replace(/[\r\n]+/g, ' ');
}

/**
 * The label of a heap-tree node, in Valgrind's "0x…: function (file:line)" style: "0x0: malloc (list.c:31) in main"
 * for an instrumented site, "0x0: main (via libc/uninstrumented)" for blocks only the interposed allocator saw.
 * `key`: the block's site, or -(entry site of its attributed frame) - 1 if interposed (as summary.ts groups).
 */
function groupLabel(start: TraceStart, key: number): string {
  const cwd = start.program?.cwd;
  if (key < 0) return oneLine(`0x0: ${interposedLabel(siteInfo(start, -key - 1))}`);
  const info = siteInfo(start, key);
  if (info === null) return oneLine(`0x0: ${allocationSiteLabel(null, key, cwd)}`);
  return oneLine(`0x0: ${allocatorName(info)} (${siteLocation(info, cwd)}) in ${info.func || '<file scope>'}`);
}

/** One snapshot's heap tree: the groups with a live block, as group numbers and their live requested bytes. */
interface Tree {
  groups: number[];
  bytes: number[];
}

function renderTree(labels: string[], tree: Tree, threshold: number): string[] {
  const nodes: TreeNode[] = [];
  let total = 0;
  for (let i = 0; i < tree.groups.length; i++) {
    const bytes = Math.round(tree.bytes[i]!);
    nodes.push({ bytes, label: labels[tree.groups[i]!]! });
    total += bytes;
  }
  nodes.sort((a, b) => b.bytes - a.bytes || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
  const shown: TreeNode[] = [];
  let restBytes = 0;
  let restCount = 0;
  for (const n of nodes) {
    if (total > 0 && (n.bytes * 100) / total >= threshold) shown.push(n);
    else {
      restBytes += n.bytes;
      restCount++;
    }
  }
  const children = shown.length + (restCount > 0 ? 1 : 0);
  const lines = [`n${children}: ${total} (heap allocation functions) malloc/new/new[], --alloc-fns, etc.`];
  for (const n of shown) lines.push(` n0: ${n.bytes} ${n.label}`);
  if (restCount > 0) {
    const t = threshold.toFixed(2);
    lines.push(restCount === 1 ? ` n0: ${restBytes} in 1 place, below massif's threshold (${t}%)` : ` n0: ${restBytes} in ${restCount} places, all below massif's threshold (${t}%)`);
  }
  return lines;
}

/** `count` events evenly spaced from the first to the last of `n` (fewer when n is smaller), ascending, no repeats. */
function evenlySpaced(n: number, count: number): number[] {
  const out: number[] = [];
  const k = Math.max(1, Math.min(count, n));
  if (n > 0) {
    if (k === 1) out.push(n - 1);
    else
      for (let i = 0; i < k; i++) {
        const e = Math.round((i * (n - 1)) / (k - 1));
        if (e !== out[out.length - 1]) out.push(e);
      }
  }
  return out;
}

/** The events snapshots are taken after: `count` evenly spaced from the first to the last, plus the peak. */
export function snapshotEvents(series: EventSeries, count = 100): { events: number[]; peak: number } {
  const set = new Set(evenlySpaced(series.count, count));
  const peak = peakEvent(series);
  if (peak !== NONE) set.add(peak);
  return { events: [...set].sort((a, b) => a - b), peak };
}

/** Memory after one snapshot's event. */
interface Snapshot {
  event: number;
  heap: number;
  usable: number;
  stacks: number;
  /** Its heap tree, when it may be a detailed one. */
  tree: Tree | null;
}

/**
 * Massif's output format as `ms_print` reads it, as a fold over one pass. `time=` is the event index (time_unit: i,
 * as instructions would be), `mem_heap_B` the requested bytes live after that event, `mem_heap_extra_B` usable −
 * requested, `mem_stacks_B` the stack bytes of all threads. The peak is the snapshot with the most heap usable + stack
 * (first such event). The peak and every `detailedEvery`-th snapshot carry a heap tree of the live blocks by
 * allocation site.
 *
 * The snapshot events are known from the start (the event count), the peak only at the end; so the fold keeps the
 * live bytes per group now, the groups' bytes at the latest maximum (updated, when a new maximum comes, for the groups
 * changed since the one before), and a tree at each snapshot that may be detailed: the peak, if it falls before a
 * snapshot and is not one, moves it one place on, so a tree is kept where either place is a detailed one. Memory:
 * groups × (snapshots / detailedEvery), nothing per live block (a block's group is read again when it ends).
 */
export class MassifFold implements EventFold {
  /** The snapshot events are spaced over the event count. */
  readonly needsEventCount = true;
  private readonly start: TraceStart;
  private readonly options: MassifOptions;
  private readonly detailedEvery: number;
  /** The events snapshots are asked for (without the peak), ascending; the next one's place. */
  private readonly asked: number[];
  private next = 0;
  private readonly taken: Snapshot[] = [];
  private readonly groups: GroupIndex;
  /** Per group: live requested bytes and live blocks now, and at the latest maximum. */
  private bytes: Float64Array = new Float64Array(16);
  private blocks: Float64Array = new Float64Array(16);
  private peakBytes: Float64Array = new Float64Array(16);
  private peakBlocks: Float64Array = new Float64Array(16);
  /** Groups changed since the latest maximum, once each. */
  private changed: Int32Array = new Int32Array(16);
  private changedCount = 0;
  private isChanged: Uint8Array = new Uint8Array(16);
  private best = -1;
  private peak: Snapshot | null = null;

  constructor(start: TraceStart, options: MassifOptions = {}) {
    this.start = start;
    this.options = options;
    this.detailedEvery = Math.max(1, options.detailedEvery ?? 10);
    const n = start.events;
    if (options.events !== undefined) {
      const set = new Set<number>();
      for (let i = 0; i < options.events.length; i++) {
        const e = options.events[i]!;
        if (Number.isInteger(e) && e >= 0 && e < n) set.add(e);
      }
      this.asked = [...set].sort((a, b) => a - b);
    } else {
      this.asked = evenlySpaced(n, options.snapshots ?? 100);
    }
    this.groups = new GroupIndex(start);
  }

  private grow(n: number): void {
    this.bytes = grown(this.bytes, n);
    this.blocks = grown(this.blocks, n);
    this.peakBytes = grown(this.peakBytes, n);
    this.peakBlocks = grown(this.peakBlocks, n);
    this.changed = grown(this.changed, n);
    this.isChanged = grown(this.isChanged, n);
  }

  /** Adds `sign` × block `h` to its group. */
  private count(blocks: FoldBlocks, h: number, sign: number): void {
    const g = this.groups.siteGroup(blocks, h);
    if (g >= this.bytes.length) this.grow(g + 1);
    this.bytes[g] = this.bytes[g]! + sign * blocks.requested[h]!;
    this.blocks[g] = this.blocks[g]! + sign;
    if (this.isChanged[g] === 0) {
      this.isChanged[g] = 1;
      this.changed[this.changedCount++] = g;
    }
  }

  /** The groups with a live block now. */
  private tree(): Tree {
    const tree: Tree = { groups: [], bytes: [] };
    for (let g = 0; g < this.groups.refs.length; g++) {
      if (this.blocks[g]! > 0) {
        tree.groups.push(g);
        tree.bytes.push(this.bytes[g]!);
      }
    }
    return tree;
  }

  event(e: FoldEvent, tables: FoldTables): void {
    if (e.oldBlock !== NONE) this.count(tables.blocks, e.oldBlock, -1);
    if (e.newBlock !== NONE) this.count(tables.blocks, e.newBlock, 1);
    const v = e.heapUsable + e.stackTotal;
    if (v > this.best) {
      this.best = v;
      for (let i = 0; i < this.changedCount; i++) {
        const g = this.changed[i]!;
        this.peakBytes[g] = this.bytes[g]!;
        this.peakBlocks[g] = this.blocks[g]!;
        this.isChanged[g] = 0;
      }
      this.changedCount = 0;
      this.peak = { event: e.index, heap: e.heapRequested, usable: e.heapUsable, stacks: e.stackTotal, tree: null };
    }
    if (this.next < this.asked.length && this.asked[this.next] === e.index) {
      // Its place among the snapshots is `next`, or `next + 1` if the peak falls before it.
      const d = this.detailedEvery;
      const mayBeDetailed = (this.next + 1) % d === 0 || (this.next + 2) % d === 0;
      this.taken.push({ event: e.index, heap: e.heapRequested, usable: e.heapUsable, stacks: e.stackTotal, tree: mayBeDetailed ? this.tree() : null });
      this.next++;
    }
  }

  /** The Massif file. */
  result(): string {
    const { options, detailedEvery } = this;
    const threshold = options.threshold ?? 1;
    const labels = this.groups.refs.map((r) => groupLabel(this.start, r.key.startsWith('interposed:') ? -r.site - 1 : r.site));
    const peak = this.peak;
    const snapshots = [...this.taken];
    if (peak !== null) {
      peak.tree = { groups: [], bytes: [] };
      for (let g = 0; g < this.groups.refs.length; g++) {
        if (this.peakBlocks[g]! > 0) {
          peak.tree.groups.push(g);
          peak.tree.bytes.push(this.peakBytes[g]!);
        }
      }
      const at = snapshots.findIndex((s) => s.event >= peak.event);
      if (at === -1) snapshots.push(peak);
      else snapshots.splice(at, snapshots[at]!.event === peak.event ? 1 : 0, peak);
    }

    const out: string[] = [];
    out.push(`desc: ${oneLine(options.desc ?? 'cc-memwrap export')}`);
    out.push(`cmd: ${oneLine(options.cmd ?? this.start.program?.path ?? '(unknown)')}`);
    out.push('time_unit: i');
    const snap = (num: number, time: number, heap: number, extra: number, stacks: number, tree: string[] | null, isPeak: boolean): void => {
      out.push('#-----------', `snapshot=${num}`, '#-----------');
      out.push(`time=${time}`, `mem_heap_B=${heap}`, `mem_heap_extra_B=${extra}`, `mem_stacks_B=${stacks}`);
      if (tree === null) out.push('heap_tree=empty');
      else out.push(`heap_tree=${isPeak ? 'peak' : 'detailed'}`, ...tree);
    };
    if (snapshots.length === 0) snap(0, 0, 0, 0, 0, null, false);
    snapshots.forEach((s, i) => {
      const heap = Math.max(0, Math.round(s.heap));
      const extra = Math.max(0, Math.round(s.usable - s.heap));
      const stacks = Math.max(0, Math.round(s.stacks));
      const isPeak = s === peak;
      const detailed = isPeak || (i + 1) % detailedEvery === 0;
      snap(i, s.event, heap, extra, stacks, detailed ? renderTree(labels, s.tree!, threshold) : null, isPeak);
    });
    return out.join('\n') + '\n';
  }
}

/** A decoded model as a Massif file (see MassifFold). */
export function exportMassif(model: Model, options: MassifOptions = {}): string {
  const fold = new MassifFold(modelStart(model), options);
  foldModel(model, [fold]);
  return fold.result();
}
