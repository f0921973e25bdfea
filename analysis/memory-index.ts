// An index built in memory: the fold the host writes to its file (event-index.ts's IndexFold), its buckets, free column
// and fine rows kept in arrays, read back by the same IndexReader. The viewer's index of a trace it holds whole (the
// page's worker, a small trace), so the page reads every trace through one interface. Memory: the index's bytes
// (about 12.5 per event with the events, a few per thousand without), not the model's.
import type { FoldSource } from './event-fold.js';
import { FINE_FIELDS, IndexFold, IndexReader, INDEX_BUCKET, INDEX_FINE, NOT_FREED, type IndexMeta, type IndexStore } from './event-index.js';
import { grown } from './trace/typed-arrays.js';

/** What an index in memory is made of: it can be handed to another thread whole (its arrays transferred) and read there. */
export interface MemoryIndexParts {
  meta: IndexMeta;
  /** The summary table, the thread table after it (as the host's file holds them). */
  summary: Float64Array;
  /** The buckets' bytes one after the other, the free column by block row, the fine rows. */
  buckets: Uint8Array;
  frees: Uint32Array;
  fines: Float32Array;
}

export interface MemoryIndex extends MemoryIndexParts {
  reader: IndexReader;
}

/** A reader of an index's parts (built here, or handed over from another thread). */
export function memoryIndexReader(parts: MemoryIndexParts): IndexReader {
  const { buckets, frees, fines } = parts;
  const store: IndexStore = {
    bucketBytes: (offset, length) => buckets.subarray(offset, offset + length),
    freeOf: (row) => (row < frees.length ? frees[row]! : NOT_FREED),
    fineRows: (first, count) => fines.slice(FINE_FIELDS * first, FINE_FIELDS * (first + count)),
  };
  return new IndexReader(parts.meta, parts.summary, store);
}

export interface MemoryIndexOptions {
  /** Every event written (false: the summaries, fine rows and meta only, what the chart draws first). */
  events?: boolean;
  /** Without the events: the buckets' times all the same. */
  times?: boolean;
  /** Events per bucket and per fine row (tests use small ones). */
  bucketSize?: number;
  fineSize?: number;
}

/** The index of `source` in memory, in one pass of the fold (a pass the reader runs again starts it anew). */
export function buildMemoryIndex(source: FoldSource, options: MemoryIndexOptions = {}): MemoryIndex {
  const events = options.events ?? true;
  let buckets = new Uint8Array(1 << 16);
  let bucketBytes = 0;
  let frees = new Uint32Array(1024).fill(NOT_FREED);
  let fines = new Float32Array(FINE_FIELDS * 1024);
  let fineCount = 0;
  let fold: IndexFold | null = null;
  source.run((start) => {
    bucketBytes = 0;
    fineCount = 0;
    frees.fill(NOT_FREED);
    fold = new IndexFold(
      start,
      {
        bucket(bytes) {
          buckets = grown(buckets, bucketBytes + bytes.length);
          buckets.set(bytes, bucketBytes);
          bucketBytes += bytes.length;
        },
        freed(row, event) {
          if (row >= frees.length) frees = grown(frees, row + 1, NOT_FREED);
          frees[row] = event;
        },
        fine(rows) {
          fines = grown(fines, fineCount + rows.length);
          fines.set(rows, fineCount);
          fineCount += rows.length;
        },
      },
      options.bucketSize ?? INDEX_BUCKET,
      options.fineSize ?? INDEX_FINE,
      events,
      options.times ?? events,
    );
    return [fold];
  });
  const { meta, summary } = (fold as IndexFold | null)!.result();
  const parts: MemoryIndexParts = { meta, summary, buckets: buckets.slice(0, bucketBytes), frees: frees.slice(0, meta.blocks), fines: fines.slice(0, fineCount) };
  return { ...parts, reader: memoryIndexReader(parts) };
}
