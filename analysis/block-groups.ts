// Which allocation site and which function a heap block belongs to, and their labels (shared by peak.ts, budgets.ts and temporaries.ts).
import type { Model, SiteTable } from './model.js';
import type { FoldBlocks } from './event-fold.js';
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

/** Looks up (and caches) the site group and the function group of heap blocks of one run. */
export class BlockGroups {
  // By number, not by key: a streaming report looks a group up for every block of a run.
  private readonly sites = new Map<number, GroupRef>();
  private readonly interposedSites = new Map<number, GroupRef>();
  private readonly functions = new Map<number, GroupRef>();
  private readonly cwd: string | null;
  /** A run's sites and program: a model's, or a fold's start facts (event-fold.ts). */
  constructor(private readonly run: { sites: SiteTable; program: Model['program'] }) {
    this.cwd = run.program?.cwd ?? null;
  }

  /** The allocation site group of the block with handle `h`. */
  siteOfBlock(blocks: FoldBlocks, h: number): GroupRef {
    return blocks.interposed[h] === 1 ? this.interposedSite(blocks.entry[h]!) : this.site(blocks.site[h]!);
  }

  /** The site group of a "site:<site>" or "interposed:<entry site>" key; null for other keys. */
  siteOfKey(key: string): GroupRef | null {
    const m = /^(site|interposed):(\d+)$/.exec(key);
    if (m === null) return null;
    return m[1] === 'site' ? this.site(Number(m[2])) : this.interposedSite(Number(m[2]));
  }

  /** Allocations only the interposed allocator saw, charged to the function with entry site `entry` (0: none open). */
  private interposedSite(entry: number): GroupRef {
    let g = this.interposedSites.get(entry);
    if (g === undefined) {
      const info = siteInfo(this.run, entry);
      g = { key: `interposed:${entry}`, site: entry, label: interposedLabel(info), file: info?.file ?? null, line: info?.line ?? null, function: info === null ? null : interposedFunction(info) };
      this.interposedSites.set(entry, g);
    }
    return g;
  }

  private site(site: number): GroupRef {
    let g = this.sites.get(site);
    if (g === undefined) {
      const info = siteInfo(this.run, site);
      g = { key: `site:${site}`, site, label: allocationSiteLabel(info, site, this.cwd), file: info?.file ?? null, line: info?.line ?? null, function: info?.func || null };
      this.sites.set(site, g);
    }
    return g;
  }

  /** The function group of the block with handle `h`: the innermost instrumented frame open at its allocation (as `peak.byFunction`). */
  functionOfBlock(blocks: FoldBlocks, h: number): GroupRef {
    return this.functionOfEntry(blocks.entry[h]!);
  }

  /** The function group of the frame with entry site `entry` (0 or an undefined site: "none"). */
  functionOfEntry(entry: number): GroupRef {
    let g = this.functions.get(entry);
    if (g === undefined) {
      const info = siteInfo(this.run, entry);
      if (info === null) {
        g = { key: 'none', site: 0, label: interposedFunction(null), file: null, line: null, function: null };
      } else {
        const name = info.name || info.func || '?';
        g = { key: `function:${entry}`, site: entry, label: `${siteLocation(info, this.cwd)} ${name}`, file: info.file, line: info.line, function: name };
      }
      this.functions.set(entry, g);
    }
    return g;
  }
}
