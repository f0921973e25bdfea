// Why a site leaks (MISSION.md item 4, `report --leak-causes`): for allocation sites whose blocks are sometimes freed
// and sometimes not, compare the paths (function entries and exits, and branch outcomes when the program was built
// with --mw-branches) from each allocation to the exit of the lowest function common to the allocation and the free,
// and name the last event of the leaking paths that the freeing paths never have at that place. Folds over the events
// (event-fold.ts): the same code over a streamed trace or a decoded model, in memory that never grows with events.
import { NONE, type Model, type SiteTable } from './model.js';
import { siteInfo } from './sites.js';
import { Kind, SiteKind } from './trace/format.js';
import { grown } from './trace/typed-arrays.js';
import { modelSource } from './model-fold.js';
import type { EventFold, FoldEvent, FoldFrames, FoldSource, FoldTables, TraceEnd, TraceStart } from './event-fold.js';

export const LEAK_CAUSES_SCHEMA = 'cc-memwrap.leak-causes/1';

/** Instances compared per suspect site and side (freed, leaked), picked evenly over the run. */
export const MAX_INSTANCES = 64;
/** Steps kept per path: the latest before its end (the comparison is aligned at the end). A power of two (a ring). */
export const MAX_PATH_EVENTS = 4096;
/** Longest repeated block folded by `foldRepeats`. */
export const MAX_LOOP_BODY = 16;

/** A place in the source: a function, its file and line (entry line for functions, the branch's line for branches). */
export interface SourcePlace {
  function: string;
  file: string | null;
  line: number;
}

/** One step of a path: entering or leaving a function, or a branch outcome. */
export interface PathStep {
  kind: 'enter' | 'exit' | 'branch';
  /** The function entered or left, or the one holding the branch. */
  function: string;
  file: string | null;
  line: number;
  /** Branches: the branch's source text (`if (err == 1)`, `case 2:`, `n > 0 ?`, `p &&`); null otherwise. */
  text: string | null;
  /** Branches: true when the condition held (or the case label was jumped to); null otherwise. */
  taken: boolean | null;
}

export interface LeakCulprit extends PathStep {
  /** How many of the compared leaking paths have this step as their separating step. */
  leakingPaths: number;
}

export interface SuspectSite {
  /** The allocation site. */
  site: number;
  allocation: SourcePlace & { allocator: string };
  freed: number;
  leaked: number;
  /** The lowest function common to the allocation's and the free's call stacks (the most frequent one), or null. */
  commonFunction: SourcePlace | null;
  /** Instances whose paths were compared. */
  compared: { freeing: number; leaking: number };
  /** The separating step of the leaking paths; null when none separates them (see `note`). */
  culprit: LeakCulprit | null;
  /** Functions some freeing path enters and no leaking path does (typically the one that frees). */
  onlyInFreeing: SourcePlace[];
  /** One freeing and one leaking path, repeats folded, ending with the common function's exit. */
  freeingPath: PathStep[];
  leakingPath: PathStep[];
  /** Why there is no culprit or no comparison, or null. */
  note: string | null;
}

export interface PlainLeakSite {
  site: number;
  allocation: SourcePlace & { allocator: string };
  /** Blocks allocated there and never freed; no block of the site was freed. */
  leaked: number;
}

export interface LeakCauses {
  /** The trace holds branch outcomes (built with --mw-branches). */
  branchesRecorded: boolean;
  /** Sites with freed and leaked blocks, most leaked first. */
  suspects: SuspectSite[];
  /** Sites none of whose blocks was freed (a plain leak, or a cache kept to the end): not suspect. */
  neverFreed: PlainLeakSite[];
}

/** Path tokens: ENTER = entry site × 4, EXIT = entry site × 4 + 1, BRANCH = site × 4 + 2 + taken. */
const ENTER_TOKEN = 0;
const EXIT_TOKEN = 1;
const BRANCH_TOKEN = 2;

/**
 * Why the sites of a decoded model leak: the folds below run over the model's rows (model-fold.ts), as they run over a
 * streamed trace (`leakCausesOf`).
 */
export function leakCauses(model: Model): LeakCauses {
  return leakCausesOf(modelSource(model));
}

/**
 * Why the sites of a trace leak, in two passes over its events, each holding state that grows with live blocks,
 * sites, functions and threads, never with events: the blocks each site created, those live at the end and the
 * functions that could be a site's common function (`LeakSitesFold`); then, for the sites that both freed and leaked,
 * the common function of the sampled freed blocks (`CommonFunctionFold`) and the sampled blocks' paths to each
 * possible one (`PathFold`). The second pass is skipped when no site is suspect; a third is read for a site with more
 * than MAX_CANDIDATES possible functions, its paths once its function is known.
 */
export function leakCausesOf(source: FoldSource): LeakCauses {
  let fold: LeakSitesFold | undefined;
  source.run((start) => [(fold = new LeakSitesFold(start))]);
  return leakCausesAfter(source, fold!.result());
}

/** Possible common functions of a site whose paths are all followed in the second pass; beyond, a third pass. */
export const MAX_CANDIDATES = 8;

/** The first pass's result. */
export interface LeakSites {
  /** The run's start facts (the site table, complete once the pass is finished). */
  start: TraceStart;
  /** Blocks created per site id (interposed blocks, site 0, are not counted). */
  created: Float64Array;
  /** Site → rows of its blocks live at the end, in creation order. */
  leakedRows: Map<number, number[]>;
  /** Site → the entry sites of the lowest common frames of all its freed blocks: its possible common functions. */
  candidates: Map<number, Set<number>>;
  /** EXT/BRANCH records in the trace. */
  branches: number;
}

/**
 * The entry site of the lowest frame common to a block's allocation and the free at `e`: the deepest frame open at
 * the free (all on the freeing thread) that was open at the allocation too, i.e. is of the allocating thread and was
 * entered before it; -1 when there is none.
 */
function commonEntry(e: FoldEvent, F: FoldFrames, thread: number, allocEvent: number): number {
  for (let f = e.frame; f !== NONE; f = F.parent[f]!) if (F.thread[f] === thread && F.enter[f]! < allocEvent) return F.entrySite[f]!;
  return -1;
}

/**
 * The first pass: blocks created per instrumented allocation site, the rows of those live at the end, and the lowest
 * common function of every freed one (the second pass samples them; the common function is one of these).
 */
export class LeakSitesFold implements EventFold {
  private created = new Float64Array(64);
  private readonly candidates = new Map<number, Set<number>>();
  private out: LeakSites | null = null;

  constructor(private readonly start: TraceStart) {}

  event(e: FoldEvent, tables: FoldTables): void {
    const B = tables.blocks;
    const old = e.oldBlock;
    if (old !== NONE && B.site[old] !== 0) {
      const entry = commonEntry(e, tables.frames, B.thread[old]!, B.allocEvent[old]!);
      if (entry >= 0) {
        const site = B.site[old]!;
        let set = this.candidates.get(site);
        if (set === undefined) this.candidates.set(site, (set = new Set()));
        set.add(entry);
      }
    }
    const b = e.newBlock;
    if (b === NONE) return;
    const site = B.site[b]!;
    if (site === 0) return;
    if (site >= this.created.length) this.created = grown(this.created, site + 1);
    this.created[site]!++;
  }

  finish(end: TraceEnd, tables: FoldTables): void {
    const B = tables.blocks;
    const leakedRows = new Map<number, number[]>();
    for (const b of end.liveBlocks) {
      const site = B.site[b]!;
      if (site === 0) continue;
      let rows = leakedRows.get(site);
      if (rows === undefined) leakedRows.set(site, (rows = []));
      rows.push(B.row[b]!);
    }
    this.out = { start: this.start, created: this.created, leakedRows, candidates: this.candidates, branches: end.branches };
  }

  result(): LeakSites {
    if (this.out === null) throw new Error('LeakSitesFold: result before finish');
    return this.out;
  }
}

/**
 * The passes after the first (`leakCausesOf`): the sites that never freed are listed from the counts alone; the
 * suspect sites get their common function and their paths in a second pass read from `source` (and a third for a
 * site with too many possible functions).
 */
export function leakCausesAfter(source: FoldSource, sites: LeakSites): LeakCauses {
  const { start } = sites;
  const samples: SiteSample[] = [];
  const neverFreed: PlainLeakSite[] = [];
  for (const [site, rows] of sites.leakedRows) {
    const freed = sites.created[site]! - rows.length;
    if (freed === 0) neverFreed.push({ site, allocation: allocationPlace(start, site), leaked: rows.length });
    else samples.push(new SiteSample(site, freed, rows, [...(sites.candidates.get(site) ?? [])]));
  }
  if (samples.length > 0) {
    let votes: CommonFunctionFold | undefined;
    const followed = samples.filter((s) => s.candidates.length <= MAX_CANDIDATES);
    source.run(() => {
      const picks = new PickFold(samples);
      return [picks, (votes = new CommonFunctionFold(picks)), new PathFold(picks, followed, (s) => s.candidates)];
    });
    votes!.decide(samples);
    const later = samples.filter((s) => s.common !== null && s.candidates.length > MAX_CANDIDATES);
    if (later.length > 0) {
      source.run(() => {
        const picks = new PickFold(later);
        return [picks, new PathFold(picks, later, (s) => [s.common!])];
      });
    }
  }
  const branches = sites.branches > 0;
  const suspects = samples.map((s) => explainSite(start, s, branches));
  suspects.sort((a, b) => b.leaked - a.leaked || a.site - b.site);
  neverFreed.sort((a, b) => b.leaked - a.leaked || a.site - b.site);
  return { branchesRecorded: branches, suspects, neverFreed };
}

/** Indices of at most `n` items of `count`, spread evenly over them (first and last included). */
function evenPicks(count: number, n: number): number[] {
  if (count <= n) return Array.from({ length: count }, (_, k) => k);
  const out: number[] = [];
  for (let k = 0; k < n; k++) out.push(Math.round((k * (count - 1)) / (n - 1)));
  return out;
}

/**
 * A suspect site's sampled blocks: up to MAX_INSTANCES freed and as many leaked, spread evenly over each in creation
 * order. A pass tells it each block of the site as it is created (`pick`), in creation order; the freed blocks are
 * numbered among the freed ones from the rows of the leaked ones, known from the first pass.
 */
class SiteSample {
  /** Freed block number (among the site's freed blocks) → pick; leaked block number → MAX_INSTANCES + pick. */
  private readonly freedPicks = new Map<number, number>();
  private readonly leakedPicks = new Map<number, number>();
  readonly freedCount: number;
  readonly leakedCount: number;
  /** Blocks of the site created so far in this pass, and leaked ones among them. */
  private seen = 0;
  private leakedSeen = 0;
  /** The common function's entry site (second pass), or null. */
  common: number | null = null;
  /** Per possible common function, per pick (freed picks first, then MAX_INSTANCES + leaked picks): the path. */
  readonly paths = new Map<number, (Path | null)[]>();

  constructor(
    readonly site: number,
    freed: number,
    private readonly leakedRows: number[],
    /** The possible common functions (first pass). */
    readonly candidates: number[],
  ) {
    this.freedCount = freed;
    this.leakedCount = leakedRows.length;
    evenPicks(freed, MAX_INSTANCES).forEach((n, k) => this.freedPicks.set(n, k));
    evenPicks(leakedRows.length, MAX_INSTANCES).forEach((n, k) => this.leakedPicks.set(n, MAX_INSTANCES + k));
  }

  get freedPicked(): number {
    return this.freedPicks.size;
  }

  get leakedPicked(): number {
    return this.leakedPicks.size;
  }

  /** Before a pass. */
  restart(): void {
    this.seen = 0;
    this.leakedSeen = 0;
  }

  /** The next block of the site, created now with this row: its pick, or -1. */
  pick(row: number): number {
    const rows = this.leakedRows;
    let k: number | undefined;
    if (this.leakedSeen < rows.length && rows[this.leakedSeen] === row) k = this.leakedPicks.get(this.leakedSeen++);
    else k = this.freedPicks.get(this.seen - this.leakedSeen);
    this.seen++;
    return k ?? -1;
  }

  /** The paths to common function `entry`, by pick. */
  pathsTo(entry: number): (Path | null)[] {
    let paths = this.paths.get(entry);
    if (paths === undefined) this.paths.set(entry, (paths = []));
    return paths;
  }
}

/**
 * Which sampled block, if any, the event creates: told first of the pass's folds, so that the others read `sample`
 * and `k` (the pick) for the same event.
 */
class PickFold implements EventFold {
  private readonly index: Int32Array;
  sample: SiteSample | null = null;
  k = -1;

  constructor(private readonly samples: SiteSample[]) {
    this.index = new Int32Array(Math.max(0, ...samples.map((s) => s.site)) + 1);
    samples.forEach((s, k) => (this.index[s.site] = k + 1));
    for (const s of samples) s.restart();
  }

  event(e: FoldEvent, tables: FoldTables): void {
    this.sample = null;
    if (e.newBlock === NONE) return;
    const site = tables.blocks.site[e.newBlock]!;
    const s = site < this.index.length ? this.index[site]! : 0;
    if (s === 0) return;
    const sample = this.samples[s - 1]!;
    this.k = sample.pick(tables.blocks.row[e.newBlock]!);
    if (this.k >= 0) this.sample = sample;
  }
}

/** A sampled freed block between its allocation and its free. */
interface Voter {
  sample: SiteSample;
  allocEvent: number;
  thread: number;
}

/**
 * For the sampled freed blocks of each suspect site, the lowest common frame of the allocation and the free
 * (`commonEntry`); the site's common function is the entry site most of them name (ties: the smallest).
 */
class CommonFunctionFold implements EventFold {
  /** Block handle → 1 + index in `voters` while the block is a sampled freed one, else 0. */
  private mark = new Int32Array(64);
  private readonly voters: (Voter | null)[] = [];
  private readonly votes = new Map<SiteSample, Map<number, number>>();

  constructor(private readonly picks: PickFold) {}

  event(e: FoldEvent, tables: FoldTables): void {
    const old = e.oldBlock;
    if (old !== NONE && old < this.mark.length && this.mark[old] !== 0) {
      const v = this.voters[this.mark[old]! - 1]!;
      this.voters[this.mark[old]! - 1] = null;
      this.mark[old] = 0;
      const entry = commonEntry(e, tables.frames, v.thread, v.allocEvent);
      if (entry >= 0) {
        let votes = this.votes.get(v.sample);
        if (votes === undefined) this.votes.set(v.sample, (votes = new Map()));
        votes.set(entry, (votes.get(entry) ?? 0) + 1);
      }
    }
    const sample = this.picks.sample;
    if (sample === null || this.picks.k >= MAX_INSTANCES) return;
    const h = e.newBlock;
    this.mark = grown(this.mark, h + 1);
    this.voters.push({ sample, allocEvent: e.index, thread: tables.blocks.thread[h]! });
    this.mark[h] = this.voters.length;
  }

  /** Each sample's common function from the votes. */
  decide(samples: SiteSample[]): void {
    for (const s of samples) {
      const votes = this.votes.get(s);
      let best: number | null = null;
      if (votes !== undefined) for (const [site, n] of votes) if (best === null || n > votes.get(best)! || (n === votes.get(best)! && site < best)) best = site;
      s.common = best;
    }
  }
}

/** A sampled block whose path to one possible common function ends when a frame closes; where its path starts. */
interface Waiter {
  sample: SiteSample;
  k: number;
  common: number;
  start: number;
}

/** One thread's steps: the latest MAX_PATH_EVENTS in a ring, and its open frames. */
interface ThreadSteps {
  /** Made when a sampled block of the thread first waits: steps before that belong to no path. */
  ring: Int32Array | null;
  /** Steps so far. */
  pos: number;
  /** Entry site of each open frame, innermost last, and the sampled blocks whose path ends when it closes. */
  entries: number[];
  waiters: (Waiter[] | null)[];
}

const RING_MASK = MAX_PATH_EVENTS - 1;

/**
 * Each thread's steps (function entries and exits, branch outcomes) into a ring of the latest MAX_PATH_EVENTS; a
 * sampled block waits on the innermost open call of each function it follows (`commons`: the possible common
 * functions of its site, or the one found), and when that call closes (EXIT, UNWIND, THREAD_END; at the end of the
 * trace if never) its path to that function is the steps since its allocation, the latest MAX_PATH_EVENTS of them,
 * loops folded, and the function's exit.
 */
class PathFold implements EventFold {
  private readonly threads: ThreadSteps[] = [];
  private readonly follow: Set<SiteSample>;

  constructor(
    private readonly picks: PickFold,
    samples: SiteSample[],
    private readonly commons: (s: SiteSample) => number[],
  ) {
    this.follow = new Set(samples);
  }

  private steps(thread: number): ThreadSteps {
    return (this.threads[thread] ??= { ring: null, pos: 0, entries: [], waiters: [] });
  }

  event(e: FoldEvent, tables: FoldTables): void {
    const F = tables.frames;
    const kind = e.kind;
    if (kind === Kind.ENTER) {
      const t = this.steps(e.thread);
      const entry = F.entrySite[e.frame]!;
      t.entries.push(entry);
      t.waiters.push(null);
      if (t.ring !== null) t.ring[t.pos & RING_MASK] = entry * 4 + ENTER_TOKEN;
      t.pos++;
    } else if (kind === Kind.EXIT || kind === Kind.UNWIND) {
      const t = this.steps(e.thread);
      this.close(t, kind === Kind.EXIT ? 1 : e.value);
      if (e.frame === NONE) return;
      if (t.ring !== null) t.ring[t.pos & RING_MASK] = F.entrySite[e.frame]! * 4 + EXIT_TOKEN;
      t.pos++;
    } else if (kind === Kind.THREAD_END) {
      // Every frame closes and every path of the thread ends: its steps can go.
      this.close(this.steps(e.thread), Infinity);
      delete this.threads[e.thread];
    } else {
      const sample = this.picks.sample;
      if (sample !== null && this.follow.has(sample)) this.allocated(e.thread, sample, this.picks.k);
    }
  }

  branch(thread: number, site: number, taken: number): void {
    if (site === 0) return;
    const t = this.steps(thread);
    if (t.ring !== null) t.ring[t.pos & RING_MASK] = site * 4 + BRANCH_TOKEN + taken;
    t.pos++;
  }

  /** A sampled block created: it waits on the innermost open call of each function it follows (none: no path to it). */
  private allocated(thread: number, sample: SiteSample, k: number): void {
    const t = this.steps(thread);
    for (const common of this.commons(sample)) {
      for (let j = t.entries.length - 1; j >= 0; j--) {
        if (t.entries[j] !== common) continue;
        (t.waiters[j] ??= []).push({ sample, k, common, start: t.pos });
        t.ring ??= new Int32Array(MAX_PATH_EVENTS);
        break;
      }
    }
  }

  /** Closes up to `count` of the thread's frames, ending the paths that wait on them before this event's step. */
  private close(t: ThreadSteps, count: number): void {
    for (let j = 0; j < count && t.entries.length > 0; j++) {
      t.entries.pop();
      const waiting = t.waiters.pop();
      if (waiting) for (const w of waiting) this.endPath(t, w);
    }
  }

  private endPath(t: ThreadSteps, w: Waiter): void {
    const n = Math.min(t.pos - w.start, MAX_PATH_EVENTS);
    const raw: number[] = [];
    for (let p = t.pos - n; p < t.pos; p++) raw.push(t.ring![p & RING_MASK]!);
    const tokens = foldRepeats(raw);
    tokens.push(w.common * 4 + EXIT_TOKEN);
    w.sample.pathsTo(w.common)[w.k] = { tokens, culprit: -1 };
  }

  finish(): void {
    for (const t of this.threads) {
      if (t === undefined) continue;
      for (const waiting of t.waiters) if (waiting) for (const w of waiting) this.endPath(t, w);
    }
  }
}

function explainSite(names: Names, s: SiteSample, branches: boolean): SuspectSite {
  const base = {
    site: s.site,
    allocation: allocationPlace(names, s.site),
    freed: s.freedCount,
    leaked: s.leakedCount,
  };
  const empty = { commonFunction: null, compared: { freeing: 0, leaking: 0 }, culprit: null, onlyInFreeing: [], freeingPath: [], leakingPath: [] };
  const common = s.common;
  if (common === null) {
    return { ...base, ...empty, note: 'no freed block was freed on the thread that allocated it, inside a recorded function: nothing to compare' };
  }
  const paths = s.pathsTo(common);
  const pathsOf = (from: number, n: number): Path[] => {
    const out: Path[] = [];
    for (let k = from; k < from + n; k++) {
      const p = paths[k];
      if (p) out.push(p);
    }
    return out;
  };
  const freeing = pathsOf(0, s.freedPicked);
  const leaking = pathsOf(MAX_INSTANCES, s.leakedPicked);
  const commonPlace = functionPlace(names, common);
  if (freeing.length === 0 || leaking.length === 0) {
    return { ...base, ...empty, commonFunction: commonPlace, note: `no ${freeing.length === 0 ? 'freed' : 'leaked'} block was allocated inside a call of ${commonPlace.function}` };
  }
  const culprit = separatingStep(freeing, leaking);
  const leakingExample = culprit === null ? leaking[0]! : leaking.find((p) => p.culprit === culprit.token)!;
  return {
    ...base,
    commonFunction: commonPlace,
    compared: { freeing: freeing.length, leaking: leaking.length },
    culprit: culprit === null ? null : { ...describeToken(names, culprit.token), leakingPaths: culprit.count },
    onlyInFreeing: onlyInFreeing(names, freeing, leaking),
    freeingPath: freeing[0]!.tokens.map((t) => describeToken(names, t)),
    leakingPath: leakingExample.tokens.map((t) => describeToken(names, t)),
    note: culprit === null ? noCulpritNote(commonPlace, branches) : null,
  };
}

function noCulpritNote(common: SourcePlace, branches: boolean): string {
  const where = `every step of the leaking paths also occurs at the same place in a freeing path: they part inside ${common.function}`;
  return branches ? `${where}, at no recorded branch` : `${where} (build with cc-memwrap --mw-branches to name the branch)`;
}

interface Path {
  /** Folded tokens, ending with the common function's EXIT token. */
  tokens: number[];
  /** Filled in by separatingStep: this path's separating token, or -1. */
  culprit: number;
}

/** What names sites: the run's site table. */
type Names = { sites: SiteTable };

/**
 * Folds loops: wherever a block of up to `maxBody` tokens is repeated back to back, one copy is kept, until no such
 * repeat is left. So a loop body run 3 times and the same body run 300 times fold to the same single copy, and
 * paths that differ only in how often a loop ran compare equal (a simpler stand-in for a Sequitur grammar, which
 * would also keep the count: only whether a sub-sequence repeats matters to the comparison).
 */
export function foldRepeats(tokens: readonly number[], maxBody = MAX_LOOP_BODY): number[] {
  let seq = tokens.slice();
  for (let changed = true; changed; ) {
    changed = false;
    for (let len = 1; len <= maxBody && 2 * len <= seq.length; len++) {
      const out: number[] = [];
      let i = 0;
      while (i < seq.length) {
        out.push(seq[i]!);
        // Once out ends with two copies of a block of `len` tokens, drop the second.
        if (out.length >= 2 * len && sameBlock(out, out.length - 2 * len, out.length - len, len)) {
          out.length -= len;
          changed = true;
        }
        i++;
      }
      seq = out;
    }
  }
  return seq;
}

function sameBlock(a: readonly number[], x: number, y: number, len: number): boolean {
  for (let j = 0; j < len; j++) if (a[x + j] !== a[y + j]) return false;
  return true;
}

/**
 * The comparison, aligned at the end (the common function's exit): for each leaking path, walking back from its end,
 * the first token that no freeing path has at that distance from its end. Returns the token most leaking paths
 * name (ties: the one nearest the end, then the smallest), with how many name it; null when no path has one.
 */
function separatingStep(freeing: Path[], leaking: Path[]): { token: number; count: number } | null {
  const atDistance: Set<number>[] = [];
  for (const p of freeing) {
    for (let d = 1; d <= p.tokens.length; d++) (atDistance[d] ??= new Set()).add(p.tokens[p.tokens.length - d]!);
  }
  const counts = new Map<number, { count: number; distance: number }>();
  for (const p of leaking) {
    for (let d = 2; d <= p.tokens.length; d++) {
      const token = p.tokens[p.tokens.length - d]!;
      if (atDistance[d]?.has(token)) continue;
      p.culprit = token;
      const c = counts.get(token) ?? { count: 0, distance: d };
      c.count++;
      c.distance = Math.min(c.distance, d);
      counts.set(token, c);
      break;
    }
  }
  let best: { token: number; count: number; distance: number } | null = null;
  for (const [token, c] of counts) {
    if (best === null || c.count > best.count || (c.count === best.count && (c.distance < best.distance || (c.distance === best.distance && token < best.token)))) {
      best = { token, ...c };
    }
  }
  return best === null ? null : { token: best.token, count: best.count };
}

/** Functions (entry sites) entered on some freeing path and on no leaking path. */
function onlyInFreeing(names: Names, freeing: Path[], leaking: Path[]): SourcePlace[] {
  const entered = (paths: Path[]): Set<number> => {
    const s = new Set<number>();
    for (const p of paths) for (const t of p.tokens) if (t % 4 === ENTER_TOKEN) s.add(t / 4);
    return s;
  };
  const leakingEntered = entered(leaking);
  return [...entered(freeing)].filter((s) => !leakingEntered.has(s)).sort((a, b) => a - b).map((s) => functionPlace(names, s));
}

function describeToken(names: Names, token: number): PathStep {
  const kind = token % 4;
  const site = (token - kind) / 4;
  if (kind >= BRANCH_TOKEN) {
    const info = siteInfo(names, site);
    return { kind: 'branch', function: info?.func ?? '?', file: info?.file ?? null, line: info?.line ?? 0, text: info?.name ?? null, taken: kind === BRANCH_TOKEN + 1 };
  }
  return { kind: kind === ENTER_TOKEN ? 'enter' : 'exit', ...functionPlace(names, site), text: null, taken: null };
}

function functionPlace(names: Names, entrySite: number): SourcePlace {
  const info = siteInfo(names, entrySite);
  return { function: info?.name || info?.func || `<site ${entrySite}>`, file: info?.file ?? null, line: info?.line ?? 0 };
}

function allocationPlace(names: Names, site: number): SourcePlace & { allocator: string } {
  const info = siteInfo(names, site);
  return { function: info?.func ?? '?', file: info?.file ?? null, line: info?.line ?? 0, allocator: info?.name ?? '?' };
}

/** Whether `kind` is the site kind of branch sites (exported for the text report's wording). */
export const isBranchSite = (kind: number): boolean => kind === SiteKind.BRANCH;
