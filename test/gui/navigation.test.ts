// Getting around the viewer by keyboard and zoom in real Chromium: search hands the keys back to the page after Enter, Escape or a click outside; deep zoom on a million-event trace keeps distinct tick labels and draws nothing over the y axis; keyboard zoom keeps the selected event in view.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { nextEventOfClass } from '../../analysis/event-sets.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import type { Model } from '../../analysis/model.js';
import { buildInstrumented, runTraced, samplesDir, scratch, traceOf } from '../support/programs.js';
import { shot, viewerOn, type Viewer } from './browser.js';

/** The event number the detail pane shows (its first fact reads "N · KIND …"), or null when nothing is selected. */
async function detailEvent(page: Page): Promise<number | null> {
  const facts = page.locator('#detail .facts dd').first();
  if ((await facts.count()) === 0) return null;
  return Number(/^(\d+) ·/.exec((await facts.textContent()) ?? '')?.[1] ?? NaN);
}

describe('search and the keyboard, on samples/linked-list.c', () => {
  let viewer: Viewer;
  let page: Page;
  let model: Model;

  beforeAll(async () => {
    const dir = scratch('gui-nav-search');
    const exe = path.join(dir, 'linked-list');
    buildInstrumented('gcc', ['-O0', '-g'], [path.join(samplesDir, 'linked-list.c')], exe);
    const ran = runTraced(exe, [], path.join(dir, 'traces'), { cwd: samplesDir });
    const traceFile = traceOf(path.join(dir, 'traces'), ran.pid);
    model = decodeTrace(new Uint8Array(readFileSync(traceFile)));
    viewer = await viewerOn(traceFile);
    page = viewer.page;
  });

  afterAll(() => viewer?.close());

  test('/, a name, Enter selects the first match and gives the keys back: n walks on, the box keeps its text', async () => {
    const results = page.locator('#search-results');
    await page.keyboard.press('/');
    await page.keyboard.type('main');
    await results.waitFor({ state: 'visible' });
    expect(await results.locator('li').first().textContent()).toContain('main');
    await shot(page, 'search-typed');
    await page.keyboard.press('Enter');
    await results.waitFor({ state: 'hidden' });
    const first = await detailEvent(page);
    expect(await page.locator('#detail h3').textContent()).toBe('ENTER main');
    // n: the next call after main's entry (make_node's), as on the page; nothing goes into the box and no list opens.
    await page.keyboard.press('n');
    await shot(page, 'search-enter-then-n');
    const next = nextEventOfClass(model, first!, 1, 'call');
    expect(next).not.toBeNull();
    expect(await detailEvent(page)).toBe(next);
    expect(await page.locator('#detail h3').textContent()).toBe('ENTER make_node');
    expect(await page.locator('#search').inputValue()).toBe('main');
    expect(await results.isHidden()).toBe(true);
    expect(viewer.errors).toEqual([]);
  });

  test('Enter on no match, Escape, or a click on the chart closes the list', async () => {
    const results = page.locator('#search-results');
    const search = page.locator('#search');
    // Each way of closing, then a walking key (the selection is a call: p goes back to main's entry, n on to make_node's).
    const cases: Array<[string, () => Promise<void>, 'n' | 'p']> = [
      ['Enter', () => page.keyboard.press('Enter'), 'p'],
      ['Escape', () => page.keyboard.press('Escape'), 'n'],
      [
        'a click on the chart',
        async () => {
          const box = (await page.locator('canvas.plot').boundingBox())!;
          await page.mouse.click(box.x + box.width / 2, box.y + 20);
        },
        'p',
      ],
    ];
    for (const [how, close, key] of cases) {
      await page.keyboard.press('/');
      await page.keyboard.press('Control+A');
      await page.keyboard.type('qqq');
      await results.waitFor({ state: 'visible' });
      expect(await results.textContent()).toContain('nothing matches “qqq”');
      const before = await detailEvent(page);
      await close();
      await results.waitFor({ state: 'hidden', timeout: 2000 }).catch(() => {
        throw new Error(`${how} left the list open`);
      });
      // The keys are the page's again: n and p walk, the box is not typed into.
      const typed = await search.inputValue();
      await page.keyboard.press(key);
      expect(await search.inputValue()).toBe(typed);
      expect(await results.isHidden()).toBe(true);
      if (how !== 'a click on the chart') {
        const expected = nextEventOfClass(model, before!, key === 'n' ? 1 : -1, 'call');
        expect(expected).not.toBeNull();
        expect(await detailEvent(page)).toBe(expected);
      }
    }
    await shot(page, 'search-closed');
    expect(viewer.errors).toEqual([]);
  });
});
