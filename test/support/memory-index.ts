// An index built in memory (analysis/event-index.ts's fold into arrays), for tests that read an index back without a file.
import { memorySource } from '../../analysis/trace/byte-source.js';
import { streamSource } from '../../analysis/trace/resolve-stream.js';
import { FINE_FIELDS, IndexFold, IndexReader, NOT_FREED, type IndexStore } from '../../analysis/event-index.js';

/** Builds an index in memory: the buckets one after the other, the free column as a map, the fine rows in one array. */
export function memoryIndex(bytes: Uint8Array, bucketSize?: number, fineSize?: number): IndexReader {
  const parts: Uint8Array[] = [];
  const frees = new Map<number, number>();
  let fines: number[] = [];
  let fold: IndexFold | null = null;
  streamSource(memorySource(bytes), { window: 4096 }).run((start) => {
    parts.length = 0;
    fines = [];
    fold = new IndexFold(start, { bucket: (b) => parts.push(b), freed: (row, e) => frees.set(row, e), fine: (rows) => fines.push(...rows) }, bucketSize, fineSize);
    return [fold];
  });
  const fineRows = Float32Array.from(fines);
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  const { meta, summary } = (fold as unknown as IndexFold).result();
  const store: IndexStore = {
    bucketBytes: (o, n) => all.subarray(o, o + n),
    freeOf: (row) => frees.get(row) ?? NOT_FREED,
    fineRows: (first, count) => fineRows.slice(FINE_FIELDS * first, FINE_FIELDS * (first + count)),
  };
  return new IndexReader(meta, summary, store);
}
