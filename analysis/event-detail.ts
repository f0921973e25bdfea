// One event as the viewer explains it: its kind and place, the totals after it, the call stack at that moment, and the block it created or ended with that block's other end (its free, or "never freed" with the leak class; its allocation) and the linked set of a free.
import { Flag, Kind, kindName } from './trace/format.js';
import { NONE, type Model } from './model.js';
import { blockRef, eventSite, linkedFreeAt, orphaningEvents, siteRef, type LinkedBlockRef, type Run, type LinkedFree, type LinkedMember, type SiteRef } from './linked.js';
import { leakClassOf, type LeakClassName } from './leaks.js';
import { siteInfo, siteLocation } from './sites.js';
import { libraryCause, type LibraryCause } from './library-blocks.js';

/** The four kinds of bar the chart tells apart, and everything else. */
export type EventClass = 'alloc' | 'free' | 'call' | 'return' | 'other';
export const EVENT_CLASSES: readonly EventClass[] = ['alloc', 'free', 'call', 'return', 'other'];

/** Bit of each class in the masks of lod.ts: 1 alloc, 2 free, 4 call, 8 return, 16 other. */
export function eventClassBit(c: EventClass): number {
  return 1 << EVENT_CLASSES.indexOf(c);
}

/** ALLOC and REALLOC allocate (a realloc creates the new block), FREE frees, ENTER calls, EXIT and UNWIND return. */
const KINDS_OF_CLASS: readonly [EventClass, readonly number[]][] = [
  ['alloc', [Kind.ALLOC, Kind.REALLOC]],
  ['free', [Kind.FREE]],
  ['call', [Kind.ENTER]],
  ['return', [Kind.EXIT, Kind.UNWIND]],
];
const CLASS_OF_KIND: EventClass[] = new Array<EventClass>(256).fill('other');
for (const [cls, kinds] of KINDS_OF_CLASS) for (const k of kinds) CLASS_OF_KIND[k] = cls;

/** The class of an event kind (KINDS_OF_CLASS). */
export function eventClassOfKind(kind: number): EventClass {
  return CLASS_OF_KIND[kind] ?? 'other';
}

/** One open function frame. */
export interface StackEntry {
  frame: number;
  function: string;
  /** The function's entry site: absolute file as the site table has it, and line. */
  file: string | null;
  line: number | null;
  /** "list.c:20 main" (relative to the run's working directory). */
  label: string;
  /** Stack bytes in use at its entry. */
  depth: number;
  enterEvent: number;
}

function frameEntry(model: Model, f: number): StackEntry {
  return frameEntryOf(model, f, model.frames.entrySite[f]!, model.frames.depth[f]!, model.frames.enter[f]!);
}

/** A frame as the detail shows it, from its entry site, depth and entry event (a model's row, or an index's). */
export function frameEntryOf(run: Run, f: number, site: number, depth: number, enterEvent: number): StackEntry {
  const info = siteInfo(run, site);
  const name = info === null ? `<unknown function site ${site}>` : info.name || info.func || '?';
  return {
    frame: f,
    function: name,
    file: info?.file ?? null,
    line: info?.line ?? null,
    label: info === null ? name : `${siteLocation(info, run.program?.cwd ?? null)} ${name}`,
    depth,
    enterEvent,
  };
}

/**
 * The frames open on the event's thread at that moment, innermost first. For an ENTER the frame it opened is the
 * innermost; for an EXIT or UNWIND the frame it closes still is (the stack as the function returns).
 */
export function callStackAt(model: Model, event: number): StackEntry[] {
  const out: StackEntry[] = [];
  if (event < 0 || event >= model.events.count) return out;
  for (let f = model.events.frame[event]!; f !== NONE; f = model.frames.parent[f]!) out.push(frameEntry(model, f));
  return out;
}

/** The place of any event: heap events as reports name them (`eventSite`), calls and returns by their site. */
export function eventPlace(model: Model, event: number): SiteRef | null {
  const kind = model.events.kind[event]!;
  if (kind === Kind.ALLOC || kind === Kind.FREE || kind === Kind.REALLOC) return eventSite(model, event);
  return placeOf(model, kind, model.events.site[event]!, false);
}

/**
 * The place of an event of `kind` at `site`: for a heap event the site reports name it by (for an interposed one the
 * entry site of its attributed frame, as `eventSite` finds it), for others the site itself.
 */
export function placeOf(run: Run, kind: number, site: number, interposed: boolean): SiteRef | null {
  if (kind === Kind.ALLOC || kind === Kind.FREE || kind === Kind.REALLOC) return siteRef(run, site, interposed);
  const info = siteInfo(run, site);
  if (info === null) return null;
  const name = info.name || info.func || '?';
  return { site, interposed: false, label: `${siteLocation(info, run.program?.cwd ?? null)} ${name}`, file: info.file, line: info.line, function: info.func || name };
}

export interface EventDetail {
  event: number;
  kind: string;
  class: EventClass;
  /** Trace thread index. */
  thread: number;
  timeNs: number;
  place: SiteRef | null;
  /** ALLOC/REALLOC: requested size; FREE: requested size of the freed block; ENTER: stack depth at entry; else null. */
  bytes: number | null;
  /** Memory in use after the event. */
  heapRequested: number;
  heapUsable: number;
  stack: number;
  static: number;
  /**
   * The block an ALLOC or REALLOC created, and its end: the freeing event, or null with the leak class at exit; and
   * the free that orphaned it (the first free whose linked set held it, when it was never freed), or null.
   */
  created: (LinkedBlockRef & { leakClass: LeakClassName | null; orphanedBy: { event: number; at: SiteRef } | null }) | null;
  /** The block a FREE or REALLOC ended, with its allocation event. */
  ended: (LinkedBlockRef & { allocEvent: number }) | null;
  /** The free's linked set (blocks reachable from the freed one, and those it orphaned, each with its allocation event), or null. */
  linked: (Omit<LinkedFree, 'blocks'> & { blocks: Array<LinkedMember & { allocEvent: number }> }) | null;
  /** The event came through the interposed allocator (inside libc or uninstrumented code). */
  interposed: boolean;
  /**
   * An interposed event that made a block: what made it (libc's stdout buffer at a printf, say) and what to do about
   * it, when the trace tells (`library-blocks.ts`); absent otherwise, and from the host's index (the index holds no
   * block's library: the page's own index is given it, `madeByLibrary`).
   */
  madeBy?: LibraryCause;
}

/** Everything the viewer shows for one event. `staticBytes` is `staticSeries(model)`; `orphanedBy` is `orphaningEvents(model)`. */
export function eventDetail(model: Model, event: number, staticBytes: Float64Array, orphanedBy: Int32Array = orphaningEvents(model)): EventDetail {
  const ev = model.events;
  const kind = ev.kind[event]!;
  const nb = ev.newBlock[event]!;
  const ob = ev.oldBlock[event]!;
  const heap = kind === Kind.ALLOC || kind === Kind.FREE || kind === Kind.REALLOC;
  const bytes = heap || kind === Kind.ENTER ? ev.value[event]! : null;
  const place = eventPlace(model, event);
  return {
    event,
    kind: kindName(kind),
    class: eventClassOfKind(kind),
    thread: model.threads[ev.thread[event]!]?.index ?? ev.thread[event]!,
    timeNs: ev.time[event]!,
    place,
    bytes,
    heapRequested: ev.heapRequested[event]!,
    heapUsable: ev.heapUsable[event]!,
    stack: ev.stackTotal[event]!,
    static: staticBytes[event] ?? 0,
    created: nb === NONE ? null : { ...blockRef(model, nb), leakClass: leakClassOf(model, nb), orphanedBy: orphaningFree(model, orphanedBy[nb]!) },
    ended: ob === NONE ? null : { ...blockRef(model, ob), allocEvent: model.blocks.allocEvent[ob]! },
    linked: kind === Kind.FREE || kind === Kind.REALLOC ? withAllocEvents(model, linkedFreeAt(model, event, orphanedBy)) : null,
    interposed: (ev.flags[event]! & Flag.INTERPOSED) !== 0,
    ...madeByOf(model, nb, place),
  };
}

/** `madeBy` for a block a library made, when the trace tells what made it; nothing otherwise (the field left out). */
function madeByOf(model: Model, block: number, place: SiteRef | null): Pick<EventDetail, 'madeBy'> {
  if (block === NONE || model.blocks.interposed[block] !== 1) return {};
  return madeByLibrary(model, place, libraryPath(model, model.blocks.library[block]!));
}

/**
 * `madeBy` of an event that made a block through the interposed allocator, named at `place`, called from the loaded
 * object `library` (its path, or null): also for a detail read from an index, given the block's library.
 */
export function madeByLibrary(run: Pick<Model, 'sites' | 'program'>, place: SiteRef | null, library: string | null): Pick<EventDetail, 'madeBy'> {
  const cause = place === null ? null : libraryCause(run, place.site, library);
  return cause === null ? {} : { madeBy: cause };
}

/** A loaded object's path by its index, or null (NONE, or an index the trace never defined). */
function libraryPath(model: Model, library: number): string | null {
  return library === NONE ? null : (model.libraries[library] ?? null);
}

/** The orphaning free `event` (NONE: none) with its place. */
function orphaningFree(model: Model, event: number): { event: number; at: SiteRef } | null {
  return event === NONE ? null : { event, at: eventSite(model, event) };
}

/** A free's linked set with each block's allocation event, so the viewer can jump to it. */
function withAllocEvents(model: Model, free: LinkedFree | null): EventDetail['linked'] {
  if (free === null) return null;
  return { ...free, blocks: free.blocks.map((b) => ({ ...b, allocEvent: model.blocks.allocEvent[b.block]! })) };
}
