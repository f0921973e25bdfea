// Leaks at exit as the runtime classified them (EXT/LEAKS, like LeakSanitizer): direct, indirect and still-reachable blocks, grouped by allocation site, each with the free that orphaned it when a LINKED set names one. One fold, read at the end from the live blocks.
import { LeakClass } from './trace/format.js';
import { NONE, type Model } from './model.js';
import { liveBlockRef, OrphanFold, type LinkedBlockRef, type SiteRef } from './linked.js';
import type { EventFold, FoldTables, TraceEnd, TraceStart } from './event-fold.js';
import { foldModel } from './model-fold.js';

export type LeakClassName = 'direct' | 'indirect' | 'reachable';

/** In report order: the classes as LeakSanitizer reports them. */
export const LEAK_CLASS_ORDER: readonly LeakClassName[] = ['direct', 'indirect', 'reachable'];

const CLASS_NAMES: Record<number, LeakClassName> = {
  [LeakClass.DIRECT]: 'direct',
  [LeakClass.INDIRECT]: 'indirect',
  [LeakClass.REACHABLE]: 'reachable',
};

/** "direct leak", "indirect leak", "still reachable". */
export function leakClassLabel(c: LeakClassName): string {
  return c === 'reachable' ? 'still reachable' : `${c} leak`;
}

/** The runtime's class of a block live at exit, or null (freed, or not classified). */
export function leakClassOf(model: Model, block: number): LeakClassName | null {
  return leakClassName(model.blocks.leakClass[block]!);
}

/** The name of a runtime leak class number (BlockTable.leakClass), or null for none. */
export function leakClassName(cls: number): LeakClassName | null {
  return CLASS_NAMES[cls] ?? null;
}

export interface LeakedBlock extends LinkedBlockRef {
  class: LeakClassName;
  /** The first free whose LINKED set contains the block (it lost the last pointer the runtime saw), or null. */
  orphanedBy: { event: number; at: SiteRef } | null;
}

export interface LeakSiteGroup {
  /** The allocation site shared by the blocks (`label` is what reports show). */
  allocation: SiteRef;
  count: number;
  /** Requested bytes. */
  bytes: number;
  /** In block (creation) order. */
  blocks: LeakedBlock[];
}

export interface LeakClassGroup {
  class: LeakClassName;
  count: number;
  bytes: number;
  /** Largest `bytes` first, then by label. */
  sites: LeakSiteGroup[];
}

export interface LeaksAtExit {
  /** The trace holds a LEAKS record (a normal exit of a 1.1 runtime); otherwise every group is empty. */
  present: boolean;
  /** The runtime's scan hit its limit: classes may be wrong (a reachable block may show as a leak). */
  partial: boolean;
  /** Always the three classes, in `LEAK_CLASS_ORDER`, empty ones included. */
  classes: LeakClassGroup[];
  /** Blocks live at the end of the trace that the record does not classify (e.g. allocated by another thread during the scan), and their bytes. */
  unclassified: number;
  unclassifiedBytes: number;
}

function siteKey(s: SiteRef): string {
  return `${s.interposed ? 'i' : 's'}${s.site}`;
}

/** The blocks live at exit, by class, then by allocation site; all of it read at the end from the live blocks. */
export class LeaksFold implements EventFold {
  private result_: LeaksAtExit | null = null;

  /** `orphans` must see the events too (before or after this fold). */
  constructor(
    private readonly run: TraceStart | Model,
    private readonly orphans: OrphanFold,
  ) {}

  event(): void {}

  finish(end: TraceEnd, tables: FoldTables): void {
    const { blocks } = tables;
    const groups = new Map<LeakClassName, Map<string, LeakSiteGroup>>(LEAK_CLASS_ORDER.map((c) => [c, new Map()]));
    let unclassified = 0;
    let unclassifiedBytes = 0;
    const sites = new Map<number, SiteRef>();
    for (const h of end.liveBlocks) {
      const cls = CLASS_NAMES[blocks.leakClass[h]!];
      if (cls === undefined) {
        unclassified++;
        unclassifiedBytes += blocks.requested[h]!;
        continue;
      }
      const ref = liveBlockRef(this.run, blocks, h, sites);
      const orphan = this.orphans.orphaningEvent(h);
      const leaked: LeakedBlock = { ...ref, class: cls, orphanedBy: orphan === NONE ? null : { event: orphan, at: this.orphans.orphaningSite(h) } };
      const bySite = groups.get(cls)!;
      const key = siteKey(ref.allocation);
      let g = bySite.get(key);
      if (g === undefined) {
        g = { allocation: ref.allocation, count: 0, bytes: 0, blocks: [] };
        bySite.set(key, g);
      }
      g.count++;
      g.bytes += ref.requestedBytes;
      g.blocks.push(leaked);
    }
    const classes = LEAK_CLASS_ORDER.map((c): LeakClassGroup => {
      const sites = [...groups.get(c)!.values()].sort(
        (a, b) => b.bytes - a.bytes || (a.allocation.label < b.allocation.label ? -1 : a.allocation.label > b.allocation.label ? 1 : 0),
      );
      return { class: c, count: sites.reduce((n, s) => n + s.count, 0), bytes: sites.reduce((n, s) => n + s.bytes, 0), sites };
    });
    this.result_ = { present: end.leakScan.present, partial: end.leakScan.partial, classes, unclassified, unclassifiedBytes };
  }

  /** After `finish`. */
  result(): LeaksAtExit {
    return this.result_!;
  }
}

/** The blocks live at exit of a decoded model, by class, then by allocation site. */
export function leaksAtExit(model: Model): LeaksAtExit {
  const orphans = new OrphanFold(model);
  const fold = new LeaksFold(model, orphans);
  foldModel(model, [orphans, fold]);
  return fold.result();
}
