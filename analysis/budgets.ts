// Memory budgets: parse them (`heap=64K,stack=8K` or a memwrap.json text), find the ranges of events where usage exceeds each, and what was in use when each range began: the heap blocks live, by function and site, and for stack and total budgets the frames on the stack.
import { NONE, type Model } from './model.js';
import { BlockGroups, type GroupRef } from './block-groups.js';
import { framePathIn, type ObservedStep } from './deepest-stack.js';
import type { EventFold, FoldBlocks, FoldEvent, FoldTables, TraceEnd, TraceStart } from './event-fold.js';
import { foldModel, modelStart } from './model-fold.js';
import { Kind } from './trace/format.js';
import { libraryCause, type LibraryCause } from './library-blocks.js';

export type BudgetKind = 'heap' | 'stack' | 'static' | 'total';
export const BUDGET_KINDS: readonly BudgetKind[] = ['heap', 'stack', 'static', 'total'];

/**
 * Limits in bytes; a kind without a limit is not checked. `libraryBlocks` false: the heap and total budgets leave out
 * the blocks libraries made (libc's stdout buffer …, those the interposed allocator saw); by default they count them,
 * as the target's memory does.
 */
export type Budgets = Partial<Record<BudgetKind, number>> & { libraryBlocks?: boolean };

/** The yes/no of `library=` in a --budget spec. */
const YES_NO: Record<string, boolean> = { yes: true, no: false, true: true, false: false };

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

/**
 * "heap=64K,stack=8K,static=1K,total=80K" (any subset, each kind once), and `library=no` to leave the blocks libraries
 * made out of the heap and total budgets. Throws BudgetError.
 */
export function parseBudgets(spec: string): Budgets {
  const out: Budgets = {};
  if (spec.trim() === '') throw new BudgetError('empty budget: use e.g. heap=64K,stack=8K');
  for (const part of spec.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) throw new BudgetError(`'${part}' is not KIND=SIZE (e.g. heap=64K)`);
    if (part.slice(0, eq).trim() === 'library') {
      const v = YES_NO[part.slice(eq + 1).trim()];
      if (v === undefined) throw new BudgetError(`'${part}': library= wants yes or no (no: the heap and total budgets leave out the blocks libraries made)`);
      if (out.libraryBlocks !== undefined) throw new BudgetError(`'library' given twice`);
      out.libraryBlocks = v;
      continue;
    }
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
    if (key === 'libraryBlocks') {
      if (typeof value !== 'boolean') throw new BudgetError(`${name}: "libraryBlocks" must be true or false (false: the heap and total budgets leave out the blocks libraries made)`);
      out.libraryBlocks = value;
      continue;
    }
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
  /** Blocks a library made (the site "f (via libc/uninstrumented)"): what made them and what to do about it, when known. */
  madeBy?: LibraryCause;
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
  /** The ranges above the limit, in event order: all of them, or the first `keepRanges`. */
  ranges: BudgetRange[];
  /** How many ranges there are (kept or not). */
  rangeCount: number;
  /** Present, false, on a heap or total budget that leaves out the blocks libraries made (`libraryBlocks: false`). */
  libraryBlocks?: false;
}

export interface BudgetOptions {
  /** Live blocks are grouped for the first this many ranges of each budget (default 100); later ranges have `liveBlocks` null. */
  maxRanges?: number;
  /** Ranges kept per budget (default: all); the others are counted in `rangeCount` only. */
  keepRanges?: number;
}

function byBytes<T extends { bytes: number; blocks: number; label: string }>(a: T, b: T): number {
  return b.bytes - a.bytes || b.blocks - a.blocks || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0);
}

/** One budget being checked. */
interface Check {
  result: BudgetCheck;
  /** Which usage: 0 heap, 1 stack, 2 static, 3 total. */
  usage: number;
  /** The range the previous event was in, or null (none, or one not kept). */
  cur: BudgetRange | null;
  /** Whether the previous event was above the limit. */
  above: boolean;
}

/**
 * Checks each given budget against its usage after every event: heap = live requested heap bytes, stack = stack bytes
 * summed over threads, static = static bytes registered so far, total = their sum. Budgets are checked in the order
 * heap, stack, static, total. A fold in one pass: it keeps the live blocks' bytes per (function, site) pair and, for
 * stack and total budgets, each thread's innermost open frame, and reads them when one of the first `maxRanges` ranges
 * begins. Memory: pairs + threads + the kept ranges.
 */
export class BudgetFold implements EventFold {
  /** The ranges' start and end times. */
  readonly needsTime = true;
  private readonly start: TraceStart;
  private readonly checks: Check[] = [];
  private readonly maxRanges: number;
  private readonly keepRanges: number;
  private readonly groups: BlockGroups;
  private readonly wantStacks: boolean;
  private statics = 0;
  /** Pairs of a function group and a site group, by a number of the block's site, entry and interposed flag. */
  private readonly pairOfKey = new Map<number | string, number>();
  private readonly pairs: { fn: GroupRef; site: GroupRef; madeBy: LibraryCause | null; library: boolean }[] = [];
  /** Whether the heap and total budgets count the blocks libraries made, and those live now (requested bytes). */
  private readonly countLibrary: boolean;
  private libraryHeap = 0;
  private pairBlocks: Float64Array = new Float64Array(16);
  private pairBytes: Float64Array = new Float64Array(16);
  /** Per block handle: its pair. */
  private pairOfBlock = new Int32Array(64);
  /** Per thread row: its innermost open frame (handle), NONE: none. */
  private innermost: Int32Array;
  /** Stacks read at range starts, by thread row until `finish` names the threads. */
  private readonly stackRows: { range: BudgetRange; rows: number[] }[] = [];
  /** The first event above any budget: which, and the site it happened at (its own, or its innermost frame's entry). */
  private crossing: BudgetCrossing | null = null;

  constructor(start: TraceStart, budgets: Budgets, options: BudgetOptions = {}) {
    this.start = start;
    this.maxRanges = Math.max(0, options.maxRanges ?? 100);
    this.keepRanges = options.keepRanges ?? Infinity;
    this.groups = new BlockGroups(start);
    BUDGET_KINDS.forEach((kind, usage) => {
      const limit = budgets[kind];
      if (limit === undefined) return;
      const result: BudgetCheck = { kind, limitBytes: limit, exceeded: false, maxBytes: 0, maxEvent: null, ranges: [], rangeCount: 0 };
      if (budgets.libraryBlocks === false && (kind === 'heap' || kind === 'total')) result.libraryBlocks = false;
      this.checks.push({ result, usage, cur: null, above: false });
    });
    this.wantStacks = budgets.stack !== undefined || budgets.total !== undefined;
    this.countLibrary = budgets.libraryBlocks !== false;
    this.innermost = new Int32Array(Math.max(1, start.threads)).fill(NONE);
  }

  event(e: FoldEvent, tables: FoldTables): void {
    if (this.checks.length === 0) return;
    if (e.kind === Kind.STATIC) this.statics += e.value;
    // The blocks an event ended and made (only heap events do; a realloc does both, the old block first).
    if (e.oldBlock !== NONE) {
      this.count(this.pairOfBlock[e.oldBlock]!, -tables.blocks.requested[e.oldBlock]!, -1);
      if (tables.blocks.interposed[e.oldBlock] === 1) this.libraryHeap -= tables.blocks.requested[e.oldBlock]!;
    }
    if (e.newBlock !== NONE) this.created(e.newBlock, tables.blocks);
    if (this.wantStacks) this.innermostAfter(e, tables.frames);
    const heap = this.countLibrary ? e.heapRequested : e.heapRequested - this.libraryHeap;
    const stack = e.stackTotal;
    for (let c = 0; c < this.checks.length; c++) {
      const check = this.checks[c]!;
      const u = check.usage;
      const v = u === 0 ? heap : u === 1 ? stack : u === 2 ? this.statics : heap + stack + this.statics;
      this.check(check, v, e, tables);
    }
  }

  private check(check: Check, v: number, e: FoldEvent, tables: FoldTables): void {
    const r = check.result;
    if (r.maxEvent === null || v > r.maxBytes) {
      r.maxBytes = v;
      r.maxEvent = e.index;
    }
    if (!(v > r.limitBytes)) {
      check.above = false;
      check.cur = null;
      return;
    }
    if (!check.above) {
      check.above = true;
      r.exceeded = true;
      if (this.crossing === null) {
        const site = e.site !== 0 || e.frame === NONE ? e.site : tables.frames.entrySite[e.frame]!;
        this.crossing = { kind: r.kind, limitBytes: r.limitBytes, bytes: v, event: e.index, site };
      }
      if (r.rangeCount < this.keepRanges) {
        const range: BudgetRange = { startEvent: e.index, endEvent: e.index, startTimeNs: e.time, endTimeNs: e.time, maxBytes: v, maxEvent: e.index, startBytes: v, liveBlocks: null, liveBytes: null, functions: [], stacks: null };
        if (r.rangeCount < this.maxRanges) this.describe(range, check.usage === 1 || check.usage === 3, tables);
        r.ranges.push(range);
        check.cur = range;
      }
      r.rangeCount++;
    }
    const cur = check.cur;
    if (cur === null) return;
    cur.endEvent = e.index;
    cur.endTimeNs = e.time;
    if (v > cur.maxBytes) {
      cur.maxBytes = v;
      cur.maxEvent = e.index;
    }
  }

  /** Block `h` was made: its pair (looked up once per block), counted. */
  private created(h: number, blocks: FoldBlocks): void {
    const entry = blocks.entry[h]!;
    const site = blocks.site[h]!;
    // One number for (site, entry) while it is exact, for site ids below 2^21; a larger one (a damaged trace) by text.
    const key: number | string = blocks.interposed[h] === 1 ? -entry - 1 : site < 2 ** 21 ? site * 2 ** 32 + entry : `${site}:${entry}`;
    const library = blocks.interposed[h] === 1;
    if (library) this.libraryHeap += blocks.requested[h]!;
    let p = this.pairOfKey.get(key);
    if (p === undefined) {
      const lib = blocks.library[h]!;
      const madeBy = library ? libraryCause(this.start, entry, lib === NONE ? null : (this.start.libraries[lib] ?? null)) : null;
      p = this.pairs.push({ fn: this.groups.functionOfBlock(blocks, h), site: this.groups.siteOfBlock(blocks, h), madeBy, library }) - 1;
      this.pairOfKey.set(key, p);
      if (p >= this.pairBlocks.length) {
        const more = (a: Float64Array): Float64Array => {
          const b = new Float64Array(a.length * 2);
          b.set(a);
          return b;
        };
        this.pairBlocks = more(this.pairBlocks);
        this.pairBytes = more(this.pairBytes);
      }
    }
    if (h >= this.pairOfBlock.length) {
      const b = new Int32Array(Math.max(this.pairOfBlock.length * 2, h + 1));
      b.set(this.pairOfBlock);
      this.pairOfBlock = b;
    }
    this.pairOfBlock[h] = p;
    this.count(p, blocks.requested[h]!, 1);
  }

  private count(p: number, bytes: number, blocks: number): void {
    this.pairBlocks[p] = this.pairBlocks[p]! + blocks;
    this.pairBytes[p] = this.pairBytes[p]! + bytes;
  }

  /** The innermost frame open on the event's thread after it. */
  private innermostAfter(e: FoldEvent, frames: FoldTables['frames']): void {
    const t = e.thread;
    if (t >= this.innermost.length) {
      const b = new Int32Array(Math.max(this.innermost.length * 2, t + 1)).fill(NONE);
      b.set(this.innermost);
      this.innermost = b;
    }
    const kind = e.kind;
    const f = e.frame;
    // EXIT names the frame it closed, UNWIND the outermost one it closed: their caller is the innermost left.
    if (kind === Kind.EXIT || kind === Kind.UNWIND) this.innermost[t] = f === NONE ? NONE : frames.parent[f]!;
    else if (kind === Kind.THREAD_END) this.innermost[t] = NONE;
    else this.innermost[t] = f; // ENTER: the frame it opened; any other event: the innermost open frame
  }

  /** What range `r` began with: the live blocks by function and site, and (`stacks`) the frames open on each thread. */
  private describe(r: BudgetRange, stacks: boolean, tables: FoldTables): void {
    const fns = new Map<string, { fn: BudgetFunction; sites: Map<string, BudgetSite> }>();
    let count = 0;
    let total = 0;
    for (let p = 0; p < this.pairs.length; p++) {
      const blocks = this.pairBlocks[p]!;
      const { fn: fref, site: sref, madeBy, library } = this.pairs[p]!;
      // Blocks a budget does not count are not what its range began with.
      if (blocks === 0 || (library && !this.countLibrary)) continue;
      const bytes = this.pairBytes[p]!;
      count += blocks;
      total += bytes;
      let f = fns.get(fref.key);
      if (f === undefined) {
        f = { fn: { ...fref, blocks: 0, bytes: 0, sites: [] }, sites: new Map() };
        fns.set(fref.key, f);
      }
      f.fn.blocks += blocks;
      f.fn.bytes += bytes;
      let s = f.sites.get(sref.key);
      if (s === undefined) {
        s = { ...sref, blocks: 0, bytes: 0, ...(madeBy === null ? {} : { madeBy }) };
        f.sites.set(sref.key, s);
      }
      s.blocks += blocks;
      s.bytes += bytes;
    }
    r.liveBlocks = count;
    r.liveBytes = total;
    r.functions = [...fns.values()].map(({ fn, sites }) => ({ ...fn, sites: [...sites.values()].sort(byBytes) })).sort(byBytes);
    if (!stacks) return;
    const rows: number[] = [];
    r.stacks = [];
    this.innermost.forEach((f, row) => {
      if (f === NONE) return;
      rows.push(row);
      r.stacks!.push({ thread: row, depthBytes: tables.frames.depth[f]!, frames: framePathIn(this.start, tables.frames, f) });
    });
    this.stackRows.push({ range: r, rows });
  }

  finish(end: TraceEnd): void {
    // The stacks' thread rows named by the thread list.
    for (const { range, rows } of this.stackRows) range.stacks!.forEach((s, i) => (s.thread = end.threads[rows[i]!]?.index ?? rows[i]!));
  }

  result(): BudgetCheck[] {
    return this.checks.map((c) => c.result);
  }

  /** The first budget crossed and where, or null when none was. */
  firstCrossing(): BudgetCrossing | null {
    return this.crossing;
  }
}

/** The first event whose usage passed a budget: the budget, the usage after it, and its site (0: none known). */
export interface BudgetCrossing {
  kind: BudgetKind;
  limitBytes: number;
  bytes: number;
  event: number;
  site: number;
}

/** `BudgetFold` over a decoded model: every range kept. */
export function checkBudgets(model: Model, budgets: Budgets, options: BudgetOptions = {}): BudgetCheck[] {
  const fold = new BudgetFold(modelStart(model), budgets, options);
  foldModel(model, [fold]);
  return fold.result();
}
