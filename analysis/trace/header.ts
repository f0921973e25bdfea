// The 64-byte trace header: parse it, or refuse the file (not a trace, unknown major version, cut short) with a clear reason.
import { BYTE_ORDER_MARK, HEADER_SIZE, HeaderFlag, READER_MAJOR, READER_MINOR, STOP_ERRNO_OFFSET, TRACE_MAGIC } from './format.js';
import type { ByteSource } from './byte-source.js';

export interface TraceHeader {
  major: number;
  minor: number;
  /** The writer's byte order, taken from the byte-order mark. */
  littleEndian: boolean;
  pointerSize: number;
  /** Header flag bit 0: set last by a normal exit, after the END record. */
  complete: boolean;
  /** Header flag bit 1 clear: the runtime interposed malloc & co., so allocations inside libc and uninstrumented
   *  code are in the trace too. Set when a sanitizer or a Valgrind tool owned the allocator, or a shared runtime served
   *  a plain host. */
  interposed: boolean;
  /**
   * Header flag bit 2: the runtime stopped recording before the program ended, because the file could not grow (a full
   * disk): the errno it met (offset 28; 28 = ENOSPC on Linux). Null when the flag is clear.
   */
  stoppedErrno: number | null;
  /** Where the first chunk starts. */
  headerSize: number;
  pid: number;
  ppid: number;
  /** Start time in nanoseconds since the Unix epoch (u64, hence a bigint). */
  startTimeNs: bigint;
  fileSize: number;
}

/** The file cannot be read as a trace at all. Decoding never throws anything else. */
export class TraceRefusedError extends Error {
  override readonly name = 'TraceRefusedError';
}

const READER_VERSION = `${READER_MAJOR}.${READER_MINOR}`;

function describeMagic(bytes: Uint8Array): string {
  const head = Array.from(bytes.subarray(0, 8), (b) => b.toString(16).padStart(2, '0')).join(' ');
  return head === '' ? 'the file is empty' : `it starts with ${head}`;
}

/** Parses the header at the start of `source` or throws TraceRefusedError. */
export function readHeader(source: ByteSource): TraceHeader {
  return parseHeader(source.read(0, HEADER_SIZE).slice(), source.size);
}

/** Parses the header or throws TraceRefusedError. `bytes` holds the file's first bytes (at least 64 of them, or all). */
export function parseHeader(bytes: Uint8Array, fileSize = bytes.length): TraceHeader {
  if (String.fromCharCode(...bytes.subarray(0, 8)) === 'MWONLINE') {
    throw new TraceRefusedError(
      'an online-mode file (MEMWRAP_MODE=online): it holds heap tables, not events; `cc-memwrap report FILE` prints them ' +
        '(with --by function, library or thread, --json), everything else needs a trace (run without MEMWRAP_MODE=online)',
    );
  }
  for (let i = 0; i < TRACE_MAGIC.length; i++) {
    if (bytes[i] !== TRACE_MAGIC.charCodeAt(i)) {
      throw new TraceRefusedError(
        `not a cc-memwrap trace: ${describeMagic(bytes)}, a trace starts with "MWTRACE\\0" (format ${READER_VERSION})`,
      );
    }
  }
  if (bytes.length < 16) {
    throw new TraceRefusedError(`truncated trace header: the file is ${bytes.length} bytes, the header needs ${HEADER_SIZE}`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let littleEndian: boolean;
  if (view.getUint32(12, true) === BYTE_ORDER_MARK) littleEndian = true;
  else if (view.getUint32(12, false) === BYTE_ORDER_MARK) littleEndian = false;
  else {
    throw new TraceRefusedError(
      `corrupt trace header: byte-order mark at offset 12 is 0x${view.getUint32(12, true).toString(16)}, expected 0x01020304 in either byte order`,
    );
  }
  const major = view.getUint16(8, littleEndian);
  const minor = view.getUint16(10, littleEndian);
  if (major !== READER_MAJOR) {
    throw new TraceRefusedError(
      `unsupported trace format version ${major}.${minor}: this reader reads version ${READER_VERSION} (major ${READER_MAJOR}) only` +
        (major > READER_MAJOR ? '; a newer cc-memwrap wrote it' : ''),
    );
  }
  if (bytes.length < HEADER_SIZE) {
    throw new TraceRefusedError(`truncated trace header: the file is ${bytes.length} bytes, the header needs ${HEADER_SIZE}`);
  }
  const headerSize = view.getUint16(18, littleEndian);
  if (headerSize < HEADER_SIZE) {
    throw new TraceRefusedError(`corrupt trace header: header size ${headerSize} at offset 18 is below ${HEADER_SIZE}`);
  }
  if (headerSize > fileSize) {
    throw new TraceRefusedError(
      `truncated trace header: the header claims ${headerSize} bytes, the file is ${fileSize} bytes`,
    );
  }
  return {
    major,
    minor,
    littleEndian,
    pointerSize: view.getUint8(16),
    complete: (view.getUint8(17) & 1) !== 0,
    interposed: (view.getUint8(17) & 2) === 0,
    stoppedErrno: (view.getUint8(17) & HeaderFlag.STOPPED) !== 0 ? view.getUint32(STOP_ERRNO_OFFSET, littleEndian) : null,
    headerSize,
    pid: view.getUint32(20, littleEndian),
    ppid: view.getUint32(24, littleEndian),
    startTimeNs: view.getBigUint64(32, littleEndian),
    fileSize,
  };
}
