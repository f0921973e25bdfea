// The function symbols of an ELF file (its dynamic symbol table .dynsym, and .symtab where it was not stripped), and
// which function holds an address: how `report --by entry` and `--by library-function` name the return addresses of
// EXT/CALL_PATH records offline. Pure: the file is read through `read(offset, length)`, so a host can read only the
// header, the section table and the symbol tables of a large library.
import { ElfError } from './elf-section.js';

/** Reads `length` bytes at `offset` of the file (fewer at its end). */
export type ElfRead = (offset: number, length: number) => Uint8Array;

const SHT_SYMTAB = 2;
const SHT_DYNSYM = 11;
const STT_FUNC = 2;
const STT_GNU_IFUNC = 10;

/** Function symbols sorted by address; of several names for one address the shortest (MPI_Init before PMPI_Init). */
export class ElfSymbols {
  private constructor(
    private readonly start: Float64Array,
    private readonly size: Float64Array,
    private readonly names: string[],
  ) {}

  get count(): number {
    return this.names.length;
  }

  /**
   * The function holding the instruction before return address `ra` (an offset from the object's load base, which is
   * the file's virtual address), or null when no symbol covers it (a local function of a stripped object).
   */
  functionAt(ra: number): string | null {
    const pc = ra - 1;
    let lo = 0;
    let hi = this.start.length - 1;
    let at = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.start[mid]! <= pc) {
        at = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    if (at < 0) return null;
    const size = this.size[at]!;
    return pc < this.start[at]! + Math.max(size, 1) || size === 0 ? this.names[at]! : null;
  }

  /** Reads the symbol tables. Throws ElfError for a file that is not ELF or whose tables run past its end. */
  static read(read: ElfRead): ElfSymbols {
    const head = read(0, 64);
    if (head.length < 52 || head[0] !== 0x7f || head[1] !== 0x45 || head[2] !== 0x4c || head[3] !== 0x46) throw new ElfError('not an ELF file');
    const wide = head[4] === 2;
    if (head[4] !== 1 && !wide) throw new ElfError(`unknown ELF class ${head[4]}`);
    const little = head[5] === 1;
    const view = (b: Uint8Array): DataView => new DataView(b.buffer, b.byteOffset, b.byteLength);
    const hv = view(head);
    const shoff = wide ? Number(hv.getBigUint64(0x28, little)) : hv.getUint32(0x20, little);
    const shentsize = hv.getUint16(wide ? 0x3a : 0x2e, little);
    const shnum = hv.getUint16(wide ? 0x3c : 0x30, little);
    if (shoff === 0 || shnum === 0) return new ElfSymbols(new Float64Array(0), new Float64Array(0), []);
    const table = read(shoff, shentsize * shnum);
    if (table.length < shentsize * shnum) throw new ElfError(`section table points past the end of the file (offset ${shoff})`);
    const tv = view(table);
    const section = (i: number): { type: number; offset: number; size: number; link: number; entsize: number } => {
      const at = i * shentsize;
      return wide
        ? { type: tv.getUint32(at + 4, little), offset: Number(tv.getBigUint64(at + 0x18, little)), size: Number(tv.getBigUint64(at + 0x20, little)), link: tv.getUint32(at + 0x28, little), entsize: Number(tv.getBigUint64(at + 0x38, little)) }
        : { type: tv.getUint32(at + 4, little), offset: tv.getUint32(at + 0x10, little), size: tv.getUint32(at + 0x14, little), link: tv.getUint32(at + 0x18, little), entsize: tv.getUint32(at + 0x24, little) };
    };
    const byAddress = new Map<number, { size: number; name: string }>();
    for (let i = 0; i < shnum; i++) {
      const s = section(i);
      if ((s.type !== SHT_DYNSYM && s.type !== SHT_SYMTAB) || s.link >= shnum) continue;
      const entsize = s.entsize || (wide ? 24 : 16);
      const strings = section(s.link);
      const syms = read(s.offset, s.size);
      const strs = read(strings.offset, strings.size);
      const sv = view(syms);
      const decoder = new TextDecoder();
      for (let at = entsize; at + entsize <= syms.length; at += entsize) {
        const nameAt = sv.getUint32(at, little);
        const info = wide ? sv.getUint8(at + 4) : sv.getUint8(at + 12);
        const shndx = wide ? sv.getUint16(at + 6, little) : sv.getUint16(at + 14, little);
        const value = wide ? Number(sv.getBigUint64(at + 8, little)) : sv.getUint32(at + 4, little);
        const size = wide ? Number(sv.getBigUint64(at + 16, little)) : sv.getUint32(at + 8, little);
        const type = info & 0xf;
        if ((type !== STT_FUNC && type !== STT_GNU_IFUNC) || shndx === 0 || value === 0 || nameAt >= strs.length) continue;
        let end = nameAt;
        while (end < strs.length && strs[end] !== 0) end++;
        const name = decoder.decode(strs.subarray(nameAt, end));
        if (name === '') continue;
        const had = byAddress.get(value);
        if (had === undefined || name.length < had.name.length || (name.length === had.name.length && name < had.name)) {
          byAddress.set(value, { size: Math.max(size, had?.size ?? 0), name });
        }
      }
    }
    const starts = [...byAddress.keys()].sort((a, b) => a - b);
    return new ElfSymbols(
      Float64Array.from(starts),
      Float64Array.from(starts, (v) => byAddress.get(v)!.size),
      starts.map((v) => byAddress.get(v)!.name),
    );
  }
}
