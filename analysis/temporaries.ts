// Short-lived heap blocks: blocks a FREE ends within N events of their allocation, per allocation site.
import { Kind } from './trace/format.js';
import type { Model } from './model.js';
import { BlockGroups, type GroupRef } from './block-groups.js';

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
 * by a REALLOC are not temporaries (their contents live on in the new block). O(blocks).
 */
export function temporaries(model: Model, options: { within?: number } = {}): Temporaries {
  const within = options.within ?? DEFAULT_TEMPORARY_WITHIN;
  if (!Number.isSafeInteger(within) || within < 0) throw new RangeError(`temporaries: within must be a whole number ≥ 0, got ${within}`);
  const { blocks, events } = model;
  const groups = new BlockGroups(model);
  const bySite = new Map<string, TemporarySite>();
  let count = 0;
  let bytes = 0;
  for (let b = 0; b < blocks.count; b++) {
    const ref = groups.siteOf(b);
    let s = bySite.get(ref.key);
    if (s === undefined) {
      s = { ...ref, allocs: 0, temporaries: 0, bytes: 0, share: 0 };
      bySite.set(ref.key, s);
    }
    s.allocs++;
    const alloc = blocks.allocEvent[b]!;
    const freed = blocks.freeEvent[b]!;
    if (freed >= 0 && alloc >= 0 && freed - alloc <= within && events.kind[freed] === Kind.FREE) {
      s.temporaries++;
      s.bytes += blocks.requested[b]!;
      count++;
      bytes += blocks.requested[b]!;
    }
  }
  const sites = [...bySite.values()].filter((s) => s.temporaries > 0);
  for (const s of sites) s.share = s.temporaries / s.allocs;
  sites.sort((a, b) => b.temporaries - a.temporaries || b.bytes - a.bytes || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
  return { within, blocks: count, bytes, allocations: blocks.count, sites };
}
