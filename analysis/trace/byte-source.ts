// Where a trace's bytes come from: a buffer already in memory (here; the viewer's worker has only that), or a file
// read a window at a time (file-source.ts), so that a reader holds one window (a chunk, usually 1 MiB) instead of the
// whole trace — traces are often larger than memory, and Node refuses to read a file over 2 GiB into one buffer.

export interface ByteSource {
  /** The file's length in bytes. */
  readonly size: number;
  /** How many bytes one `read` should ask for at most; Infinity when every byte is in memory already. */
  readonly window: number;
  /**
   * Bytes `[offset, offset + length)`, cut at the end of the file. The result may share memory with the next call's,
   * so a caller copies what it keeps.
   */
  read(offset: number, length: number): Uint8Array;
  /** Another reader of the same bytes whose reads do not overwrite this one's (a buffer of its own). */
  clone(): ByteSource;
}

/** A source over bytes in memory: reads are views, never copies. */
export function memorySource(bytes: Uint8Array): ByteSource {
  const source: ByteSource = {
    size: bytes.length,
    window: Infinity,
    read: (offset, length) => bytes.subarray(offset, Math.min(bytes.length, offset + length)),
    clone: () => source,
  };
  return source;
}
