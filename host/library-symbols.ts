// Names the return addresses of EXT/CALL_PATH records from the loaded objects on this machine (their paths as the
// trace's LIBRARY records have them): each object's symbol tables are read once per process of `cc-memwrap`, and only
// the header, the section table and the tables themselves (libmpich.so is 40 MB; its .dynsym a few hundred KB).
import { closeSync, readSync } from 'node:fs';
import { ElfSymbols } from '../analysis/elf-symbols.js';
import { openRegularFile } from '../instrumenter/regular-file.js';
import type { SymbolNamer } from '../analysis/model.js';

const cache = new Map<string, ElfSymbols | null>();

/** The symbols of the object at `path`, or null when it cannot be read (gone, not ELF, not this machine's). */
export function librarySymbols(path: string): ElfSymbols | null {
  let symbols = cache.get(path);
  if (symbols !== undefined) return symbols;
  symbols = null;
  let fd = -1;
  try {
    // The trace names the object: only a regular file (a FIFO would block), read only within its size (a damaged
    // section table could ask for gigabytes).
    let size: number;
    ({ fd, size } = openRegularFile(path, Number.MAX_SAFE_INTEGER));
    const file = fd;
    symbols = ElfSymbols.read((offset, length) => {
      const buf = new Uint8Array(Math.max(0, Math.min(length, size - offset)));
      const n = readSync(file, buf, 0, length, offset);
      return buf.subarray(0, n);
    });
  } catch {
    symbols = null;
  } finally {
    if (fd >= 0) closeSync(fd);
  }
  cache.set(path, symbols);
  return symbols;
}

/** The namer a report gives the model. */
export const fileSymbolNamer: SymbolNamer = {
  name: (path, offset) => librarySymbols(path)?.functionAt(offset) ?? null,
};
