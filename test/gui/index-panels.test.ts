// Index mode's panels in real Chromium, on test/programs/bst.c forced into index mode beside the same trace in whole
// mode: every table panel shows the same text as whole mode's (their numbers come from the host's streamed panels'
// data, not a decoded trace), a table row jumps to its first event, Total peak to the peak the host found, the flame graph draws the same frames and a frame
// says why it cannot list its allocations, and the budgets panel shows the same ranges.
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { attribution } from '../../analysis/attribution.js';
import type { Model } from '../../analysis/model.js';
import { programsDir } from '../support/programs.js';
import { openPanel, panelText, selectedEvent, shot, wholeAndIndexed, type Viewer } from './browser.js';

const BUDGETS = { heap: 2048, stack: 600 };


describe('index mode panels', () => {
  let model: Model;
  let whole: Viewer;
  let indexed: Viewer;

  beforeAll(async () => {
    ({ model, whole, indexed } = await wholeAndIndexed(path.join(programsDir, 'bst.c'), 'index-panels', { budgets: BUDGETS }));
    // The panels come once the host has streamed the trace for them.
    await indexed.page.waitForSelector('#panel-tabs button[data-panel=function]', { timeout: 60_000 });
  }, 180_000);
  afterAll(async () => {
    await whole?.close();
    await indexed?.close();
  });

  test('every table shows what whole mode shows for the same trace', async () => {
    for (const name of ['function', 'site', 'thread', 'library', 'peak', 'leaks', 'linked', 'budgets', 'causes', 'stack', 'consumed', 'problems']) {
      await openPanel(whole.page, name);
      await openPanel(indexed.page, name);
      const a = await panelText(whole.page);
      expect(a.length, name).toBeGreaterThan(20);
      expect(await panelText(indexed.page), name).toBe(a);
    }
    // The summary's rows but the last (how the numbers were computed).
    const rows = async (page: Page): Promise<string[]> => {
      await openPanel(page, 'summary');
      return page.locator('#panel-body tr').allTextContents();
    };
    const [a, b] = [await rows(whole.page), await rows(indexed.page)];
    expect(b.slice(0, -1)).toEqual(a.slice(0, -1));
    expect(a.at(-1)).toMatch(/^Decoded in/);
    expect(b.at(-1)).toMatch(/^Computed in[\d.]+ s on the host as it streamed the trace/);
    await openPanel(indexed.page, 'function');
    await shot(indexed.page, 'index-panels-function');
    expect(whole.errors).toEqual([]);
    expect(indexed.errors).toEqual([]);
  });

  test('a column sorts the rows listed, in both modes alike', async () => {
    const model_ = model;
    const freed = new Map(attribution(model_, { by: 'site' }).rows.map((r) => [r.label, r.bytesFreed]));
    for (const v of [whole, indexed]) {
      await openPanel(v.page, 'site');
      await v.page.locator('#panel-body th', { hasText: /^bytes freed$/ }).click();
    }
    const labels = async (page: Page): Promise<string[]> => page.locator('#panel-body tbody tr td:first-child').allTextContents();
    const order = await labels(indexed.page);
    expect(order).toEqual(await labels(whole.page));
    const values = order.map((l) => freed.get(l)!);
    expect(values).toEqual([...values].sort((x, y) => y - x));
    expect(values).not.toEqual(attribution(model_, { by: 'site' }).rows.map((r) => r.bytesFreed));
    // Again: the other way round.
    for (const v of [whole, indexed]) await v.page.locator('#panel-body th', { hasText: /^bytes freed/ }).click();
    const up = await labels(indexed.page);
    expect(up).toEqual(await labels(whole.page));
    expect(up.map((l) => freed.get(l)!)).toEqual([...values].reverse());
    expect(await indexed.page.locator('#panel-body th[aria-sort=ascending]').textContent()).toBe('bytes freed');
  });

  test('while the host computes the panels, the page shows how far it is and the host\'s text report meanwhile', async () => {
    const page = await indexed.browser.newPage({ viewport: { width: 1400, height: 900 } });
    let computing = true;
    await page.route('**/api/index/panels', (route) =>
      computing ? route.fulfill({ json: { state: 'computing', fraction: 0.42, phase: 'the tables' } }) : route.continue(),
    );
    try {
      await page.goto(indexed.server.pageUrl());
      await expect.poll(() => page.locator('#panel-body p.empty').textContent(), { timeout: 30_000 }).toContain('(42 %, the tables)');
      await expect.poll(() => page.locator('#panel-body pre.report-text').textContent(), { timeout: 30_000 }).toContain('Heap by function');
      expect(await page.locator('#panel-tabs button[data-panel]').count()).toBe(0);
      await shot(page, 'index-panels-computing');
      computing = false;
      await page.waitForSelector('#panel-tabs button[data-panel=function]', { timeout: 30_000 });
      expect(await page.locator('#panel-body pre.report-text').count()).toBe(0);
    } finally {
      await page.close();
    }
  });

  test('a table row jumps to its first event and says why its events are not highlighted', async () => {
    const { page } = indexed;
    const first = new Map<string, number>();
    const rows = attribution(model, { by: 'function' }, (e, key) => first.has(key) || first.set(key, e)).rows;
    await openPanel(page, 'function');
    for (const i of [0, rows.length - 1]) {
      const row = rows[i]!;
      await page.locator('#panel-body tbody tr').nth(i).click();
      await expect.poll(() => selectedEvent(page), { timeout: 10_000 }).toBe(first.get(row.key));
      expect(await page.locator('#status-line').textContent()).toContain(`${row.label}: its first heap event, ${first.get(row.key)!.toLocaleString('en-US')}`);
    }
    // A leak row selects the leaked block's allocation, as in whole mode.
    await openPanel(page, 'leaks');
    await openPanel(whole.page, 'leaks');
    await page.locator('#panel-body tbody tr').first().click();
    await whole.page.locator('#panel-body tbody tr').first().click();
    await expect.poll(() => selectedEvent(whole.page)).not.toBeNull();
    await expect.poll(() => selectedEvent(page), { timeout: 10_000 }).toBe(await selectedEvent(whole.page));
    // The toolbar's Total peak goes to the event the host's peak fold found, as whole mode's does.
    await whole.page.locator('#peak').click();
    await page.locator('#peak').click();
    await expect.poll(() => selectedEvent(whole.page)).not.toBeNull();
    await expect.poll(() => selectedEvent(page), { timeout: 10_000 }).toBe(await selectedEvent(whole.page));
    await shot(page, 'index-panels-row-jump');
    expect(indexed.errors).toEqual([]);
  });

  test('the flame graph draws the same frames; a frame opens its source and says what it cannot do', async () => {
    const frames = async (page: Page): Promise<string[]> => {
      await openPanel(page, 'flame');
      await page.waitForSelector('svg.flame-graph g.frame');
      return page.locator('svg.flame-graph g.frame title').allTextContents();
    };
    const a = await frames(whole.page);
    expect(a.length).toBeGreaterThan(3);
    expect(await frames(indexed.page)).toEqual(a);
    const { page } = indexed;
    await page.locator('svg.flame-graph g.frame').nth(1).click();
    await expect.poll(() => page.locator('#status-line').textContent()).toMatch(/needs the whole trace decoded/);
    await shot(page, 'index-panels-flame');
    expect(indexed.errors).toEqual([]);
  });
});

describe('index mode wall-time axis', () => {
  let model: Model;
  let whole: Viewer;
  let indexed: Viewer;
  type TimeHandle = { events: number; hasEvents(a: number, b: number): boolean; eventClientX(e: number): number | null };

  beforeAll(async () => {
    ({ model, whole, indexed } = await wholeAndIndexed(path.join(programsDir, 'timed-loop.c'), 'index-time'));
  }, 180_000);
  afterAll(async () => {
    await whole?.close();
    await indexed?.close();
  });

  const ticks = async (page: Page): Promise<string[]> => (await page.locator('svg.axes .tick text').allTextContents()).filter((t) => !/B$/.test(t));

  test('wall time puts the events where whole mode puts them; the thread filter says why it is off', async () => {
    for (const v of [whole, indexed]) await v.page.selectOption('#x-mode', 'time');
    expect(await indexed.page.locator('#x-mode').inputValue()).toBe('time');
    const labels = await ticks(whole.page);
    expect(labels.some((t) => /s$/.test(t))).toBe(true);
    expect(await ticks(indexed.page)).toEqual(labels);
    // Once the events in view have come, each sits at its own time, as in whole mode.
    const n = model.events.count;
    // A zoom by 1 (the view unchanged) asks for the events in view, as any zoom or pan does.
    await indexed.page.evaluate(() => (window as unknown as { ccMemwrapView: { zoomBy(f: number): void } }).ccMemwrapView.zoomBy(1));
    await indexed.page.waitForFunction((count) => (window as unknown as { ccMemwrapView: TimeHandle }).ccMemwrapView.hasEvents(0, count), n);
    const xs = (page: Page): Promise<(number | null)[]> =>
      page.evaluate((count) => {
        const h = (window as unknown as { ccMemwrapView: TimeHandle }).ccMemwrapView;
        return [0, 1, Math.floor(count / 3), Math.floor(count / 2), count - 2].map((e) => h.eventClientX(e));
      }, n);
    const [a, b] = [await xs(whole.page), await xs(indexed.page)];
    expect(a.every((x) => x !== null), JSON.stringify([a, b])).toBe(true);
    b.forEach((x, i) => expect(x!).toBeCloseTo(a[i]!, 3));
    // The thread filter is on in index mode too (index-threads.test.ts draws with it).
    expect(await indexed.page.locator('#thread').isDisabled()).toBe(false);
    await shot(indexed.page, 'index-panels-wall-time');
    expect(indexed.errors).toEqual([]);
  });
});
