// The flame graph and consumed panels in real Chromium on test/programs/call-paths.c, whose comment works out the
// bytes of each call path by hand: below main, build's frame is the widest for bytes allocated (120 of main's 452 B),
// a click on it zooms in and opens its definition in the source pane; the consumed chart's largest band is the
// realloc in main (200 B live at the end), and a click on that band opens the realloc's line. In the HTML report of
// samples/linked-list.c (which prints, so libc allocates its stdio buffer) both tabs work with nothing fetched, and
// the flame graph's libc heap box hides the frame of the blocks libc allocated.
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { writeHtmlReport } from '../../host/html-report.js';
import { summarize } from '../../analysis/summary.js';
import { formatBytesFine } from '../../analysis/units.js';
import { TraceSession } from '../../host/trace-session.js';
import { programsDir, samplesDir, scratch } from '../support/programs.js';
import { buildReportTemplate, launch, openReportFile, shot, traceProgram, viewerOn, type Viewer } from './browser.js';

const openPanel = (page: Page, name: string) => page.locator(`#panel-tabs button[data-panel=${name}]`).click();

/** The frame whose drawn name is `name`. */
const frameNamed = (page: Page, name: string) => page.locator('svg.flame-graph g.frame').filter({ has: page.locator('text', { hasText: new RegExp(`^${name}$`) }) });

/** The frames drawn in the flame graph: the name a person reads on each, and its box on the screen. */
async function frames(page: Page): Promise<{ name: string; x: number; y: number; width: number }[]> {
  const out = [];
  for (const g of await page.locator('svg.flame-graph g.frame').all()) {
    const box = (await g.locator('rect').boundingBox())!;
    out.push({ name: (await g.locator('text').textContent().catch(() => '')) ?? '', x: box.x, y: box.y, width: box.width });
  }
  return out;
}

describe('flame graph and consumed chart on call-paths.c', () => {
  let viewer: Viewer;
  let page: Page;

  beforeAll(async () => {
    const { trace } = traceProgram(path.join(programsDir, 'call-paths.c'));
    viewer = await viewerOn(trace);
    page = viewer.page;
  }, 120_000);

  afterAll(() => viewer?.close());

  test('bytes allocated: main on top, build the widest frame below it, 120 / 452 of main’s width', async () => {
    await openPanel(page, 'flame');
    await page.waitForSelector('svg.flame-graph');
    const all = await frames(page);
    const main = all.find((f) => f.name === 'main')!;
    expect(main).toBeDefined();
    expect(Math.min(...all.map((f) => f.y))).toBe(main.y);
    const below = all.filter((f) => f.y > main.y && f.y < main.y + 30).sort((a, b) => b.width - a.width);
    expect(below.map((f) => f.name)).toEqual(['build', 'scratch']);
    expect(below[0]!.width).toBeCloseTo((main.width * 120) / 452, -0.5);
    expect(below[1]!.width).toBeCloseTo((main.width * 100) / 452, -0.5);
    await shot(page, 'flame-graph');
    expect(viewer.errors).toEqual([]);
  });

  test('a click on build zooms into it and opens its definition in the source pane', async () => {
    await frameNamed(page, 'build').click();
    await page.waitForSelector('.code .ln.selected');
    expect(await page.locator('.code .ln.selected .text').textContent()).toContain('static struct node *build(int k)');
    expect(await page.locator('.flame-trail').textContent()).toMatch(/^all › main › build — 26\.5 % of the whole$/);
    const all = await frames(page);
    const build = all.find((f) => f.name === 'build')!;
    const main = all.find((f) => f.name === 'main')!;
    expect(build.width).toBeCloseTo(main.width, -0.5);
    // Five nodes made by build's calls of new_node.
    expect(await page.locator('#status-line').textContent()).toBe('main;build: 5 events highlighted');
    await page.locator('[data-role=flame-reset]').click();
    expect((await frames(page)).find((f) => f.name === 'build')!.width).toBeLessThan(main.width / 2);
  });

  test('the search marks the frames of the function typed', async () => {
    await page.locator('[data-role=flame-search]').fill('new_');
    const marked = page.locator('svg.flame-graph g.frame').filter({ has: page.locator('rect[fill="#e64980"]') });
    expect(await marked.count()).toBe(1);
    expect(await marked.locator('text').textContent()).toBe('new_node');
    await page.locator('[data-role=flame-search]').fill('');
  });

  test('consumed: the largest band is the realloc in main, and a click on it opens the realloc’s line', async () => {
    await openPanel(page, 'consumed');
    await page.waitForSelector('svg.consumed-chart');
    const first = page.locator('.consumed-legend li').first();
    expect(await first.textContent()).toBe('call-paths.c:60 main → realloc (at most 200 B)');
    // The legend's first swatch is the colour of the bottom band: read the pixel just above the x axis at the run's end.
    const swatch = await first.locator('.swatch').evaluate((s) => getComputedStyle(s).backgroundColor);
    await page.locator('svg.consumed-chart').evaluate((e) => e.scrollIntoView({ block: 'end' }));
    await shot(page, 'consumed');
    const box = (await page.locator('svg.consumed-chart').boundingBox())!;
    const at = { x: box.x + box.width - 16, y: box.y + box.height - 22 - 4 };
    const hit = await page.evaluate(([x, y]) => {
      const e = document.elementFromPoint(x!, y!) as SVGElement | null;
      return e === null ? null : getComputedStyle(e).fill;
    }, [at.x, at.y]);
    expect(hit).toBe(swatch);
    await page.mouse.click(at.x, at.y);
    await expect.poll(() => page.locator('#status-line').textContent()).toMatch(/^call-paths\.c:60 main → realloc: \d+ events? highlighted$/);
    await page.waitForSelector('.code .ln.selected');
    expect(await page.locator('.code .ln.selected .text').textContent()).toContain('realloc(s, 200)');
    await shot(page, 'consumed');
    expect(viewer.errors).toEqual([]);
  });
});

describe('the stack metric on test/programs/bst.c (checksum recursing six deep)', () => {
  test('main is the peak stack, never a sum of its callees; the deepest path is outlined; the panel says what width means', async () => {
    const { trace, model } = traceProgram(path.join(programsDir, 'bst.c'));
    const peak = summarize(model).peakStack.bytes;
    const viewer = await viewerOn(trace);
    try {
      const { page } = viewer;
      await openPanel(page, 'flame');
      await page.waitForSelector('svg.flame-graph');
      await page.locator('[data-role=flame-metric]').selectOption('stack');
      await page.waitForSelector('svg.flame-graph[data-metric=stack]');
      // "2,800 B (100.0 %)"; a size printed in KiB reads NaN, which no expectation below accepts.
      const bytesOf = (title: string): number => Number(/\n([\d,]+) B /.exec(title)?.[1]?.replace(/,/g, '') ?? NaN);
      const titles = await page.locator('svg.flame-graph g.frame title').allTextContents();
      const main = titles.find((t) => t.startsWith('main '))!;
      expect(bytesOf(main)).toBe(peak);
      expect(main).toMatch(/\(100\.0 %\)$/);
      // A maximum, not a total: no frame reads more than the run's peak.
      expect(Math.max(...titles.map(bytesOf))).toBe(peak);
      // The deepest path: main, then down to the sixth checksum, each at the peak.
      const deepest = await page.locator('svg.flame-graph g.frame.deepest').evaluateAll((gs) => gs.map((g) => g.querySelector('title')!.textContent!));
      expect(deepest.map((t) => t.split(' ')[0])).toEqual(['main', ...Array(6).fill('checksum')]);
      expect(deepest.every((t) => bytesOf(t) === peak)).toBe(true);
      // The widest callee of main is on that path (its share follows its depth, not how many calls it made).
      const all = await frames(page);
      const mainBox = all.find((f) => f.name === 'main')!;
      const below = all.filter((f) => f.y > mainBox.y && f.y < mainBox.y + 30).sort((a, b) => b.width - a.width);
      expect(below[0]!.name).toBe('checksum');
      expect(await page.locator('.flame .note[data-role=flame-width]').textContent()).toBe(
        `Width: the deepest stack reached while a frame was on the call stack (bytes from the thread's stack base: the most of its own entry and its callees', never a sum); callees share their caller's width in proportion to theirs. Outlined: the deepest path, ${formatBytesFine(peak)} (the run's peak stack).`,
      );
      await shot(page, 'flame-stack');
      expect(viewer.errors).toEqual([]);
    } finally {
      await viewer.close();
    }
  }, 120_000);
});

describe('flame graph and consumed chart in the HTML report of samples/linked-list.c', () => {
  test('the libc frame is drawn below main and hidden with libc heap unticked; the consumed legend names the sites', async () => {
    const { trace } = traceProgram(path.join(samplesDir, 'linked-list.c'));
    const report = path.join(scratch('flame-report'), 'report.html');
    writeHtmlReport(await TraceSession.open(trace), report, await buildReportTemplate());
    const browser = await launch();
    try {
      const errors: string[] = [];
      const blocked: string[] = [];
      const page = await openReportFile(browser, report, errors, blocked);
      await openPanel(page, 'flame');
      await page.waitForSelector('svg.flame-graph');
      const libc = '(libc or uninstrumented code)';
      const names = async () => (await frames(page)).map((f) => f.name);
      expect(await page.locator('svg.flame-graph g.frame title').allTextContents()).toContainEqual(expect.stringMatching(/^\(libc or uninstrumented code\)\n4,096 B /));
      await page.locator('[data-role=flame-libc]').uncheck();
      expect(await page.locator('svg.flame-graph g.frame title').allTextContents()).not.toContainEqual(expect.stringContaining(libc));
      expect(await names()).toContain('make_node');
      expect(await page.locator('.flame .note').textContent()).toBe(`Hidden: frames of allocations inside libc or uninstrumented code (${libc}).`);
      await openPanel(page, 'consumed');
      await page.waitForSelector('svg.consumed-chart');
      expect(await page.locator('.consumed-legend li').first().textContent()).toBe('main (via libc/uninstrumented) (at most 4,096 B)');
      expect(await page.locator('.consumed-legend li').allTextContents()).toContainEqual(expect.stringMatching(/^linked-list\.c:\d+ make_node → malloc \(at most \d+ B\)$/));
      expect(errors).toEqual([]);
      expect(blocked).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 120_000);
});
