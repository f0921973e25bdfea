// Memory budgets: parse them (`heap=64K,stack=8K` or a memwrap.json text), find the ranges of events where usage exceeds each, and the heap blocks live when each range began, by function and site.
import type { Model } from './model.js';
import { BlockGroups, type GroupRef } from './block-groups.js';
import { staticSeries } from './timeline.js';

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

/**
 * Checks each given budget against its usage after every event: heap = live requested heap bytes, stack = stack bytes
 * summed over threads, static = static bytes registered so far, total = their sum. Budgets are checked in the order
 * heap, stack, static, total. O(events + ranges × blocks) with ranges capped by `maxRanges`.
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
          cur = { startEvent: i, endEvent: i, startTimeNs: ev.time[i]!, endTimeNs: ev.time[i]!, maxBytes: v, maxEvent: i, startBytes: v, liveBlocks: null, liveBytes: null, functions: [] };
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
    for (const r of ranges.slice(0, Math.max(0, maxRanges))) {
      const live = liveByFunction(model, r.startEvent, groups);
      r.liveBlocks = live.blocks;
      r.liveBytes = live.bytes;
      r.functions = live.functions;
    }
    out.push({ kind, limitBytes: limit, exceeded: ranges.length > 0, maxBytes, maxEvent, ranges });
  }
  return out;
}
