// Linked sets read as a story: for each free with a LINKED set, the block it freed, the blocks that were reachable from it, and which of those it orphaned (never freed afterwards).
import { Flag, Kind } from './trace/format.js';
import { NONE, type Model } from './model.js';
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

function siteRefOf(model: Model, event: number, site: number, interposed: boolean): SiteRef {
  const cwd = model.program?.cwd ?? null;
  if (interposed) {
    const frame = model.events.frame[event]!;
    const entry = frame === NONE ? 0 : model.frames.entrySite[frame]!;
    const info = siteInfo(model, entry);
    return {
      site: entry,
      interposed: true,
      label: interposedLabel(info),
      file: info?.file ?? null,
      line: info?.line ?? null,
      function: info === null ? null : info.name || info.func || null,
    };
  }
  const info = siteInfo(model, site);
  return {
    site,
    interposed: false,
    label: allocationSiteLabel(info, site, cwd),
    file: info?.file ?? null,
    line: info?.line ?? null,
    function: info?.func || null,
  };
}

/** The site of a heap event (its record's site, or for an interposed record its attributed frame). */
export function eventSite(model: Model, event: number): SiteRef {
  return siteRefOf(model, event, model.events.site[event]!, (model.events.flags[event]! & Flag.INTERPOSED) !== 0);
}

/** A block and its allocation site. */
export function blockRef(model: Model, block: number): LinkedBlockRef {
  const { blocks } = model;
  const alloc = blocks.allocEvent[block]!;
  const freeEvent = blocks.freeEvent[block]!;
  return {
    block,
    id: blocks.id[block]!,
    requestedBytes: blocks.requested[block]!,
    allocation: siteRefOf(model, alloc, blocks.site[block]!, blocks.interposed[block] === 1),
    freeEvent: freeEvent === NONE ? null : freeEvent,
  };
}

/** For each block: the first freeing event whose linked set contains it, if the block leaked; else NONE. O(linked entries). */
export function orphaningEvents(model: Model): Int32Array {
  const { blocks, linked } = model;
  const out = new Int32Array(blocks.count).fill(NONE);
  // Sets are in ascending event order, so the first set naming a block is the earliest free.
  for (let i = 0; i < linked.count; i++) {
    for (let j = linked.start[i]!; j < linked.start[i + 1]!; j++) {
      const b = linked.blocks[j]!;
      if (b < 0 || b >= blocks.count) continue;
      if (out[b] === NONE && blocks.freeEvent[b] === NONE) out[b] = linked.event[i]!;
    }
  }
  return out;
}

/** Linked set i of `model.linked` as a story; `orphanedBy` is `orphaningEvents(model)`. */
function linkedFreeOf(model: Model, i: number, orphanedBy: Int32Array): LinkedFree {
  const { events, linked, blocks } = model;
  const event = linked.event[i]!;
  const old = events.oldBlock[event]!;
  const members: LinkedMember[] = [];
  let orphaned = 0;
  let orphanedBytes = 0;
  for (let j = linked.start[i]!; j < linked.start[i + 1]!; j++) {
    const b = linked.blocks[j]!;
    if (b < 0 || b >= blocks.count) continue;
    const leaked = blocks.freeEvent[b] === NONE;
    const isOrphaned = leaked && orphanedBy[b] === event;
    if (isOrphaned) {
      orphaned++;
      orphanedBytes += blocks.requested[b]!;
    }
    members.push({ ...blockRef(model, b), leaked, orphaned: isOrphaned });
  }
  return {
    event,
    kind: events.kind[event] === Kind.REALLOC ? 'realloc' : 'free',
    at: eventSite(model, event),
    freed: old === NONE ? null : blockRef(model, old),
    partial: linked.partial[i] === 1,
    blocks: members,
    orphaned,
    orphanedBytes,
  };
}

/** Every free with a LINKED set, in event order, with its freed block, its linked blocks and the ones it orphaned. */
export function linkedFrees(model: Model): LinkedFree[] {
  const orphanedBy = orphaningEvents(model);
  const out: LinkedFree[] = [];
  for (let i = 0; i < model.linked.count; i++) out.push(linkedFreeOf(model, i, orphanedBy));
  return out;
}

/** The linked set of one freeing event, or null if it has none. Binary search: sets are in ascending event order. */
export function linkedFreeAt(model: Model, event: number, orphanedBy: Int32Array = orphaningEvents(model)): LinkedFree | null {
  const ev = model.linked.event;
  let lo = 0;
  let hi = model.linked.count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ev[mid]! < event) lo = mid + 1;
    else hi = mid;
  }
  return lo < model.linked.count && ev[lo] === event ? linkedFreeOf(model, lo, orphanedBy) : null;
}

/** The reverse map for leak reports: each leaked block that some linked set contains, with the first such free. In block order. */
export function orphanedLeaks(model: Model): OrphanedLeak[] {
  const orphanedBy = orphaningEvents(model);
  const out: OrphanedLeak[] = [];
  for (let b = 0; b < orphanedBy.length; b++) {
    const e = orphanedBy[b]!;
    if (e !== NONE) out.push({ block: blockRef(model, b), freeEvent: e, at: eventSite(model, e) });
  }
  return out;
}
