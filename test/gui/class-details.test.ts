// What a student still tripped on in the viewer, in real Chromium on test/programs/bst.c: the keys still walk the
// events after a click on the "libc heap" box; the grey of the run's end has its legend key; the flame graph's search
// box shows its whole hint; `report --by function` and the viewer's By function table name the same counts with the
// same words (the string builder's reallocs: 2 allocations, 2 frees, 2 realloc calls); and, on
// test/programs/left-out.c, the Summary names the functions built with --mw-no-calls as the report does.
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Model } from '../../analysis/model.js';
import { Kind } from '../../analysis/trace/format.js';
import { runReport } from '../../cli/report.js';
import { capture } from '../fixtures/cli-capture.js';
import { programsDir } from '../support/programs.js';
import { clickEvent, openPanel, panelText, selectedEvent, shot, traceProgram, viewerOn, type Viewer } from './browser.js';

/** The rows of the open panel's table, each as its cells' texts. */
const tableRows = (page: Page): Promise<string[][]> => page.$$eval('#panel-body table.rows tr', (trs) => trs.map((tr) => [...tr.children].map((c) => (c.textContent ?? '').trim())));

describe('the viewer on test/programs/bst.c', () => {
  let viewer: Viewer;
  let page: Page;
  let model: Model;
  let trace: string;

  beforeAll(async () => {
    ({ trace, model } = traceProgram(path.join(programsDir, 'bst.c')));
    viewer = await viewerOn(trace);
    page = viewer.page;
  }, 120_000);
  afterAll(() => viewer?.close());

  test('after a click on the libc heap box the keys still walk the events', async () => {
    const allocs: number[] = [];
    for (let e = 0; e < model.events.count; e++) if (model.events.kind[e] === Kind.ALLOC || model.events.kind[e] === Kind.REALLOC) allocs.push(e);
    await clickEvent(page, allocs[1]!);
    expect(await selectedEvent(page)).toBe(allocs[1]);
    await page.locator('#show-libc').click();
    expect(await page.locator('#show-libc').isChecked()).toBe(false);
    await page.keyboard.press('n');
    await expect.poll(() => selectedEvent(page)).toBe(allocs[2]);
    await page.locator('#show-libc').click();
    await page.keyboard.press('p');
    await expect.poll(() => selectedEvent(page)).toBe(allocs[1]);
    expect(viewer.errors).toEqual([]);
  });

  test("the grey of the run's end has a key in the legend, the colour of its bar", async () => {
    const end = model.events.count - 1;
    expect(model.events.kind[end]).toBe(Kind.END);
    const key = page.locator('#legend .key', { hasText: 'the run’s end' });
    expect(await key.textContent()).toBe('thread start or end, static object, the run’s end');
    const swatch = await key.locator('.swatch').evaluate((s) => getComputedStyle(s).backgroundColor);
    // The END bar's own pixel, just below the axis (the stack is empty at the end; the leaked blocks are not).
    const bar = await page.evaluate((e) => {
      const h = (window as unknown as { ccMemwrapView: { eventClientX(e: number): number | null; plotClientY(s: string): number } }).ccMemwrapView;
      const c = document.querySelector('canvas.plot') as HTMLCanvasElement;
      const r = c.getBoundingClientRect();
      const k = c.width / r.width;
      const [x, y] = [Math.round((h.eventClientX(e)! - r.left) * k), Math.round((h.plotClientY('heap') - r.top) * k)];
      const px = c.getContext('2d')!.getImageData(x, y, 1, 1).data;
      return `rgb(${px[0]}, ${px[1]}, ${px[2]})`;
    }, end);
    expect(bar).toBe(swatch);
  });

  test("the flame graph's search box shows its whole hint", async () => {
    await openPanel(page, 'flame');
    const box = page.locator('[data-role=flame-search]');
    await box.waitFor();
    const fits = await box.evaluate((input: HTMLInputElement) => {
      const style = getComputedStyle(input);
      const ctx = document.createElement('canvas').getContext('2d')!;
      ctx.font = `${style.fontSize} ${style.fontFamily}`;
      const room = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
      return { text: input.placeholder, width: ctx.measureText(input.placeholder).width, room };
    });
    expect(fits.text).toBe('Mark frames: function or file');
    expect(fits.width).toBeLessThanOrEqual(fits.room);
    await shot(page, 'flame-search-hint');
  });

  test('report --by function and the By function table: the same counts under the same words', async () => {
    const r = await capture(runReport, [trace, '--by', 'function']);
    expect(r.code, r.err).toBe(0);
    const text = r.out.slice(r.out.indexOf('Heap by function'));
    const head = text.split('\n')[1]!.trim().split(/\s{2,}/);
    expect(head).toEqual(['net', 'min', 'max', 'allocations', 'frees', 'realloc calls']);
    // append's row: its label line, then its numbers.
    const lines = text.split('\n');
    const at = lines.findIndex((l) => /^ {2}bst\.c:\d+ append$/.test(l));
    const numbers = lines[at + 1]!.trim().split(/\s{2,}/);
    expect(numbers.slice(3)).toEqual(['2', '2', '2']);
    await openPanel(page, 'function');
    const rows = await tableRows(page);
    const columns = rows[0]!;
    const row = rows.find((cells) => /append$/.test(cells[0]!))!;
    for (const [word, value] of [['allocations', '2'], ['frees', '2'], ['realloc calls', '2']] as const) {
      expect(columns).toContain(word);
      expect(row[columns.indexOf(word)]).toBe(value);
    }
  });
});

describe('the viewer on test/programs/left-out.c built with --mw-no-calls=is_even,push', () => {
  test("the Summary names the functions left out, as the report's head does", async () => {
    const { trace } = traceProgram(path.join(programsDir, 'left-out.c'), ['--mw-no-calls=is_even,push']);
    const r = await capture(runReport, [trace]);
    expect(r.out).toMatch(/^Left out +calls of 2 functions \(--mw-no-calls\): is_even, push$/m);
    const viewer = await viewerOn(trace);
    try {
      await openPanel(viewer.page, 'summary');
      expect(await panelText(viewer.page)).toContain("Left outcalls of 2 functions (--mw-no-calls): is_even, push (heap calls recorded; stack counted in the callers')");
      await shot(viewer.page, 'summary-left-out');
      expect(viewer.errors).toEqual([]);
    } finally {
      await viewer.close();
    }
  }, 120_000);
});
