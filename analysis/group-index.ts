// Numbers for the site and function groups of heap blocks (block-groups.ts), for folds that keep per-group state in
// arrays: a group is looked up once per block through typed-array caches indexed by site id, and named once.
import type { FoldBlocks, TraceStart } from './event-fold.js';
import { BlockGroups, type GroupRef } from './block-groups.js';

export { grown } from './trace/typed-arrays.js';

const SITE = 0;
const INTERPOSED = 1;
const FUNCTION = 2;

/**
 * Site groups and function groups of one run numbered 0, 1, 2… in order of first lookup (both kinds share the
 * numbering); `refs[g]` is group g's identity and labels.
 */
export class GroupIndex {
  readonly refs: GroupRef[] = [];
  private readonly groups: BlockGroups;
  /** Per kind (SITE, INTERPOSED, FUNCTION), per site id below the table's count: the group's number + 1 (0: none yet). */
  private readonly cache: Int32Array[];
  /** Site ids beyond the site table (never in a well-formed trace): kind * 2^32 + id → group number. */
  private readonly beyond = new Map<number, number>();
  private readonly byKey = new Map<string, number>();
  private readonly sites: number;

  constructor(start: TraceStart) {
    this.groups = new BlockGroups(start);
    this.sites = start.sites.count;
    this.cache = [new Int32Array(this.sites), new Int32Array(this.sites), new Int32Array(this.sites)];
  }

  /** The number of the allocation site group of the block with handle `h` (as `BlockGroups.siteOfBlock`). */
  siteGroup(blocks: FoldBlocks, h: number): number {
    return blocks.interposed[h] === 1 ? this.lookup(INTERPOSED, blocks.entry[h]!, blocks, h) : this.lookup(SITE, blocks.site[h]!, blocks, h);
  }

  /** The number of the function group of the block with handle `h` (as `BlockGroups.functionOfBlock`). */
  functionGroup(blocks: FoldBlocks, h: number): number {
    return this.lookup(FUNCTION, blocks.entry[h]!, blocks, h);
  }

  private lookup(kind: number, id: number, blocks: FoldBlocks, h: number): number {
    if (id >= 0 && id < this.sites) {
      const c = this.cache[kind]!;
      const g = c[id]! - 1;
      return g >= 0 ? g : (c[id] = this.add(kind, blocks, h) + 1) - 1;
    }
    const key = kind * 2 ** 32 + id;
    let g = this.beyond.get(key);
    if (g === undefined) this.beyond.set(key, (g = this.add(kind, blocks, h)));
    return g;
  }

  private add(kind: number, blocks: FoldBlocks, h: number): number {
    const ref = kind === FUNCTION ? this.groups.functionOfBlock(blocks, h) : this.groups.siteOfBlock(blocks, h);
    // Two ids can name one group (every undefined entry site is the function group "none"): one number per key.
    let g = this.byKey.get(ref.key);
    if (g === undefined) {
      g = this.refs.push(ref) - 1;
      this.byKey.set(ref.key, g);
    }
    return g;
  }
}
