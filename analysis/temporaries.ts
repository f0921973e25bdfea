// Short-lived heap blocks: blocks a FREE ends within N events of their allocation, per allocation site.
import { Kind } from './trace/format.js';
import { NONE, type Model } from './model.js';
import type { GroupRef } from './block-groups.js';
import type { EventFold, FoldEvent, FoldTables, TraceStart } from './event-fold.js';
import { foldModel, modelStart } from './model-fold.js';
import { GroupIndex, grown } from './group-index.js';

export const DEFAULT_TEMPORARY_WITHIN = 16;

/** One allocation site (grouped as `topSites`) with at least one temporary block. */
export interface TemporarySite extends GroupRef {
  /** Blocks the site allocated, and how many of them were temporaries, with their requested bytes. */
  allocs: number;
  temporaries: number;
  bytes: number;
  /** temporaries / allocs. */
  share: number;
}

export interface Temporaries {
  within: number;
  /** Temporary blocks in all, their requested bytes, and all blocks. */
  blocks: number;
  bytes: number;
  allocations: number;
  /** Sites with a temporary, by temporaries descending, then bytes, then label. */
  sites: TemporarySite[];
}

/**
 * Blocks ended by a FREE event at most `within` events (global order) after the event that created them. Blocks ended
 * by a REALLOC are not temporaries (their contents live on in the new block). A fold: per site group the blocks made
 * and the temporaries with their bytes; per live block its group.
 */
export class TemporariesFold implements EventFold {
  readonly within: number;
  private readonly groups: GroupIndex;
  private allocs: Float64Array = new Float64Array(16);
  private temps: Float64Array = new Float64Array(16);
  private tempBytes: Float64Array = new Float64Array(16);
  /** Per block handle: its group. */
  private groupOf: Int32Array = new Int32Array(64);
  private allocations = 0;
  private count = 0;
  private bytes = 0;

  constructor(start: TraceStart, options: { within?: number } = {}) {
    const within = options.within ?? DEFAULT_TEMPORARY_WITHIN;
    if (!Number.isSafeInteger(within) || within < 0) throw new RangeError(`temporaries: within must be a whole number ≥ 0, got ${within}`);
    this.within = within;
    this.groups = new GroupIndex(start);
  }

  event(e: FoldEvent, tables: FoldTables): void {
    const k = e.kind;
    if (k !== Kind.ALLOC && k !== Kind.FREE && k !== Kind.REALLOC) return;
    const blocks = tables.blocks;
    if (k === Kind.FREE && e.oldBlock !== NONE) {
      const h = e.oldBlock;
      const alloc = blocks.allocEvent[h]!;
      if (alloc >= 0 && e.index - alloc <= this.within) {
        const g = this.groupOf[h]!;
        const bytes = blocks.requested[h]!;
        this.temps[g] = this.temps[g]! + 1;
        this.tempBytes[g] = this.tempBytes[g]! + bytes;
        this.count++;
        this.bytes += bytes;
      }
    }
    if (e.newBlock !== NONE) {
      const h = e.newBlock;
      const g = this.groups.siteGroup(blocks, h);
      if (g >= this.allocs.length) {
        this.allocs = grown(this.allocs, g + 1);
        this.temps = grown(this.temps, g + 1);
        this.tempBytes = grown(this.tempBytes, g + 1);
      }
      this.groupOf = grown(this.groupOf, h + 1);
      this.groupOf[h] = g;
      this.allocs[g] = this.allocs[g]! + 1;
      this.allocations++;
    }
  }

  result(): Temporaries {
    const sites: TemporarySite[] = [];
    for (let g = 0; g < this.groups.refs.length; g++) {
      if (this.temps[g] === 0) continue;
      const allocs = this.allocs[g]!;
      const temporaries = this.temps[g]!;
      sites.push({ ...this.groups.refs[g]!, allocs, temporaries, bytes: this.tempBytes[g]!, share: temporaries / allocs });
    }
    sites.sort((a, b) => b.temporaries - a.temporaries || b.bytes - a.bytes || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
    return { within: this.within, blocks: this.count, bytes: this.bytes, allocations: this.allocations, sites };
  }
}

/** `TemporariesFold` over a decoded model. */
export function temporaries(model: Model, options: { within?: number } = {}): Temporaries {
  const fold = new TemporariesFold(modelStart(model), options);
  foldModel(model, [fold]);
  return fold.result();
}
