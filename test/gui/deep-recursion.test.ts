// A recursion 100,000 calls deep in real Chromium, in the HTML report (the trace decoded in the page's worker) and in the
// viewer through the index: the page shows its chart, the flame graph cut at MAX_PATH_DEPTH frames (its last frame the
// folded one), and the deepest event's detail with its call stack, without a page error.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEEPER_FRAMES } from '../../analysis/call-paths.js';
import { writeSessionReport } from '../../host/html-report.js';
import { TraceSession } from '../../host/trace-session.js';
import { deepRecursionTrace } from '../fixtures/scenarios.js';
import { scratch } from '../support/programs.js';
import { buildReportTemplate, launch, openPanel, openReportFile, selectedEvent, shot, viewerOn, type Viewer } from './browser.js';

const DEPTH = 100_000;
const dir = scratch('gui-deep-recursion');
const trace = path.join(dir, 'deep.mwtrace');

/** The flame graph's frames named `name`. */
const framesNamed = (page: Page, name: string) => page.locator('svg.flame-graph g.frame').filter({ has: page.locator('text', { hasText: name }) });

/** Jumps to event `e` by the search box (a number is an event) and waits until the detail pane shows it. */
async function showEvent(page: Page, e: number): Promise<void> {
  await page.locator('#search').fill(String(e));
  await page.locator('#search-results li.jump').click();
  await expect.poll(() => selectedEvent(page), { timeout: 60_000 }).toBe(e);
}

/** The checks both pages pass: the flame graph's folded frame, and the deepest call's stack listed. */
async function checkDeep(page: Page, errors: string[]): Promise<void> {
  await openPanel(page, 'flame');
  await expect.poll(() => framesNamed(page, DEEPER_FRAMES).count(), { timeout: 60_000 }).toBeGreaterThan(0);
  // The deepest ENTER: every frame open, innermost first.
  await showEvent(page, 2 * DEPTH);
  await expect.poll(() => page.locator('#detail ol.stack').count()).toBe(1);
  // Listed by its ends: the innermost and outermost frames, the ones between counted.
  expect(await page.locator('#detail ol.stack li.stack-gap').textContent()).toBe(`… ${(DEPTH + 1 - 200).toLocaleString('en-US')} more frames, not listed (${(DEPTH + 1).toLocaleString('en-US')} open in all) …`);
  expect(await page.locator('#detail ol.stack > li').count()).toBe(201);
  expect(errors).toEqual([]);
}

describe(`a recursion ${DEPTH.toLocaleString('en-US')} calls deep`, () => {
  beforeAll(() => writeFileSync(trace, deepRecursionTrace(DEPTH).build()));

  describe('the HTML report, the trace decoded in the page', () => {
    let browser: Browser;
    let page: Page;
    const errors: string[] = [];
    beforeAll(async () => {
      const report = path.join(dir, 'deep.html');
      await writeSessionReport(await TraceSession.open(trace, { index: false }), report, await buildReportTemplate());
      browser = await launch();
      page = await openReportFile(browser, report, errors, []);
    }, 180_000);
    afterAll(() => browser?.close());

    test('the flame graph folds the frames below the limit; the deepest call shows its stack', async () => {
      await checkDeep(page, errors);
      await shot(page, 'deep-recursion-report');
    }, 120_000);
  });

  describe('the viewer, the trace read through its index', () => {
    let viewer: Viewer;
    beforeAll(async () => {
      viewer = await viewerOn(trace, { index: true, cacheDir: path.join(dir, 'deep.mwcache') });
    }, 180_000);
    afterAll(() => viewer?.close());

    test('the flame graph folds the frames below the limit; the deepest call shows its stack', async () => {
      await checkDeep(viewer.page, viewer.errors);
    }, 180_000);
  });
});
