// The viewer in index mode (a trace opened through the host's index, as large traces are) in real Chromium, on
// test/programs/bst.c forced into index mode: the chart draws from the summaries, the events in view arrive when
// zoomed in, a click shows the same detail (numbers, stack, blocks) as the whole-trace viewer shows for that event,
// and an event number typed in the search box jumps to it.
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Model } from '../../analysis/model.js';
import { Kind } from '../../analysis/trace/format.js';
import { programsDir } from '../support/programs.js';
import { clickEvent, paintedPixels, selectedEvent, shot, wholeAndIndexed, type Viewer } from './browser.js';

type Handle = { mode: string; events: number; selected: number | null; hasEvents(a: number, b: number): boolean; hasFine(a: number, b: number): boolean; zoomToEvents(a: number, b: number): void };

/** Zooms to a few events around `e` and waits until they are drawn one by one (index mode: fetched). */
async function zoomAround(page: Page, e: number): Promise<void> {
  await page.evaluate((n) => (window as unknown as { ccMemwrapView: Handle }).ccMemwrapView.zoomToEvents(Math.max(0, n - 10), n + 10), e);
  await page.waitForFunction((n) => {
    const h = (window as unknown as { ccMemwrapView: Handle }).ccMemwrapView;
    return h.mode !== 'index' || h.hasEvents(Math.max(0, n - 10), Math.min(h.events, n + 10));
  }, e);
}

/** Clicks event e and returns the detail pane's text once it shows e. */
async function detailOf(page: Page, e: number): Promise<string> {
  await zoomAround(page, e);
  await clickEvent(page, e);
  await expect.poll(() => selectedEvent(page)).toBe(e);
  return (await page.locator('#detail').textContent()) ?? '';
}

describe('index mode', () => {
  let model: Model;
  let whole: Viewer;
  let indexed: Viewer;

  beforeAll(async () => {
    ({ model, whole, indexed } = await wholeAndIndexed(path.join(programsDir, 'bst.c'), 'index-mode'));
  }, 120_000);
  afterAll(async () => {
    await whole?.close();
    await indexed?.close();
  });

  test('draws the chart from the summaries, all events counted', async () => {
    const { page } = indexed;
    const h = await page.evaluate(() => {
      const v = (window as unknown as { ccMemwrapView: Handle }).ccMemwrapView;
      return { mode: v.mode, events: v.events };
    });
    expect(h).toEqual({ mode: 'index', events: model.events.count });
    expect(await paintedPixels(page)).toBeGreaterThan(5000);
    expect(await page.locator('#trace-name').textContent()).toContain('through its index');
    await shot(page, 'index-mode-bst');
  });

  test('the fine summaries of the part in view arrive when a bucket is wider than a column', async () => {
    const { page } = indexed;
    const n = model.events.count;
    const [a, b] = [Math.floor(n / 4), Math.floor(n / 2)];
    await page.evaluate(([x, y]) => (window as unknown as { ccMemwrapView: Handle }).ccMemwrapView.zoomToEvents(x!, y!), [a, b]);
    await page.waitForFunction(([x, y]) => (window as unknown as { ccMemwrapView: Handle }).ccMemwrapView.hasFine(x!, y!), [a, b]);
    expect(await paintedPixels(page)).toBeGreaterThan(1000);
    expect(indexed.errors).toEqual([]);
  });

  test('a click shows the same detail as the whole-trace viewer', async () => {
    const pick = (kind: number, nth: number): number => {
      let seen = 0;
      for (let e = 0; e < model.events.count; e++) if (model.events.kind[e] === kind && seen++ === nth) return e;
      throw new Error(`no ${nth}th event of kind ${kind}`);
    };
    const events = [pick(Kind.ALLOC, 3), pick(Kind.FREE, 2), pick(Kind.ENTER, 7), pick(Kind.EXIT, 5), model.events.count - 2];
    for (const e of events) {
      const a = await detailOf(whole.page, e);
      const b = await detailOf(indexed.page, e);
      expect(b, `event ${e}`).toBe(a);
      expect(b).toContain(`${e} · `);
    }
    expect(whole.errors).toEqual([]);
    expect(indexed.errors).toEqual([]);
  });

  test('an event number in the search box jumps to it', async () => {
    const { page } = indexed;
    const target = Math.floor(model.events.count * 0.7);
    await page.evaluate(() => (window as unknown as { ccMemwrapView: Handle }).ccMemwrapView.zoomToEvents(0, 1e9));
    await page.fill('#search', String(target));
    await expect.poll(() => page.locator('#search-results li.jump').textContent()).toBe(`Go to event ${target.toLocaleString('en-US')}`);
    await page.press('#search', 'Enter');
    await expect.poll(() => selectedEvent(page)).toBe(target);
    const shown = await page.evaluate(() => (window as unknown as { ccMemwrapView: { visibleEvents(): [number, number] } }).ccMemwrapView.visibleEvents());
    expect(shown[0]).toBeLessThanOrEqual(target);
    expect(shown[1]).toBeGreaterThan(target);
    expect(shown[1] - shown[0]).toBeLessThan(1000);
    await page.fill('#search', String(model.events.count + 5));
    await expect.poll(() => page.locator('#search-results li.jump').textContent()).toMatch(/^No event .*: the trace has /);
    expect(indexed.errors).toEqual([]);
  });
});
