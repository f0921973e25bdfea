// Live blocks by id for the streaming reader (resolve-stream.ts), which holds the live blocks every fold sees: an
// open-addressing map on typed arrays (LiveIds). A JavaScript Map costs several times more per block made and ended,
// and a pass makes and ends every block of the run.
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
