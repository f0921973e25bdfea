// A binary min-heap of small integers (thread ranks) ordered by a comparison the caller supplies, for the merges of
// the threads' runs into one global order (decode.ts, event-stream.ts). The comparison may read state that changes:
// after the top item's key grows, `topChanged()` restores the order.
export class IndexHeap {
  private readonly items: number[] = [];

  constructor(private readonly less: (a: number, b: number) => boolean) {}

  get size(): number {
    return this.items.length;
  }

  /** The least item; the heap must not be empty. */
  top(): number {
    return this.items[0]!;
  }

  push(item: number): void {
    const h = this.items;
    let i = h.length;
    h.push(item);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(h[i]!, h[p]!)) return;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }

  pop(): number {
    const h = this.items;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      this.topChanged();
    }
    return top;
  }

  /** Moves the top item down to its place after its key grew. */
  topChanged(): void {
    const h = this.items;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && this.less(h[l]!, h[m]!)) m = l;
      if (r < h.length && this.less(h[r]!, h[m]!)) m = r;
      if (m === i) return;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
  }
}
