// Projector mode in real Chromium at 1920×1080 on test/programs/bst.c: the zoom control (and Ctrl+=) makes the text of the panes, the panels and the chart's axes larger, the chart fills the window's width and the height left to it and is redrawn at once at the device's pixel ratio; the bar under the chart resizes it (drag or arrow keys); zoom and height are there again after a reload.
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { programsDir } from '../support/programs.js';
import { clickEvent, openViewer, paintedPixels, shot, traceProgram, viewerOn, type Viewer } from './browser.js';

/** Computed font size in px of the first element matching `selector`. */
const fontPx = (page: Page, selector: string): Promise<number> => page.locator(selector).first().evaluate((e) => parseFloat(getComputedStyle(e).fontSize));
/** Rendered height in px of the first element matching `selector` (the glyphs' box, for SVG text). */
const boxOf = async (page: Page, selector: string) => (await page.locator(selector).first().boundingBox())!;

/** The chart canvas's box on screen and its size in device pixels. */
const canvasOf = (page: Page) =>
  page.locator('canvas.plot').evaluate((c: HTMLCanvasElement) => {
    const r = c.getBoundingClientRect();
    return { width: r.width, height: r.height, left: r.left, backingWidth: c.width, backingHeight: c.height, dpr: devicePixelRatio };
  });

/** What a person sees of the text and the chart: text sizes, the chart canvas's size on screen and in device pixels. */
async function seen(page: Page) {
  return {
    detail: await fontPx(page, '#detail dl.facts dd'),
    table: await fontPx(page, '#panel-body table.rows td'),
    code: await fontPx(page, '#source-body .code'),
    tick: (await boxOf(page, '.chart svg.axes .y-heap .tick text')).height,
    /** The leftmost edge of any axis label (the longest byte labels reach furthest left). */
    tickLeft: await page.locator('.chart svg.axes .tick text').evaluateAll((ts) => Math.min(...ts.map((t) => t.getBoundingClientRect().left))),
    canvas: await canvasOf(page),
    area: await boxOf(page, '#chart-area'),
    panels: await boxOf(page, '#panels'),
    detailBox: await boxOf(page, '#detail'),
  };
}

/** bst.c's trace in the viewer, and a page of it `width`×`height` (the viewer's own page keeps its size). */
async function bstAt(width: number, height: number): Promise<{ viewer: Viewer; page: Page }> {
  const { trace } = traceProgram(path.join(programsDir, 'bst.c'));
  const viewer = await viewerOn(trace);
  const page = await openViewer(viewer.browser, viewer.server.pageUrl(), viewer.errors);
  await page.setViewportSize({ width, height });
  return { viewer, page };
}

describe('projector mode at 1920×1080', () => {
  let viewer: Viewer;
  let page: Page;

  beforeAll(async () => {
    ({ viewer, page } = await bstAt(1920, 1080));
  });
  afterAll(() => viewer?.close());

  test('zoom scales the text and the axes; the chart fills the window and is redrawn crisp; the bar resizes it; both are remembered', async () => {
    await clickEvent(page, 20); // something in the detail and source panes
    await page.locator('#source-body .code').waitFor();
    const plain = await seen(page);
    expect(plain.detail).toBe(13);

    await page.selectOption('#zoom', '2');
    await expect.poll(() => fontPx(page, '#detail dl.facts dd')).toBe(26);
    const big = await seen(page);
    await shot(page, 'projector-1920x1080');
    // Readable from the back of a room: no text of the panes, panels or axes under 20 px.
    expect(big.table).toBeGreaterThanOrEqual(24);
    expect(big.code).toBeGreaterThanOrEqual(24);
    expect(big.tick).toBeGreaterThanOrEqual(20);
    expect(big.tick).toBeGreaterThan(plain.tick * 1.8);
    // The axis labels stay inside the window (the margin grew with them).
    expect(big.tickLeft).toBeGreaterThanOrEqual(big.canvas.left);
    // The chart fills the window's width (less the page's padding and border) and the height the layout gives it.
    expect(big.canvas.width).toBeGreaterThan(1920 - 40);
    expect(big.area.height).toBeGreaterThan(1080 * 0.3);
    expect(big.canvas.height).toBeGreaterThan(big.area.height * 0.55);
    expect(big.panels.y + big.panels.height).toBeGreaterThan(1080 - 16);
    // Crisp: the canvas has a device pixel for each of its screen pixels, and it is drawn.
    expect(big.canvas.backingWidth).toBe(Math.round(big.canvas.width * big.canvas.dpr));
    expect(big.canvas.backingHeight).toBe(Math.round(big.canvas.height * big.canvas.dpr));
    await expect.poll(() => paintedPixels(page)).toBeGreaterThan(20_000);

    // Dragging the bar under the chart down by 100 px makes the chart 100 px taller and the panes below shorter.
    const painted = await paintedPixels(page);
    const bar = await boxOf(page, '#split');
    await page.mouse.move(bar.x + bar.width / 2, bar.y + bar.height / 2);
    await page.mouse.down();
    await page.mouse.move(bar.x + bar.width / 2, bar.y + bar.height / 2 + 50, { steps: 3 });
    await page.mouse.move(bar.x + bar.width / 2, bar.y + bar.height / 2 + 100, { steps: 3 });
    await page.mouse.up();
    // Within a pixel: the grid's rows may split a fraction of one differently.
    await expect.poll(async () => Math.abs((await boxOf(page, '#chart-area')).height - big.area.height - 100)).toBeLessThanOrEqual(1);
    await expect.poll(async () => Math.abs((await seen(page)).canvas.height - big.canvas.height - 100)).toBeLessThanOrEqual(1);
    const dragged = await seen(page);
    // The panes below gave up those 100 px.
    expect(Math.abs(dragged.detailBox.height + dragged.panels.height - (big.detailBox.height + big.panels.height - 100))).toBeLessThanOrEqual(1);
    // Redrawn at the new size: taller bars paint more pixels.
    await expect.poll(() => paintedPixels(page)).toBeGreaterThan(painted * 1.1);
    // The arrow keys move the bar too.
    await page.locator('#split').focus();
    await page.keyboard.press('ArrowUp');
    await expect.poll(async () => Math.abs((await boxOf(page, '#chart-area')).height - dragged.area.height + 24)).toBeLessThanOrEqual(1);

    // After a reload: the same zoom and chart height.
    const height = (await boxOf(page, '#chart-area')).height;
    await page.reload();
    await page.waitForFunction(() => (window as unknown as { ccMemwrapView?: { ready: boolean } }).ccMemwrapView?.ready === true);
    expect(await page.locator('#zoom option:checked').textContent()).toBe('200%');
    expect(await fontPx(page, '#trace-name')).toBe(26);
    expect((await boxOf(page, '#chart-area')).height).toBeCloseTo(height, 0);
    // A smaller window: the chart gives way, and the panels stay inside the window.
    await page.setViewportSize({ width: 1920, height: 800 });
    await expect.poll(async () => {
      const p = await boxOf(page, '#panels');
      return p.y + p.height;
    }).toBeLessThanOrEqual(800);
    await page.setViewportSize({ width: 1920, height: 1080 });

    // Ctrl+- and Ctrl+= step through the sizes; Ctrl+0 goes back to 100 %.
    await page.locator('canvas.plot').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('Control+Minus');
    expect(await page.locator('#zoom option:checked').textContent()).toBe('175%');
    await expect.poll(() => fontPx(page, '#trace-name')).toBe(13 * 1.75);
    await page.keyboard.press('Control+Equal');
    await expect.poll(() => fontPx(page, '#trace-name')).toBe(26);
    await page.keyboard.press('Control+0');
    await expect.poll(() => fontPx(page, '#trace-name')).toBe(13);
    expect(viewer.errors).toEqual([]);
  });

  test('on a screen of pixel ratio 2, the zoomed chart has two device pixels per screen pixel each way', async () => {
    const context = await viewer.browser.newContext({ viewport: { width: 1920, height: 1080 }, deviceScaleFactor: 2 });
    try {
      const hi = await context.newPage();
      await hi.goto(viewer.server.pageUrl());
      await hi.waitForFunction(() => (window as unknown as { ccMemwrapView?: { ready: boolean } }).ccMemwrapView?.ready === true);
      await hi.selectOption('#zoom', '2');
      await expect.poll(() => fontPx(hi, '#trace-name')).toBe(26);
      const c = await canvasOf(hi);
      expect(c.dpr).toBe(2);
      expect(c.backingWidth).toBe(Math.round(c.width * 2));
      expect(c.backingHeight).toBe(Math.round(c.height * 2));
      await expect.poll(() => paintedPixels(hi)).toBeGreaterThan(80_000);
    } finally {
      await context.close();
    }
  });
});

/** The toolbar's rows: controls shown in it whose boxes share no height with a row before them start a new one. */
const toolbarRows = (page: Page): Promise<number> =>
  page.locator('#toolbar > *').evaluateAll((els) => {
    const rows: Array<[number, number]> = [];
    for (const r of els.filter((e) => e.getClientRects().length > 0).map((e) => e.getBoundingClientRect())) {
      const mid = r.top + r.height / 2;
      if (!rows.some(([top, bottom]) => mid >= top && mid <= bottom)) rows.push([r.top, r.bottom]);
    }
    return rows.length;
  });

for (const [width, height] of [[1366, 768], [1400, 900]] as const) {
  describe(`projector mode at ${width}×${height} and 200 %`, () => {
    let viewer: Viewer;
    let page: Page;

    beforeAll(async () => {
      ({ viewer, page } = await bstAt(width, height));
      await page.selectOption('#zoom', '2');
      await page.waitForFunction(() => parseFloat(getComputedStyle(document.getElementById('trace-name')!).fontSize) === 26);
    }, 120_000);
    afterAll(() => viewer?.close());

    test('the toolbar takes two rows, the chart and the panes below it fit, the panel tabs are on screen', async () => {
      await clickEvent(page, 20);
      expect(await toolbarRows(page)).toBeLessThanOrEqual(2);
      const tabs = await boxOf(page, '#panel-tabs');
      expect(tabs.y + tabs.height).toBeLessThanOrEqual(height);
      // Whole, not squeezed by the panel's body: the active tab's button inside the panels' box and the tab row.
      const panels = await boxOf(page, '#panels');
      const active = await boxOf(page, '#panel-tabs button.active');
      expect(active.y).toBeGreaterThanOrEqual(panels.y);
      expect(active.y + active.height).toBeLessThanOrEqual(tabs.y + tabs.height + 1);
      // A chart to read: its canvas, the detail pane and the panels' body each get room.
      expect((await canvasOf(page)).height).toBeGreaterThanOrEqual(180);
      expect((await boxOf(page, '#detail')).height).toBeGreaterThanOrEqual(100);
      expect((await boxOf(page, '#panel-body')).height).toBeGreaterThanOrEqual(60);
      // Nothing of the chart area spills over the panes below it (but the tooltip, which floats over them).
      const spill = await page.locator('#chart-area').evaluate((a) => {
        const bottom = a.getBoundingClientRect().bottom;
        return [...a.querySelectorAll('*')].filter((e) => !e.closest('#tooltip') && e.getBoundingClientRect().bottom > bottom + 1).map((e) => e.id || e.getAttribute('class'));
      });
      expect(spill).toEqual([]);
      await shot(page, `projector-${width}x${height}-200`);
      expect(viewer.errors).toEqual([]);
    });

    test('every text is scaled: the legend and its notes, the flame graph, the consumed chart', async () => {
      const toggle = page.locator('[data-role=legend-toggle]');
      if ((await page.locator('#legend.compact').count()) > 0) await toggle.click();
      await expect.poll(() => fontPx(page, '#legend .note')).toBe(22);
      expect(await fontPx(page, '#legend .key')).toBe(24);
      await shot(page, `projector-${width}x${height}-200-legend`);
      await toggle.click();
      await page.locator('#panel-tabs button[data-panel=flame]').click();
      await page.waitForSelector('svg.flame-graph text');
      expect(await fontPx(page, 'svg.flame-graph text')).toBe(22);
      // A frame's name is as tall as the row it sits in allows.
      const label = await boxOf(page, 'svg.flame-graph g.frame text');
      const frame = await boxOf(page, 'svg.flame-graph g.frame rect');
      expect(label.height).toBeLessThanOrEqual(frame.height + 1);
      await shot(page, `projector-${width}x${height}-200-flame`);
      await page.locator('#panel-tabs button[data-panel=consumed]').click();
      await page.waitForSelector('svg.consumed-chart .tick text');
      expect(await fontPx(page, 'svg.consumed-chart .tick text')).toBe(20);
      expect(await fontPx(page, '.consumed-legend li')).toBe(24);
      expect(viewer.errors).toEqual([]);
    });
  });
}

