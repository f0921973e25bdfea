// The deepest stack the run actually reached: the frame entered at the largest depth, and the calls that led to it.
// The other half of the worst-case comparison (worst-stack.ts).
import type { Column } from './event-fold.js';
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
  const { frames } = model;
  let deepest = NONE;
  for (let f = 0; f < frames.count; f++) if (deepest === NONE || frames.depth[f]! > frames.depth[deepest]!) deepest = f;
  if (deepest === NONE) return { thread: null, event: null, depthBytes: 0, path: [], fromMainBytes: null };
  const path = framePath(model, deepest);
  const main = path.find((s) => s.function === 'main');
  const depthBytes = frames.depth[deepest]!;
  return {
    thread: frames.thread[deepest]!,
    event: frames.enter[deepest]!,
    depthBytes,
    path,
    fromMainBytes: main !== undefined && mainFrameBytes !== null ? depthBytes - main.depthBytes + mainFrameBytes : null,
  };
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
