// The viewer end to end in real Chromium on a real trace of samples/linked-list.c: the chart draws; hovering a bar shows its tooltip; clicking a malloc bar opens its exact line; clicking the middle free marks the allocation it released and lists the third node it orphaned; a leak row jumps to its allocation; rows, search, keys and export work.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Kind } from '../../analysis/trace/format.js';
import type { Model } from '../../analysis/model.js';
import { siteInfo } from '../../analysis/sites.js';
import { formatBytesFine } from '../../analysis/units.js';
import { samplesDir } from '../support/programs.js';
import { buildRenderer, clickEvent, hoverEvent, openViewer, paintedPixels, plotPicture, selectedEvent, serve, shot, traceProgram, viewerOn, type Viewer } from './browser.js';

/** The first event of `kind` recorded at `line` of the sample. */
function eventAt(model: Model, kind: number, line: number): number {
  for (let e = 0; e < model.events.count; e++) {
    if (model.events.kind[e] === kind && siteInfo(model, model.events.site[e]!)?.line === line) return e;
  }
  throw new Error(`no ${kind} event at line ${line}`);
}

describe('viewer on samples/linked-list.c', () => {
  let viewer: Viewer;
  let browser: Browser;
  let page: Page;
  let model: Model;
  let traceFile: string;
  let errors: string[];

  beforeAll(async () => {
    // Run in samples/ so the recorded working directory (the source root) holds the source.
    ({ trace: traceFile, model } = traceProgram(path.join(samplesDir, 'linked-list.c')));
    viewer = await viewerOn(traceFile);
    ({ browser, page, errors } = viewer);
  });

  afterAll(() => viewer?.close());

  test('the chart draws bars on the canvas, with axes and legend', async () => {
    const painted = await paintedPixels(page);
    expect(painted).toBeGreaterThan(20_000);
    expect(await page.locator('svg.axes .tick').count()).toBeGreaterThan(5);
    expect(await page.locator('#legend').textContent()).toContain('allocation');
    // Everything drawn is in the legend: the summarised columns' dark part, the rows of event kinds, the overview strip.
    expect(await page.locator('#legend').textContent()).toContain('darker: the smallest in a column');
    expect(await page.locator('#legend').textContent()).toContain('rows under the plot: the kinds of event in a column');
    expect(await page.locator('#legend').textContent()).toContain('strip under the axis: the whole run (drag to zoom)');
    expect(await page.locator('#trace-name').textContent()).toContain(`${model.events.count} events`);
    await shot(page, 'linked-list-chart');
    expect(errors).toEqual([]);
  });

  test('clicking a malloc bar opens its exact source line, highlighted, with the call stack', async () => {
    const alloc = eventAt(model, Kind.ALLOC, 23); // make_node's malloc
    await clickEvent(page, alloc);
    await page.waitForSelector('.code .ln.selected');
    expect(await page.locator('.code .ln.selected').getAttribute('data-line')).toBe('23');
    expect(await page.locator('.code .ln.selected .text').textContent()).toContain('malloc(sizeof *n)');
    expect(await page.locator('#source-head').textContent()).toContain('linked-list.c');
    expect(await page.locator('.code .tok-keyword').count()).toBeGreaterThan(5);
    const stack = await page.locator('ol.stack li').allTextContents();
    expect(stack[0]).toContain('make_node');
    expect(stack[1]).toContain('main');
    expect(await page.locator('[data-role=free-of-allocation]').textContent()).toMatch(/freed at event \d+/);
    expect(await selectedEvent(page)).toBe(alloc);
    await shot(page, 'linked-list-malloc');
  });

  test('hovering a bar shows that event beside the pointer: kind, place, size, memory after it; leaving hides it', async () => {
    const alloc = eventAt(model, Kind.ALLOC, 23); // make_node's malloc
    const enter = eventAt(model, Kind.ENTER, 22); // make_node's entry
    const tip = page.locator('#tooltip');
    for (const [e, kind, place, size] of [
      [alloc, 'ALLOC', 'linked-list.c:23 make_node → malloc', 'size 16 B'],
      [enter, 'ENTER', 'linked-list.c:22 make_node', `stack at entry ${formatBytesFine(model.events.value[enter]!)}`],
    ] as const) {
      await hoverEvent(page, e);
      await tip.waitFor({ state: 'visible' });
      const lines = await tip.locator(':scope > *').allTextContents();
      expect(lines[0]).toBe(`${kind} · event ${e}`);
      expect(lines[1]).toBe(place);
      expect(lines[2]).toBe(size);
      const ev = model.events;
      expect(lines[3]).toBe(`heap ${formatBytesFine(ev.heapRequested[e]!)} · stack ${formatBytesFine(ev.stack[e]!)} · static 0 B`);
      expect(lines).toHaveLength(5);
      // Beside the pointer: its top left corner just below and right of it.
      const x = (await page.evaluate((n) => (window as unknown as { ccMemwrapView: { eventClientX(e: number): number } }).ccMemwrapView.eventClientX(n), e))!;
      const box = (await tip.boundingBox())!;
      expect(box.x - x).toBeGreaterThan(0);
      expect(box.x - x).toBeLessThan(30);
    }
    await page.mouse.move(1, 1);
    await tip.waitFor({ state: 'hidden' });
  });

  test('clicking the middle free marks its allocation and lists the orphaned third node with its line', async () => {
    const free = eventAt(model, Kind.FREE, 38);
    const allocMiddle = eventAt(model, Kind.ALLOC, 32);
    await clickEvent(page, free);
    await page.waitForSelector('[data-role=allocation-of-free]');
    expect(await page.locator('.code .ln.selected').getAttribute('data-line')).toBe('38');
    expect(await page.locator('[data-role=allocation-of-free]').textContent()).toContain(`linked-list.c:32 main → malloc (event ${allocMiddle}`);
    expect(await page.locator('.code .ln.related[data-line="32"] .note').textContent()).toBe('allocated the freed block');
    const linked = page.locator('ul.linked li');
    expect(await linked.count()).toBe(1);
    expect(await linked.first().textContent()).toContain('linked-list.c:33 main → malloc');
    expect(await linked.first().getAttribute('class')).toBe('orphaned');
    expect(await page.locator('.code .ln.orphaned[data-line="33"] .note').textContent()).toContain('orphaned');
    await shot(page, 'linked-list-free');
    // The allocation it released is a link: following it selects that event.
    await page.locator('[data-role=allocation-of-free] button').click();
    expect(await selectedEvent(page)).toBe(allocMiddle);
  });

  test('a leak row jumps to its allocation, which says it was never freed', async () => {
    await page.locator('#panel-tabs button[data-panel=leaks]').click();
    const row = page.locator('#panel-body tr.clickable', { hasText: 'linked-list.c:33' });
    expect(await row.locator('td').first().textContent()).toBe('direct leak');
    await row.click();
    const alloc = eventAt(model, Kind.ALLOC, 33);
    expect(await selectedEvent(page)).toBe(alloc);
    await page.waitForSelector('.code .ln.selected[data-line="33"]');
    expect(await page.locator('.never-freed').textContent()).toBe('never freed — direct leak');
    await shot(page, 'linked-list-leak');
  });

  test('a function row highlights its events; search and keys walk the events', async () => {
    await page.locator('#panel-tabs button[data-panel=function]').click();
    await page.locator('#panel-body tr.clickable', { hasText: 'make_node' }).click();
    expect(await page.locator('#status-line').textContent()).toMatch(/make_node: 1 event highlighted/);
    await page.locator('#search').fill('make_node');
    await page.locator('#search-results li').first().click();
    const enter = eventAt(model, Kind.ENTER, 22);
    expect(await selectedEvent(page)).toBe(enter);
    // a: walk allocations; n: the next one (make_node's malloc), p twice: back past it to the one before the call.
    await page.locator('body').press('a');
    await page.locator('body').press('n');
    const selected = () => selectedEvent(page);
    expect(await selected()).toBe(eventAt(model, Kind.ALLOC, 23));
    await page.locator('body').press('p');
    expect(await selected()).toBe(eventAt(model, Kind.ALLOC, 33));
    await page.locator('body').press('k');
    expect(await page.locator('.facts').textContent()).toMatch(/heap 4,\d{3} B \(usable /);
  });

  test('wall time on this one-timestamp run and the thread filter on its one thread leave the picture as it was', async () => {
    // This short run's events share one timestamp (the runtime reads the clock once every 256 records): wall time is
    // not used, the status line says why, and the chart keeps its pixels. (test/gui/vocabulary.test.ts redraws a
    // longer run in wall time.)
    const byEvents = await plotPicture(page);
    await page.locator('#x-mode').selectOption('time');
    expect(await page.locator('#status-line').textContent()).toMatch(/^Wall time not used: all \d+ events share one timestamp/);
    expect(await page.locator('#x-mode').inputValue()).toBe('events');
    await shot(page, 'linked-list-wall-time');
    expect(await plotPicture(page)).toBe(byEvents);
    // One thread: its own chart is the whole run's, pixel for pixel, and its bars still select.
    await page.locator('#thread').selectOption('0');
    expect(await plotPicture(page)).toBe(byEvents);
    const alloc = eventAt(model, Kind.ALLOC, 23);
    await clickEvent(page, alloc);
    expect(await selectedEvent(page)).toBe(alloc);
    await page.locator('#thread').selectOption('all');
  });

  test('the chart exports as SVG and PNG', async () => {
    const [svg] = await Promise.all([page.waitForEvent('download'), page.locator('#export-svg').click()]);
    const text = readFileSync((await svg.path())!, 'utf8');
    expect(text.startsWith('<svg')).toBe(true);
    expect(text).toContain('<rect');
    const [png] = await Promise.all([page.waitForEvent('download'), page.locator('#export-png').click()]);
    expect(readFileSync((await png.path())!).subarray(1, 4).toString()).toBe('PNG');
    expect(errors).toEqual([]);
  });

  test('a trace opened from the page (file input, drop) finds its sources in a chosen folder; the recent list reopens the served one', async () => {
    const selected = () => selectedEvent(page);
    const ready = () => page.waitForFunction(() => (window as unknown as { ccMemwrapView: { ready: boolean } }).ccMemwrapView.ready);
    await page.locator('#open-file').setInputFiles(traceFile);
    await ready();
    expect(await selected()).toBeNull();
    const alloc = eventAt(model, Kind.ALLOC, 23);
    await clickEvent(page, alloc);
    // The page has no host for this file: the source is missing, and says how to find it.
    await page.waitForSelector('#source-body .missing');
    expect(await page.locator('#source-body .missing').textContent()).toContain('choose its source folder');
    await page.locator('#reroot-dir').setInputFiles(samplesDir);
    await page.waitForSelector('.code .ln.selected[data-line="23"]');
    expect(await page.locator('#source-head').textContent()).toContain('linked-list.c');
    await shot(page, 'linked-list-rerooted');

    // Dropped on the page.
    const bytes = Array.from(readFileSync(traceFile));
    await page.evaluate((b) => {
      const dt = new DataTransfer();
      dt.items.add(new File([new Uint8Array(b)], 'dropped.mwtrace'));
      window.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, cancelable: true }));
    }, bytes);
    await page.waitForFunction(() => document.getElementById('trace-name')?.textContent?.startsWith('dropped.mwtrace'));
    await ready();

    // The recent list: the host's trace again, with its sources.
    await page.locator('#recent').selectOption(traceFile);
    await page.waitForFunction((name) => document.getElementById('trace-name')?.textContent?.startsWith(name), path.basename(traceFile));
    await ready();
    await clickEvent(page, alloc);
    await page.waitForSelector('.code .ln.selected[data-line="23"]');
    expect(errors).toEqual([]);
  });

  test('budgets are drawn and their exceeded ranges listed', async () => {
    const budgeted = await serve(await buildRenderer(), traceFile, { budgets: { heap: 1024, stack: 256 } });
    try {
      const p = await openViewer(browser, budgeted.pageUrl(), errors);
      await p.locator('#panel-tabs button[data-panel=budgets]').click();
      const rows = await p.locator('#panel-body tr.clickable').allTextContents();
      expect(rows.some((r) => r.startsWith('heap ≤ 1.0 KiB') && r.includes('exceeded'))).toBe(true);
      expect(rows.some((r) => r.startsWith('stack ≤ 256 B') && r.includes('exceeded'))).toBe(true);
      await shot(p, 'linked-list-budgets');
      await p.close();
    } finally {
      await budgeted.close();
    }
    expect(errors).toEqual([]);
  });
});
