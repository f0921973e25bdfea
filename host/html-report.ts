// `cc-memwrap report --html`: one self-contained HTML file holding the viewer (the report build of the renderer, its script and stylesheet inlined), the trace bytes (base64) and the source files the trace names (read under the viewer's own path checks). Nothing is fetched when it opens: its CSP allows only the inlined script and style (by hash) and the decoding worker it starts from a Blob URL.
import { createHash } from 'node:crypto';
import { accessSync, constants, existsSync, readFileSync, statSync } from 'node:fs';
import { writeWholeFile } from './whole-file.js';
import path from 'node:path';
import { packageRoot } from '../package-root.js';
import { EMBEDDED_BUCKETS_ID, EMBEDDED_INDEX_ID, EMBEDDED_PANELS_ID, EMBEDDED_RUN_IDS, EMBEDDED_SESSION_ID, EMBEDDED_SUMMARY_ID, EMBEDDED_TRACE_ID, type EmbeddedIndex, type EmbeddedSession } from './embedded-types.js';
import type { PanelsProgress } from './index-panels.js';
import { boundedWindow, MAX_WINDOW_BYTES, WINDOW_EVENTS } from './report-window.js';
import type { SourceResult } from './session-types.js';
import { SUMMARY_FIELDS, THREAD_FIELDS } from '../analysis/event-index.js';
import type { TraceSession } from './trace-session.js';

/** The report build of the renderer (`npm run build`: vite.report.config.ts). */
export const REPORT_TEMPLATE_DIR = path.join(packageRoot, 'dist', 'gui', 'report');
/** The report build of the compare page (`npm run build`: vite.report-compare.config.ts). */
export const COMPARE_TEMPLATE_DIR = path.join(packageRoot, 'dist', 'gui', 'report-compare');

/** A report that cannot be written: the message is one line naming the file and the cause. */
export class HtmlReportError extends Error {
  override name = 'HtmlReportError';
}

const SCRIPT_TAG = /<script type="module" crossorigin src="\.\/(assets\/[^"]+\.js)"><\/script>/;
const STYLE_TAG = /<link rel="stylesheet" crossorigin href="\.\/(assets\/[^"]+\.css)">/;
const CSP_TAG = /<meta http-equiv="Content-Security-Policy" content="[^"]*">/;

const sha256 = (text: string): string => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/** The report's policy: the one inlined script and stylesheet, a Blob worker, images from data/blob (PNG export), nothing from anywhere else. */
export function reportCsp(script: string, style: string): string {
  return [
    "default-src 'none'",
    `script-src ${sha256(script)}`,
    'worker-src blob:',
    `style-src ${sha256(style)}`,
    'img-src data: blob:',
    "connect-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "object-src 'none'",
  ].join('; ');
}

/**
 * Script text safe inside <script>: "</script" would end the element early and "<!--" would switch the parser into
 * its escaped state; in a bundle both can only be inside strings or regular expressions, where "<\/" means "</".
 */
export function scriptText(js: string): string {
  if (js.includes('<!--')) throw new HtmlReportError('the report script contains "<!--", which cannot be inlined safely');
  return js.replace(/<\/(script)/gi, '<\\/$1');
}

/** JSON safe inside a <script type="application/json"> block: no character that HTML parsing inside it could act on. */
export function jsonBlockText(value: unknown): string {
  return jsonTextBlock(JSON.stringify(value));
}

/**
 * JSON text (already written, e.g. the panels' data as the host keeps it) made safe for a JSON block as jsonBlockText
 * makes it: those characters can only be inside its strings, where their \u escapes mean the same.
 */
export function jsonTextBlock(json: string): string {
  return json.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function readTemplateFile(dir: string, rel: string): string {
  const file = path.join(dir, rel);
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new HtmlReportError(`the HTML report template is missing (${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); run npm run build`);
  }
}

/** The report build's page (`page`: the viewer's, or compare.html) with its script and stylesheet inlined and the CSP set to match them. */
export function inlineTemplate(dir: string = REPORT_TEMPLATE_DIR, page = 'index.html'): string {
  const html = readTemplateFile(dir, page);
  const script = html.match(SCRIPT_TAG);
  const style = html.match(STYLE_TAG);
  if (!script || !style || !CSP_TAG.test(html)) throw new HtmlReportError(`${path.join(dir, page)} is not the report build of the renderer; run npm run build`);
  const js = scriptText(readTemplateFile(dir, script[1]!));
  const css = readTemplateFile(dir, style[1]!).replace(/<\/(style)/gi, '<\\/$1');
  // Functions as replacements: the bundle holds "$&" and "$'" sequences that a replacement string would expand.
  return html
    .replace(CSP_TAG, () => `<meta http-equiv="Content-Security-Policy" content="${reportCsp(js, css)}">`)
    .replace(SCRIPT_TAG, () => `<script type="module">${js}</script>`)
    .replace(STYLE_TAG, () => `<style>${css}</style>`);
}

/** The data blocks of a report: the session with every named source, and the trace in base64 (in blocks of `ids`). */
export function dataBlocks(session: TraceSession, ids: { session: string; trace: string } = { session: EMBEDDED_SESSION_ID, trace: EMBEDDED_TRACE_ID }): string {
  const embedded: EmbeddedSession = { session: session.info, sources: session.allSources() };
  const trace = Buffer.from(session.bytes.buffer, session.bytes.byteOffset, session.bytes.byteLength).toString('base64');
  return (
    `<script type="application/json" id="${ids.session}">${jsonBlockText(embedded)}</script>\n` +
    `<script type="application/octet-stream" id="${ids.trace}">${trace}</script>\n`
  );
}

/** The source files a report of a trace opened through its index carries, all together (the rest are refused). */
export const MAX_REPORT_SOURCES_BYTES = 16 << 20;

/** Every source the trace names, read as allSources() does, until their text reaches `max` bytes; later ones refused. */
export function boundedSources(session: TraceSession, max = MAX_REPORT_SOURCES_BYTES): Record<string, SourceResult> {
  const out: Record<string, SourceResult> = {};
  let total = 0;
  for (const [file, r] of Object.entries(session.allSources())) {
    // Counted as the page carries it: JSON, escaped for its block.
    const bytes = r.ok ? Buffer.byteLength(jsonBlockText(r.text)) : 0;
    if (total + bytes > max) {
      out[file] = { ok: false, file, reason: 'too-large', message: `${file}: not in this report (its sources stop at ${max >> 20} MiB); cc-memwrap view shows it` };
      continue;
    }
    total += bytes;
    out[file] = r;
  }
  return out;
}

/**
 * The most bytes a report of a trace opened through its index takes (docs/viewer.md, "A report that opens anywhere"): the page itself; the
 * summaries, SUMMARY_FIELDS float64 per bucket of 16,384 events and THREAD_FIELDS per row of the thread table (a row
 * per bucket and thread with events in it) in base64 (182 bytes a bucket, 54 a row); the window's data,
 * at most `maxWindowBytes` before base64 (its buckets grow by a third in base64, its JSON facts not at all); the
 * sources, at most MAX_REPORT_SOURCES_BYTES as carried; `facts` — the run's site table, threads and problems,
 * the session and the report text, which grow with the program and its threads, not with its events; `panels` — the
 * panels' data as carried, which grows with the program's sites, functions, threads and call paths (each table cut to
 * PANEL_ROWS rows, the flame graph to its paths, the consumed chart to its samples), not with its events — plus 1 KiB
 * of tags and words.
 */
export function indexReportCeiling(p: { page: number; buckets: number; threadRows?: number; facts: number; panels: number; maxWindowBytes?: number; maxSourcesBytes?: number }): number {
  const summary = 4 * Math.ceil(((p.buckets * SUMMARY_FIELDS + (p.threadRows ?? 0) * THREAD_FIELDS) * 8) / 3);
  const window = Math.ceil(((p.maxWindowBytes ?? MAX_WINDOW_BYTES) * 4) / 3);
  return p.page + summary + window + (p.maxSourcesBytes ?? MAX_REPORT_SOURCES_BYTES) + p.facts + p.panels + 1024;
}

/** Options of a report of a trace opened through its index (tests make the window small). */
export interface IndexReportOptions {
  windowEvents?: number;
  maxWindowBytes?: number;
  maxSourcesBytes?: number;
  /** Told how far the panels' passes over the trace are, while they run (the terminal's progress line). */
  onPanelsProgress?: (p: PanelsProgress) => void;
}

/**
 * The data blocks of a report of a trace opened through its index (a large trace): the session with the sources up to
 * MAX_REPORT_SOURCES_BYTES, the index's facts and the host's report (EmbeddedIndex), the panels' data of the whole run
 * (host/index-panels.ts, as `view` serves it), the bucket summaries and the events of one window around the total peak
 * (report-window.ts), never the trace. The index and the panels' data are the viewer's, built or reused beside the
 * trace.
 */
export async function indexDataBlocks(session: TraceSession, options: IndexReportOptions = {}): Promise<string> {
  const ix = await session.index();
  // The report and the panels' passes run in worker threads while the window is read here.
  const computed = Promise.all([sessionReport(session), sessionPanels(session, options.onPanelsProgress)]);
  computed.catch(() => {});
  const w = boundedWindow(ix, options.windowEvents ?? WINDOW_EVENTS, options.maxWindowBytes ?? MAX_WINDOW_BYTES);
  const { first, end } = w.index.window;
  const n = (v: number): string => v.toLocaleString('en-US');
  const all = ix.meta.events;
  const name = session.info.trace.name;
  const panels = 'Its panels (summary, tables, peak, leaks, budgets, stack, flame graph, consumed, problems) are of the whole run.';
  const events =
    end - first >= all
      ? `This report holds all ${n(all)} events of ${name}.`
      : end === first
        ? `This report holds the summaries of all ${n(all)} events of ${name}, but none of the events themselves (the events around the peak take more than the ${(options.maxWindowBytes ?? MAX_WINDOW_BYTES) >> 20} MiB a report gives them). cc-memwrap view ${name} shows them.`
        : `This report holds the summaries of all ${n(all)} events of ${name}, but the events themselves ` +
        `(their bars one by one, details, call stacks) only for events ${n(first)}–${n(end - 1)}, around the total peak (event ${n(w.index.window.peak)}). ` +
        `cc-memwrap view ${name} shows the rest.`;
  const leftOut = `${events} ${panels}`;
  const [report, panelsJson] = await computed;
  const embedded: EmbeddedIndex = { ...w.index, report, leftOut };
  const session_: EmbeddedSession = { session: session.info, sources: boundedSources(session, options.maxSourcesBytes) };
  const summary = Buffer.from(ix.summary.buffer, ix.summary.byteOffset, ix.summary.byteLength).toString('base64');
  const buckets = Buffer.from(w.buckets.buffer, w.buckets.byteOffset, w.buckets.byteLength).toString('base64');
  return (
    `<script type="application/json" id="${EMBEDDED_SESSION_ID}">${jsonBlockText(session_)}</script>\n` +
    `<script type="application/json" id="${EMBEDDED_INDEX_ID}">${jsonBlockText(embedded)}</script>\n` +
    `<script type="application/json" id="${EMBEDDED_PANELS_ID}">${jsonTextBlock(panelsJson)}</script>\n` +
    `<script type="application/octet-stream" id="${EMBEDDED_SUMMARY_ID}">${summary}</script>\n` +
    `<script type="application/octet-stream" id="${EMBEDDED_BUCKETS_ID}">${buckets}</script>\n`
  );
}

/**
 * The report of index mode's panel, as the session computes it once its index is ready (or reads it from beside the
 * index): waited for, not computed a second time.
 */
async function sessionReport(session: TraceSession): Promise<string> {
  session.startReport();
  for (;;) {
    const r = session.reportState;
    if (r.state === 'ready') return r.text;
    if (r.state === 'failed') throw new HtmlReportError(`the report of the trace could not be computed: ${r.message}`);
    await new Promise((done) => setTimeout(done, 100));
  }
}

/**
 * The panels' data of index mode (IndexPanels as JSON text), as the session computes it for the viewer (in a worker,
 * kept beside the index as `<index>.panels`, or read from there): started here if the page has not asked yet.
 */
async function sessionPanels(session: TraceSession, onProgress?: (p: PanelsProgress) => void): Promise<string> {
  for (;;) {
    const p = session.panels();
    if (p.state === 'ready') return p.json;
    if (p.state === 'failed') throw new HtmlReportError(`the panels' data of the trace could not be computed: ${p.message}`);
    if (p.state === 'computing') onProgress?.({ fraction: p.fraction, phase: p.phase });
    await new Promise((done) => setTimeout(done, 100));
  }
}

/** The page with `blocks` before its </body>. */
function withBlocks(blocks: string, templateDir: string, name = 'index.html'): string {
  const page = inlineTemplate(templateDir, name);
  const at = page.lastIndexOf('</body>');
  if (at < 0) throw new HtmlReportError('the report template has no </body>');
  return page.slice(0, at) + blocks + page.slice(at);
}

/** The whole report as text (a session in whole mode: the trace embedded whole). */
export function htmlReport(session: TraceSession, templateDir: string = REPORT_TEMPLATE_DIR): string {
  return withBlocks(dataBlocks(session), templateDir);
}

/** Writes the report of a session in whole mode to `out`; returns its size in bytes. */
export function writeHtmlReport(session: TraceSession, out: string, templateDir: string = REPORT_TEMPLATE_DIR): number {
  return writeText(htmlReport(session, templateDir), out);
}

/** Writes the report of any session: whole mode as writeHtmlReport, index mode with indexDataBlocks. Returns its size. */
export async function writeSessionReport(session: TraceSession, out: string, templateDir: string = REPORT_TEMPLATE_DIR, options: IndexReportOptions = {}): Promise<number> {
  if (session.info.mode !== 'index') return writeHtmlReport(session, out, templateDir);
  // The template and the output's folder first: either missing is said before the index is built.
  inlineTemplate(templateDir);
  writable(out);
  return writeText(withBlocks(await indexDataBlocks(session, options), templateDir), out);
}

/** Throws the HtmlReportError writeText would when `out` cannot be written (no such folder, a folder, no right). */
function writable(out: string): void {
  try {
    if (!statSync(path.dirname(out)).isDirectory()) throw Object.assign(new Error('not a folder'), { code: 'ENOTDIR' });
    accessSync(path.dirname(out), constants.W_OK);
    if (existsSync(out) && statSync(out).isDirectory()) throw Object.assign(new Error('a folder'), { code: 'EISDIR' });
  } catch (e) {
    throw new HtmlReportError(`cannot write ${out} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
}

function writeText(text: string, out: string): number {
  try {
    writeWholeFile(out, text);
  } catch (e) {
    throw new HtmlReportError(`cannot write ${out} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  return Buffer.byteLength(text);
}

/**
 * Writes the compare report (`report A --compare B --html`): the compare page with both traces whole and the sources
 * each names, as `view A --compare B` shows them, nothing fetched. Both sessions must be in whole mode: a trace the
 * viewer opens through its index is refused by the caller. Returns the size in bytes.
 */
export function writeCompareReport(a: TraceSession, b: TraceSession, out: string, templateDir: string = COMPARE_TEMPLATE_DIR): number {
  for (const s of [a, b]) if (s.info.mode === 'index') throw new HtmlReportError(`${s.info.trace.name} is opened through its index; a compare report holds whole traces only`);
  return writeText(withBlocks(dataBlocks(a, EMBEDDED_RUN_IDS.a) + dataBlocks(b, EMBEDDED_RUN_IDS.b), templateDir, 'compare.html'), out);
}
