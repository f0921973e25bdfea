// A trace as a Valgrind Massif output file (massif.out.<pid>), for ms_print and massif-visualizer: heap and stack snapshots, with heap trees by allocation site.
import { NONE, type Model } from './model.js';
import { allocationSiteLabel, allocatorName, interposedLabel, siteInfo, siteLocation } from './sites.js';
import { eventSeries, peakEvent, type EventSeries } from './timeline.js';

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
 */
function groupLabel(model: Model, key: number): string {
  const cwd = model.program?.cwd;
  if (key < 0) return oneLine(`0x0: ${interposedLabel(siteInfo(model, -key - 1))}`);
  const info = siteInfo(model, key);
  if (info === null) return oneLine(`0x0: ${allocationSiteLabel(null, key, cwd)}`);
  return oneLine(`0x0: ${allocatorName(info)} (${siteLocation(info, cwd)}) in ${info.func || '<file scope>'}`);
}

/** The group key of every block: its site, or -(entry site of its attributed frame) - 1 if interposed (as summary.ts groups). */
function blockKeys(model: Model): Int32Array {
  const { blocks, events, frames } = model;
  const keys = new Int32Array(blocks.count);
  for (let b = 0; b < blocks.count; b++) {
    if (blocks.interposed[b] === 1) {
      const frame = events.frame[blocks.allocEvent[b]!]!;
      const site = frame === NONE ? 0 : frames.entrySite[frame]!;
      keys[b] = -site - 1;
    } else {
      keys[b] = blocks.site[b]!;
    }
  }
  return keys;
}

/** Live requested bytes per group after each of `at` (ascending events), in one pass over the blocks. */
function treesAt(model: Model, at: number[]): Map<number, number>[] {
  const { blocks } = model;
  const keys = blockKeys(model);
  const maps = at.map(() => new Map<number, number>());
  for (let b = 0; b < blocks.count; b++) {
    const from = blocks.allocEvent[b]!;
    const to = blocks.freeEvent[b]!;
    for (let j = 0; j < at.length; j++) {
      const e = at[j]!;
      if (from <= e && (to === NONE || to > e)) {
        const m = maps[j]!;
        const k = keys[b]!;
        m.set(k, (m.get(k) ?? 0) + blocks.requested[b]!);
      }
    }
  }
  return maps;
}

function renderTree(model: Model, groups: Map<number, number>, threshold: number): string[] {
  const nodes: TreeNode[] = [];
  let total = 0;
  for (const [key, bytes] of groups) {
    nodes.push({ bytes: Math.round(bytes), label: groupLabel(model, key) });
    total += Math.round(bytes);
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

/** The events snapshots are taken after: `count` evenly spaced from the first to the last, plus the peak. */
export function snapshotEvents(series: EventSeries, count = 100): { events: number[]; peak: number } {
  const n = series.count;
  const set = new Set<number>();
  const k = Math.max(1, Math.min(count, n));
  if (n > 0) {
    if (k === 1) set.add(n - 1);
    else for (let i = 0; i < k; i++) set.add(Math.round((i * (n - 1)) / (k - 1)));
  }
  const peak = peakEvent(series);
  if (peak !== NONE) set.add(peak);
  return { events: [...set].sort((a, b) => a - b), peak };
}

/**
 * Massif's output format as `ms_print` reads it. `time=` is the event index (time_unit: i, as instructions would be),
 * `mem_heap_B` the requested bytes live after that event, `mem_heap_extra_B` usable − requested, `mem_stacks_B` the
 * stack bytes of all threads. The peak is the snapshot with the most heap usable + stack (first such event). The peak
 * and every `detailedEvery`-th snapshot carry a heap tree of the live blocks by allocation site.
 */
export function exportMassif(model: Model, options: MassifOptions = {}): string {
  const series = eventSeries(model);
  const n = series.count;
  let chosen: number[];
  let peak: number;
  if (options.events !== undefined) {
    const set = new Set<number>();
    for (let i = 0; i < options.events.length; i++) {
      const e = options.events[i]!;
      if (Number.isInteger(e) && e >= 0 && e < n) set.add(e);
    }
    peak = peakEvent(series);
    if (peak !== NONE) set.add(peak);
    chosen = [...set].sort((a, b) => a - b);
  } else {
    ({ events: chosen, peak } = snapshotEvents(series, options.snapshots ?? 100));
  }
  const detailedEvery = Math.max(1, options.detailedEvery ?? 10);
  const threshold = options.threshold ?? 1;
  const detailed: number[] = [];
  chosen.forEach((e, i) => {
    if (e === peak || (i + 1) % detailedEvery === 0) detailed.push(e);
  });
  const trees = treesAt(model, detailed);
  const treeOf = new Map<number, Map<number, number>>();
  detailed.forEach((e, i) => treeOf.set(e, trees[i]!));

  const out: string[] = [];
  out.push(`desc: ${oneLine(options.desc ?? 'cc-memwrap export')}`);
  out.push(`cmd: ${oneLine(options.cmd ?? model.program?.path ?? '(unknown)')}`);
  out.push('time_unit: i');
  const snap = (num: number, time: number, heap: number, extra: number, stacks: number, tree: string[] | null, isPeak: boolean): void => {
    out.push('#-----------', `snapshot=${num}`, '#-----------');
    out.push(`time=${time}`, `mem_heap_B=${heap}`, `mem_heap_extra_B=${extra}`, `mem_stacks_B=${stacks}`);
    if (tree === null) out.push('heap_tree=empty');
    else out.push(`heap_tree=${isPeak ? 'peak' : 'detailed'}`, ...tree);
  };
  if (chosen.length === 0) snap(0, 0, 0, 0, 0, null, false);
  chosen.forEach((e, i) => {
    const heap = Math.max(0, Math.round(series.heapRequested[e]!));
    const extra = Math.max(0, Math.round(series.heapUsable[e]! - series.heapRequested[e]!));
    const stacks = Math.max(0, Math.round(series.stack[e]!));
    const groups = treeOf.get(e);
    snap(i, e, heap, extra, stacks, groups === undefined ? null : renderTree(model, groups, threshold), e === peak);
  });
  return out.join('\n') + '\n';
}
