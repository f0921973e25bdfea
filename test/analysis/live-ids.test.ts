// The streaming reader's table of live block ids (id → slot) agrees with a Map under allocation patterns of every
// shape: ids in order, freed in order or out of it, strided ids that share their low bits, ids above 2^32.
import { describe, expect, it } from 'vitest';
import { LiveIds } from '../../analysis/trace/live-ids.js';
import { NONE } from '../../analysis/model.js';

/** A small deterministic generator (xorshift), so a failure repeats. */
function random(seed: number): () => number {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

/** Runs `steps` allocations of ids `first + k * stride`, each freed later with probability `freeShare`, at random. */
function check(first: number, stride: number, steps: number, freeShare: number, seed: number): void {
  const rnd = random(seed);
  const table = new LiveIds();
  const model = new Map<number, number>();
  const live: number[] = [];
  let wrong = 0;
  for (let k = 0; k < steps; k++) {
    const id = first + k * stride;
    if (table.set(id, k) !== NONE) wrong++;
    model.set(id, k);
    live.push(id);
    while (live.length > 0 && rnd() < freeShare) {
      // Mostly the newest blocks (a tree's nodes freed soon after), sometimes any.
      const at = rnd() < 0.7 ? live.length - 1 - Math.floor(rnd() * Math.min(live.length, 8)) : Math.floor(rnd() * live.length);
      const gone = live[at]!;
      live[at] = live[live.length - 1]!;
      live.pop();
      if (table.take(gone) !== model.get(gone)) wrong++;
      model.delete(gone);
      if (table.get(gone) !== NONE) wrong++;
    }
    if (k % 97 === 0) {
      for (const id of live) if (table.get(id) !== model.get(id)) wrong++;
      if (table.get(first + (k + 1) * stride) !== NONE) wrong++;
      if (table.take(first + (k + 1) * stride) !== NONE) wrong++;
    }
  }
  for (const id of live) if (table.get(id) !== model.get(id)) wrong++;
  expect(wrong).toBe(0);
  expect(live.length).toBeGreaterThan(10);
  expect(table.set(live[0]!, 12345)).toBe(model.get(live[0]!));
  expect(table.get(live[0]!)).toBe(12345);
}

describe('live block ids', () => {
  it.each([
    ['in order', 1, 1],
    ['strided by 16', 3, 16],
    ['strided by 1024', 7, 1024],
    ['strided by 17', 2, 17],
    ['above 2^32', 2 ** 32 - 5000, 1],
    ['near 2^53', 2 ** 52 + 11, 4096],
  ])('%s: every lookup agrees with a Map', (_, first, stride) => {
    check(first, stride, 20_000, 0.3, 1);
    check(first, stride, 20_000, 0.48, 2);
  });
});
