// Linked sets read as a story: for each free with a LINKED set, the block it freed, the blocks that were reachable from it, and which of those it orphaned (never freed afterwards).
import { Flag, Kind } from './trace/format.js';
import { NONE, type Model } from './model.js';
import type { EventFold, FoldBlocks, FoldEvent, FoldTables, TraceEnd, TraceStart } from './event-fold.js';
import { grown } from './group-index.js';
import { foldModel, modelTables } from './model-fold.js';
import { allocationSiteLabel, interposedLabel, siteInfo } from './sites.js';

/** A site as reports show it: the record's site, or for interposed records the attributed frame's function. */
export interface SiteRef {
  /** The site id; for interposed records the entry site of the attributed function (0: none). */
  site: number;
  interposed: boolean;
  /** "demo.c:4 make_node → malloc", or "main (via libc/uninstrumented)". */
  label: string;
  /** Absolute, as the site table has it; null if unknown. */
  file: string | null;
  line: number | null;
  function: string | null;
}

export interface LinkedBlockRef {
  /** Row in `model.blocks`. */
  block: number;
  /** The block id (seq of the record that created it). */
  id: number;
  requestedBytes: number;
  /** Its allocation site. */
  allocation: SiteRef;
  /** The event that ended it, or null if it was live at the end of the trace. */
  freeEvent: number | null;
}

export interface LinkedMember extends LinkedBlockRef {
  /** Never freed afterwards: live at the end of the trace. */
  leaked: boolean;
  /**
   * This free orphaned it: it is leaked, and this is the first free whose linked set contains it (the same free
   * `orphaningFrees` names for it). A leaked block reachable from several freed blocks is orphaned by the first.
   */
  orphaned: boolean;
}

export interface LinkedFree {
  /** The FREE or REALLOC event (index in the global order). */
  event: number;
  kind: 'free' | 'realloc';
  /** The site of the free call. */
  at: SiteRef;
  /** The block it ended (null if the decoder could not tell, e.g. an untracked free). */
  freed: LinkedBlockRef | null;
  /** The LINKED record was cut short by the runtime (more blocks were reachable). */
  partial: boolean;
  /** The live blocks reachable from the freed block, in the record's order. */
  blocks: LinkedMember[];
  /** How many of them this free orphaned, and their requested bytes. */
  orphaned: number;
  orphanedBytes: number;
}

/** A leaked block and the free that orphaned it. */
export interface OrphanedLeak {
  block: LinkedBlockRef;
  /** The first free whose linked set contains the block. */
  freeEvent: number;
  at: SiteRef;
}

/** The fields of a run that name sites: its site table and working directory (a Model or a TraceStart). */
export type Run = Pick<TraceStart, 'sites' | 'program'>;

/**
 * A site as reports show it; for interposed records `site` is the entry site of the attributed function. With `cache`
 * each site's object is made once and shared (a fold names the sites of many blocks).
 */
export function siteRef(run: Run, site: number, interposed: boolean, cache?: Map<number, SiteRef>): SiteRef {
  if (cache !== undefined) {
    const key = 2 * site + (interposed ? 1 : 0);
    let ref = cache.get(key);
    if (ref === undefined) cache.set(key, (ref = siteRef(run, site, interposed)));
    return ref;
  }
  const info = siteInfo(run, site);
  if (interposed) {
    return {
      site,
      interposed: true,
      label: interposedLabel(info),
      file: info?.file ?? null,
      line: info?.line ?? null,
      function: info === null ? null : info.name || info.func || null,
    };
  }
  return {
    site,
    interposed: false,
    label: allocationSiteLabel(info, site, run.program?.cwd ?? null),
    file: info?.file ?? null,
    line: info?.line ?? null,
    function: info?.func || null,
  };
}

/** The block with handle `h` and its allocation site. */
function blockRefOf(run: Run, blocks: FoldBlocks, h: number, freeEvent: number | null, cache?: Map<number, SiteRef>): LinkedBlockRef {
  const interposed = blocks.interposed[h] === 1;
  return {
    block: blocks.row[h]!,
    id: blocks.id[h]!,
    requestedBytes: blocks.requested[h]!,
    allocation: siteRef(run, interposed ? blocks.entry[h]! : blocks.site[h]!, interposed, cache),
    freeEvent,
  };
}

/** A block still live (at the end of the trace) and its allocation site; `cache` shares the site objects. */
export function liveBlockRef(run: Run, blocks: FoldBlocks, h: number, cache?: Map<number, SiteRef>): LinkedBlockRef {
  return blockRefOf(run, blocks, h, null, cache);
}

/** The model's blocks and frames as fold tables, made once per model (the viewer asks block by block). */
const modelTablesOf = new WeakMap<Model, FoldTables>();
function tablesOf(model: Model): FoldTables {
  let t = modelTablesOf.get(model);
  if (t === undefined) modelTablesOf.set(model, (t = modelTables(model)));
  return t;
}

/** The site of a heap event (its record's site, or for an interposed record its attributed frame). */
export function eventSite(model: Model, event: number): SiteRef {
  const interposed = (model.events.flags[event]! & Flag.INTERPOSED) !== 0;
  const frame = model.events.frame[event]!;
  return siteRef(model, interposed ? (frame === NONE ? 0 : model.frames.entrySite[frame]!) : model.events.site[event]!, interposed);
}

/** A block and its allocation site. */
export function blockRef(model: Model, block: number): LinkedBlockRef {
  const freeEvent = model.blocks.freeEvent[block]!;
  return blockRefOf(model, tablesOf(model).blocks, block, freeEvent === NONE ? null : freeEvent);
}

/**
 * For each block handle, the first free whose linked set names it (its event and site): for a block still live at the
 * end, the free that orphaned it. Kept per live block; shared by `LinkedFold` and `LeaksFold` (leaks.ts).
 */
export class OrphanFold implements EventFold {
  private first = new Float64Array(64).fill(NONE);
  /** How many times that first set names the block (a set can name a block twice). */
  private times = new Int32Array(64);
  /** The free's site (for interposed frees the entry site of the attributed function), and whether it was interposed. */
  private site = new Float64Array(64);
  private interposed = new Uint8Array(64);
  private readonly sites = new Map<number, SiteRef>();

  constructor(private readonly run: Run) {}

  event(e: FoldEvent, tables: FoldTables): void {
    const created = e.newBlock;
    if (created !== NONE) {
      if (created >= this.first.length) {
        this.first = grown(this.first, created + 1, NONE);
        this.times = grown(this.times, created + 1);
        this.site = grown(this.site, created + 1);
        this.interposed = grown(this.interposed, created + 1);
      }
      this.first[created] = NONE;
    }
    const set = e.linked;
    if (set === null) return;
    const interposed = (e.flags & Flag.INTERPOSED) !== 0;
    const site = interposed ? (e.frame === NONE ? 0 : tables.frames.entrySite[e.frame]!) : e.site;
    for (let i = 0; i < set.length; i++) {
      const h = set[i]!;
      if (this.first[h] === NONE) {
        this.first[h] = e.index;
        this.times[h] = 1;
        this.site[h] = site;
        this.interposed[h] = interposed ? 1 : 0;
      } else if (this.first[h] === e.index) {
        this.times[h]!++;
      }
    }
  }

  /** The first free whose linked set names the block with handle `h`, or NONE; while the block lives. */
  orphaningEvent(h: number): number {
    return h < this.first.length ? this.first[h]! : NONE;
  }

  /** That free's site. */
  orphaningSite(h: number): SiteRef {
    return siteRef(this.run, this.site[h]!, this.interposed[h] === 1, this.sites);
  }

  /** How many times that free's set names the block. */
  timesNamed(h: number): number {
    return this.times[h]!;
  }
}

/** Marks a free's members leaked and orphaned and counts them: `leakedOrphaned(i)` tells for member i. */
function settle(f: LinkedFree, leakedOrphaned: (i: number) => [leaked: boolean, orphaned: boolean]): LinkedFree {
  f.orphaned = 0;
  f.orphanedBytes = 0;
  f.blocks.forEach((m, i) => {
    [m.leaked, m.orphaned] = leakedOrphaned(i);
    if (m.orphaned) {
      f.orphaned++;
      f.orphanedBytes += m.requestedBytes;
    }
  });
  return f;
}

/** A free with a linked set before its members' fates are known (see `settle`). */
function unsettled(run: Run, blocks: FoldBlocks, free: { event: number; kind: number; at: SiteRef; old: number; partial: boolean }, members: LinkedMember[]): LinkedFree {
  return {
    event: free.event,
    kind: free.kind === Kind.REALLOC ? 'realloc' : 'free',
    at: free.at,
    freed: free.old === NONE ? null : blockRefOf(run, blocks, free.old, free.event),
    partial: free.partial,
    blocks: members,
    orphaned: 0,
    orphanedBytes: 0,
  };
}

/** What `report --linked` shows: the first frees with a linked set, all counted, and the leaked blocks they orphaned. */
export interface LinkedSection {
  /** The first frees with a linked set, in event order (as many as were kept). */
  frees: LinkedFree[];
  /** Frees with a linked set in all. */
  count: number;
  /** Members marked orphaned over every free (a set that names a block twice marks it twice). */
  orphaned: number;
  /** Leaked blocks that some linked set names. */
  orphanedBlocks: number;
  /** The first of them in block order (as many as were kept), each with the free that orphaned it. */
  orphanedLeaks: OrphanedLeak[];
}

/**
 * Every free with a linked set, as a story: the block it freed, the live blocks reachable from it, which of them it
 * orphaned. Keeps the first `keep` frees (and orphaned leaks) whole; the members it keeps are followed to their free.
 * Memory: the kept frees and the live blocks.
 */
export class LinkedFold implements EventFold {
  private readonly keep: number;
  private readonly frees: LinkedFree[] = [];
  /** Handles of the kept frees' members, member by member. */
  private readonly handles: number[][] = [];
  private count = 0;
  /** Per block handle: 1 while a kept member waits for its free (in `waiting`). */
  private watched = new Uint8Array(64);
  private readonly waiting = new Map<number, LinkedMember[]>();
  private readonly sites = new Map<number, SiteRef>();
  private section: LinkedSection | null = null;

  constructor(
    private readonly run: Run,
    private readonly orphans: OrphanFold,
    options: { keep?: number } = {},
  ) {
    this.keep = Math.max(0, options.keep ?? Infinity);
  }

  event(e: FoldEvent, tables: FoldTables): void {
    const old = e.oldBlock;
    if (old !== NONE && old < this.watched.length && this.watched[old] === 1) {
      for (const m of this.waiting.get(old)!) m.freeEvent = e.index;
      this.waiting.delete(old);
      this.watched[old] = 0;
    }
    const set = e.linked;
    if (set === null) return;
    this.count++;
    if (this.frees.length >= this.keep) return;
    const { blocks } = tables;
    const members: LinkedMember[] = [];
    for (let i = 0; i < set.length; i++) {
      const h = set[i]!;
      const m: LinkedMember = { ...blockRefOf(this.run, blocks, h, null, this.sites), leaked: false, orphaned: false };
      members.push(m);
      this.watched = grown(this.watched, h + 1);
      this.watched[h] = 1;
      let list = this.waiting.get(h);
      if (list === undefined) this.waiting.set(h, (list = []));
      list.push(m);
    }
    const interposed = (e.flags & Flag.INTERPOSED) !== 0;
    const at = siteRef(this.run, interposed ? (e.frame === NONE ? 0 : tables.frames.entrySite[e.frame]!) : e.site, interposed);
    this.frees.push(unsettled(this.run, blocks, { event: e.index, kind: e.kind, at, old, partial: e.linkedPartial }, members));
    this.handles.push(Array.from(set));
  }

  finish(end: TraceEnd, tables: FoldTables): void {
    const { orphans } = this;
    // A kept member still waiting for its free was never freed: it leaked, and the first free naming it orphaned it.
    this.frees.forEach((f, k) =>
      settle(f, (i) => {
        const leaked = f.blocks[i]!.freeEvent === null;
        return [leaked, leaked && orphans.orphaningEvent(this.handles[k]![i]!) === f.event];
      }),
    );
    const orphanedLeaks: OrphanedLeak[] = [];
    let orphaned = 0;
    let orphanedBlocks = 0;
    for (const h of end.liveBlocks) {
      const event = orphans.orphaningEvent(h);
      if (event === NONE) continue;
      orphanedBlocks++;
      orphaned += orphans.timesNamed(h);
      if (orphanedLeaks.length < this.keep) orphanedLeaks.push({ block: liveBlockRef(this.run, tables.blocks, h, this.sites), freeEvent: event, at: orphans.orphaningSite(h) });
    }
    this.section = { frees: this.frees, count: this.count, orphaned, orphanedBlocks, orphanedLeaks };
  }

  /** After `finish`. */
  result(): LinkedSection {
    return this.section!;
  }
}

/** `report --linked` over a decoded model, every free and orphaned leak kept unless `keep` says fewer. */
export function linkedSection(model: Model, keep = Infinity): LinkedSection {
  const orphans = new OrphanFold(model);
  const fold = new LinkedFold(model, orphans, { keep });
  foldModel(model, [orphans, fold]);
  return fold.result();
}

/** Every free with a LINKED set, in event order, with its freed block, its linked blocks and the ones it orphaned. */
export function linkedFrees(model: Model): LinkedFree[] {
  return linkedSection(model).frees;
}

/** The reverse map for leak reports: each leaked block that some linked set contains, with the first such free. In block order. */
export function orphanedLeaks(model: Model): OrphanedLeak[] {
  return linkedSection(model).orphanedLeaks;
}

/** For each block: the first freeing event whose linked set contains it, if the block leaked; else NONE. */
export function orphaningEvents(model: Model): Int32Array {
  const orphans = new OrphanFold(model);
  foldModel(model, [orphans]);
  const out = new Int32Array(model.blocks.count).fill(NONE);
  for (let b = 0; b < out.length; b++) if (model.blocks.freeEvent[b] === NONE) out[b] = orphans.orphaningEvent(b);
  return out;
}

/** The linked set of one freeing event, or null if it has none. Binary search: sets are in ascending event order. */
export function linkedFreeAt(model: Model, event: number, orphanedBy: Int32Array = orphaningEvents(model)): LinkedFree | null {
  const { linked } = model;
  const ev = linked.event;
  let lo = 0;
  let hi = linked.count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ev[mid]! < event) lo = mid + 1;
    else hi = mid;
  }
  if (lo >= linked.count || ev[lo] !== event) return null;
  const { blocks } = tablesOf(model);
  const set = Array.from(linked.blocks.subarray(linked.start[lo]!, linked.start[lo + 1]!));
  const members = set.map((b): LinkedMember => {
    const freeEvent = model.blocks.freeEvent[b]!;
    return { ...blockRefOf(model, blocks, b, freeEvent === NONE ? null : freeEvent), leaked: false, orphaned: false };
  });
  const free = { event, kind: model.events.kind[event]!, at: eventSite(model, event), old: model.events.oldBlock[event]!, partial: linked.partial[lo] === 1 };
  return settle(unsettled(model, blocks, free, members), (i) => {
    const leaked = members[i]!.freeEvent === null;
    return [leaked, leaked && orphanedBy[set[i]!] === event];
  });
}
