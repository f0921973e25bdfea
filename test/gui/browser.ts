// Shared machinery of the viewer's browser tests: build the renderer once into a scratch folder, serve a trace with the real local server, and drive Chromium (the system's, through playwright-core).
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { build } from 'vite';
import { expect } from 'vitest';
import { packageRoot } from '../../package-root.js';
import { RecentList } from '../../host/recent.js';
import { startServer, type RunningServer } from '../../host/server.js';
import { TraceSession, type SessionOptions } from '../../host/trace-session.js';
import { buildInstrumented, runTraced, scratch, traceOf } from '../support/programs.js';
import { runView } from '../../cli/view.js';
import { capture } from '../fixtures/cli-capture.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import type { Model } from '../../analysis/model.js';

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
export const SCREENSHOTS = path.join(packageRoot, 'test', 'gui', 'screenshots');

/** Builds the renderer from the current sources (not whatever dist/ holds). */
export async function buildRenderer(): Promise<string> {
  const outDir = path.join(scratch('renderer'), 'out');
  await build({ configFile: path.join(packageRoot, 'gui', 'renderer', 'vite.config.ts'), build: { outDir, emptyOutDir: true }, logLevel: 'error' });
  return outDir;
}

/** Builds the HTML report's renderer (vite.report.config.ts) from the current sources. */
export async function buildReportTemplate(): Promise<string> {
  const outDir = path.join(scratch('report-template'), 'out');
  await build({ configFile: path.join(packageRoot, 'gui', 'renderer', 'vite.report.config.ts'), build: { outDir, emptyOutDir: true }, logLevel: 'error' });
  return outDir;
}

/**
 * Opens a report file from file:// with the network off: the context is offline and every request that is not for a
 * file: URL is aborted and listed in `blocked` (a test expects none). Waits for the first chart.
 */
export async function openReportFile(browser: Browser, file: string, errors: string[], blocked: string[]): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, offline: true });
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith('file:')) return route.continue();
    blocked.push(url);
    return route.abort();
  });
  const page = await context.newPage();
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => m.type() === 'error' && errors.push(`console: ${m.text()}`));
  page.on('request', (r) => !r.url().startsWith('file:') && !r.url().startsWith('blob:') && !r.url().startsWith('data:') && blocked.push(r.url()));
  await page.goto(pathToFileURL(file).href);
  await page.waitForFunction(() => {
    const v = (window as unknown as { ccMemwrapView?: { ready: boolean; error: string | null } }).ccMemwrapView;
    return v?.ready === true || (v?.error ?? null) !== null;
  }, null, { timeout: 60_000 });
  return page;
}

export async function launch(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (test/run-all.sh does)`);
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

export async function serve(rendererDir: string, trace: string, options: SessionOptions = {}): Promise<RunningServer> {
  const session = await TraceSession.open(trace, options);
  const recent = new RecentList(path.join(scratch('recent'), 'recent.json'));
  recent.add(trace); // as `cc-memwrap view` does
  return startServer({ rendererDir, session, recent, sessionOptions: options });
}

/** A page of `cc-memwrap view` open in Chromium: what the command printed, its server, the browser and the page. */
export interface ViewPage {
  printed: string;
  server: RunningServer;
  browser: Browser;
  page: Page;
  /** Page errors: a test expects none. */
  errors: string[];
  /** Every request the page made, as path and query ("/api/trace?lane=1"), in order. */
  requests: string[];
  close(): Promise<void>;
}

/**
 * Runs `cc-memwrap view` with `args` (no Electron, the renderer in `rendererDir`, the recent list in `recentFile`),
 * opens the page it prints in Chromium and waits until the handle the page sets on `window[handle]` is ready or has
 * failed: the pages only the local server serves (compare.html, lanes.html).
 */
export async function viewInBrowser(args: string[], o: { rendererDir: string; recentFile: string; handle: string; viewport: { width: number; height: number } }): Promise<ViewPage> {
  let server: RunningServer | null = null;
  const r = await capture((a, io) => runView(a, io, { electron: null, rendererDir: o.rendererDir, recentFile: o.recentFile, onServer: (s) => (server = s) }), args);
  if (r.code !== 0 || server === null) throw new Error(`view exited ${r.code}: ${r.err}`);
  const running: RunningServer = server;
  const browser = await launch();
  const errors: string[] = [];
  const page = await browser.newPage({ viewport: o.viewport });
  page.on('pageerror', (e) => errors.push(e.message));
  const requests: string[] = [];
  page.on('request', (q) => {
    const u = new URL(q.url());
    requests.push(u.pathname + u.search);
  });
  await page.goto(/at (http:\S+)/.exec(r.out)![1]!);
  await page.waitForFunction(
    (name) => {
      const h = (window as unknown as Record<string, { ready: boolean; error: string | null } | undefined>)[name];
      return h?.ready === true || (h?.error ?? null) !== null;
    },
    o.handle,
    { timeout: 60_000 },
  );
  return {
    printed: r.out,
    server: running,
    browser,
    page,
    errors,
    requests,
    async close() {
      await browser.close();
      await running.close();
    },
  };
}

/** Opens the viewer and waits for its first chart; page errors fail the test through `errors`. */
export async function openViewer(browser: Browser, url: string, errors: string[]): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('dialog', (d) => {
    errors.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  await page.goto(url);
  await page.waitForFunction(() => (window as unknown as { ccMemwrapView?: { ready: boolean } }).ccMemwrapView?.ready === true, null, { timeout: 30_000 });
  return page;
}

export async function shot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file });
  return file;
}

/** Clicks the bar of event `e` (in its upper half: every instrumented event has stack above the axis). */
export async function clickEvent(page: Page, e: number, side: 'above' | 'heap' = 'above'): Promise<void> {
  const at = await eventPoint(page, e, side);
  await page.mouse.click(at.x, at.y);
}

/** Moves the pointer onto the bar of event `e`, as `clickEvent` would click it. */
export async function hoverEvent(page: Page, e: number, side: 'above' | 'heap' = 'above'): Promise<void> {
  const at = await eventPoint(page, e, side);
  await page.mouse.move(at.x, at.y);
}

async function eventPoint(page: Page, e: number, side: 'above' | 'heap'): Promise<{ x: number; y: number }> {
  const at = await page.evaluate(
    ([ev, s]) => {
      const h = (window as unknown as { ccMemwrapView: { eventClientX(e: number): number | null; plotClientY(s: string): number } }).ccMemwrapView;
      return { x: h.eventClientX(ev as number), y: h.plotClientY(s as string) };
    },
    [e, side] as const,
  );
  if (at.x === null) throw new Error(`event ${e} is not in view`);
  return { x: at.x, y: at.y };
}

/** Pixels of the chart's canvas that are not transparent: a drawn chart has tens of thousands. */
export function paintedPixels(page: Page): Promise<number> {
  return page.evaluate(() => {
    const c = document.querySelector('canvas.plot') as HTMLCanvasElement;
    const px = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 3; i < px.length; i += 4) if (px[i]! > 0) n++;
    return n;
  });
}

/** The chart's canvas as a PNG data URL: two pictures are equal only when every pixel is. */
export function plotPicture(page: Page): Promise<string> {
  return page.evaluate(() => (document.querySelector('canvas.plot') as HTMLCanvasElement).toDataURL());
}

export interface Viewer {
  browser: Browser;
  server: RunningServer;
  page: Page;
  /** Page errors and dialogs: a test expects none. */
  errors: string[];
  close(): Promise<void>;
}

/** A fresh renderer build serving `trace`, and Chromium showing it. */
export async function viewerOn(trace: string, options: SessionOptions = {}): Promise<Viewer> {
  const rendererDir = await buildRenderer();
  const server = await serve(rendererDir, trace, options);
  const browser = await launch();
  const errors: string[] = [];
  const page = await openViewer(browser, server.pageUrl(), errors);
  return {
    browser,
    server,
    page,
    errors,
    async close() {
      await browser.close();
      await server.close();
    },
  };
}

/**
 * `source`'s trace shown twice: whole, and through its index from a copy of its own (the index goes beside the trace,
 * so the whole-mode viewer reads the trace alone).
 */
export async function wholeAndIndexed(source: string, scratchName: string, options: SessionOptions = {}): Promise<{ model: Model; whole: Viewer; indexed: Viewer }> {
  const { trace, model } = traceProgram(source);
  const copy = path.join(scratch(scratchName), path.basename(trace));
  copyFileSync(trace, copy);
  const whole = await viewerOn(trace, options);
  const indexed = await viewerOn(copy, { ...options, index: true });
  return { model, whole, indexed };
}

/**
 * `source` (a C file) built through cc-memwrap with gcc -O0 -g (and `flags`, e.g. a -D option) and run in its own
 * folder, so the run's working directory, the viewer's source root, holds the source: its trace, the decoded model
 * and what it printed.
 */
export function traceProgram(source: string, flags: string[] = []): { trace: string; model: Model; stdout: string } {
  const name = path.basename(source, '.c');
  const dir = scratch(`gui-${name}`);
  const exe = path.join(dir, name);
  buildInstrumented('gcc', ['-O0', '-g', ...flags], [source], exe);
  const ran = runTraced(exe, [], path.join(dir, 'traces'), { cwd: path.dirname(source) });
  const trace = traceOf(path.join(dir, 'traces'), ran.pid);
  return { trace, model: decodeTrace(new Uint8Array(readFileSync(trace))), stdout: ran.stdout };
}

/** Opens the panel tab `name` (its data-panel) and waits until it is the active one. */
export async function openPanel(page: Page, name: string): Promise<void> {
  await page.locator(`#panel-tabs button[data-panel=${name}]`).click();
  await expect.poll(() => page.locator(`#panel-tabs button[data-panel=${name}].active`).count()).toBe(1);
}

/** The text the open panel shows. */
export const panelText = async (page: Page): Promise<string> => (await page.locator('#panel-body').textContent()) ?? '';

/**
 * The event the page shows as selected: the number the detail pane's "event" fact starts with ("123 · ALLOC · …"),
 * or null when the pane shows no event (its hint). Read from the page as a person reads it.
 */
export async function selectedEvent(page: Page): Promise<number | null> {
  const fact = page.locator('#detail dl.facts dd').first();
  if ((await fact.count()) === 0) return null;
  const text = (await fact.textContent()) ?? '';
  const m = /^(\d+) · /.exec(text);
  if (m === null) throw new Error(`the detail pane's event fact reads "${text}"`);
  return Number(m[1]);
}
