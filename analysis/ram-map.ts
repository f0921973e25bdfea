// A firmware's RAM map: its RAM as the linker script gives it (firmware-image.ts) with what the run used of it — the
// static data (the program's, the C library's and start-up code's, the cc-memwrap runtime's), the heap's peak against
// its region, the stack's peak against its reservation, the margin left, and which budget the run crossed first, at
// which line. The report's "RAM map" section and the viewer's RAM panel are this one object.
import type { BudgetCrossing } from './budgets.js';
import type { EventFold, FoldEvent } from './event-fold.js';
import type { FirmwareImage, StaticObject } from './firmware-image.js';
import type { SiteTable } from './model.js';
import { siteInfo } from './sites.js';
import type { Summary } from './summary.js';
import { Kind } from './trace/format.js';

/** Whose a static object is: the program's (its instrumented statics), the runtime's, or the C library's and the start-up code's. */
export type Owner = 'program' | 'runtime' | 'other';

export interface RamMap {
  /** The firmware's ELF file. */
  program: string | null;
  ram: FirmwareImage['ram'];
  flash: FirmwareImage['flash'];
  static: {
    data: number;
    bss: number;
    /** Their bytes by owner. */
    byOwner: Record<Owner, number>;
    /** The largest objects, with their owner and, for the program's, the line that declares them (at most `top`). */
    objects: (StaticObject & { owner: Owner; file: string | null; line: number | null })[];
    /** How many objects there are in all. */
    objectCount: number;
  };
  heap: { region: FirmwareImage['heap']; peakRequested: number; peakUsable: number; peakEvent: number | null };
  stack: FirmwareImage['stack'] & { peak: number; peakEvent: number | null };
  runtime: FirmwareImage['runtime'];
  /** RAM left at the peaks: RAM − static − the heap's usable peak − the stack's peak (negative: they met). */
  margin: number;
  /** The first budget the run crossed, where; null when none was (or no budget was checked). */
  firstCrossed: (BudgetCrossing & { function: string | null; file: string | null; line: number | null }) | null;
}

/** The statics the program registered (STATIC records), by address: the objects of the image that are its own, and
 *  their sites (the lines that declare them). */
export class ProgramStaticsFold implements EventFold {
  readonly sites = new Map<number, number>();

  event(e: FoldEvent): void {
    if (e.kind === Kind.STATIC) this.sites.set(e.staticAddress, e.site);
  }

  finish(): void {}
}

/** The RAM map of one run of `image`, from its summary, its statics and its first budget crossing. */
export function ramMap(
  program: string | null,
  image: FirmwareImage,
  summary: Summary,
  statics: ReadonlyMap<number, number>,
  crossing: BudgetCrossing | null,
  sites: SiteTable,
  top: number,
): RamMap {
  const ownerOf = (o: StaticObject): Owner => (o.runtime ? 'runtime' : statics.has(o.address) ? 'program' : 'other');
  const objects = image.objects.map((o) => {
    const declared = o.runtime ? null : siteInfo({ sites }, statics.get(o.address) ?? 0);
    return { ...o, owner: ownerOf(o), file: declared?.file ?? null, line: declared?.line ?? null };
  });
  const byOwner: Record<Owner, number> = { program: 0, runtime: 0, other: 0 };
  for (const o of objects) byOwner[o.owner] += o.size;
  // Bytes of .data and .bss no named object holds (padding, unnamed constants) count as the C library's and start-up's.
  byOwner.other += Math.max(0, image.data + image.bss - byOwner.program - byOwner.runtime - byOwner.other);
  const heapUsable = summary.peakHeap.usable.bytes;
  const stackPeak = summary.peakStack.bytes;
  const info = crossing === null ? null : siteInfo({ sites }, crossing.site);
  return {
    program,
    ram: image.ram,
    flash: image.flash,
    static: { data: image.data, bss: image.bss, byOwner, objects: objects.slice(0, Math.max(0, top)), objectCount: objects.length },
    heap: { region: image.heap, peakRequested: summary.peakHeap.requested.bytes, peakUsable: heapUsable, peakEvent: summary.peakHeap.usable.event },
    stack: { ...image.stack, peak: stackPeak, peakEvent: summary.peakStack.event },
    runtime: image.runtime,
    margin: image.ram.size - image.data - image.bss - heapUsable - stackPeak,
    firstCrossed: crossing === null ? null : { ...crossing, function: info?.func || null, file: info?.file ?? null, line: info?.line ?? null },
  };
}
