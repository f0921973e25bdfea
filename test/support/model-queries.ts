// Questions the end-to-end suites ask of a decoded trace: which blocks a
// source line allocated, which frames a function opened, and the line of a
// text in a source file (so tests name lines by what is on them).
import { readFileSync } from 'node:fs';
import type { Model } from '../../analysis/model.js';
import { siteInfo } from '../../analysis/sites.js';

/** Blocks allocated at `line` of a file whose path ends with `file`. */
export function blocksAllocatedAt(model: Model, file: string, line: number): number[] {
  const out: number[] = [];
  for (let b = 0; b < model.blocks.count; b++) {
    const info = siteInfo(model, model.blocks.site[b]!);
    if (info && info.line === line && info.file?.endsWith(file)) out.push(b);
  }
  return out;
}

/** Frames opened by entries of the function `name`, in order. */
export function framesOf(model: Model, name: string): number[] {
  const out: number[] = [];
  for (let f = 0; f < model.frames.count; f++) {
    if (siteInfo(model, model.frames.entrySite[f]!)?.name === name) out.push(f);
  }
  return out;
}

/** Source line (1-based) of the event's site, or null. */
export function eventLine(model: Model, event: number): number | null {
  return siteInfo(model, model.events.site[event]!)?.line ?? null;
}

/** The one line of `source` that contains `text`. */
export function lineOf(source: string, text: string): number {
  const lines = readFileSync(source, 'utf8').split('\n');
  const found = lines.flatMap((l, i) => (l.includes(text) ? [i + 1] : []));
  if (found.length !== 1) throw new Error(`${text} is on ${found.length} lines of ${source}, not one`);
  return found[0]!;
}
