// An index built in memory (analysis/memory-index.ts) over a trace's bytes read in small windows, for tests that read an index back without a file.
import { memorySource } from '../../analysis/trace/byte-source.js';
import { streamSource } from '../../analysis/trace/resolve-stream.js';
import { buildMemoryIndex } from '../../analysis/memory-index.js';
import type { IndexReader } from '../../analysis/event-index.js';

/** The index of `bytes` in memory, with buckets and fine rows of the sizes given (tests use small ones). */
export function memoryIndex(bytes: Uint8Array, bucketSize?: number, fineSize?: number): IndexReader {
  return buildMemoryIndex(streamSource(memorySource(bytes), { window: 4096 }), { bucketSize, fineSize }).reader;
}
