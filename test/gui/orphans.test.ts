// Orphans as a student sees them in real Chromium, on test/programs/orphan-same-line.c: the free at line 26 releases
// one node from line 15 and orphans another from the same line. Both notes stand on line 15; the orphan is drawn in a
// colour of its own on the chart and named in the legend; its entry in the detail pane jumps to its allocation event,
// whose detail names the free that orphaned it, and that jumps back.
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Kind } from '../../analysis/trace/format.js';
import type { Model } from '../../analysis/model.js';
import { siteInfo } from '../../analysis/sites.js';
import { MARK_COLOURS } from '../../gui/renderer/src/chart/palette.js';
import { programsDir } from '../support/programs.js';
import { clickEvent, selectedEvent, shot, traceProgram, viewerOn, type Viewer } from './browser.js';

/** The events of `kind` recorded at `line`, in order. */
function eventsAt(model: Model, kind: number, line: number): number[] {
  const out: number[] = [];
  for (let e = 0; e < model.events.count; e++) {
    if (model.events.kind[e] === kind && siteInfo(model, model.events.site[e]!)?.line === line) out.push(e);
  }
  return out;
}

/** Canvas pixels within a small distance of `hex` (the marks are drawn antialiased). */
function pixelsOf(page: Page, hex: string): Promise<number> {
  const want = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
  return page.evaluate((rgb) => {
    const c = document.querySelector('canvas.plot') as HTMLCanvasElement;
    const px = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < px.length; i += 4) {
      if (px[i + 3]! > 200 && Math.abs(px[i]! - rgb[0]!) + Math.abs(px[i + 1]! - rgb[1]!) + Math.abs(px[i + 2]! - rgb[2]!) < 24) n++;
    }
    return n;
  }, want);
}

describe('orphans in the viewer (test/programs/orphan-same-line.c)', () => {
  let viewer: Viewer;
  let page: Page;
  let model: Model;
  let free: number;
  let tailAlloc: number;
  let headAlloc: number;

  beforeAll(async () => {
    const run = traceProgram(path.join(programsDir, 'orphan-same-line.c'));
    expect(run.stdout).toBe('head=1 tail=2\n');
    model = run.model;
    [tailAlloc, headAlloc] = eventsAt(model, Kind.ALLOC, 15) as [number, number];
    [free] = eventsAt(model, Kind.FREE, 26) as [number];
    viewer = await viewerOn(run.trace);
    page = viewer.page;
  });

  afterAll(() => viewer?.close());

  test('the free shows both notes on line 15, and the orphan in its own colour on the chart and in the legend', async () => {
    expect(await pixelsOf(page, MARK_COLOURS.orphaned)).toBe(0);
    await clickEvent(page, free);
    await page.waitForSelector('[data-role=allocation-of-free]');
    const line15 = page.locator('.code .ln[data-line="15"]');
    expect(await line15.locator('.note').allTextContents()).toEqual(['allocated the freed block', 'linked block, orphaned by this free']);
    expect(await line15.getAttribute('class')).toBe('ln orphaned');
    expect(await page.locator('.code .ln.selected').getAttribute('data-line')).toBe('26');
    expect(await pixelsOf(page, MARK_COLOURS.orphaned)).toBeGreaterThan(20);
    expect(await pixelsOf(page, MARK_COLOURS.related)).toBeGreaterThan(20);
    expect(await page.locator('#legend').textContent()).toContain('orphaned by the free');
    await shot(page, 'orphans-free');
  });

  test('the orphan\'s entry jumps to its allocation, which names the free that orphaned it; that jumps back', async () => {
    await clickEvent(page, free);
    const entry = page.locator('ul.linked li');
    expect(await entry.count()).toBe(1);
    expect(await entry.first().textContent()).toContain(`orphan-same-line.c:15 new_node → malloc (event ${tailAlloc})`);
    await entry.first().locator('button').click();
    expect(await selectedEvent(page)).toBe(tailAlloc);
    const by = page.locator('[data-role=orphaned-by]');
    expect(await by.textContent()).toBe(`orphaned by the free at event ${free} (orphan-same-line.c:26 main → free)`);
    await shot(page, 'orphans-allocation');
    await by.locator('button').click();
    expect(await selectedEvent(page)).toBe(free);
    // The released node's allocation was freed, not orphaned: its detail names no orphaning free.
    await clickEvent(page, headAlloc);
    await page.waitForSelector('[data-role=free-of-allocation]');
    expect(await page.locator('[data-role=orphaned-by]').count()).toBe(0);
  });
});
