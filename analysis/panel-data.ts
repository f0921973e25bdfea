// The viewer's panels as data computed in passes over a streamed trace, for a trace too large to decode whole (index
// mode): the tables by function, site, thread and library (with the blocks each row made and ended, and its first
// event), the block counts, the peaks, the leaks at exit, the linked frees, the leak causes, the budgets and the
// deepest stack in one pass of folds (then the leak causes' own passes); the flame graph's call paths and the consumed
// chart in passes of their own over the records (`panelExtras`, shared with the decoding worker). Everything is plain
// JSON, cut to the rows the panels show, and holds memory that grows with sites, functions, threads, call paths and
// live blocks, never with events.
import { AttributionFold, type Attribution, type AttributionBy } from './attribution.js';
import { BudgetFold, type BudgetCheck, type Budgets } from './budgets.js';
import { CallPathFold, CallPathPeakFold, flameTree, type FlameTree } from './call-paths.js';
import { ConsumedPasses, type Consumed } from './consumed.js';
import { DeepestStackFold } from './deepest-stack.js';
import type { EventFold, FoldEvent, FoldSource, FoldTables, TraceEnd } from './event-fold.js';
import { leakCausesAfter, LeakSitesFold, type LeakCauses } from './leak-causes.js';
import { LeaksFold, type LeaksAtExit } from './leaks.js';
import { LinkedFold, OrphanFold, type LinkedFree } from './linked.js';
import { NONE } from './model.js';
import { limitSnapshot, PeakFold, type Peaks } from './peak.js';
import { stackSection, worstCaseOf, type StackReport } from './stack-report.js';
import { SummaryFold, type Summary } from './summary.js';
import { Kind } from './trace/format.js';
import type { StackUnit } from './worst-stack.js';

/** Rows a panel lists per table (attribution rows, peak groups, leaked blocks, linked frees); beyond, it says how many there are. */
export const PANEL_ROWS = 500;
/** Ranges a budget panel lists per budget. */
export const PANEL_RANGES = 200;
/** The attribution tables the panels show. */
export const PANEL_BY = ['function', 'site', 'thread', 'library'] as const satisfies readonly AttributionBy[];
export type PanelBy = (typeof PANEL_BY)[number];

/** Blocks made and ended, as the panels count them, and how many of each a realloc did. */
export interface BlockCounts {
  allocations: number;
  frees: number;
  byRealloc: { allocations: number; frees: number };
}

/** An attribution table's first PANEL_ROWS rows, with, row by row, the blocks its events made and ended and its first event. */
export interface PanelAttribution extends Attribution {
  /** Groups in all (rows holds the first PANEL_ROWS). */
  total: number;
  /** Per row of `rows`: [blocks made, blocks ended]. */
  blocks: [number, number][];
  /** Per row of `rows`: the first heap event charged to it. */
  firstEvent: number[];
}

/** What the panels show of a trace, computed on the host as it streams the trace (JSON). */
export interface PanelAggregates {
  summary: Summary;
  blockCounts: BlockCounts;
  attribution: Record<PanelBy, PanelAttribution>;
  /** Each peak's groups cut to PANEL_ROWS (`sites`, `functions`: how many there are). */
  peaks: Peaks;
  /** The classes and their counts whole; the blocks listed cut to the first PANEL_ROWS in class, site, block order. */
  leaks: LeaksAtExit;
  /** The allocation event of each block `leaks` lists, by block row. */
  leakAllocEvents: Record<number, number>;
  /** The first PANEL_ROWS frees with a linked set, and how many there are. */
  linked: { frees: LinkedFree[]; count: number };
  leakCauses: LeakCauses;
  stack: StackReport;
  /** Each budget with its first PANEL_RANGES ranges (`rangeCount`: all). */
  budgets: BudgetCheck[];
}

/** What the computation needs from outside the trace (the host reads them). */
export interface PanelInputs {
  budgets: Budgets | null;
  frameSizes: { program: string | null; units: StackUnit[] | null; missing: string | null };
}

/** Notes, before the attribution folds see an event, whether it made and ended a block (their visitors read it). */
class HeapEventNote implements EventFold {
  made = false;
  ended = false;
  event(e: FoldEvent): void {
    this.made = e.newBlock !== NONE;
    this.ended = e.oldBlock !== NONE;
  }
}

/** Per group of one attribution fold: blocks made and ended, first event. Grows with the groups. */
class GroupExtras {
  made: number[] = [];
  ended: number[] = [];
  first: number[] = [];
  constructor(private readonly note: HeapEventNote) {}
  visit = (event: number, group: number): void => {
    if (this.first[group] === undefined) {
      this.first[group] = event;
      this.made[group] = 0;
      this.ended[group] = 0;
    }
    if (this.note.made) this.made[group]!++;
    if (this.note.ended) this.ended[group]!++;
  };
}

/** Blocks made and ended, those by realloc, and at the end the allocation event of each live block (by row). */
class BlockCountFold implements EventFold {
  readonly counts: BlockCounts = { allocations: 0, frees: 0, byRealloc: { allocations: 0, frees: 0 } };
  readonly liveAllocEvent = new Map<number, number>();
  event(e: FoldEvent): void {
    const realloc = e.kind === Kind.REALLOC;
    if (e.newBlock !== NONE) {
      this.counts.allocations++;
      if (realloc) this.counts.byRealloc.allocations++;
    }
    if (e.oldBlock !== NONE) {
      this.counts.frees++;
      if (realloc) this.counts.byRealloc.frees++;
    }
  }
  finish(end: TraceEnd, tables: FoldTables): void {
    for (const h of end.liveBlocks) this.liveAllocEvent.set(tables.blocks.row[h]!, tables.blocks.allocEvent[h]!);
  }
}

/** An attribution table sorted as the report sorts it, cut to PANEL_ROWS, each row with its blocks and first event. */
function panelAttribution(fold: AttributionFold, extras: GroupExtras): PanelAttribution {
  const group = new Map(fold.rows.map((r, g) => [r, g]));
  const whole = fold.result();
  const rows = whole.rows.slice(0, PANEL_ROWS);
  return {
    ...whole,
    rows,
    total: whole.rows.length,
    blocks: rows.map((r) => {
      const g = group.get(r)!;
      return [extras.made[g] ?? 0, extras.ended[g] ?? 0];
    }),
    firstEvent: rows.map((r) => extras.first[group.get(r)!] ?? -1),
  };
}

/** The leaks with the blocks listed cut to the first `keep` (class, site, block order); counts and bytes stay whole. */
function cutLeaks(l: LeaksAtExit, keep: number): LeaksAtExit {
  let left = keep;
  return {
    ...l,
    classes: l.classes.map((c) => ({
      ...c,
      sites: c.sites.map((s) => {
        const blocks = s.blocks.slice(0, Math.max(0, left));
        left -= blocks.length;
        return { ...s, blocks };
      }),
    })),
  };
}

/**
 * The panels' tables of a trace: one pass of every fold they need (the summary, four attribution tables, block counts,
 * peaks, leaks, linked frees, budgets, deepest stack, leak sites), then the leak causes' own passes when a site needs
 * them.
 */
export function panelTables(source: FoldSource, inputs: PanelInputs): PanelAggregates {
  const worst = worstCaseOf(inputs.frameSizes.units);
  let folds:
    | {
        summary: SummaryFold;
        note: HeapEventNote;
        by: { by: PanelBy; fold: AttributionFold; extras: GroupExtras }[];
        counts: BlockCountFold;
        peak: PeakFold;
        leaks: LeaksFold;
        linked: LinkedFold;
        budgets: BudgetFold | null;
        stack: DeepestStackFold;
        leakSites: LeakSitesFold;
        all: EventFold[];
      }
    | undefined;
  source.run((start) => {
    const note = new HeapEventNote();
    const by = PANEL_BY.map((b) => {
      const extras = new GroupExtras(note);
      return { by: b, fold: new AttributionFold(start, { by: b }, extras.visit), extras };
    });
    const orphans = new OrphanFold(start);
    const f = {
      summary: new SummaryFold(start),
      note,
      by,
      counts: new BlockCountFold(),
      peak: new PeakFold(start),
      leaks: new LeaksFold(start, orphans),
      linked: new LinkedFold(start, orphans, { keep: PANEL_ROWS }),
      budgets: inputs.budgets === null ? null : new BudgetFold(start, inputs.budgets, { keepRanges: PANEL_RANGES }),
      stack: new DeepestStackFold(start, worst.mainFrame),
      leakSites: new LeakSitesFold(start),
      all: [] as EventFold[],
    };
    // The note sees each event before the attribution folds whose visitors read it.
    f.all = [f.summary, orphans, note, ...by.map((b) => b.fold), f.counts, f.peak, f.leaks, f.linked, ...(f.budgets ? [f.budgets] : []), f.stack, f.leakSites];
    folds = f;
    return f.all;
  });
  const f = folds!;
  const p = f.peak.result();
  const leaks = cutLeaks(f.leaks.result(), PANEL_ROWS);
  const leakAllocEvents: Record<number, number> = {};
  for (const c of leaks.classes) for (const s of c.sites) for (const b of s.blocks) leakAllocEvents[b.block] = f.counts.liveAllocEvent.get(b.block) ?? -1;
  const linked = f.linked.result();
  const sizes = inputs.frameSizes;
  return {
    summary: f.summary.result(),
    blockCounts: f.counts.counts,
    attribution: Object.fromEntries(f.by.map((b) => [b.by, panelAttribution(b.fold, b.extras)])) as Record<PanelBy, PanelAttribution>,
    peaks: { heap: limitSnapshot(p.heap, PANEL_ROWS), total: limitSnapshot(p.total, PANEL_ROWS) },
    leaks,
    leakAllocEvents,
    linked: { frees: linked.frees, count: linked.count },
    leakCauses: leakCausesAfter(source, f.leakSites.result()),
    stack: stackSection(f.stack.result(), sizes.program, sizes.units, sizes.missing, worst.worstCase),
    budgets: f.budgets?.result() ?? [],
  };
}

/** The flame graph's call paths and the consumed chart, or why each could not be read. */
export interface PanelExtras {
  flame: FlameTree | string;
  consumed: Consumed | string;
}

/** `make()`, or why it failed: these views are extras, and the rest of the panels do not wait on them. */
function attempt<T>(make: () => T): T | string {
  try {
    return make();
  } catch (err) {
    return (err as Error).message;
  }
}

/** A fold whose failure is kept as its message instead of ending the pass: the other folds of the pass go on. */
class Guarded implements EventFold {
  error: string | null = null;
  constructor(private readonly fold: EventFold) {}
  event(e: FoldEvent, tables: FoldTables): void {
    if (this.error !== null) return;
    try {
      this.fold.event(e, tables);
    } catch (err) {
      this.error = (err as Error).message;
    }
  }
  finish(end: TraceEnd, tables: FoldTables): void {
    if (this.error !== null) return;
    try {
      this.fold.finish?.(end, tables);
    } catch (err) {
      this.error = (err as Error).message;
    }
  }
}

/**
 * The flame graph's call-path tree (with the blocks live at the heap's peak) and the live heap by top site, in two
 * passes over `source` that fold both (call-paths.ts's and consumed.ts's passes). Either view that fails says why in
 * its place, the other unharmed; a trace that cannot be read at all, both.
 */
export function panelExtras(source: FoldSource): PanelExtras {
  let paths: Guarded | null = null;
  let live: Guarded | null = null;
  let first: CallPathFold | null = null;
  const consumed = new ConsumedPasses();
  try {
    source.run((start) => [(paths = new Guarded((first = new CallPathFold(start)))), (live = new Guarded(consumed.first()))]);
    const fold = first as CallPathFold | null;
    const p = paths as Guarded | null;
    const l = live as Guarded | null;
    if (fold === null || p === null || l === null) throw new Error('the trace was not read');
    // The second pass: the blocks live at the heap's peak and the live heap sampled by site.
    let atPeak: Guarded | null = null;
    let peakFold: CallPathPeakFold | null = null;
    let sampled: Guarded | null = null;
    const peak = p.error === null && fold.peakEvent !== null;
    if (peak || l.error === null) {
      source.run((start) => {
        atPeak = peak ? new Guarded((peakFold = new CallPathPeakFold(start, fold))) : null;
        sampled = l.error === null ? new Guarded(consumed.second()) : null;
        return [atPeak, sampled].filter((f): f is Guarded => f !== null);
      });
    }
    const flameError = p.error ?? (atPeak as Guarded | null)?.error ?? null;
    if (flameError === null) (peakFold as CallPathPeakFold | null)?.apply();
    const liveError = l.error ?? (sampled as Guarded | null)?.error ?? null;
    return {
      flame: flameError ?? attempt(() => flameTree(fold.result().root)),
      consumed: liveError ?? attempt(() => consumed.result()),
    };
  } catch (e) {
    // The records themselves cannot be read: both views say so.
    return { flame: (e as Error).message, consumed: (e as Error).message };
  }
}

/** What a host hands the page of a trace opened through its index: the panels' data and the seconds it took. */
export interface IndexPanels {
  tables: PanelAggregates;
  extras: PanelExtras;
  seconds: number;
}

/** The panels' data as JSON text: typed arrays (the consumed chart's) written as arrays. */
export function indexPanelsText(panels: IndexPanels): string {
  return JSON.stringify(panels, (_key, value: unknown) => (ArrayBuffer.isView(value) ? Array.from(value as unknown as ArrayLike<number>) : value));
}

/** The panels' data read back from indexPanelsText's JSON: the consumed chart's arrays typed again. */
export function indexPanelsOf(json: IndexPanels): IndexPanels {
  const c = json.extras.consumed;
  if (typeof c === 'string') return json;
  return { ...json, extras: { ...json.extras, consumed: { ...c, ends: Int32Array.from(c.ends), bytes: Float64Array.from(c.bytes) } } };
}
