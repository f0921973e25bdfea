// The HTML report of a trace opened through its index (`report --html` on a large trace), on
// test/programs/report-window.c (a few index buckets of events) forced into index mode, in real Chromium from file://: the chart draws from the summaries, the page says which
// events it holds, an event inside that window shows the same detail and call stack as the whole-trace report, an
// event outside it is answered with the window and `cc-memwrap view`; every panel shows what `view` shows in index mode
// for the same trace (the panels' data of the whole run, carried in the file); the file stays under its documented
// ceiling (the window cut down to fit); a trace gone before the panels' passes writes no file and says why; and the
// command line picks this report for MEMWRAP_VIEW_INDEX=1 only.
import { copyFileSync, existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runReport } from '../../cli/report.js';
import type { Model } from '../../analysis/model.js';
import { Kind } from '../../analysis/trace/format.js';
import { SUMMARY_FIELDS, THREAD_FIELDS } from '../../analysis/event-index.js';
import type { EmbeddedIndex } from '../../host/embedded-types.js';
import { boundedSources, indexReportCeiling, inlineTemplate, jsonBlockText, writeHtmlReport, writeSessionReport } from '../../host/html-report.js';
import { EMBEDDED_PANELS_ID } from '../../host/embedded-types.js';
import { TraceSession } from '../../host/trace-session.js';
import { cacheDirFor, cacheFiles } from '../../host/index-cache.js';
import { capture } from '../fixtures/cli-capture.js';
import { programsDir, scratch } from '../support/programs.js';
import { buildReportTemplate, clickEvent, launch, openPanel, openReportFile, paintedPixels, panelText, selectedEvent, shot, traceProgram, viewerOn, type Viewer } from './browser.js';

type Handle = { mode: string; events: number; hasEvents(a: number, b: number): boolean; zoomToEvents(a: number, b: number): void };

/** Zooms to a few events around `e` and waits until those of them in [first, end) are drawn one by one. */
async function zoomAround(page: Page, e: number, first: number, end: number): Promise<void> {
  await page.evaluate((n) => (window as unknown as { ccMemwrapView: Handle }).ccMemwrapView.zoomToEvents(Math.max(0, n - 10), n + 10), e);
  await page.waitForFunction(
    ([n, a, b]) => {
      const h = (window as unknown as { ccMemwrapView: Handle }).ccMemwrapView;
      return h.mode !== 'index' || h.hasEvents(Math.max(a!, n! - 10), Math.min(b!, h.events, n! + 10));
    },
    [e, first, end],
  );
}

/** Clicks event e and returns the detail pane's text (its facts, blocks and call stack) once it shows e. */
async function detailOf(page: Page, e: number, window: { first: number; end: number }): Promise<string> {
  await zoomAround(page, e, window.first, window.end);
  await clickEvent(page, e);
  await expect.poll(() => selectedEvent(page), { timeout: 10_000 }).toBe(e);
  return (await page.locator('#detail').textContent()) ?? '';
}

/** The text of the data block `id` of a report. */
function block(html: string, id: string): string {
  const m = new RegExp(`<script type="application/[a-z-]+" id="${id}">([^<]*)</script>`).exec(html);
  if (m === null) throw new Error(`no block ${id}`);
  return m[1]!;
}

let browser: Browser;
let template: string;
let model: Model;
let trace: string;
let copy: string;
let dir: string;

beforeAll(async () => {
  ({ trace, model } = traceProgram(path.join(programsDir, 'report-window.c')));
  // The index goes beside the trace: a copy of its own.
  dir = scratch('html-index');
  copy = path.join(dir, path.basename(trace));
  copyFileSync(trace, copy);
  template = await buildReportTemplate();
  browser = await launch();
}, 180_000);

afterAll(() => browser?.close());

describe('the HTML report of a trace opened through its index', () => {
  let whole: Page;
  let indexed: Page;
  let window_: number;
  let embedded: EmbeddedIndex;
  const errors: string[] = [];
  const blocked: string[] = [];

  beforeAll(async () => {
    window_ = Math.floor(model.events.count / 4);
    const wholeFile = path.join(dir, 'whole.html');
    writeHtmlReport(await TraceSession.open(trace), wholeFile, template);
    const indexFile = path.join(dir, 'indexed.html');
    await writeSessionReport(await TraceSession.open(copy, { index: true }), indexFile, template, { windowEvents: window_ });
    embedded = JSON.parse(block(readFileSync(indexFile, 'utf8'), 'mw-index')) as EmbeddedIndex;
    whole = await openReportFile(browser, wholeFile, errors, blocked);
    indexed = await openReportFile(browser, indexFile, errors, blocked);
  }, 120_000);

  /** The window the page says it holds: [first, end). */
  async function shownWindow(): Promise<{ first: number; end: number }> {
    const text = (await indexed.locator('#report-notice').textContent()) ?? '';
    const m = /only for events ([\d,]+)–([\d,]+), around the total peak/.exec(text);
    if (m === null) throw new Error(`the notice reads "${text}"`);
    const num = (s: string): number => Number(s.replace(/,/g, ''));
    return { first: num(m[1]!), end: num(m[2]!) + 1 };
  }

  test('draws the chart from the summaries and says which events it holds', async () => {
    const h = await indexed.evaluate(() => {
      const v = (window as unknown as { ccMemwrapView: Handle }).ccMemwrapView;
      return { mode: v.mode, events: v.events };
    });
    expect(h).toEqual({ mode: 'index', events: model.events.count });
    expect(await paintedPixels(indexed)).toBeGreaterThan(5000);
    const notice = (await indexed.locator('#report-notice').textContent()) ?? '';
    expect(notice).toContain(`summaries of all ${model.events.count.toLocaleString('en-US')} events`);
    expect(notice).toContain(`cc-memwrap view ${path.basename(copy)} shows the rest`);
    expect(await indexed.locator('#status-line').textContent()).toMatch(/the events themselves are in this report only where the notice above says\.$/);
    const w = await shownWindow();
    expect(w.end - w.first).toBe(window_);
    expect(embedded.window).toMatchObject(w);
    // The window's buckets are not the first: its answers reach frames, frees and orphaning frees outside them.
    expect(embedded.window.firstBucket).toBeGreaterThan(0);
    expect(embedded.frames.row.length).toBeGreaterThan(0);
    expect(embedded.places.event.length).toBeGreaterThan(0);
    expect(embedded.frees.events.some((e) => e >= w.end)).toBe(true);
    // The panels of the whole run, carried in the page: no waiting, no text report in their place.
    expect(notice).toMatch(/Its panels \(summary, tables, peak, leaks, budgets, stack, flame graph, consumed, problems\) are of the whole run\.$/);
    await indexed.waitForSelector('#panel-tabs button[data-panel=function]', { timeout: 10_000 });
    expect(await indexed.locator('#panel-body pre.report-text').count()).toBe(0);
    await shot(indexed, 'html-report-index');
    expect(blocked).toEqual([]);
    expect(errors).toEqual([]);
  });

  test('an event inside the window shows the same detail and call stack as the whole-trace report', async () => {
    const { first, end } = await shownWindow();
    const pick = (kind: number): number => {
      for (let e = first; e < end; e++) if (model.events.kind[e] === kind) return e;
      throw new Error(`no event of kind ${kind} in the window`);
    };
    // A round's six blocks, at the window's start and at its end: the ring's two (one freed after the window, one
    // orphaned by a free past the buckets it carries), four freed soon.
    const allocs: number[] = [];
    for (let e = first; e < end && allocs.length < 6; e++) if (model.events.kind[e] === Kind.ALLOC) allocs.push(e);
    for (let e = end - 1; e >= first && allocs.length < 12; e--) if (model.events.kind[e] === Kind.ALLOC) allocs.push(e);
    const events = [...allocs, pick(Kind.FREE), pick(Kind.ENTER), pick(Kind.EXIT), first, end - 1];
    for (const e of events) {
      const a = await detailOf(whole, e, { first, end });
      const b = await detailOf(indexed, e, { first, end });
      expect(b, `event ${e}`).toBe(a);
      expect(b).toContain(`${e} · `);
    }
    // main and work's six levels were entered before the window.
    expect(await indexed.locator('ol.stack li').count()).toBeGreaterThan(7);
    expect(errors).toEqual([]);
  });

  test('an event outside the window: the page says which events it holds and that view shows the rest', async () => {
    const { first, end } = await shownWindow();
    const outside = first > 0 ? first - 1 : end;
    await indexed.fill('#search', String(outside));
    await expect.poll(() => indexed.locator('#search-results li.jump').textContent()).toBe(`Go to event ${outside.toLocaleString('en-US')}`);
    await indexed.press('#search', 'Enter');
    const n = (v: number): string => v.toLocaleString('en-US');
    await expect
      .poll(() => indexed.locator('#error').textContent())
      .toBe(`Cannot show event ${outside}: event ${n(outside)} is outside this report, which holds events ${n(first)}–${n(end - 1)} one by one (and the summaries of all ${n(model.events.count)}); cc-memwrap view shows the rest`);
    await shot(indexed, 'html-report-index-outside');
  });

  describe('its panels', () => {
    let view: Viewer;
    beforeAll(async () => {
      // `view` in index mode on a copy of its own: its index and panels' data computed afresh, not read from the report's.
      const fresh = path.join(scratch('html-index-view'), path.basename(trace));
      copyFileSync(trace, fresh);
      view = await viewerOn(fresh, { index: true });
      await view.page.waitForSelector('#panel-tabs button[data-panel=function]', { timeout: 60_000 });
    }, 180_000);
    afterAll(() => view?.close());

    test('every panel shows what `view` shows in index mode for the same trace', async () => {
      const tabs = async (page: Page): Promise<string[]> => page.locator('#panel-tabs button').allTextContents();
      expect(await tabs(indexed)).toEqual(await tabs(view.page));
      for (const name of ['function', 'site', 'thread', 'library', 'peak', 'leaks', 'linked', 'budgets', 'causes', 'stack', 'consumed', 'problems']) {
        await openPanel(view.page, name);
        await openPanel(indexed, name);
        const a = await panelText(view.page);
        expect(a.length, name).toBeGreaterThan(20);
        expect(await panelText(indexed), name).toBe(a);
      }
      // The summary's rows but the last (how long the host took).
      const rows = async (page: Page): Promise<string[]> => {
        await openPanel(page, 'summary');
        return page.locator('#panel-body tr').allTextContents();
      };
      const [a, b] = [await rows(view.page), await rows(indexed)];
      expect(a.length).toBeGreaterThan(5);
      expect(b.slice(0, -1)).toEqual(a.slice(0, -1));
      expect(b.at(-1)).toMatch(/^Computed in[\d.]+ s on the host as it streamed the trace/);
      const frames = async (page: Page): Promise<string[]> => {
        await openPanel(page, 'flame');
        await page.waitForSelector('svg.flame-graph g.frame');
        return page.locator('svg.flame-graph g.frame title').allTextContents();
      };
      const f = await frames(view.page);
      expect(f.length).toBeGreaterThan(3);
      expect(await frames(indexed)).toEqual(f);
      await openPanel(indexed, 'function');
      await shot(indexed, 'html-report-index-panels');
      expect(view.errors).toEqual([]);
      expect(blocked).toEqual([]);
      expect(errors).toEqual([]);
    });
  });
});

describe('the size of a report through the index', () => {
  test('stays under the documented ceiling: the window is cut down until its data fits', async () => {
    const out = path.join(dir, 'small.html');
    const maxWindowBytes = 600_000;
    const maxSourcesBytes = 16 << 10;
    const session = await TraceSession.open(copy, { index: true });
    const size = await writeSessionReport(session, out, template, { windowEvents: model.events.count, maxWindowBytes, maxSourcesBytes });
    const html = readFileSync(out, 'utf8');
    expect(Buffer.byteLength(html)).toBe(size);
    const embedded = JSON.parse(block(html, 'mw-index')) as EmbeddedIndex;
    const { first, end } = embedded.window;
    // What grows with the program, not with the window: the run's facts, the session, the report text, the notice.
    const facts =
      jsonBlockText({ ...embedded.meta, live: { rows: [], leakClass: [], orphanedBy: [] } }).length +
      jsonBlockText({ session: session.info, sources: {} }).length +
      jsonBlockText(embedded.report).length +
      jsonBlockText(embedded.leftOut).length;
    // The panels' data, as `view`'s host serves it (kept in the trace's cache folder): sized by the program, not its events.
    const panels = block(html, EMBEDDED_PANELS_ID);
    const kept = readFileSync(cacheFiles(cacheDirFor(copy)).panels, 'utf8');
    expect(JSON.parse(panels)).toEqual(JSON.parse(kept.slice(kept.indexOf('\n') + 1)));
    const ceiling = indexReportCeiling({ page: Buffer.byteLength(inlineTemplate(template)), buckets: embedded.meta.buckets, threadRows: embedded.meta.threadRows, facts, panels: Buffer.byteLength(panels), maxWindowBytes, maxSourcesBytes });
    expect(size).toBeLessThanOrEqual(ceiling);
    // The whole trace's events were asked for; fewer fit.
    expect(end - first).toBeGreaterThan(0);
    expect(end - first).toBeLessThan(model.events.count);
    expect(block(html, 'mw-index-summary').length).toBe(4 * Math.ceil(((embedded.meta.buckets * SUMMARY_FIELDS + embedded.meta.threadRows * THREAD_FIELDS) * 8) / 3));
  });

  test('the ceiling counts the panels\' data: a report with no events and no sources stays under it, by less than the panels take', async () => {
    const out = path.join(dir, 'tight.html');
    const session = await TraceSession.open(copy, { index: true });
    const size = await writeSessionReport(session, out, template, { maxWindowBytes: 1, maxSourcesBytes: 0 });
    const html = readFileSync(out, 'utf8');
    const embedded = JSON.parse(block(html, 'mw-index')) as EmbeddedIndex;
    expect(embedded.window.end).toBe(embedded.window.first);
    // The facts as carried: the session block (its sources refused in words) and the index block.
    const facts = Buffer.byteLength(block(html, 'mw-session')) + Buffer.byteLength(block(html, 'mw-index'));
    const panels = Buffer.byteLength(block(html, EMBEDDED_PANELS_ID));
    expect(panels).toBeGreaterThan(2048);
    const ceiling = indexReportCeiling({ page: Buffer.byteLength(inlineTemplate(template)), buckets: embedded.meta.buckets, threadRows: embedded.meta.threadRows, facts, panels, maxWindowBytes: 1, maxSourcesBytes: 0 });
    expect(size).toBeLessThanOrEqual(ceiling);
    expect(ceiling - size).toBeLessThan(panels);
  });

  test('sources past the report\'s share are refused in words, not carried', async () => {
    const session = await TraceSession.open(copy, { index: true });
    const all = session.allSources();
    const carried = Object.values(all).filter((r) => r.ok);
    expect(carried.length).toBeGreaterThan(0);
    const bounded = boundedSources(session, 10);
    for (const r of carried) {
      const b = bounded[r.file]!;
      expect(b.ok).toBe(false);
      expect(b).toMatchObject({ reason: 'too-large', message: `${r.file}: not in this report (its sources stop at 0 MiB); cc-memwrap view shows it` });
    }
    expect(boundedSources(session)).toEqual(all);
  });
});

describe('a report through the index that cannot be made', () => {
  test('a trace gone before its panels\' passes: no file written, the error names the trace', async () => {
    const gone = path.join(scratch('html-index-gone'), path.basename(trace));
    copyFileSync(trace, gone);
    const session = await TraceSession.open(gone, { index: true });
    await session.index();
    await expect.poll(() => session.reportState.state, { timeout: 60_000 }).toBe('ready');
    rmSync(gone);
    const out = path.join(dir, 'gone.html');
    await expect(writeSessionReport(session, out, template)).rejects.toThrow(new RegExp(`^the panels' data of the trace could not be computed: .*${path.basename(gone)}: no such file`));
    expect(existsSync(out)).toBe(false);
  });
});

describe('report --html on the command line', () => {
  test('through the index, to a folder that does not exist or to a folder: exit 2, one line naming it, said before the index is built', async () => {
    const saved = process.env.MEMWRAP_VIEW_INDEX;
    const fresh = path.join(scratch('html-index-errors'), path.basename(trace));
    copyFileSync(trace, fresh);
    try {
      process.env.MEMWRAP_VIEW_INDEX = '1';
      for (const out of ['/nonexistent-dir/r.html', dir]) {
        const r = await capture(runReport, [fresh, '--html', out]);
        expect(r.code, out).toBe(2);
        expect(r.err).toMatch(new RegExp(`--html ${out}: cannot write ${out} \\((ENOENT|EISDIR)\\)`));
        expect(r.out).toBe('');
      }
      expect(existsSync(cacheFiles(cacheDirFor(fresh)).index)).toBe(false);
    } finally {
      if (saved === undefined) delete process.env.MEMWRAP_VIEW_INDEX;
      else process.env.MEMWRAP_VIEW_INDEX = saved;
    }
  });

  test('MEMWRAP_VIEW_INDEX=1: the report through the index, never the trace; a small trace otherwise: the trace whole', async () => {
    const saved = process.env.MEMWRAP_VIEW_INDEX;
    try {
      process.env.MEMWRAP_VIEW_INDEX = '1';
      const indexed = path.join(dir, 'cli-indexed.html');
      const r = await capture(runReport, [copy, '--html', indexed]);
      expect(r.code, r.err).toBe(0);
      expect(r.err).toMatch(new RegExp(`wrote ${indexed} \\(.*\\): open it in a browser`));
      const html = readFileSync(indexed, 'utf8');
      expect(html).toContain('id="mw-index"');
      expect(html).not.toContain('id="mw-trace"');
      delete process.env.MEMWRAP_VIEW_INDEX;
      const plain = path.join(dir, 'cli-whole.html');
      expect((await capture(runReport, [trace, '--html', plain])).code).toBe(0);
      const text = readFileSync(plain, 'utf8');
      expect(text).toContain('id="mw-trace"');
      expect(text).not.toContain('id="mw-index"');
    } finally {
      if (saved === undefined) delete process.env.MEMWRAP_VIEW_INDEX;
      else process.env.MEMWRAP_VIEW_INDEX = saved;
    }
  });
});
