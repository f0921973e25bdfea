// A firmware's memory as its ELF file holds it: the RAM and flash regions, its static data (.data and .bss) by
// symbol, the stack the linker script reserves and the heap region it leaves, and the cc-memwrap runtime's own share
// — what the report's RAM map and the target's budgets are made of. The linker scripts of picolibc
// (__ram/__ram_size, __heap_start/__heap_end, a .stack section), of STM32-style vendors (_estack, _Min_Heap_Size,
// _Min_Stack_Size, end) and of CMSIS (__StackTop/__StackLimit, __HeapBase/__HeapLimit) are read by their symbols.
// Pure: bytes in, numbers out.
import { ElfError, elfSections, reader, SHF_ALLOC, SHF_WRITE, SHT_NOBITS, type ElfSectionHeader } from './elf-section.js';

/** Where a region or reservation came from, in the linker script's own words (`_Min_Stack_Size`, `the .stack section`). */
export type Source = string;

export interface StaticObject {
  name: string;
  address: number;
  size: number;
  /** .data (initialised, also in flash) or .bss. */
  section: string;
  /** The cc-memwrap runtime's own (its buffer, block table, shadow stack, state; each unit's site-table base). */
  runtime: boolean;
}

export interface FirmwareImage {
  /** The RAM the stack's top closes: [start, start + size). */
  ram: { start: number; size: number; source: Source };
  /** Flash: where it starts, its size when the script names it, and the bytes the firmware takes there. */
  flash: { start: number; size: number | null; used: number };
  /** Static data in RAM: .data and .bss bytes (the reservations of stack and heap not counted). */
  data: number;
  bss: number;
  /** The named objects of that data, largest first. */
  objects: StaticObject[];
  /** The stack: its top (the initial stack pointer) and the bytes the script reserves below it (null: none found). */
  stack: { top: number; reserved: number | null; source: Source };
  /** The heap region the C library's allocator takes from, or null when the script gives none. */
  heap: { start: number; end: number; source: Source } | null;
  /** The runtime's own bytes: its objects in RAM, its code and tables in flash. */
  runtime: { ram: number; flash: number };
}

interface Symbol {
  name: string;
  value: number;
  size: number;
  /** STT_*: 1 OBJECT, 2 FUNC. */
  type: number;
  /** Section index; 0xfff1 = absolute (a linker-script constant). */
  shndx: number;
}

const EM_ARM = 40;
const PT_INTERP = 3;
const PT_DYNAMIC = 2;
const SHT_SYMTAB = 2;
const STT_NOTYPE = 0; /* a static without an initialiser, as gcc's .lcomm gives it */
const STT_OBJECT = 1;
const STT_FUNC = 2;

/** The runtime's names: its state and tables (mw_…), its entry points and each unit's site table (__mw_…), its wrappers. */
const isRuntime = (name: string): boolean => /^(mw_|__mw_|__wrap_|memwrap_)/.test(name);
/** Sections that only reserve room for the stack or heap (picolibc's .stack, STM32's ._user_heap_stack) or space
 *  counted elsewhere (picolibc's .tbss_space). */
const RESERVATION = /^\.?(stack|heap|_user_heap_stack|tbss_space)$/;

function symbols(bytes: Uint8Array, sections: ElfSectionHeader[]): Symbol[] {
  const r = reader(bytes);
  const out: Symbol[] = [];
  const decoder = new TextDecoder();
  for (const s of sections) {
    if (s.type !== SHT_SYMTAB || s.link >= sections.length) continue;
    const strings = sections[s.link]!;
    const entsize = s.entsize || (r.wide ? 24 : 16);
    for (let at = s.offset + entsize; at + entsize <= s.offset + s.size; at += entsize) {
      const nameAt = r.u32(at);
      const value = r.wide ? r.word(at + 8) : r.u32(at + 4);
      const size = r.wide ? r.word(at + 16) : r.u32(at + 8);
      const info = bytes[r.wide ? at + 4 : at + 12]!;
      const shndx = r.u16(r.wide ? at + 6 : at + 14);
      let end = strings.offset + nameAt;
      if (nameAt >= strings.size) continue;
      while (end < bytes.length && bytes[end] !== 0) end++;
      out.push({ name: decoder.decode(bytes.subarray(strings.offset + nameAt, end)), value, size, type: info & 0xf, shndx });
    }
  }
  return out;
}

/** Whether the file is a program for a bare-metal target: ARM, statically placed, with no interpreter or dynamic section. */
function isFirmware(bytes: Uint8Array): boolean {
  const r = reader(bytes);
  if (r.wide || r.u16(0x12) !== EM_ARM) return false;
  const phoff = r.u32(0x1c);
  const phentsize = r.u16(0x2a);
  for (let i = 0; i < r.u16(0x2c); i++) {
    const type = r.u32(phoff + i * phentsize);
    if (type === PT_INTERP || type === PT_DYNAMIC) return false;
  }
  return true;
}

/**
 * The memory of the firmware in `bytes`, or null when the file is not a bare-metal ARM program (a host's program has
 * an interpreter or a dynamic section). Throws ElfError for a file that is not ELF or whose tables run past its end.
 */
export function readFirmwareImage(bytes: Uint8Array): FirmwareImage | null {
  if (!isFirmware(bytes)) return null;
  const sections = elfSections(bytes);
  const syms = symbols(bytes, sections);
  const sym = (...names: string[]): Symbol | undefined => names.map((n) => syms.find((s) => s.name === n)).find((s) => s !== undefined);
  const value = (...names: string[]): number | null => sym(...names)?.value ?? null;
  const loaded = sections.filter((s) => s.flags & SHF_ALLOC && s.size > 0);
  // RAM sections: written and not in the flash image at their address (bss, or data loaded from elsewhere).
  const inRam = (s: ElfSectionHeader): boolean => (s.flags & SHF_WRITE) !== 0 && (s.type === SHT_NOBITS || loadAddress(bytes, s) !== s.addr);
  const ramSections = loaded.filter(inRam);
  const flashSections = loaded.filter((s) => !inRam(s));
  const statics = ramSections.filter((s) => !RESERVATION.test(s.name));
  const vectorSp = flashSections.length ? firstWord(bytes, flashSections.reduce((a, b) => (b.addr < a.addr ? b : a))) : null;

  const topSym = sym('__stack', '_estack', '__StackTop');
  const top = topSym?.value ?? vectorSp ?? 0;
  const ramStart = value('__ram') ?? Math.min(...ramSections.map((s) => s.addr), top);
  const ramSize = value('__ram_size');
  const ram = ramSize !== null ? { start: ramStart, size: ramSize, source: '__ram_size' } : { start: ramStart, size: top - ramStart, source: `up to ${topSym?.name ?? 'the initial stack pointer'}, the stack's top` };

  const heap = heapRegion(sym);
  const stack = stackReservation(sym, top, sections, heap);
  const heapRegionOf = heap ?? (stack.reserved !== null && value('end', '_end', '__end__') !== null ? { start: value('end', '_end', '__end__')!, end: top - stack.reserved, source: `${sym('end', '_end', '__end__')!.name} to ${topSym?.name ?? 'the stack'} − ${stack.source}` } : null);

  const objects: StaticObject[] = syms
    .filter((s) => (s.type === STT_OBJECT || s.type === STT_NOTYPE) && s.size > 0 && s.shndx < sections.length && statics.includes(sections[s.shndx]!))
    .map((s) => ({ name: s.name, address: s.value, size: s.size, section: sections[s.shndx]!.type === SHT_NOBITS ? '.bss' : '.data', runtime: isRuntime(s.name) }))
    .sort((a, b) => b.size - a.size || a.address - b.address);
  const flashStart = value('__flash') ?? Math.min(...flashSections.map((s) => s.addr));
  const inFlash = (s: Symbol): boolean => s.shndx < sections.length && flashSections.includes(sections[s.shndx]!);
  return {
    ram,
    flash: {
      start: flashStart,
      size: value('__flash_size'),
      used: flashSections.filter((s) => s.type !== SHT_NOBITS).reduce((n, s) => n + s.size, 0) + statics.filter((s) => s.type !== SHT_NOBITS).reduce((n, s) => n + s.size, 0),
    },
    data: statics.filter((s) => s.type !== SHT_NOBITS).reduce((n, s) => n + s.size, 0),
    bss: statics.filter((s) => s.type === SHT_NOBITS).reduce((n, s) => n + s.size, 0),
    objects,
    stack,
    heap: heapRegionOf,
    runtime: {
      ram: objects.filter((o) => o.runtime).reduce((n, o) => n + o.size, 0),
      flash: syms.filter((s) => (s.type === STT_FUNC || s.type === STT_OBJECT) && isRuntime(s.name) && inFlash(s)).reduce((n, s) => n + s.size, 0),
    },
  };
}

/** The heap region a script names outright (picolibc, CMSIS), or null (newlib's: from `end` up to the stack's reservation). */
function heapRegion(sym: (...names: string[]) => Symbol | undefined): FirmwareImage['heap'] {
  const pico = [sym('__heap_start'), sym('__heap_end')];
  if (pico[0] && pico[1]) return { start: pico[0].value, end: pico[1].value, source: '__heap_start … __heap_end' };
  const cmsis = [sym('__HeapBase'), sym('__HeapLimit')];
  if (cmsis[0] && cmsis[1]) return { start: cmsis[0].value, end: cmsis[1].value, source: '__HeapBase … __HeapLimit' };
  return null;
}

/** The bytes below the stack's top the script keeps for the stack. */
function stackReservation(sym: (...names: string[]) => Symbol | undefined, top: number, sections: ElfSectionHeader[], heap: FirmwareImage['heap']): FirmwareImage['stack'] {
  const section = sections.find((s) => s.name === '.stack' && s.flags & SHF_ALLOC);
  if (section) return { top, reserved: section.size, source: 'the .stack section' };
  for (const name of ['_Min_Stack_Size', '__stack_size', 'Stack_Size']) {
    const s = sym(name);
    if (s) return { top, reserved: s.value, source: name };
  }
  const limit = sym('__StackLimit');
  if (limit) return { top, reserved: top - limit.value, source: '__StackTop − __StackLimit' };
  if (heap) return { top, reserved: top - heap.end, source: 'the gap above the heap' };
  return { top, reserved: null, source: 'none found' };
}

/** Where the section's bytes are loaded (its LMA): the program header holding it, else its address. */
function loadAddress(bytes: Uint8Array, s: ElfSectionHeader): number {
  const r = reader(bytes);
  const phoff = r.u32(0x1c);
  const phentsize = r.u16(0x2a);
  for (let i = 0; i < r.u16(0x2c); i++) {
    const at = phoff + i * phentsize;
    const vaddr = r.u32(at + 8);
    const memsz = r.u32(at + 20);
    if (r.u32(at) === 1 && s.addr >= vaddr && s.addr < vaddr + Math.max(memsz, 1)) return r.u32(at + 12) + (s.addr - vaddr);
  }
  return s.addr;
}

/** The first word of a loaded section: the vector table's initial stack pointer when it is the lowest in flash. */
function firstWord(bytes: Uint8Array, s: ElfSectionHeader): number | null {
  if (s.type === SHT_NOBITS || s.size < 4) return null;
  if (s.offset + 4 > bytes.length) throw new ElfError(`section ${s.name} runs past the end of the file`);
  return reader(bytes).u32(s.offset);
}

/** The budgets a firmware's linker script sets: the heap region's size and the stack's reservation (those it gives). */
export function linkerBudgets(image: FirmwareImage): { heap?: number; stack?: number } {
  const out: { heap?: number; stack?: number } = {};
  if (image.heap !== null && image.heap.end > image.heap.start) out.heap = image.heap.end - image.heap.start;
  if (image.stack.reserved !== null && image.stack.reserved > 0) out.stack = image.stack.reserved;
  return out;
}
