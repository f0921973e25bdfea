// An oracle for the leak-cause analysis (analysis/leak-causes.ts): the whole decoded model in, read with random
// access (the freed and leaked blocks per site, the frame tree, every branch), each step written from the rule it
// follows (the common function's vote, a block's path back from that function's exit, loops folded, the separating
// step) and sharing no code with the folds it checks but the model, the format's numbers and the analysis's output
// types and limits (its contract, not its code). The one known difference is the cut of a path longer than
// MAX_PATH_EVENTS steps, which this version makes at an event (so a path may keep a few steps more), the fold at
// exactly MAX_PATH_EVENTS.
import { NONE, type Model } from '../../analysis/model.js';
import { Kind, SiteKind } from '../../analysis/trace/format.js';
import { MAX_INSTANCES, MAX_LOOP_BODY, MAX_PATH_EVENTS, type SourcePlace, type PathStep, type LeakCulprit, type SuspectSite, type PlainLeakSite, type LeakCauses } from '../../analysis/leak-causes.js';

/** Path tokens: ENTER = entry site × 4, EXIT = entry site × 4 + 1, BRANCH = site × 4 + 2 + taken. */
const ENTER_TOKEN = 0;
const EXIT_TOKEN = 1;
const BRANCH_TOKEN = 2;

export function referenceLeakCauses(model: Model): LeakCauses {
  const { freed, leaked } = blocksBySite(model);
  const suspects: SuspectSite[] = [];
  const neverFreed: PlainLeakSite[] = [];
  for (const [site, lost] of leaked) {
    const kept = freed.get(site);
    if (kept === undefined) neverFreed.push({ site, allocation: allocationPlace(model, site), leaked: lost.length });
    else suspects.push(explainSite(model, site, kept, lost, model.branches.count > 0));
  }
  suspects.sort((a, b) => b.leaked - a.leaked || a.site - b.site);
  neverFreed.sort((a, b) => b.leaked - a.leaked || a.site - b.site);
  return { branchesRecorded: model.branches.count > 0, suspects, neverFreed };
}

/** Freed and leaked blocks (rows) per instrumented allocation site; interposed blocks (site 0) are left out. */
function blocksBySite(model: Model): { freed: Map<number, number[]>; leaked: Map<number, number[]> } {
  const B = model.blocks;
  const freed = new Map<number, number[]>();
  const leaked = new Map<number, number[]>();
  for (let b = 0; b < B.count; b++) {
    const site = B.site[b]!;
    if (site === 0) continue;
    const into = B.freeEvent[b] === NONE ? leaked : freed;
    let list = into.get(site);
    if (list === undefined) into.set(site, (list = []));
    list.push(b);
  }
  return { freed, leaked };
}

function explainSite(model: Model, site: number, freedBlocks: number[], leakedBlocks: number[], branches: boolean): SuspectSite {
  const base = {
    site,
    allocation: allocationPlace(model, site),
    freed: freedBlocks.length,
    leaked: leakedBlocks.length,
  };
  const empty = { commonFunction: null, compared: { freeing: 0, leaking: 0 }, culprit: null, onlyInFreeing: [], freeingPath: [], leakingPath: [] };
  const common = commonFunction(model, freedBlocks);
  if (common === null) {
    return { ...base, ...empty, note: 'no freed block was freed on the thread that allocated it, inside a recorded function: nothing to compare' };
  }
  const freeing = pickEvenly(freedBlocks, MAX_INSTANCES).map((b) => pathOf(model, b, common)).filter(isPath);
  const leaking = pickEvenly(leakedBlocks, MAX_INSTANCES).map((b) => pathOf(model, b, common)).filter(isPath);
  const commonPlace = functionPlace(model, common);
  if (freeing.length === 0 || leaking.length === 0) {
    return { ...base, ...empty, commonFunction: commonPlace, note: `no ${freeing.length === 0 ? 'freed' : 'leaked'} block was allocated inside a call of ${commonPlace.function}` };
  }
  const culprit = separatingStep(freeing, leaking);
  const leakingExample = culprit === null ? leaking[0]! : leaking.find((p) => p.culprit === culprit.token)!;
  return {
    ...base,
    commonFunction: commonPlace,
    compared: { freeing: freeing.length, leaking: leaking.length },
    culprit: culprit === null ? null : { ...describeToken(model, culprit.token), leakingPaths: culprit.count },
    onlyInFreeing: onlyInFreeing(model, freeing, leaking),
    freeingPath: freeing[0]!.tokens.map((t) => describeToken(model, t)),
    leakingPath: leakingExample.tokens.map((t) => describeToken(model, t)),
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

const isPath = (p: Path | null): p is Path => p !== null;

/**
 * The entry site of the lowest function common to the allocation's and the free's stacks, the most frequent one over
 * the freed blocks (blocks freed on another thread, or outside every recorded frame, have none).
 */
function commonFunction(model: Model, freedBlocks: number[]): number | null {
  const votes = new Map<number, number>();
  for (const b of pickEvenly(freedBlocks, MAX_INSTANCES)) {
    const frame = lowestCommonFrame(model, model.events.frame[model.blocks.allocEvent[b]!]!, model.events.frame[model.blocks.freeEvent[b]!]!);
    if (frame === NONE) continue;
    const site = model.frames.entrySite[frame]!;
    votes.set(site, (votes.get(site) ?? 0) + 1);
  }
  let best: number | null = null;
  for (const [site, n] of votes) if (best === null || n > votes.get(best)! || (n === votes.get(best)! && site < best)) best = site;
  return best;
}

/** The deepest frame that encloses both frames (or is one of them); NONE when they share none. */
function lowestCommonFrame(model: Model, a: number, b: number): number {
  const parent = model.frames.parent;
  const seen = new Set<number>();
  for (let f = a; f !== NONE; f = parent[f]!) seen.add(f);
  for (let f = b; f !== NONE; f = parent[f]!) if (seen.has(f)) return f;
  return NONE;
}

/**
 * The folded path of one block: the function entries, exits and branch outcomes of its thread from the allocation to
 * the exit of the innermost enclosing call of the common function (to the end of the trace when that call never
 * returned), ending with that exit. Read backwards from the exit and cut at MAX_PATH_EVENTS steps, so a block
 * allocated early in a long-lived function costs no more than a short path. Null when the allocation is not inside
 * a call of the common function.
 */
function pathOf(model: Model, block: number, commonEntry: number): Path | null {
  const E = model.events;
  const F = model.frames;
  const alloc = model.blocks.allocEvent[block]!;
  let frame = E.frame[alloc]!;
  while (frame !== NONE && F.entrySite[frame] !== commonEntry) frame = F.parent[frame]!;
  if (frame === NONE) return null;
  const thread = E.thread[alloc]!;
  const end = F.exit[frame] === NONE ? E.count : F.exit[frame]!;
  const br = model.branches;
  const reversed: number[] = [];
  let k = firstBranchAfter(model, end) - 1; // the last branch before the exit event
  for (let i = end - 1; i >= alloc && reversed.length < MAX_PATH_EVENTS; i--) {
    for (; k >= 0 && br.after[k]! >= i; k--) {
      if (br.after[k] === i && br.thread[k] === thread && br.site[k] !== 0) reversed.push(br.site[k]! * 4 + BRANCH_TOKEN + br.taken[k]!);
    }
    if (i > alloc && E.thread[i] === thread) {
      const token = eventToken(model, i);
      if (token !== NONE) reversed.push(token);
    }
  }
  const folded = foldRepeats(reversed.reverse());
  folded.push(commonEntry * 4 + EXIT_TOKEN);
  return { tokens: folded, culprit: -1 };
}

/** The token of one event: ENTER or EXIT of its frame's function; an UNWIND counts as the exit of the outermost frame it closed. */
function eventToken(model: Model, i: number): number {
  const E = model.events;
  const kind = E.kind[i]!;
  const frame = E.frame[i]!;
  if (frame === NONE) return NONE;
  if (kind === Kind.ENTER) return model.frames.entrySite[frame]! * 4 + ENTER_TOKEN;
  if (kind === Kind.EXIT || kind === Kind.UNWIND) return model.frames.entrySite[frame]! * 4 + EXIT_TOKEN;
  return NONE;
}

/** Index of the first branch whose `after` is at or past `event` (branches are sorted by `after`). */
function firstBranchAfter(model: Model, event: number): number {
  const after = model.branches.after;
  let lo = 0;
  let hi = model.branches.count;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (after[mid]! < event) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Loops folded, written from the rule (analysis/README.md, leak causes) rather than from the fold's code: for each
 * body length from 1 to `maxBody` in turn, the tokens are kept left to right, and whenever what is kept ends with the
 * same body twice, the second copy is dropped; all lengths again, until a round drops nothing.
 */
export function foldRepeats(tokens: readonly number[], maxBody = MAX_LOOP_BODY): number[] {
  let seq = [...tokens];
  for (;;) {
    const before = seq.join(' ');
    for (let len = 1; len <= maxBody; len++) {
      const kept: number[] = [];
      for (const t of seq) {
        kept.push(t);
        const n = kept.length;
        if (n >= 2 * len && kept.slice(n - 2 * len, n - len).join(' ') === kept.slice(n - len).join(' ')) kept.splice(n - len, len);
      }
      seq = kept;
    }
    if (seq.join(' ') === before) return seq;
  }
}

/**
 * The separating step, from its definition: a leaking path's step at distance d from its end (d from 2: the last
 * step is the common function's exit, on every path) separates it when no freeing path has that step at distance
 * d; each leaking path names its nearest such step. The step most paths name wins; on a tie the one found nearest
 * an end, then the smallest token.
 */
function separatingStep(freeing: Path[], leaking: Path[]): { token: number; count: number } | null {
  const at = (p: Path, d: number): number | undefined => (d <= p.tokens.length ? p.tokens[p.tokens.length - d] : undefined);
  const named: { token: number; distance: number }[] = [];
  for (const p of leaking) {
    for (let d = 2; d <= p.tokens.length; d++) {
      const token = at(p, d)!;
      if (freeing.some((f) => at(f, d) === token)) continue;
      p.culprit = token;
      named.push({ token, distance: d });
      break;
    }
  }
  if (named.length === 0) return null;
  const tokens = [...new Set(named.map((n) => n.token))].map((token) => {
    const mine = named.filter((n) => n.token === token);
    return { token, count: mine.length, distance: Math.min(...mine.map((n) => n.distance)) };
  });
  tokens.sort((a, b) => b.count - a.count || a.distance - b.distance || a.token - b.token);
  return { token: tokens[0]!.token, count: tokens[0]!.count };
}

/** The functions some freeing path enters and no leaking path enters, by entry site, smallest first. */
function onlyInFreeing(model: Model, freeing: Path[], leaking: Path[]): SourcePlace[] {
  const entries = (paths: Path[]): number[] => paths.flatMap((p) => p.tokens.filter((t) => t % 4 === ENTER_TOKEN).map((t) => t / 4));
  const inLeaking = entries(leaking);
  const sites = [...new Set(entries(freeing))].filter((s) => !inLeaking.includes(s));
  return sites.sort((a, b) => a - b).map((s) => functionPlace(model, s));
}

/** A site's names straight from the model's site table (not through analysis/sites.ts): file, function, name, line. */
function siteNames(model: Model, site: number): { file: string | null; func: string; name: string; line: number } | null {
  const S = model.sites;
  if (site <= 0 || site >= S.count || S.kind[site] === 0) return null;
  const str = (i: number): string | null => (i < 0 ? null : (S.strings[i] ?? null));
  return { file: str(S.file[site]!), func: str(S.func[site]!) ?? '', name: str(S.name[site]!) ?? '', line: S.line[site]! };
}

function describeToken(model: Model, token: number): PathStep {
  const kind = token % 4;
  const site = (token - kind) / 4;
  if (kind === BRANCH_TOKEN || kind === BRANCH_TOKEN + 1) {
    const n = siteNames(model, site);
    return { kind: 'branch', function: n?.func ?? '?', file: n?.file ?? null, line: n?.line ?? 0, text: n?.name ?? null, taken: kind === BRANCH_TOKEN + 1 };
  }
  return { kind: kind === ENTER_TOKEN ? 'enter' : 'exit', ...functionPlace(model, site), text: null, taken: null };
}

/** A function by its entry site: its name (else the function the site is in), where it is defined. */
function functionPlace(model: Model, entrySite: number): SourcePlace {
  const n = siteNames(model, entrySite);
  return { function: (n?.name || n?.func) || `<site ${entrySite}>`, file: n?.file ?? null, line: n?.line ?? 0 };
}

/** An allocation site: the function it is in, where, and the allocator it calls (the site's name). */
function allocationPlace(model: Model, site: number): SourcePlace & { allocator: string } {
  const n = siteNames(model, site);
  return { function: n?.func ?? '?', file: n?.file ?? null, line: n?.line ?? 0, allocator: n?.name ?? '?' };
}

/** At most `n` items, spread evenly over the list (first and last included). */
function pickEvenly<T>(items: T[], n: number): T[] {
  if (items.length <= n) return items;
  const out: T[] = [];
  for (let k = 0; k < n; k++) out.push(items[Math.round((k * (items.length - 1)) / (n - 1))]!);
  return out;
}

/** Whether `kind` is the site kind of branch sites (exported for the text report's wording). */
export const isBranchSite = (kind: number): boolean => kind === SiteKind.BRANCH;
