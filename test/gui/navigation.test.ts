// Getting around the viewer by keyboard and zoom in real Chromium: search hands the keys back to the page after Enter, Escape or a click outside; deep zoom on a million-event trace keeps distinct tick labels and draws nothing over the y axis; keyboard zoom keeps the selected event in view.
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { nextEventOfClass } from '../../analysis/event-sets.js';
import type { Model } from '../../analysis/model.js';
import { packageRoot } from '../../package-root.js';
import { buildInstrumented, runTraced, samplesDir, scratch, traceOf } from '../support/programs.js';
import { SCREENSHOTS, selectedEvent, shot, traceProgram, viewerOn, type Viewer } from './browser.js';

describe('search and the keyboard, on samples/linked-list.c', () => {
  let viewer: Viewer;
  let page: Page;
  let model: Model;

  beforeAll(async () => {
    const run = traceProgram(path.join(samplesDir, 'linked-list.c'));
    model = run.model;
    viewer = await viewerOn(run.trace);
    page = viewer.page;
  });

  afterAll(() => viewer?.close());

  test('/, a name, Enter selects the first match and gives the keys back: n walks on, the box keeps its text', async () => {
    const results = page.locator('#search-results');
    await page.keyboard.press('/');
    await page.keyboard.type('main');
    await results.waitFor({ state: 'visible' });
    expect(await results.locator('li').first().textContent()).toMatch(/main.* 1 event$/);
    await shot(page, 'search-typed');
    await page.keyboard.press('Enter');
    await results.waitFor({ state: 'hidden' });
    const first = await selectedEvent(page);
    expect(await page.locator('#detail h3').textContent()).toBe('ENTER main');
    // n: the next call after main's entry (make_node's), as on the page; nothing goes into the box and no list opens.
    await page.keyboard.press('n');
    await shot(page, 'search-enter-then-n');
    const next = nextEventOfClass(model, first!, 1, 'call');
    expect(next).not.toBeNull();
    expect(await selectedEvent(page)).toBe(next);
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
      const before = await selectedEvent(page);
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
        expect(await selectedEvent(page)).toBe(expected);
      }
    }
    await shot(page, 'search-closed');
    expect(viewer.errors).toEqual([]);
  });
});

/** An x tick label read back as the event number it stands for ("540k", "1.25M", "536,712", "87"). */
function eventOfLabel(label: string): number {
  const m = /^([\d,.]+)([kM]?)$/.exec(label);
  if (m === null) return NaN;
  return Number(m[1]!.replaceAll(',', '')) * (m[2] === 'M' ? 1e6 : m[2] === 'k' ? 1e3 : 1);
}

interface XAxis {
  /** Tick labels left to right, as shown. */
  labels: string[];
  /** Right edge of the rightmost label and of the axes' SVG, in viewport px. */
  lastRight: number;
  /** Viewport x of the rightmost tick mark. */
  lastTick: number;
  /** Ticks left to right: label and viewport x of the mark. */
  ticks: Array<{ label: string; x: number }>;
  /** Viewport y of the x axis line. */
  axisY: number;
  svgRight: number;
  /** The plot's left and right edges (the x axis line), in viewport px. */
  plotLeft: number;
  plotRight: number;
}

async function xAxis(page: Page): Promise<XAxis> {
  // Two frames: the chart draws on the frame after a zoom.
  await page.evaluate(() => new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r()))));
  return page.evaluate(() => {
    const svg = document.querySelector('svg.axes') as SVGSVGElement;
    const texts = Array.from(svg.querySelectorAll('g.x-axis .tick text')).map((t) => ({ text: t.textContent ?? '', box: t.getBoundingClientRect() }));
    texts.sort((a, b) => a.box.left - b.box.left);
    const line = svg.querySelector('g.x-axis .domain')!.getBoundingClientRect();
    return {
      labels: texts.map((t) => t.text),
      lastRight: texts.at(-1)?.box.right ?? NaN,
      lastTick: Math.max(...Array.from(svg.querySelectorAll('g.x-axis .tick line')).map((l) => l.getBoundingClientRect().left)),
      ticks: Array.from(svg.querySelectorAll('g.x-axis .tick'))
        .map((t) => ({ label: t.querySelector('text')?.textContent ?? '', x: t.querySelector('line')!.getBoundingClientRect().left }))
        .sort((a, b) => a.x - b.x),
      axisY: line.top,
      svgRight: svg.getBoundingClientRect().right,
      plotLeft: line.left,
      plotRight: line.right,
    };
  });
}

/** Painted (not transparent) pixels of the chart's canvas in viewport columns [from, to). */
function paintedBetween(page: Page, from: number, to: number): Promise<number> {
  return page.evaluate(
    ([a, b]) => {
      const c = document.querySelector('canvas.plot') as HTMLCanvasElement;
      const r = c.getBoundingClientRect();
      const scale = c.width / r.width;
      const x0 = Math.max(0, Math.round((a! - r.left) * scale));
      const x1 = Math.min(c.width, Math.round((b! - r.left) * scale));
      if (x1 <= x0) return 0;
      const px = c.getContext('2d')!.getImageData(x0, 0, x1 - x0, c.height).data;
      let n = 0;
      for (let i = 3; i < px.length; i += 4) if (px[i]! > 0) n++;
      return n;
    },
    [from, to],
  );
}

/** Viewport x of the selected event's mark (the dark line across the plot), read from the canvas just above the plot's bottom, where the heap rarely reaches; null when it is not drawn. */
function selectedMarkX(page: Page, axis: XAxis): Promise<number | null> {
  return page.evaluate(
    ([left, right, y]) => {
      const c = document.querySelector('canvas.plot') as HTMLCanvasElement;
      const r = c.getBoundingClientRect();
      const scale = c.width / r.width;
      const x0 = Math.round((left! - r.left) * scale);
      const x1 = Math.round((right! - r.left) * scale);
      const px = c.getContext('2d')!.getImageData(x0, Math.round((y! - r.top) * scale), x1 - x0, 1).data;
      const dark: number[] = [];
      for (let i = 0; i < x1 - x0; i++) {
        const [red, green, blue, alpha] = [px[i * 4]!, px[i * 4 + 1]!, px[i * 4 + 2]!, px[i * 4 + 3]!];
        if (alpha > 100 && red < 60 && green < 60 && blue < 60) dark.push(i);
      }
      if (dark.length === 0) return null;
      return r.left + (x0 + dark.reduce((a, b) => a + b, 0) / dark.length + 0.5) / scale;
    },
    // The plot ends above the class rug (four 3 px rows) and a 4 px gap over the x axis line.
    [axis.plotLeft, axis.plotRight, axis.axisY - 22],
  );
}

describe('deep zoom on a million-event trace (bench/gui/workload.c)', () => {
  let viewer: Viewer;
  let page: Page;

  beforeAll(async () => {
    const dir = scratch('gui-nav-million');
    const exe = path.join(dir, 'workload');
    buildInstrumented('gcc', ['-O2'], [path.join(packageRoot, 'bench', 'gui', 'workload.c')], exe);
    const ran = runTraced(exe, ['1000000'], path.join(dir, 'traces'), { cwd: path.join(packageRoot, 'bench', 'gui') });
    viewer = await viewerOn(traceOf(path.join(dir, 'traces'), ran.pid));
    page = viewer.page;
  });

  afterAll(() => viewer?.close());

  test('wheel zoom to single events: tick labels stay distinct event numbers, bars stay right of the y axis, the last label fits', async () => {
    expect(await page.locator('#trace-name').textContent()).toMatch(/— (9\d\d,\d{3}|1,0\d\d,\d{3}) events/);
    const canvas = (await page.locator('canvas.plot').boundingBox())!;
    const start = await xAxis(page);
    // The wheel over 53.7 % of the plot, as far in as the chart goes, checking the axis at every few steps.
    await page.mouse.move(start.plotLeft + 0.537 * (start.plotRight - start.plotLeft), canvas.y + canvas.height * 0.3);
    let last = start;
    for (let step = 0; step < 44; step++) {
      await page.mouse.wheel(0, -240);
      if (step % 4 !== 3) continue;
      last = await xAxis(page);
      const events = last.labels.map(eventOfLabel);
      expect(last.labels.length, `${last.labels}`).toBeGreaterThanOrEqual(2);
      for (const e of events) expect(Number.isInteger(e), `${last.labels}`).toBe(true);
      for (let i = 1; i < events.length; i++) expect(events[i]!, `${last.labels}`).toBeGreaterThan(events[i - 1]!);
      expect(last.lastRight, `${last.labels}`).toBeLessThanOrEqual(last.svgRight);
    }
    // Deepest: a few dozen events across the plot, each its own bar.
    expect(eventOfLabel(last.labels.at(-1)!) - eventOfLabel(last.labels[0]!)).toBeLessThan(60);
    // Drag the rightmost tick to the plot's right edge, where its label is widest past it; bars are cut by both edges.
    const dx = Math.round(last.plotRight - 2 - last.lastTick);
    const before = last.labels.at(-1);
    await page.mouse.move(canvas.x + canvas.width / 2, canvas.y + canvas.height / 2);
    await page.mouse.down();
    await page.mouse.move(canvas.x + canvas.width / 2 + dx, canvas.y + canvas.height / 2, { steps: 4 });
    await page.mouse.up();
    last = await xAxis(page);
    expect(last.labels.at(-1)).toBe(before);
    expect(last.plotRight - last.lastTick).toBeLessThan(4);
    expect(last.lastRight, `${last.labels}`).toBeLessThanOrEqual(last.svgRight);
    await shot(page, 'deep-zoom');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'deep-zoom-chart.png'), clip: { x: canvas.x, y: canvas.y, width: 420, height: canvas.height } });
    expect(await paintedBetween(page, canvas.x, last.plotLeft - 1)).toBe(0);
    expect(await paintedBetween(page, last.plotRight + 1, canvas.x + canvas.width)).toBe(0);
    // …and the bars are there, up to the axis.
    expect(await paintedBetween(page, last.plotLeft, last.plotLeft + 30)).toBeGreaterThan(500);
    expect(viewer.errors).toEqual([]);
  });

  test('a click right after a zoom, before the next frame is painted, selects the bar under the pointer', async () => {
    await page.keyboard.press('0');
    // Zoom and click in one task, so no animation frame can paint the new view in between: the click must be taken
    // against the view it was aimed at, not the frame painted before the zoom.
    for (const e of [500_010, 123_457, 987_650]) {
      await page.evaluate((n) => {
        const h = (window as unknown as { ccMemwrapView: { zoomToEvents(a: number, b: number): void; eventClientX(e: number): number | null; plotClientY(s: string): number } }).ccMemwrapView;
        h.zoomToEvents(n - 10, n + 10);
        const x = h.eventClientX(n);
        if (x === null) throw new Error(`event ${n} is not in view after the zoom`);
        const canvas = document.querySelector('canvas.plot')!;
        canvas.dispatchEvent(new MouseEvent('click', { clientX: x, clientY: h.plotClientY('above'), bubbles: true }));
      }, e);
      await expect.poll(() => selectedEvent(page)).toBe(e);
    }
    expect(viewer.errors).toEqual([]);
  });

  test('+ zooms around the selected event: one near the left edge stays under the same x, and the axis under it reads its number', async () => {
    await page.keyboard.press('0');
    let axis = await xAxis(page);
    const canvas = (await page.locator('canvas.plot').boundingBox())!;
    // A click 4 % into the plot, where zooming around the centre loses it at the first +.
    await page.mouse.click(axis.plotLeft + 0.04 * (axis.plotRight - axis.plotLeft), canvas.y + canvas.height * 0.3);
    const selected = await selectedEvent(page);
    expect(selected).not.toBeNull();
    const x0 = await selectedMarkX(page, axis);
    expect(x0).not.toBeNull();
    await shot(page, 'keyboard-zoom-start');
    for (let i = 1; i <= 16; i++) {
      await page.keyboard.press('+');
      axis = await xAxis(page);
      const x = await selectedMarkX(page, axis);
      expect(x, `mark after ${i} presses of +`).not.toBeNull();
      expect(Math.abs(x! - x0!), `mark after ${i} presses of +`).toBeLessThan(3);
      expect(await selectedEvent(page)).toBe(selected);
    }
    // Zoomed to single events: the axis, read at the mark between its outermost ticks, names the selected event.
    const first = axis.ticks[0]!;
    const last = axis.ticks.at(-1)!;
    const [a, b] = [eventOfLabel(first.label), eventOfLabel(last.label)];
    expect(b - a).toBeLessThan(60);
    const atMark = a + ((x0! - first.x) * (b - a)) / (last.x - first.x);
    expect(Math.abs(atMark - (selected! + 0.5)), `${axis.ticks.map((t) => t.label)}`).toBeLessThan(1);
    await shot(page, 'keyboard-zoom-end');
    expect(viewer.errors).toEqual([]);
  });
});
