// One vocabulary in the viewer, read from the page in real Chromium on test/programs/two-heaps.c (two threads, two reallocs): the Summary's allocations and frees are the sums of the same columns in the By thread, By function and By site tables; the legend says what the words mean and which stack figure a budget checks, as the Budgets tab and the chart's axis name it; wall time and a thread filter redraw the chart (its pixels).
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Model } from '../../analysis/model.js';
import { programsDir } from '../support/programs.js';
import { plotPicture, shot, traceProgram, viewerOn, type Viewer } from './browser.js';

const openPanel = (page: Page, name: string) => page.locator(`#panel-tabs button[data-panel=${name}]`).click();
const count = (text: string): number => Number(text.replace(/,/g, ''));

/** The Summary tab's row named `label`, as shown. */
async function summaryRow(page: Page, label: string): Promise<string> {
  await openPanel(page, 'summary');
  const row = page.locator('#panel-body tr', { has: page.locator('td:first-child', { hasText: new RegExp(`^${label}$`) }) });
  return (await row.locator('td').nth(1).textContent())!;
}

/** The sum of each count column of a table tab, by its heading as shown. */
async function columnSums(page: Page, panel: string, headings: string[]): Promise<Record<string, number>> {
  await openPanel(page, panel);
  const heads = await page.locator('#panel-body table.rows th').allTextContents();
  const rows = page.locator('#panel-body table.rows tbody tr');
  const out: Record<string, number> = {};
  for (const h of headings) {
    const col = heads.indexOf(h);
    expect(col, `${panel} has a column "${h}" (it has ${heads.join(', ')})`).toBeGreaterThanOrEqual(0);
    out[h] = (await rows.locator(`td:nth-child(${col + 1})`).allTextContents()).reduce((n, t) => n + count(t), 0);
  }
  return out;
}

describe('the words of the viewer on test/programs/two-heaps.c', () => {
  let viewer: Viewer;
  let page: Page;
  let model: Model;

  beforeAll(async () => {
    let trace: string;
    ({ trace, model } = traceProgram(path.join(programsDir, 'two-heaps.c')));
    viewer = await viewerOn(trace, { budgets: { stack: 4096 } });
    page = viewer.page;
  });

  afterAll(() => viewer?.close());

  test('the Summary\'s allocations and frees are the sums of the same columns by thread, function and site', async () => {
    const allocations = /^([\d,]+) \(([\d,]+) by malloc, calloc…, ([\d,]+) by realloc; /.exec(await summaryRow(page, 'Allocations'));
    const frees = /^([\d,]+) \(([\d,]+) by free, ([\d,]+) by realloc\)$/.exec(await summaryRow(page, 'Frees'));
    expect(allocations).not.toBeNull();
    expect(frees).not.toBeNull();
    const [made, byCalls, madeByRealloc] = allocations!.slice(1).map(count);
    const [ended, byFree, endedByRealloc] = frees!.slice(1).map(count);
    // By hand (the program's comment): 1008 blocks made and 1006 ended by the program, two reallocs each ending one
    // block and making another; libc adds blocks of its own, counted alike everywhere.
    expect(made).toBe(model.blocks.count);
    expect(made).toBeGreaterThanOrEqual(1008);
    expect(madeByRealloc).toBe(2);
    expect(endedByRealloc).toBe(2);
    expect(byCalls + madeByRealloc).toBe(made);
    expect(byFree + endedByRealloc).toBe(ended);
    expect(ended).toBeGreaterThanOrEqual(1006);

    for (const panel of ['thread', 'function', 'site']) {
      const sums = await columnSums(page, panel, ['allocations', 'frees', 'realloc calls']);
      expect(sums, panel).toEqual({ allocations: made, frees: ended, 'realloc calls': 2 });
    }
    // Both threads made blocks: the By thread sums are over two rows.
    await openPanel(page, 'thread');
    expect(await page.locator('#panel-body table.rows tbody tr').count()).toBe(2);
    await shot(page, 'two-heaps-by-thread');
    expect(viewer.errors).toEqual([]);
  });

  test('the legend says what the counts and the stack figure mean; the Budgets tab and the axis name the same figure', async () => {
    const legend = (await page.locator('#legend').textContent())!;
    expect(legend).toContain('allocations = blocks made');
    expect(legend).toContain('frees = blocks ended');
    expect(legend).toContain('realloc calls counts the calls');
    expect(legend).toContain('Stack = bytes from the stack base');
    expect(legend).toContain('what a stack budget checks');
    await openPanel(page, 'budgets');
    const rows = await page.locator('#panel-body tr.clickable').allTextContents();
    expect(rows.some((r) => r.startsWith('stack ≤ 4.0 KiB from the stack base'))).toBe(true);
    expect(await page.locator('svg.axes .side-label').first().textContent()).toBe('stack (from the stack base) + static ↑');
  });

  test('wall time and a thread filter redraw the chart; back to events in order and all threads, the first picture again', async () => {
    const first = await plotPicture(page);
    // Two threads, four thousand events: several timestamps, so the time axis is used.
    await page.locator('#x-mode').selectOption('time');
    expect(await page.locator('#x-mode').inputValue()).toBe('time');
    await expect.poll(() => plotPicture(page)).not.toBe(first);
    await shot(page, 'two-heaps-wall-time');
    await page.locator('#x-mode').selectOption('events');
    await expect.poll(() => plotPicture(page)).toBe(first);
    await page.locator('#thread').selectOption('1');
    await expect.poll(() => plotPicture(page)).not.toBe(first);
    await shot(page, 'two-heaps-worker-thread');
    await page.locator('#thread').selectOption('all');
    await expect.poll(() => plotPicture(page)).toBe(first);
    expect(viewer.errors).toEqual([]);
  });
});
