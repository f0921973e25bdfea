// Index mode while the host still builds the events of a trace's index (its second stage, held here until the test
// lets it go): the chart is drawn from the summaries at once, the page says "events: building N%", the panels come
// (their data needs the trace, not the events), the wall-time axis is off saying why (the summaries carry no times),
// an event jumped to waits for the events saying so in the detail pane, and once they are built the event's detail
// and its bars are shown, the notice is gone and the wall-time axis is on.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { bigTrace } from '../support/big-trace.js';
import { scratch } from '../support/programs.js';
import { paintedPixels, selectedEvent, shot, viewerOn, type Viewer } from './browser.js';

type Handle = { mode: string; events: number; hasEvents(a: number, b: number): boolean };

describe('index mode, summaries first', () => {
  let viewer: Viewer;
  let events: number;
  let release: () => void = () => {};

  beforeAll(async () => {
    const bytes = bigTrace(30_000);
    events = decodeTrace(bytes).events.count;
    const trace = path.join(scratch('index-first'), 'first.mwtrace');
    writeFileSync(trace, bytes);
    const gate = new Promise<void>((r) => (release = r));
    viewer = await viewerOn(trace, { index: true, beforeIndexEvents: () => gate });
  }, 120_000);
  afterAll(async () => {
    release();
    await viewer?.close();
  });

  test('the chart is drawn from the summaries while the events are built, and the page says so', async () => {
    const { page } = viewer;
    const h = await page.evaluate(() => {
      const v = (window as unknown as { ccMemwrapView: Handle }).ccMemwrapView;
      return { mode: v.mode, events: v.events };
    });
    expect(h).toEqual({ mode: 'index', events });
    expect(await paintedPixels(page)).toBeGreaterThan(5000);
    await expect.poll(() => page.locator('#events-state').isVisible()).toBe(true);
    expect(await page.locator('#events-state').textContent()).toMatch(/^events: building \d+% — /);
    await shot(page, 'index-mode-events-building');
  });

  test("the panels come while the events are built; the wall-time axis waits for them, saying why", async () => {
    const { page } = viewer;
    // The panels' data needs the trace, not the events: whole mode's panels while the events are still held.
    await page.waitForSelector('#panel-tabs button[data-panel=function]', { timeout: 60_000 });
    expect(await page.locator('#events-state').isVisible()).toBe(true);
    // The summaries carry no times yet: the wall-time choice is off, its title saying until when.
    const time = page.locator('#x-mode option[value=time]');
    expect(await time.isDisabled()).toBe(true);
    expect(await time.getAttribute('title')).toMatch(/^not yet: the chart's summaries are built first, without times .*the wall-time axis comes with the events$/);
  });

  test('an event jumped to waits for the events, saying so, then shows its detail and bars', async () => {
    const { page } = viewer;
    // The page's questions to the host of how far the events are.
    let polls = 0;
    page.on('request', (r) => void (new URL(r.url()).pathname.endsWith('/api/index') && polls++));
    const target = Math.floor(events * 0.6);
    await page.fill('#search', String(target));
    await page.press('#search', 'Enter');
    await expect.poll(() => page.locator('#detail').textContent()).toMatch(new RegExp(`^Event ${target.toLocaleString('en-US')}: events: building \\d+%`));
    // Held, not failed: still waiting after the page asked the host twice more how far the events are.
    const asked = polls;
    await expect.poll(() => polls, { timeout: 30_000 }).toBeGreaterThanOrEqual(asked + 2);
    expect(await selectedEvent(page)).toBeNull();
    expect(await page.locator('#error').isVisible()).toBe(false);
    release();
    await expect.poll(() => selectedEvent(page), { timeout: 60_000 }).toBe(target);
    await page.waitForFunction((e) => (window as unknown as { ccMemwrapView: Handle }).ccMemwrapView.hasEvents(e - 10, e + 10), target);
    await expect.poll(() => page.locator('#events-state').isVisible()).toBe(false);
    // With the events, the buckets' times: the wall-time axis is on and drawn.
    const time = page.locator('#x-mode option[value=time]');
    await expect.poll(() => time.isDisabled()).toBe(false);
    expect(await time.getAttribute('title')).toBe('');
    await page.selectOption('#x-mode', 'time');
    expect(await page.locator('#x-mode').inputValue()).toBe('time');
    expect(await page.locator('#status-line').textContent()).not.toMatch(/Wall time not used/);
    expect(await paintedPixels(page)).toBeGreaterThan(5000);
    expect(viewer.errors).toEqual([]);
  });
});
