// Numbers for the allocation-site groups of heap blocks (as block-groups.ts groups them: a site, or for blocks only the
// interposed allocator saw the entry site of the function they are charged to), looked up once per block by number:
// what a fold keeps per-group counts in typed arrays with.
import type { FoldBlocks, TraceStart } from './event-fold.js';
import type { BlockGroups, GroupRef } from './block-groups.js';
import { NONE } from './model.js';

export class SiteGroupNumbers {
  /** Each group's key: its site, or -(entry site) - 1 for interposed blocks. */
  readonly keys: number[] = [];
  private readonly bySite: Int32Array;
  private readonly byEntry: Int32Array;
  private readonly other = new Map<number, number>();

  constructor(start: TraceStart) {
    this.bySite = new Int32Array(start.sites.count).fill(NONE);
    this.byEntry = new Int32Array(start.sites.count).fill(NONE);
  }

  /** How many groups there are. */
  get count(): number {
    return this.keys.length;
  }

  /** The group of the block with handle `h`, numbered in order of first use. */
  of(blocks: FoldBlocks, h: number): number {
    return blocks.interposed[h] === 1 ? this.ofKey(-blocks.entry[h]! - 1) : this.ofKey(blocks.site[h]!);
  }

  private ofKey(key: number): number {
    const cache = key < 0 ? this.byEntry : this.bySite;
    const i = key < 0 ? -key - 1 : key;
    if (i < cache.length && cache[i] !== NONE) return cache[i]!;
    let g = this.other.get(key);
    if (g === undefined) {
      g = this.keys.push(key) - 1;
      if (i < cache.length) cache[i] = g;
      else this.other.set(key, g);
    }
    return g;
  }

  /** Group `g` as `groups` names it. */
  ref(groups: BlockGroups, g: number): GroupRef {
    const key = this.keys[g]!;
    return groups.siteOfKey(key < 0 ? `interposed:${-key - 1}` : `site:${key}`)!;
  }
}

/** `a` in an array of at least `n` elements (the rest 0); `a` itself when it is big enough. */
export function grownTo<T extends Float64Array | Int32Array | Uint32Array | Uint8Array>(a: T, n: number): T {
  if (n <= a.length) return a;
  const b = new (a.constructor as new (n: number) => T)(Math.max(a.length * 2, n));
  b.set(a);
  return b;
}
