// Which allocation site and which function a heap block belongs to, and their labels (shared by peak.ts, budgets.ts and temporaries.ts).
import { Flag } from './trace/format.js';
import { NONE, type Model } from './model.js';
import { allocationSiteLabel, interposedFunction, interposedLabel, siteInfo, siteLocation } from './sites.js';

/** A group of blocks: keys and labels as in peak.ts's `PeakGroup`. */
export interface GroupRef {
  /** "site:<site>", "interposed:<entry site>" (allocations only the interposed allocator saw), "function:<entry site>", "none". */
  key: string;
  /** The allocation site, or the entry site of the attributed function (0: none). */
  site: number;
  /** "demo.c:4 make_node → malloc", "main (via libc/uninstrumented)", "demo.c:3 make_node". */
  label: string;
  file: string | null;
  line: number | null;
  function: string | null;
}

/** Looks up (and caches) the site group and the function group of blocks of one model. */
export class BlockGroups {
  private readonly cache = new Map<string, GroupRef>();
  private readonly cwd: string | null;

  constructor(private readonly model: Model) {
    this.cwd = model.program?.cwd ?? null;
  }

  /** The entry site of the innermost instrumented frame open at the block's allocation (0: none). */
  private entry(b: number): number {
    const alloc = this.model.blocks.allocEvent[b]!;
    const frame = alloc < 0 ? NONE : this.model.events.frame[alloc]!;
    return frame === NONE ? 0 : this.model.frames.entrySite[frame]!;
  }

  private interposed(b: number): boolean {
    const { blocks, events } = this.model;
    const alloc = blocks.allocEvent[b]!;
    return blocks.interposed[b] === 1 || (alloc >= 0 && (events.flags[alloc]! & Flag.INTERPOSED) !== 0);
  }

  private get(key: string, make: () => Omit<GroupRef, 'key'>): GroupRef {
    let g = this.cache.get(key);
    if (g === undefined) {
      g = { key, ...make() };
      this.cache.set(key, g);
    }
    return g;
  }

  /** The block's allocation site group (as `topSites` and `peak.bySite`). */
  siteOf(b: number): GroupRef {
    return this.interposed(b) ? this.interposedSite(this.entry(b)) : this.site(this.model.blocks.site[b]!);
  }

  /** The site group of a "site:<site>" or "interposed:<entry site>" key; null for other keys. */
  siteOfKey(key: string): GroupRef | null {
    const m = /^(site|interposed):(\d+)$/.exec(key);
    if (m === null) return null;
    return m[1] === 'site' ? this.site(Number(m[2])) : this.interposedSite(Number(m[2]));
  }

  /** Allocations only the interposed allocator saw, charged to the function with entry site `entry` (0: none open). */
  private interposedSite(entry: number): GroupRef {
    return this.get(`interposed:${entry}`, () => {
      const info = siteInfo(this.model, entry);
      return { site: entry, label: interposedLabel(info), file: info?.file ?? null, line: info?.line ?? null, function: info === null ? null : interposedFunction(info) };
    });
  }

  private site(site: number): GroupRef {
    return this.get(`site:${site}`, () => {
      const info = siteInfo(this.model, site);
      return { site, label: allocationSiteLabel(info, site, this.cwd), file: info?.file ?? null, line: info?.line ?? null, function: info?.func || null };
    });
  }

  /** The block's function group: the innermost instrumented frame open at its allocation (as `peak.byFunction`). */
  functionOf(b: number): GroupRef {
    const entry = this.entry(b);
    const info = siteInfo(this.model, entry);
    if (info === null) return this.get('none', () => ({ site: 0, label: interposedFunction(null), file: null, line: null, function: null }));
    return this.get(`function:${entry}`, () => {
      const name = info.name || info.func || '?';
      return { site: entry, label: `${siteLocation(info, this.cwd)} ${name}`, file: info.file, line: info.line, function: name };
    });
  }
}
