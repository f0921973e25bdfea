// Reads an ELF file's section table and one named section (32- or 64-bit, either byte order): how the report finds the
// frame sizes the driver put into a program (`.mw_stack`, instrumenter/stack-usage.ts) and a firmware's memory
// (firmware-image.ts). Pure: bytes in, bytes out.

/** Not an ELF file, or one whose section table runs past its end; the message names what is wrong. */
export class ElfError extends Error {
  override name = 'ElfError';
}

export interface Reader {
  u16(at: number): number;
  u32(at: number): number;
  /** An address or offset: 4 bytes in ELF32, 8 in ELF64 (as a number; files here are far below 2^53). */
  word(at: number): number;
  wide: boolean;
}

/** Reads the file's numbers in its class and byte order, each read checked against its end. Throws ElfError. */
export function reader(bytes: Uint8Array): Reader {
  if (bytes.length < 52 || bytes[0] !== 0x7f || bytes[1] !== 0x45 || bytes[2] !== 0x4c || bytes[3] !== 0x46) {
    throw new ElfError('not an ELF file');
  }
  const wide = bytes[4] === 2;
  if (bytes[4] !== 1 && !wide) throw new ElfError(`unknown ELF class ${bytes[4]}`);
  const little = bytes[5] === 1;
  if (bytes[5] !== 1 && bytes[5] !== 2) throw new ElfError(`unknown ELF byte order ${bytes[5]}`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const check = (at: number, n: number) => {
    if (at < 0 || at + n > bytes.length) throw new ElfError(`section table points past the end of the file (offset ${at})`);
  };
  const u16 = (at: number) => (check(at, 2), view.getUint16(at, little));
  const u32 = (at: number) => (check(at, 4), view.getUint32(at, little));
  const word = (at: number) => (wide ? (check(at, 8), Number(view.getBigUint64(at, little))) : u32(at));
  return { u16, u32, word, wide };
}

/** One entry of an ELF file's section table. */
export interface ElfSectionHeader {
  name: string;
  /** SHT_*: 1 PROGBITS, 2 SYMTAB, 3 STRTAB, 8 NOBITS, … */
  type: number;
  /** SHF_*: 1 WRITE, 2 ALLOC, 4 EXECINSTR. */
  flags: number;
  addr: number;
  offset: number;
  size: number;
  link: number;
  entsize: number;
}

export const SHT_NOBITS = 8;
export const SHF_WRITE = 1;
export const SHF_ALLOC = 2;

/** Every section of the file, in table order (empty when it has no table). Throws ElfError. */
export function elfSections(bytes: Uint8Array): ElfSectionHeader[] {
  const r = reader(bytes);
  const shoff = r.word(r.wide ? 0x28 : 0x20);
  const shentsize = r.u16(r.wide ? 0x3a : 0x2e);
  const shnum = r.u16(r.wide ? 0x3c : 0x30);
  const shstrndx = r.u16(r.wide ? 0x3e : 0x32);
  if (shoff === 0 || shnum === 0) return [];
  if (shstrndx >= shnum) throw new ElfError(`section name table index ${shstrndx} is out of range`);
  // Section header fields: name (u32), type (u32), flags (word), addr (word), offset (word), size (word), link (u32),
  // info (u32), addralign (word), entsize (word).
  const w = r.wide ? 8 : 4;
  const raw = (i: number) => {
    const at = shoff + i * shentsize;
    return {
      nameAt: r.u32(at),
      type: r.u32(at + 4),
      flags: r.word(at + 8),
      addr: r.word(at + 8 + w),
      offset: r.word(at + 8 + 2 * w),
      size: r.word(at + 8 + 3 * w),
      link: r.u32(at + 8 + 4 * w),
      entsize: r.word(at + 16 + 5 * w),
    };
  };
  const names = raw(shstrndx);
  const decoder = new TextDecoder();
  const out: ElfSectionHeader[] = [];
  for (let i = 0; i < shnum; i++) {
    const { nameAt, ...h } = raw(i);
    let end = names.offset + nameAt;
    if (end >= bytes.length) throw new ElfError(`section ${i}'s name lies past the end of the file`);
    while (end < bytes.length && bytes[end] !== 0) end++;
    out.push({ name: decoder.decode(bytes.subarray(names.offset + nameAt, end)), ...h });
  }
  return out;
}

/** The contents of the first section called `name`, or null when the file has none. Throws ElfError. */
export function elfSection(bytes: Uint8Array, name: string): Uint8Array | null {
  const h = elfSections(bytes).find((s) => s.name === name);
  if (h === undefined) return null;
  if (h.type === SHT_NOBITS) return new Uint8Array(0);
  if (h.offset + h.size > bytes.length) throw new ElfError(`section ${name} runs past the end of the file`);
  return bytes.subarray(h.offset, h.offset + h.size);
}
