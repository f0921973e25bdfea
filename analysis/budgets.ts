// Memory budgets: parse them (`heap=64K,stack=8K` or a memwrap.json text), find the ranges of events where usage exceeds each, and what was in use when each range began: the heap blocks live, by function and site, and for stack and total budgets the frames on the stack.
import { NONE, type Model } from './model.js';
import { BlockGroups, type GroupRef } from './block-groups.js';
import { framePath, type ObservedStep } from './deepest-stack.js';
import { staticSeries } from './timeline.js';
import { Kind } from './trace/format.js';

export type BudgetKind = 'heap' | 'stack' | 'static' | 'total';
export const BUDGET_KINDS: readonly BudgetKind[] = ['heap', 'stack', 'static', 'total'];

/** Limits in bytes; a kind without a limit is not checked. */
export type Budgets = Partial<Record<BudgetKind, number>>;

/** A budget that cannot be parsed; the message is one line, fit for the CLI. */
export class BudgetError extends Error {
  override name = 'BudgetError';
}

const SIZE_UNITS: Record<string, number> = { '': 1, b: 1, k: 1024, kib: 1024, m: 1024 ** 2, mib: 1024 ** 2, g: 1024 ** 3, gib: 1024 ** 3 };

/** "64K" → 65536. Units (case-insensitive): B, K/KiB, M/MiB, G/GiB (binary); no unit: bytes. Throws BudgetError. */
export function parseSize(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*([a-zA-Z]*)\s*$/.exec(text);
  const unit = m === null ? undefined : SIZE_UNITS[m[2]!.toLowerCase()];
  if (m === null || unit === undefined) {
    throw new BudgetError(`'${text}' is not a size: use bytes or a number with B, K, KiB, M, MiB, G or GiB (64K = 65536 bytes)`);
  }
  const bytes = Math.floor(Number(m[1]) * unit);
  if (!Number.isSafeInteger(bytes)) throw new BudgetError(`'${text}' is too large`);
  return bytes;
}

function kindOf(name: string, where: string): BudgetKind {
  if (!(BUDGET_KINDS as readonly string[]).includes(name)) {
    throw new BudgetError(`${where}unknown budget '${name}': use ${BUDGET_KINDS.join(', ')}`);
  }
  return name as BudgetKind;
}

/** "heap=64K,stack=8K,static=1K,total=80K" (any subset, each kind once). Throws BudgetError. */
export function parseBudgets(spec: string): Budgets {
  const out: Budgets = {};
  if (spec.trim() === '') throw new BudgetError('empty budget: use e.g. heap=64K,stack=8K');
  for (const part of spec.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) throw new BudgetError(`'${part}' is not KIND=SIZE (e.g. heap=64K)`);
    const kind = kindOf(part.slice(0, eq).trim(), '');
    if (out[kind] !== undefined) throw new BudgetError(`budget '${kind}' given twice`);
    out[kind] = parseSize(part.slice(eq + 1));
  }
  return out;
}

/**
 * The budgets of a memwrap.json text: `{ "budgets": { "heap": "64K", "stack": 8192 } }` (sizes as numbers of bytes or
 * strings with units; other top-level keys are ignored; no "budgets": none). Pure; `name` prefixes the messages.
 * Throws BudgetError.
 */
export function parseBudgetConfig(text: string, name = 'memwrap.json'): Budgets {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new BudgetError(`${name}: not valid JSON (${(e as Error).message})`);
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw new BudgetError(`${name}: expected a JSON object`);
  const budgets = (json as Record<string, unknown>).budgets;
  if (budgets === undefined) return {};
  if (budgets === null || typeof budgets !== 'object' || Array.isArray(budgets)) {
    throw new BudgetError(`${name}: "budgets" must be an object like { "heap": "64K" }`);
  }
  const out: Budgets = {};
  for (const [key, value] of Object.entries(budgets as Record<string, unknown>)) {
    const kind = kindOf(key, `${name}: `);
    if (typeof value === 'number') {
      if (!Number.isSafeInteger(value) || value < 0) throw new BudgetError(`${name}: budget "${kind}" must be a whole number of bytes, got ${value}`);
      out[kind] = value;
    } else if (typeof value === 'string') {
      try {
        out[kind] = parseSize(value);
      } catch (e) {
        throw new BudgetError(`${name}: budget "${kind}": ${(e as Error).message}`);
      }
    } else {
      throw new BudgetError(`${name}: budget "${kind}" must be a number of bytes or a string like "64K"`);
    }
  }
  return out;
}

/** One allocation site's share of a function's live blocks. */
export interface BudgetSite extends GroupRef {
  blocks: number;
  bytes: number;
}

/** The live blocks of one function (innermost instrumented frame at their allocation), by site. */
export interface BudgetFunction extends GroupRef {
  blocks: number;
  bytes: number;
  /** By bytes descending, then blocks, then label. */
  sites: BudgetSite[];
}

/** One thread's stack when a range began: the instrumented frames open on it. */
export interface BudgetStack {
  /** The trace's thread index (as in the report's Threads table). */
  thread: number;
  /** The thread's stack bytes: the entry depth of its innermost frame, from the stack base (what a stack budget counts). */
  depthBytes: number;
  /**
   * Outermost first. `frameBytes` is each frame's size (its entry depth minus its caller's); null for the outermost,
   * whose `depthBytes` also holds the C start-up code above it.
   */
  frames: ObservedStep[];
}

/** A maximal run of consecutive events whose usage is above the limit. */
export interface BudgetRange {
  /** First and last event above the limit (indices in the global order), and their times in ns. */
  startEvent: number;
  endEvent: number;
  startTimeNs: number;
  endTimeNs: number;
  /** The largest usage in the range and the first event reaching it. */
  maxBytes: number;
  maxEvent: number;
  /** Usage after the first event. */
  startBytes: number;
  /** Heap blocks live after `startEvent` and their requested bytes; null when not computed (beyond `maxRanges`). */
  liveBlocks: number | null;
  liveBytes: number | null;
  /** Those blocks by function, by bytes descending; [] when not computed. */
  functions: BudgetFunction[];
  /**
   * Stack and total budgets: the stack of each thread with instrumented frames open after `startEvent`, in thread
   * order (their `depthBytes` add up to the stack bytes the budget counts). null for heap and static budgets, whose
   * usage no frame explains, and when not computed (beyond `maxRanges`).
   */
  stacks: BudgetStack[] | null;
}

export interface BudgetCheck {
  kind: BudgetKind;
  limitBytes: number;
  exceeded: boolean;
  /** The largest usage over the run and the first event reaching it (null: no events). */
  maxBytes: number;
  maxEvent: number | null;
  /** All ranges above the limit, in event order. */
  ranges: BudgetRange[];
}

export interface BudgetOptions {
  /** Live blocks are grouped for the first this many ranges of each budget (default 100); later ranges have `liveBlocks` null. */
  maxRanges?: number;
}

function byBytes<T extends { bytes: number; blocks: number; label: string }>(a: T, b: T): number {
  return b.bytes - a.bytes || b.blocks - a.blocks || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0);
}

/** The heap blocks live after `event` by function, each by site. O(blocks allocated up to `event`). */
export function liveByFunction(model: Model, event: number, groups = new BlockGroups(model)): { blocks: number; bytes: number; functions: BudgetFunction[] } {
  const { blocks } = model;
  const fns = new Map<string, { fn: BudgetFunction; sites: Map<string, BudgetSite> }>();
  let count = 0;
  let total = 0;
  for (let b = 0; b < blocks.count; b++) {
    if (blocks.allocEvent[b]! > event) break; // blocks are in creation order
    const freed = blocks.freeEvent[b]!;
    if (freed >= 0 && freed <= event) continue;
    const bytes = blocks.requested[b]!;
    count++;
    total += bytes;
    const fref = groups.functionOf(b);
    let f = fns.get(fref.key);
    if (f === undefined) {
      f = { fn: { ...fref, blocks: 0, bytes: 0, sites: [] }, sites: new Map() };
      fns.set(fref.key, f);
    }
    f.fn.blocks++;
    f.fn.bytes += bytes;
    const sref = groups.siteOf(b);
    let s = f.sites.get(sref.key);
    if (s === undefined) {
      s = { ...sref, blocks: 0, bytes: 0 };
      f.sites.set(sref.key, s);
    }
    s.blocks++;
    s.bytes += bytes;
  }
  const functions = [...fns.values()].map(({ fn, sites }) => ({ ...fn, sites: [...sites.values()].sort(byBytes) })).sort(byBytes);
  return { blocks: count, bytes: total, functions };
}

/** The innermost frame open on event `i`'s thread after it (NONE: none). */
function innermostAfter(model: Model, i: number): number {
  const kind = model.events.kind[i]!;
  const f = model.events.frame[i]!;
  // EXIT names the frame it closed, UNWIND the outermost one it closed: their caller is the innermost left.
  if (kind === Kind.EXIT || kind === Kind.UNWIND) return f === NONE ? NONE : model.frames.parent[f]!;
  if (kind === Kind.THREAD_END) return NONE;
  return f; // ENTER: the frame it opened; any other event: the innermost open frame
}

/**
 * The frames open on every thread after each of `at` (event indices, ascending): one pass over the events up to the
 * last of them, so O(events + |at| × threads × call depth).
 */
export function stacksAt(model: Model, at: readonly number[]): BudgetStack[][] {
  const innermost = new Int32Array(model.threads.length).fill(NONE);
  const out: BudgetStack[][] = [];
  let i = 0;
  for (const e of at) {
    for (; i <= e; i++) innermost[model.events.thread[i]!] = innermostAfter(model, i);
    const stacks: BudgetStack[] = [];
    innermost.forEach((f, row) => {
      if (f !== NONE) stacks.push({ thread: model.threads[row]!.index, depthBytes: model.frames.depth[f]!, frames: framePath(model, f) });
    });
    out.push(stacks);
  }
  return out;
}

/**
 * Checks each given budget against its usage after every event: heap = live requested heap bytes, stack = stack bytes
 * summed over threads, static = static bytes registered so far, total = their sum. Budgets are checked in the order
 * heap, stack, static, total. O(events + ranges × (blocks + call depth)) with ranges capped by `maxRanges`.
 */
export function checkBudgets(model: Model, budgets: Budgets, options: BudgetOptions = {}): BudgetCheck[] {
  const maxRanges = options.maxRanges ?? 100;
  const ev = model.events;
  const n = ev.count;
  const statics = staticSeries(model);
  const groups = new BlockGroups(model);
  const usage: Record<BudgetKind, (i: number) => number> = {
    heap: (i) => ev.heapRequested[i]!,
    stack: (i) => ev.stackTotal[i]!,
    static: (i) => statics[i]!,
    total: (i) => ev.heapRequested[i]! + ev.stackTotal[i]! + statics[i]!,
  };
  const out: BudgetCheck[] = [];
  for (const kind of BUDGET_KINDS) {
    const limit = budgets[kind];
    if (limit === undefined) continue;
    const value = usage[kind];
    const ranges: BudgetRange[] = [];
    let maxBytes = 0;
    let maxEvent: number | null = null;
    let cur: BudgetRange | null = null;
    for (let i = 0; i < n; i++) {
      const v = value(i);
      if (maxEvent === null || v > maxBytes) {
        maxBytes = v;
        maxEvent = i;
      }
      if (v > limit) {
        if (cur === null) {
          cur = { startEvent: i, endEvent: i, startTimeNs: ev.time[i]!, endTimeNs: ev.time[i]!, maxBytes: v, maxEvent: i, startBytes: v, liveBlocks: null, liveBytes: null, functions: [], stacks: null };
          ranges.push(cur);
        }
        cur.endEvent = i;
        cur.endTimeNs = ev.time[i]!;
        if (v > cur.maxBytes) {
          cur.maxBytes = v;
          cur.maxEvent = i;
        }
      } else cur = null;
    }
    const grouped = ranges.slice(0, Math.max(0, maxRanges));
    for (const r of grouped) {
      const live = liveByFunction(model, r.startEvent, groups);
      r.liveBlocks = live.blocks;
      r.liveBytes = live.bytes;
      r.functions = live.functions;
    }
    if (kind === 'stack' || kind === 'total') {
      const stacks = stacksAt(model, grouped.map((r) => r.startEvent));
      grouped.forEach((r, k) => (r.stacks = stacks[k]!));
    }
    out.push({ kind, limitBytes: limit, exceeded: ranges.length > 0, maxBytes, maxEvent, ranges });
  }
  return out;
}
