// A trace file read with positioned reads, one window at a time (the Node side only: the browser gets bytes).
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import type { ByteSource } from './byte-source.js';

/** The window a file is read in: a whole chunk of the runtime's (1 MiB of payload) and then some. */
export const FILE_WINDOW = 4 << 20;

/** A file read with positioned reads into one buffer that is reused (and grown for a record larger than a window). */
export class FileSource implements ByteSource {
  readonly size: number;
  private buffer: Uint8Array;
  private closed = false;

  private constructor(
    private readonly fd: number,
    readonly window: number,
    size = fstatSync(fd).size,
    /** A clone reads through its original's descriptor and leaves closing it to the original. */
    private readonly ownsFd = true,
  ) {
    this.size = size;
    this.buffer = new Uint8Array(0);
  }

  /** The open file's descriptor: another thread of this process may read through it (`ofDescriptor`). */
  get descriptor(): number {
    return this.fd;
  }

  /** A source over a descriptor opened elsewhere in this process (another thread's), which it never closes. */
  static ofDescriptor(fd: number, size: number, window = FILE_WINDOW): FileSource {
    return new FileSource(fd, window, size, false);
  }

  /** Reads through the same open file (valid until the original is closed) into a buffer of its own. */
  clone(): FileSource {
    return new FileSource(this.fd, this.window, this.size, false);
  }

  /**
   * Opens `file`; throws the fs error (ENOENT, EISDIR …) as readFile would, and ENOTREGULAR for a FIFO, socket or device
   * (a trace is read by offset and size: a FIFO's open would wait for a writer, a device's size says nothing).
   */
  static open(file: string, window = FILE_WINDOW): FileSource {
    const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
    try {
      const st = fstatSync(fd);
      if (st.isDirectory()) throw Object.assign(new Error(`EISDIR: illegal operation on a directory, read`), { code: 'EISDIR' });
      if (!st.isFile()) throw Object.assign(new Error('not a regular file'), { code: 'ENOTREGULAR' });
      return new FileSource(fd, window);
    } catch (e) {
      closeSync(fd);
      throw e;
    }
  }

  read(offset: number, length: number): Uint8Array {
    const n = Math.max(0, Math.min(length, this.size - offset));
    if (n > this.buffer.length) this.buffer = new Uint8Array(n);
    let got = 0;
    while (got < n) {
      const r = readSync(this.fd, this.buffer, got, n - got, offset + got);
      if (r === 0) break; // the file shrank under us: what was read is all there is
      got += r;
    }
    return this.buffer.subarray(0, got);
  }

  close(): void {
    if (!this.closed && this.ownsFd) closeSync(this.fd);
    this.closed = true;
  }
}

/** Runs `use` with the file open as a source, and closes it after. */
export function withFileSource<T>(file: string, use: (source: FileSource) => T, window = FILE_WINDOW): T {
  const source = FileSource.open(file, window);
  try {
    return use(source);
  } finally {
    source.close();
  }
}
