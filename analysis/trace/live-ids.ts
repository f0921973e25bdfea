// Live blocks by id for the passes that follow the heap over a streamed trace: an open-addressing map on typed arrays
// (LiveIds), and beside it a table of each live block's size and a number (LiveBlocks). A JavaScript Map of objects
// costs several times more per block made and ended, and a pass makes and ends every block of the run.
import { NONE } from '../model.js';
import { grown } from './typed-arrays.js';

/** Block id → block slot, by open addressing on typed arrays (a Map costs several times more per live block). */
export class LiveIds {
  private keys = new Float64Array(1024);
  private vals = new Int32Array(1024).fill(-1);
  private mask = 1023;
  private count = 0;

  /**
   * Ids are heap sequence numbers, mostly made and ended near others close in number: sixteen consecutive ids share a
   * run of sixteen slots (a cache line or two of each column), and the runs are scattered by a multiplicative hash.
   */
  private slotOf(id: number): number {
    const lo = id | 0;
    const h = Math.imul((lo >>> 4) ^ ((id / 4294967296) | 0), 0x9e3779b1);
    return (((h ^ (h >>> 15)) << 4) | (lo & 15)) & this.mask;
  }

  get(id: number): number {
    let i = this.slotOf(id);
    for (;;) {
      const v = this.vals[i]!;
      if (v < 0) return NONE;
      if (this.keys[i] === id) return v;
      i = (i + 1) & this.mask;
    }
  }

  /** Maps `id` to `value`; returns what `id` mapped to before, NONE if nothing. */
  set(id: number, value: number): number {
    if (2 * (this.count + 1) > this.mask + 1) this.grow();
    let i = this.slotOf(id);
    for (;;) {
      const v = this.vals[i]!;
      if (v < 0) {
        this.keys[i] = id;
        this.vals[i] = value;
        this.count++;
        return NONE;
      }
      if (this.keys[i] === id) {
        this.vals[i] = value;
        return v;
      }
      i = (i + 1) & this.mask;
    }
  }

  /**
   * Removes `id` and returns what it mapped to, NONE if nothing (linear probing's backward shift: no tombstones, so
   * lookups stay short however many frees).
   */
  take(id: number): number {
    const mask = this.mask;
    let i = this.slotOf(id);
    let value: number;
    for (;;) {
      value = this.vals[i]!;
      if (value < 0) return NONE;
      if (this.keys[i] === id) break;
      i = (i + 1) & mask;
    }
    this.count--;
    let hole = i;
    let j = i;
    for (;;) {
      j = (j + 1) & mask;
      if (this.vals[j]! < 0) break;
      const home = this.slotOf(this.keys[j]!);
      // Move j into the hole unless its home lies cyclically in (hole, j].
      if (hole <= j ? home <= hole || home > j : home <= hole && home > j) {
        this.keys[hole] = this.keys[j]!;
        this.vals[hole] = this.vals[j]!;
        hole = j;
      }
    }
    this.vals[hole] = -1;
    return value;
  }

  private grow(): void {
    const keys = this.keys;
    const vals = this.vals;
    const size = 2 * keys.length;
    this.keys = new Float64Array(size);
    this.vals = new Int32Array(size).fill(-1);
    this.mask = size - 1;
    this.count = 0;
    for (let i = 0; i < keys.length; i++) if (vals[i]! >= 0) this.set(keys[i]!, vals[i]!);
  }
}

/**
 * Live blocks by id, each with its requested size and a number the pass charges it to (a site key, a tree node's
 * index), in slots reused once a block ends. Grows with the blocks live at once, never with those made.
 */
export class LiveBlocks {
  private readonly ids = new LiveIds();
  private sizes = new Float64Array(256);
  private tags = new Float64Array(256);
  private inUse = new Uint8Array(256);
  private free = new Int32Array(256);
  private freeCount = 0;
  private slots = 0;

  /** Block `id` is live with `size` bytes, charged to `tag` (replacing what `id` held, as Map.set would). */
  add(id: number, tag: number, size: number): void {
    const s = this.freeCount > 0 ? this.free[--this.freeCount]! : this.newSlot();
    const before = this.ids.set(id, s);
    if (before !== NONE) this.release(before);
    this.inUse[s] = 1;
    this.sizes[s] = size;
    this.tags[s] = tag;
  }

  /** Ends block `id`: its slot, whose size and tag stay readable until the next add; NONE when it was not live. */
  take(id: number): number {
    const s = this.ids.take(id);
    if (s !== NONE) this.release(s);
    return s;
  }

  private release(s: number): void {
    this.inUse[s] = 0;
    this.free = grown(this.free, this.freeCount + 1);
    this.free[this.freeCount++] = s;
  }

  size(slot: number): number {
    return this.sizes[slot]!;
  }

  tag(slot: number): number {
    return this.tags[slot]!;
  }

  /** Every live block's tag and size (in slot order). */
  forEach(visit: (tag: number, size: number) => void): void {
    for (let s = 0; s < this.slots; s++) if (this.inUse[s] === 1) visit(this.tags[s]!, this.sizes[s]!);
  }

  private newSlot(): number {
    const n = this.slots + 1;
    this.sizes = grown(this.sizes, n);
    this.tags = grown(this.tags, n);
    this.inUse = grown(this.inUse, n);
    return this.slots++;
  }
}
