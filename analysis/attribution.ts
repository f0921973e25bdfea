// Attribution tables of `cc-memwrap report --by …`: heap bytes and allocator calls charged to functions, allocation sites, files or threads.
import { Charges, GroupTable, GROUPERS, type AttributionBy, type AttributionMode, type AttributionRow, type GroupMaker } from './attribution-groups.js';
import type { EventFold, FoldEvent, FoldTables, TraceEnd, TraceStart } from './event-fold.js';
import { foldModel, modelStart } from './model-fold.js';
import { NONE, type Model } from './model.js';
import { Kind, SiteKind } from './trace/format.js';

export type { AttributionBy, AttributionCounts, AttributionMode, AttributionRow } from './attribution-groups.js';
export { ATTRIBUTION_BY, ATTRIBUTION_MODES } from './attribution-groups.js';

export interface AttributionOptions {
  by: AttributionBy;
  /** Default 'innermost'. Changes only 'function' and 'file' tables. */
  mode?: AttributionMode;
}

export interface Attribution {
  by: AttributionBy;
  mode: AttributionMode;
  /** Every group with at least one heap event, by max bytes descending, then label. */
  rows: AttributionRow[];
}

export { INSTRUMENTED_CODE, UNKNOWN_LIBRARY } from './attribution-groups.js';

const [C_MALLOC, C_CALLOC, C_ALIGNED, C_STRDUP, C_REALLOC, C_FREE] = [0, 1, 2, 3, 4, 5] as const;
/** Numbers kept per group: net, min, max, allocated, freed, six counts, blocks made, blocks ended. */
const STATS = 13;
const MADE = 11;
const ENDED = 12;

/** The count an ALLOC of allocator `fn` (a site kind) goes to. */
function counterOfAllocator(fn: number): number {
  switch (fn) {
    case SiteKind.CALLOC:
      return C_CALLOC;
    case SiteKind.ALIGNED_ALLOC:
    case SiteKind.POSIX_MEMALIGN:
    case SiteKind.MEMALIGN:
    case SiteKind.VALLOC:
    case SiteKind.PVALLOC:
      return C_ALIGNED;
    case SiteKind.STRDUP:
    case SiteKind.STRNDUP:
      return C_STRDUP;
    case SiteKind.REALLOC:
    case SiteKind.REALLOCARRAY:
      return C_REALLOC;
    default:
      return C_MALLOC;
  }
}

/** The count heap event `e` goes to, or -1 (an ALLOC that made no block, a FREE that ended none). */
function counterOf(e: FoldEvent, tables: FoldTables): number {
  const k = e.kind;
  if (k === Kind.REALLOC) return C_REALLOC;
  if (k === Kind.FREE) return e.oldBlock === NONE ? -1 : C_FREE;
  return e.newBlock === NONE ? -1 : counterOfAllocator(tables.blocks.fn[e.newBlock]!);
}

/** Told each heap event and the key of every group it is charged to (the same event can come once per group). */
export type AttributionVisitor = (event: number, key: string) => void;

/** Told each heap event (its index) and every group (row number in `AttributionFold.rows`) it is charged to. */
export type AttributionGroupVisitor = (event: number, group: number) => void;

/** The rows of one attribution table, sorted; see `attribution` for the options. */
export function attribute(model: Model, options: AttributionOptions): AttributionRow[] {
  return attribution(model, options).rows;
}

/**
 * Charges each heap event (ALLOC, FREE, REALLOC) to its group(s): the requested bytes of the block it creates are
 * added, those of the block it ends subtracted, so a function that frees what others allocated goes negative.
 * Memory grows with the groups (and, for 'outermost', the open frames); time O(events), O(events × call depth) for
 * 'inclusive'.
 */
export class AttributionFold implements EventFold {
  readonly by: AttributionBy;
  readonly mode: AttributionMode;
  private readonly table = new GroupTable();
  private readonly groups: GroupMaker;
  private readonly sums = new GroupSums();
  private readonly out = new Charges();

  constructor(
    start: TraceStart,
    options: AttributionOptions,
    private readonly visit: AttributionGroupVisitor | null = null,
  ) {
    this.by = options.by;
    this.mode = options.mode ?? 'innermost';
    this.groups = GROUPERS[this.by](start, this.table, this.mode);
  }

  event(e: FoldEvent, tables: FoldTables): void {
    const k = e.kind;
    if (k !== Kind.ALLOC && k !== Kind.FREE && k !== Kind.REALLOC) {
      if (k === Kind.ENTER && this.groups.enter !== null) this.groups.enter(e, tables);
      return;
    }
    const out = this.out;
    out.count = 0;
    this.groups.charge(e, tables, out);
    if (this.visit !== null) for (let i = 0; i < out.count; i++) this.visit(e.index, out.ids[i]!);
    const { requested } = tables.blocks;
    const added = e.newBlock === NONE ? 0 : requested[e.newBlock]!;
    const freed = e.oldBlock === NONE ? 0 : requested[e.oldBlock]!;
    this.sums.add(out, this.table.rows.length, added, freed, counterOf(e, tables), e.newBlock !== NONE, e.oldBlock !== NONE);
  }

  finish(end: TraceEnd): void {
    this.groups.finish?.(end);
  }

  /** The groups in order of first use (a visitor's group numbers), their numbers filled; complete after `finish`. */
  get rows(): readonly AttributionRow[] {
    return this.sums.fillRows(this.table.rows);
  }

  /** Every group with at least one heap event, by max bytes descending, then label. */
  result(): Attribution {
    const rows = [...this.rows];
    rows.sort((a, b) => b.maxBytes - a.maxBytes || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
    return { by: this.by, mode: this.mode, rows };
  }
}

/** The attribution table of a decoded model; `visit` is told each heap event and the key of each group it is charged to. */
export function attribution(model: Model, options: AttributionOptions, visit?: AttributionVisitor): Attribution {
  // A group is named for good only at the end (threads): the charges are told then, in event order.
  const events: number[] = [];
  const groups: number[] = [];
  const fold = new AttributionFold(modelStart(model), options, visit === undefined ? null : (e, g) => (events.push(e), groups.push(g)));
  foldModel(model, [fold]);
  const rows = fold.rows;
  for (let i = 0; i < events.length; i++) visit!(events[i]!, rows[groups[i]!]!.key);
  return fold.result();
}

/** Per-group numbers in one typed array, grown as groups appear: at g * STATS net, min, max, allocated, freed, then the counts. */
class GroupSums {
  private stat = new Float64Array(16 * STATS);

  /**
   * One event's bytes, count (-1: none) and whether it made and ended a block added to each of its groups; `groups` is
   * how many groups exist so far.
   */
  add(charges: Charges, groups: number, added: number, freed: number, counter: number, made: boolean, ended: boolean): void {
    if (groups * STATS > this.stat.length) {
      const bigger = new Float64Array(Math.max(this.stat.length * 2, groups * STATS));
      bigger.set(this.stat);
      this.stat = bigger;
    }
    const stat = this.stat;
    for (let i = 0; i < charges.count; i++) {
      const at = charges.ids[i]! * STATS;
      const net = (stat[at] = stat[at]! + added - freed);
      if (net < stat[at + 1]!) stat[at + 1] = net;
      if (net > stat[at + 2]!) stat[at + 2] = net;
      stat[at + 3] = stat[at + 3]! + added;
      stat[at + 4] = stat[at + 4]! + freed;
      if (counter >= 0) stat[at + 5 + counter] = stat[at + 5 + counter]! + 1;
      if (made) stat[at + MADE] = stat[at + MADE]! + 1;
      if (ended) stat[at + ENDED] = stat[at + ENDED]! + 1;
    }
  }

  /** The numbers written into the rows (row g is group g); returns the rows. */
  fillRows(rows: AttributionRow[]): AttributionRow[] {
    const stat = this.stat;
    for (let g = 0; g < rows.length; g++) {
      const row = rows[g]!;
      const at = g * STATS;
      row.netBytes = stat[at]!;
      row.minBytes = stat[at + 1]!;
      row.maxBytes = stat[at + 2]!;
      row.bytesAllocated = stat[at + 3]!;
      row.bytesFreed = stat[at + 4]!;
      row.allocations = stat[at + MADE]!;
      row.frees = stat[at + ENDED]!;
      const c = row.counts;
      c.malloc = stat[at + 5 + C_MALLOC]!;
      c.calloc = stat[at + 5 + C_CALLOC]!;
      c.aligned = stat[at + 5 + C_ALIGNED]!;
      c.strdup = stat[at + 5 + C_STRDUP]!;
      c.realloc = stat[at + 5 + C_REALLOC]!;
      c.free = stat[at + 5 + C_FREE]!;
    }
    return rows;
  }
}
