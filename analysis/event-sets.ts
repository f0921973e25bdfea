// Sets of events the viewer highlights and walks: the events of an attribution row, the allocations of some blocks or of a call path, the next event of a class, and sites found by function or file name.
import { attribution, type AttributionOptions } from './attribution.js';
import { eventClassOfKind, type EventClass } from './event-detail.js';
import { NONE, type Model } from './model.js';
import { Flag } from './trace/format.js';
import { DEEPER_FRAMES, MAX_PATH_DEPTH, NO_FRAME, UNINSTRUMENTED_FRAME } from './call-paths.js';
import { siteInfo, siteLocation } from './sites.js';

/** The heap events charged to the attribution group `key` (a row's `key` in `attribution(model, options)`), ascending. */
export function eventsOfGroup(model: Model, options: AttributionOptions, key: string): Int32Array {
  const out: number[] = [];
  attribution(model, options, (e, k) => {
    // An event charged to the group twice (inclusive mode never does; kept safe) is listed once.
    if (k === key && out[out.length - 1] !== e) out.push(e);
  });
  return Int32Array.from(out);
}

/** The allocation events of blocks (rows of `model.blocks`), ascending, without duplicates. */
export function allocationsOf(model: Model, blocks: Iterable<number>): Int32Array {
  const set = new Set<number>();
  for (const b of blocks) if (b >= 0 && b < model.blocks.count && model.blocks.allocEvent[b]! !== NONE) set.add(model.blocks.allocEvent[b]!);
  return Int32Array.from([...set].sort((a, b) => a - b));
}

/**
 * The nearest event after (direction 1) or before (-1) `from` whose class is `cls`, on thread row `thread` if given;
 * null if there is none.
 */
export function nextEventOfClass(model: Model, from: number, direction: 1 | -1, cls: EventClass, thread: number | null = null): number | null {
  const { kind, thread: th } = model.events;
  for (let e = from + direction; e >= 0 && e < model.events.count; e += direction) {
    if (thread !== null && th[e] !== thread) continue;
    if (eventClassOfKind(kind[e]!) === cls) return e;
  }
  return null;
}

export interface SiteMatch {
  site: number;
  /** "list.c:23 make_node → malloc" style: location, function, name. */
  label: string;
  file: string | null;
  line: number;
  /** The first event recorded at the site. */
  firstEvent: number;
  events: number;
}

/**
 * Sites whose function, name or file contains `query` (case-insensitive) and that have events, in order of their
 * first event; at most `limit`. One pass over the events.
 */
export function findSites(model: Model, query: string, limit = 50): SiteMatch[] {
  const matches = matchingSites(model, query);
  if (matches === null) return [];
  const { sites } = model;
  const first = new Int32Array(sites.count).fill(NONE);
  const count = new Float64Array(sites.count);
  const site = model.events.site;
  for (let e = 0; e < model.events.count; e++) {
    const s = site[e]!;
    if (s < sites.count && matches[s] === 1) {
      if (first[s] === NONE) first[s] = e;
      count[s]!++;
    }
  }
  return siteMatches(model, matches, first, count, limit);
}

/**
 * findSites from each site's first event and event count (NONE: none), as a trace's index keeps them, instead of a
 * pass over the events.
 */
export function findSitesIn(run: Pick<Model, 'sites' | 'program'>, first: ArrayLike<number>, count: ArrayLike<number>, query: string, limit = 50): SiteMatch[] {
  const matches = matchingSites(run, query);
  return matches === null ? [] : siteMatches(run, matches, first, count, limit);
}

/** 1 for each site whose function, name or file contains `query` (case-insensitive); null for an empty query. */
function matchingSites(run: Pick<Model, 'sites'>, query: string): Uint8Array | null {
  const q = query.trim().toLowerCase();
  if (q === '') return null;
  const { sites } = run;
  const matches = new Uint8Array(sites.count);
  for (let s = 1; s < sites.count; s++) {
    const info = siteInfo(run, s);
    if (info === null) continue;
    const hay = `${info.func ?? ''}\n${info.name ?? ''}\n${info.file ?? ''}`.toLowerCase();
    if (hay.includes(q)) matches[s] = 1;
  }
  return matches;
}

function siteMatches(run: Pick<Model, 'sites' | 'program'>, matches: Uint8Array, first: ArrayLike<number>, count: ArrayLike<number>, limit: number): SiteMatch[] {
  const out: SiteMatch[] = [];
  const cwd = run.program?.cwd ?? null;
  for (let s = 1; s < run.sites.count; s++) {
    if (matches[s] !== 1 || first[s] === undefined || first[s] === NONE) continue;
    const info = siteInfo(run, s)!;
    const what = info.func && info.name && info.func !== info.name ? `${info.func} → ${info.name}` : info.name || info.func || '?';
    out.push({ site: s, label: `${siteLocation(info, cwd)} ${what}`, file: info.file, line: info.line, firstEvent: first[s]!, events: count[s]! });
  }
  out.sort((a, b) => a.firstEvent - b.firstEvent);
  return out.slice(0, limit);
}

/**
 * The allocation events (ascending) of a call path of analysis/call-paths.ts: `path` holds the functions of the open
 * frames, outermost first, as a flame graph frame names them (NO_FRAME alone: allocations made with no frame open;
 * ending in UNINSTRUMENTED_FRAME: only those the interposed allocator saw). Blocks made below the path count too.
 */
export function allocationsOfCallPath(model: Model, path: readonly string[]): Int32Array {
  const { frames, blocks, events } = model;
  const libcOnly = path[path.length - 1] === UNINSTRUMENTED_FRAME;
  const names = libcOnly ? path.slice(0, -1) : path;
  // Per frame: how many of `names` its call path matches from the outermost (-1: it left the path), and whether it
  // is the path's frame or below it.
  const matched = new Int32Array(frames.count);
  const inside = new Uint8Array(frames.count);
  const nameOf = new Map<number, string>();
  const funcName = (site: number): string => {
    let n = nameOf.get(site);
    if (n === undefined) nameOf.set(site, (n = siteInfo(model, site)?.func ?? `site ${site}`));
    return n;
  };
  for (let f = 0; f < frames.count; f++) {
    const p = frames.parent[f]!;
    const before = p === NONE ? 0 : matched[p]!;
    if (p !== NONE && inside[p]) {
      inside[f] = 1;
      continue;
    }
    // The tree folds the frames below MAX_PATH_DEPTH into one node: it matches whatever frame comes there.
    const name = before >= 0 && before < names.length ? names[before] : undefined;
    matched[f] = name !== undefined && (funcName(frames.entrySite[f]!) === name || (name === DEEPER_FRAMES && before === MAX_PATH_DEPTH)) ? before + 1 : -1;
    if (matched[f] === names.length) inside[f] = 1;
  }
  const folded = names[names.length - 1] === DEEPER_FRAMES;
  const noFrame = names.length === 1 && names[0] === NO_FRAME;
  const out: number[] = [];
  for (let b = 0; b < blocks.count; b++) {
    const e = blocks.allocEvent[b]!;
    if (e === NONE) continue;
    const f = events.frame[e]!;
    const interposed = blocks.interposed[b] === 1 || (events.flags[e]! & Flag.INTERPOSED) !== 0;
    if (libcOnly && !interposed) continue;
    const under = noFrame ? f === NONE : f !== NONE && inside[f] === 1 && (!libcOnly || folded || matched[f] === names.length);
    if (under && out[out.length - 1] !== e) out.push(e);
  }
  return Int32Array.from(out);
}
