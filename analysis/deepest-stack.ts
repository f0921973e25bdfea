// The deepest stack the run actually reached: the frame entered at the largest depth, and the calls that led to it.
// The other half of the worst-case comparison (worst-stack.ts).
import type { Column, EventFold, FoldEvent, FoldTables, TraceStart } from './event-fold.js';
import { foldModel, modelStart } from './model-fold.js';
import { Kind } from './trace/format.js';
import { NONE, type Model, type SiteTable } from './model.js';

/** One frame on the observed path, outermost first. */
export interface ObservedStep {
  function: string;
  file: string;
  line: number;
  /** Row in the frame table and its ENTER event. */
  frame: number;
  event: number;
  /** Stack bytes in use at its entry, from the thread's stack base (the C start-up code above main included). */
  depthBytes: number;
  /**
   * Depth added by this call: its entry depth minus its caller's, which is the frame size of this function (the
   * caller's call instruction is made at the caller's deepest point). null for the outermost frame.
   */
  frameBytes: number | null;
}

export interface DeepestStack {
  /** null: the run entered no instrumented function. */
  thread: number | null;
  event: number | null;
  depthBytes: number;
  path: ObservedStep[];
  /**
   * Bytes from main's entry down to the deepest frame, with main's own frame: comparable with the static worst case
   * from main. null when main is not on the path or its frame size is not known.
   */
  fromMainBytes: number | null;
}

function frameName(model: { sites: SiteTable }, site: number): { function: string; file: string; line: number } {
  const { sites } = model;
  const str = (i: number) => (site < sites.count && i !== NONE ? sites.strings[i] ?? '' : '');
  return { function: str(sites.name[site] ?? NONE), file: str(sites.file[site] ?? NONE), line: site < sites.count ? sites.line[site]! : 0 };
}

/** The deepest frame of the run (the first one, on a tie) and its call path. `mainFrameBytes`: main's frame size from
 *  the compiler, for `fromMainBytes`. */
export function deepestStack(model: Model, mainFrameBytes: number | null = null): DeepestStack {
  const fold = new DeepestStackFold(modelStart(model), mainFrameBytes);
  foldModel(model, [fold]);
  return fold.result();
}

/** Frames, outermost first: their rows, entry sites, ENTER events and depths. */
interface Frames {
  row: number[];
  site: number[];
  enter: number[];
  depth: number[];
}

/**
 * One thread's open frames as the fold follows them (ENTER pushes; EXIT, UNWIND and THREAD_END pop): the first
 * `count` entries of the columns. Popping moves only the count: shortening four arrays at every return was a fifth
 * of the panels' first pass.
 */
interface OpenFrames extends Frames {
  count: number;
}

/**
 * The deepest frame entered, as a fold. Each thread's open frames are followed from its events; at each new deepest
 * frame the path kept so far is reused up to where it parts from the new one (frames nest, so one comparison at the
 * old path's end, or a binary search, finds that point): a recursion 100,000 deep costs one step per new depth.
 */
export class DeepestStackFold implements EventFold {
  private readonly open: OpenFrames[] = [];
  private best = -1;
  private bestThread = -1;
  private bestEvent = -1;
  /** The deepest path so far: its frames' rows, entry sites, ENTER events and depths, outermost first. */
  private readonly path: Frames = { row: [], site: [], enter: [], depth: [] };

  constructor(
    private readonly start: TraceStart,
    private readonly mainFrameBytes: number | null = null,
  ) {}

  private thread(t: number): OpenFrames {
    while (this.open.length <= t) this.open.push({ row: [], site: [], enter: [], depth: [], count: 0 });
    return this.open[t]!;
  }

  event(e: FoldEvent, tables: FoldTables): void {
    const k = e.kind;
    if (k === Kind.ENTER) {
      const s = this.thread(e.thread);
      const n = s.count++;
      s.row[n] = tables.frames.row[e.frame]!;
      s.site[n] = e.site;
      s.enter[n] = e.index;
      s.depth[n] = e.value;
      if (this.bestEvent < 0 || e.value > this.best) this.deeper(e, s);
    } else if (k === Kind.EXIT) {
      this.close(e.thread, 1);
    } else if (k === Kind.UNWIND) {
      this.close(e.thread, e.value);
    } else if (k === Kind.THREAD_END) {
      this.close(e.thread, Infinity);
    }
  }

  private close(t: number, count: number): void {
    const s = this.thread(t);
    s.count = Math.max(0, s.count - count);
  }

  /** A new deepest frame: the path becomes the thread's open frames, keeping the part it shares with the old one. */
  private deeper(e: FoldEvent, s: OpenFrames): void {
    const p = this.path;
    let keep = 0;
    if (this.bestThread === e.thread) {
      const n = Math.min(p.row.length, s.count);
      if (n > 0 && p.row[n - 1] === s.row[n - 1]) {
        keep = n;
      } else {
        let lo = 0;
        let hi = n - 1; // the shared prefix ends before hi
        while (lo < hi) {
          const mid = (lo + hi) >> 1;
          if (p.row[mid] === s.row[mid]) lo = mid + 1;
          else hi = mid;
        }
        keep = lo;
      }
    }
    p.row.length = p.site.length = p.enter.length = p.depth.length = keep;
    for (let i = keep; i < s.count; i++) {
      p.row.push(s.row[i]!);
      p.site.push(s.site[i]!);
      p.enter.push(s.enter[i]!);
      p.depth.push(s.depth[i]!);
    }
    this.best = e.value;
    this.bestThread = e.thread;
    this.bestEvent = e.index;
  }

  result(): DeepestStack {
    if (this.bestEvent < 0) return { thread: null, event: null, depthBytes: 0, path: [], fromMainBytes: null };
    const p = this.path;
    const path = p.row.map((row, i): ObservedStep => ({
      ...frameName(this.start, p.site[i]!),
      frame: row,
      event: p.enter[i]!,
      depthBytes: p.depth[i]!,
      frameBytes: i === 0 ? null : p.depth[i]! - p.depth[i - 1]!,
    }));
    const main = path.find((s) => s.function === 'main');
    const m = this.mainFrameBytes;
    return {
      thread: this.bestThread,
      event: this.bestEvent,
      depthBytes: this.best,
      path,
      fromMainBytes: main !== undefined && m !== null ? this.best - main.depthBytes + m : null,
    };
  }
}

/** The frame columns a call path is read from: a model's frames, or a fold's (`row`: the frame's row, else the index). */
export interface PathFrames {
  readonly entrySite: Column;
  readonly enter: Column;
  readonly depth: Column;
  readonly parent: Column;
  readonly row?: Column;
}

/** The frames open when `innermost` is the innermost one (it and its callers on its thread), outermost first. */
export function framePath(model: Model, innermost: number): ObservedStep[] {
  return framePathIn(model, model.frames, innermost);
}

/** `framePath` over frame columns of either kind (a fold's open frames: handles, read while they are open). */
export function framePathIn(run: { sites: SiteTable }, frames: PathFrames, innermost: number): ObservedStep[] {
  const chain: number[] = [];
  for (let f = innermost; f !== NONE; f = frames.parent[f]!) chain.unshift(f);
  return chain.map((f, i): ObservedStep => ({
    ...frameName(run, frames.entrySite[f]!),
    frame: frames.row === undefined ? f : frames.row[f]!,
    event: frames.enter[f]!,
    depthBytes: frames.depth[f]!,
    frameBytes: i === 0 ? null : frames.depth[f]! - frames.depth[chain[i - 1]!]!,
  }));
}
