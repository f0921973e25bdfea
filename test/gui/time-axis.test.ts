// The wall-time axis in real Chromium. A short run (test/programs/orphan-same-line.c, 12 events) has one timestamp
// for all its events, as the runtime reads the clock once every 256 records: choosing wall time keeps event order and
// says why, with distinct event ticks. A longer run (test/programs/timed-loop.c) gets the time axis it asks for.
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterEach, describe, expect, test } from 'vitest';
import { programsDir } from '../support/programs.js';
import { shot, traceProgram, viewerOn, type Viewer } from './browser.js';

/** The x axis's tick labels: every tick label that is not a byte count of the y axes. */
async function tickLabels(page: Page): Promise<string[]> {
  return (await page.locator('svg.axes .tick text').allTextContents()).filter((t) => !/B$/.test(t));
}

describe('the x axis in wall time', () => {
  let viewer: Viewer | undefined;
  afterEach(() => viewer?.close());

  test('a run whose events share one timestamp stays in event order and says why', async () => {
    viewer = await viewerOn(traceProgram(path.join(programsDir, 'orphan-same-line.c')).trace);
    const { page } = viewer;
    await page.selectOption('#x-mode', 'time');
    expect(await page.locator('#x-mode').inputValue()).toBe('events');
    expect(await page.locator('#status-line').textContent()).toBe(
      'Wall time not used: all 12 events share one timestamp (the runtime reads the clock once every 256 records of a thread, and this run is shorter); the x axis stays in event order.',
    );
    const ticks = await tickLabels(page);
    expect(ticks.length).toBeGreaterThan(5);
    expect(new Set(ticks).size).toBe(ticks.length);
    for (const t of ticks) expect(t).toMatch(/^\d+$/);
    await shot(page, 'time-axis-short-run');
    expect(viewer.errors).toEqual([]);
  });

  test('a run with many timestamps gets the time axis', async () => {
    viewer = await viewerOn(traceProgram(path.join(programsDir, 'timed-loop.c')).trace);
    const { page } = viewer;
    const before = await tickLabels(page);
    await page.selectOption('#x-mode', 'time');
    expect(await page.locator('#x-mode').inputValue()).toBe('time');
    expect(await page.locator('#status-line').textContent()).toBe('');
    const ticks = await tickLabels(page);
    expect(ticks).not.toEqual(before);
    expect(ticks.some((t) => /s$/.test(t))).toBe(true);
    expect(new Set(ticks).size).toBe(ticks.length);
    await shot(page, 'time-axis-long-run');
    expect(viewer.errors).toEqual([]);
  });
});
