// Growing typed arrays: the readers and the folds keep their tables in typed arrays sized as they go.

/** A typed array at least `n` long: `a` itself, or a copy twice as long or more (new entries `fill`). */
export function grown<T extends Float64Array | Float32Array | Int32Array | Uint32Array | Uint8Array>(a: T, n: number, fill = 0): T {
  if (n <= a.length) return a;
  const b = new (a.constructor as new (n: number) => T)(Math.max(n, 2 * a.length, 64));
  b.set(a);
  if (fill !== 0) b.fill(fill, a.length);
  return b;
}
