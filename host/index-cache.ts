// What the viewer keeps of a large trace, in one folder beside it (`<trace>.mwcache/`, or in the user's cache folder
// when the trace's folder cannot be written): its index (index-file.ts) and, while the index's events are built, the
// summaries the chart draws first; the report of index mode's panel; the panels' data (index-panels.ts). The folder's
// manifest names the cache's version and the trace's size and modification time: a folder made by another version or
// for the trace as it was before it changed is cleared and its files built again, saying so; a file in it that does
// not verify (a checksum, a key, its size) is built again, saying so, never used. Every file is written under a
// temporary name and renamed when whole: an interrupted build (Ctrl-C, a kill) never leaves one that looks finished.
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, unlinkSync } from 'node:fs';
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { INDEX_VERSION } from '../analysis/event-index.js';
import { crc32c } from '../analysis/trace/crc32c.js';
import { FileSource } from '../analysis/trace/file-source.js';
import { streamSource } from '../analysis/trace/resolve-stream.js';
import type { FoldSource } from '../analysis/event-fold.js';
import { computeReport, summaryRequest, type ReportRequest } from '../analysis/report.js';
import { reportText } from '../analysis/report-text.js';
import { WORKER_LIMITS } from '../analysis/worker-limits.js';
import { fileSymbolNamer } from './library-symbols.js';
import { makePrivateDir, writePrivateFile } from './private-files.js';
import { buildIndexFile, buildSummaryFile, IndexFileRefused, removeStale, temporaryPrefix, TraceIndex, traceStamp, track, untrack, type BuildProgress } from './index-file.js';

export { TraceIndex, traceStamp, track, untrack, buildIndexFile, buildSummaryFile, type BuildProgress } from './index-file.js';

/**
 * Traces larger than this open in index mode (MEMWRAP_VIEW_INDEX=1 forces it for any trace, =0 never uses it). A page
 * in whole mode holds about 117 bytes of JS heap per event, and format 1.4 encodes as little as about 1 byte per
 * event: at 4 MiB a trace holds up to about 4 million events, 453 MiB of heap in the page (docs/viewer.md, "Traces of a
 * hundred million events and more"), where 8 MiB measured 900 MiB.
 */
export const INDEX_THRESHOLD = 4 << 20;

/** Whether the viewer opens a trace of `bytes` through its index. */
export function useIndex(bytes: number, env: NodeJS.ProcessEnv = process.env): boolean {
  const force = env.MEMWRAP_VIEW_INDEX;
  if (force === '1') return true;
  if (force === '0') return false;
  return bytes > INDEX_THRESHOLD;
}

/** The cache folder's suffix beside the trace. */
export const CACHE_SUFFIX = '.mwcache';

/** Where the cache of `trace` is kept: beside it when its folder can be written, else in the user's cache folder. */
export function cacheDirFor(trace: string, env: NodeJS.ProcessEnv = process.env): string {
  const abs = path.resolve(trace);
  if (writableDir(path.dirname(abs))) return `${abs}${CACHE_SUFFIX}`;
  const base = env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  const dir = path.join(base, 'cc-memwrap', 'index');
  makePrivateDir(dir);
  const hash = createHash('sha256').update(abs).digest('hex').slice(0, 16);
  return path.join(dir, `${path.basename(abs)}-${hash}${CACHE_SUFFIX}`);
}

function writableDir(dir: string): boolean {
  const probe = path.join(dir, `.mwcache-probe-${process.pid}-${Math.random().toString(36).slice(2)}`);
  try {
    writePrivateFile(probe, '');
    unlinkSync(probe);
    return true;
  } catch {
    return false;
  }
}

/** The files of a cache folder. */
export interface CacheFiles {
  dir: string;
  /** The cache's version and the trace's stamp. */
  manifest: string;
  /** The whole index, events and all. */
  index: string;
  /** What the chart draws first, while the index's events are built (removed once they are). */
  summaries: string;
  /** The report of index mode's panel. */
  report: string;
  /** The panels' data. */
  panels: string;
}

export function cacheFiles(dir: string): CacheFiles {
  return { dir, manifest: path.join(dir, 'cache.json'), index: path.join(dir, 'index'), summaries: path.join(dir, 'summaries'), report: path.join(dir, 'report'), panels: path.join(dir, 'panels') };
}

/** The files an earlier version kept beside the trace, one per thing (`<trace>.mwindex`, `.mwindex.summaries` …). */
function legacyFiles(trace: string): string[] {
  const beside = `${path.resolve(trace)}.mwindex`;
  return [beside, `${beside}.summaries`, `${beside}.report`, `${beside}.panels`].filter((f) => existsSync(f));
}

/**
 * Makes `dir` the cache of `trace` as it is now: a folder whose manifest names another cache version or another state
 * of the trace (or none, or one that does not read) is cleared, and the files an earlier version kept beside the trace
 * are removed. Returns what was done, in words, for the caller to tell (nothing when the folder was fine).
 */
export function prepareCache(trace: string, dir: string): string[] {
  const notes: string[] = [];
  const files = cacheFiles(dir);
  const stamp = traceStamp(trace);
  const want = { cache: 'cc-memwrap', version: INDEX_VERSION, size: stamp.size, mtimeMs: stamp.mtimeMs };
  let kept: Partial<typeof want> | null = null;
  try {
    kept = JSON.parse(readFileSync(files.manifest, 'utf8')) as Partial<typeof want>;
  } catch {
    // none, or not one that reads
  }
  const same = kept !== null && kept.cache === want.cache && kept.version === want.version && kept.size === want.size && kept.mtimeMs === want.mtimeMs;
  if (!same) {
    const had = existsSync(dir) && readdirSync(dir).length > 0;
    if (had) {
      const why = kept === null ? 'its manifest is missing or damaged' : kept.version !== want.version ? `it was made by another version (cache ${String(kept.version)}, this one makes ${INDEX_VERSION})` : 'the trace changed since it was made';
      notes.push(`the cache ${dir} was cleared and is built again: ${why}`);
    }
    rmSync(dir, { recursive: true, force: true });
    makePrivateDir(dir);
    writePrivateFile(files.manifest, JSON.stringify(want));
  }
  const legacy = legacyFiles(trace);
  if (legacy.length > 0) {
    for (const f of legacy) rmSync(f, { force: true });
    notes.push(`removed what an earlier version kept beside the trace (${legacy.map((f) => path.basename(f)).join(', ')}); its cache is now ${dir}`);
  }
  return notes;
}

// ---- text kept in the cache: a first line with its key, checksum and length, then the text ----

/**
 * The text kept in `file` under `key` (JSON-able: what it was made from), or null when there is none, it was made
 * from something else, or it does not verify; `onRefused` is told why in words when a file was there but unusable.
 */
export function keptText(file: string, key: unknown, onRefused?: (why: string) => void): string | null {
  let content: string;
  try {
    content = readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  const cut = content.indexOf('\n');
  const head = cut > 0 ? keptHead(content.slice(0, cut)) : null;
  const body = content.slice(cut + 1);
  if (head === null || head.crc !== crc32c(new TextEncoder().encode(body)) || head.length !== body.length) {
    onRefused?.(`${file} does not match its checksum (damaged): computed again`);
    return null;
  }
  if (JSON.stringify(head.key) !== JSON.stringify(key)) return null;
  return body;
}

/** The first line of a kept text, or null when it does not read as one. */
function keptHead(line: string): { key?: unknown; crc?: number; length?: number } | null {
  try {
    const head = JSON.parse(line) as unknown;
    return head !== null && typeof head === 'object' ? (head as { key?: unknown; crc?: number; length?: number }) : null;
  } catch {
    return null;
  }
}

/** Keeps `text` in `file` under `key` (written under a temporary name and renamed); a cache that cannot be written is computed again next time. */
export function keepText(file: string, key: unknown, text: string): void {
  const tmp = `${temporaryPrefix(file)}${Math.random().toString(36).slice(2, 8)}`;
  try {
    track(tmp);
    writePrivateFile(tmp, `${JSON.stringify({ key, crc: crc32c(new TextEncoder().encode(text)), length: text.length })}\n${text}`);
    renameSync(tmp, file);
  } catch {
    rmSync(tmp, { force: true });
  } finally {
    untrack(tmp);
  }
}

// ---- the index and its summaries ----

/** The report index mode's panel shows: the summary, the heap by function, the peaks, leaks at exit (20 rows each). */
export const INDEX_REPORT: ReportRequest = { ...summaryRequest(20, { by: 'function', mode: 'innermost' }), peak: true, leaks: true };

/** INDEX_REPORT's text, computed in one streamed pass over the trace (its memory follows live blocks, not events). */
export function indexReport(trace: string): string {
  const source = FileSource.open(trace);
  try {
    const stream: FoldSource = streamSource(source.clone(), { symbols: fileSymbolNamer });
    return reportText(computeReport(stream, path.basename(trace), INDEX_REPORT, { budgets: null, frameSizes: null }), null);
  } finally {
    source.close();
  }
}

/** The worker script that builds an index off the main thread (compiled beside this file). */
const WORKER = fileURLToPath(new URL('./index-build-worker.js', import.meta.url));

/**
 * `file` opened as an index of `trace` (a summaries file with `summaries`), or null when it is not there or cannot be
 * used: made for something else, or damaged, which `onProgress` is told as the note of a build about to start.
 */
function openKept(file: string, trace: string, summaries: boolean, stage: BuildProgress['stage'], onProgress?: (p: BuildProgress) => void): TraceIndex | null {
  try {
    return TraceIndex.read(file, trace, summaries);
  } catch (e) {
    const refused = e as IndexFileRefused;
    if (refused.why !== 'missing') {
      rmSync(file, { force: true });
      onProgress?.({ fraction: 0, stage, phase: 'starting', events: 0, seconds: 0, note: `${refused.message}: built again` });
    }
    return null;
  }
}

/**
 * The index of `trace`: the cached one when it matches and verifies, else built (in a worker thread when the compiled
 * worker is there, so a server or window stays responsive) with progress told on the way.
 */
export async function openTraceIndex(trace: string, onProgress?: (p: BuildProgress) => void, dir = cacheDirFor(trace)): Promise<TraceIndex> {
  for (const note of prepareCache(trace, dir)) onProgress?.({ fraction: 0, stage: 'events', phase: 'starting', events: 0, seconds: 0, note });
  const files = cacheFiles(dir);
  const cached = openKept(files.index, trace, false, 'events', onProgress);
  if (cached !== null) return cached;
  return buildStage(trace, files.index, 'index', onProgress);
}

/** Builds the index (or the summaries file) of `trace` at `dest` in a worker when it is compiled, then opens it. */
async function buildStage(trace: string, dest: string, task: 'index' | 'summaries', onProgress?: (p: BuildProgress) => void, times = false): Promise<TraceIndex> {
  if (existsSync(WORKER)) await buildIndexInWorker(trace, dest, task, onProgress, times);
  else if (task === 'index') buildIndexFile(trace, dest, onProgress);
  else buildSummaryFile(trace, dest, onProgress, times);
  try {
    return TraceIndex.read(dest, trace, task === 'summaries');
  } catch (e) {
    throw new Error(`the ${task === 'index' ? 'index' : 'summaries'} just built cannot be read (${(e as Error).message}); did the trace change while it was read?`);
  }
}

/** The index of a trace in two stages: what the chart draws first, the events after. */
export interface StagedIndex {
  /** The summaries: the whole index when it is cached, else its summaries file (cached, or built first). */
  summaries: Promise<TraceIndex>;
  /** The whole index, events and all: cached, or built once the summaries are there. */
  index: Promise<TraceIndex>;
}

/**
 * The index of `trace` for the viewer, summaries first: the cached index when it matches (both stages at once); else
 * the summaries file (cached, or built in one light pass), then the whole index built after it, the summaries file
 * removed once the index is there. `beforeEvents` (tests) holds the second stage until it resolves. `times`: a
 * summaries file built here carries the buckets' times (the lanes page's wall-time axis; a pass that reads the trace's
 * times costs more, so the viewer's first chart goes without).
 */
export function openTraceIndexStaged(trace: string, onProgress?: (p: BuildProgress) => void, dir = cacheDirFor(trace), beforeEvents?: () => Promise<void>, times = false): StagedIndex {
  for (const note of prepareCache(trace, dir)) onProgress?.({ fraction: 0, stage: 'summaries', phase: 'starting', events: 0, seconds: 0, note });
  const files = cacheFiles(dir);
  const cached = openKept(files.index, trace, false, 'summaries', onProgress);
  removeStale(files.summaries);
  if (cached !== null) {
    // A build stopped between its index and the removal of its summaries leaves them: not needed now.
    rmSync(files.summaries, { force: true });
    return { summaries: Promise.resolve(cached), index: Promise.resolve(cached) };
  }
  const kept = openKept(files.summaries, trace, true, 'summaries', onProgress);
  const summaries = kept !== null ? Promise.resolve(kept) : buildStage(trace, files.summaries, 'summaries', onProgress, times);
  const index = summaries.then(async () => {
    await beforeEvents?.();
    const ix = await buildStage(trace, files.index, 'index', onProgress);
    rmSync(files.summaries, { force: true });
    return ix;
  });
  return { summaries, index };
}

/**
 * INDEX_REPORT's text for the cache `dir` of `trace`: kept in its `report` file when it was made for the trace as it
 * is now and verifies, else computed (in a worker thread) and kept there. `onNote` is told when a kept one was damaged.
 */
export async function cachedIndexReport(trace: string, dir: string, onNote?: (note: string) => void): Promise<string> {
  const file = cacheFiles(dir).report;
  const key = { version: INDEX_VERSION, ...traceStamp(trace) };
  const kept = keptText(file, key, onNote);
  if (kept !== null) return kept;
  const text = await indexReportInWorker(trace);
  keepText(file, key, text);
  return text;
}

/** INDEX_REPORT's text, computed in a worker thread when the compiled worker is there. */
export function indexReportInWorker(trace: string): Promise<string> {
  if (!existsSync(WORKER)) return Promise.resolve().then(() => indexReport(trace));
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, { workerData: { task: 'report', trace }, resourceLimits: WORKER_LIMITS });
    worker.on('message', (m: { type: 'report'; text: string } | { type: 'error'; message: string }) => (m.type === 'report' ? resolve(m.text) : reject(new Error(m.message))));
    worker.on('error', reject);
  });
}

/** Builds in a worker thread; Ctrl-C (SIGINT, SIGTERM) during the build removes its temporary files and exits. */
function buildIndexInWorker(trace: string, dest: string, task: 'index' | 'summaries', onProgress?: (p: BuildProgress) => void, times = false): Promise<void> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, { workerData: { task, trace, dest, times }, resourceLimits: WORKER_LIMITS });
    const onSignal = (signal: NodeJS.Signals): void => {
      void worker.terminate().then(() => {
        const dir = path.dirname(dest);
        const prefix = path.basename(temporaryPrefix(dest));
        for (const n of readdirSync(dir)) {
          if (!n.startsWith(prefix)) continue;
          try {
            unlinkSync(path.join(dir, n));
          } catch {
            // gone
          }
        }
        process.exit(signal === 'SIGINT' ? 130 : 143);
      });
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    const done = (): void => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    };
    worker.on('message', (m: { type: 'progress'; progress: BuildProgress } | { type: 'done' } | { type: 'error'; message: string }) => {
      if (m.type === 'progress') onProgress?.(m.progress);
      else if (m.type === 'done') {
        done();
        resolve();
      } else {
        done();
        reject(new Error(m.message));
      }
    });
    worker.on('error', (e) => {
      done();
      reject(e);
    });
  });
}

export { temporaryPrefix };
