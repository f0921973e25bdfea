// The heap axis a student can read, in real Chromium, on test/programs/timed-loop.c: 1,000 blocks of 32 B, then
// printf's 4 KiB stdio buffer at the end. The whole run's axis reaches past 4 KiB; zoomed into the loop, the axis fits
// the 32-byte blocks in view; sizes under 10 KiB print exactly; the buffer can be hidden with the "libc heap" toggle.
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Kind } from '../../analysis/trace/format.js';
import type { Model } from '../../analysis/model.js';
import { programsDir } from '../support/programs.js';
import { clickEvent, shot, traceProgram, viewerOn, type Viewer } from './browser.js';

const heapTicks = (page: Page): Promise<string[]> => page.locator('svg.axes g.y-heap .tick text').allTextContents();
/** "4,096 B" → 4096; a KiB or MiB label → NaN (the test wants exact bytes under 10 KiB). */
const bytesOf = (label: string): number => (/^[\d,]+ B$/.test(label) ? Number(label.replace(/[, B]/g, '')) : NaN);
/** The heap axis's top, once the chart has redrawn (zoom redraws on the next animation frame). */
const heapTop = async (page: Page): Promise<number> => Math.max(...(await heapTicks(page)).map(bytesOf));

describe('the heap axis fits what is in view (test/programs/timed-loop.c)', () => {
  let viewer: Viewer;
  let page: Page;
  let model: Model;

  beforeAll(async () => {
    const run = traceProgram(path.join(programsDir, 'timed-loop.c'));
    model = run.model;
    viewer = await viewerOn(run.trace);
    page = viewer.page;
  });

  afterAll(() => viewer?.close());

  test('the whole run: the axis reaches the stdio buffer, in exact bytes', async () => {
    const ticks = (await heapTicks(page)).map(bytesOf);
    expect(ticks.every((t) => Number.isInteger(t))).toBe(true);
    expect(Math.max(...ticks)).toBeGreaterThanOrEqual(4096);
  });

  test('zoomed into the loop, the axis fits its 32-byte blocks', async () => {
    let alloc = -1;
    for (let e = 0, n = 0; e < model.events.count; e++) if (model.events.kind[e] === Kind.ALLOC && ++n === 200) alloc = e;
    await clickEvent(page, alloc);
    for (let i = 0; i < 4; i++) await page.locator('body').press('+');
    await expect.poll(() => heapTop(page)).toBeLessThanOrEqual(64);
    const ticks = (await heapTicks(page)).map(bytesOf);
    expect(ticks.every((t) => Number.isInteger(t))).toBe(true);
    expect(Math.max(...ticks)).toBeGreaterThanOrEqual(32);
    expect(await page.locator('.facts').textContent()).toContain('heap 32 B (usable 40 B)');
    await shot(page, 'heap-axis-zoomed');
    // Back to the whole run: the axis reaches the buffer again.
    await page.locator('body').press('0');
    await expect.poll(() => heapTop(page)).toBeGreaterThanOrEqual(4096);
    expect(viewer.errors).toEqual([]);
  });

  test('unticking "libc heap" hides the stdio buffer from the chart and says what was hidden', async () => {
    await page.locator('body').press('0');
    await page.locator('#show-libc').uncheck();
    await expect.poll(() => heapTop(page)).toBeLessThanOrEqual(64);
    expect(await page.locator('#status-line').textContent()).toMatch(
      /^Hidden: 1 block allocated inside libc or uninstrumented code, at most [\d,]+ B live at once \(counted in the Summary's totals\)\.$/,
    );
    await shot(page, 'heap-axis-libc-hidden');
    await page.locator('#show-libc').check();
    await expect.poll(() => heapTop(page)).toBeGreaterThanOrEqual(4096);
    expect(await page.locator('#status-line').textContent()).toBe('');
    expect(viewer.errors).toEqual([]);
  });
});
