// Reads a trace file from disk and decodes it (with file-source.ts, the only I/O in analysis/; the GUI passes bytes to decodeTrace instead).
import { readFile } from 'node:fs/promises';
import { decodeTrace, type DecodeOptions } from './decode.js';
import type { Model } from '../model.js';

/** Reads and decodes `path`. Rejects with the fs error (ENOENT …) or TraceRefusedError. */
export async function readTraceFile(path: string, options: DecodeOptions = {}): Promise<Model> {
  const bytes = await readFile(path);
  return decodeTrace(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), options);
}
