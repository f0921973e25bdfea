// Budgets on the chart in real Chromium, as a student meets them: on test/programs/mq.c built with -DFIX (48 messages
// of 24 B, at most 8 live, and libc's 4 KiB stdout buffer), a 4 KiB heap budget does not pin the heap axis once the
// libc heap is hidden (the axis fits the nodes, the budget is a marker at the axis's edge, and nothing is shaded where
// the heap shown is under it); on samples/ring-buffer.c built with -DSTATIC_RING a stack budget's line is drawn where
// stack + static reaches it; no label of the chart (axis ticks, side labels, budget labels) overlaps another, with
// the chart shortened by the bar under it at 100 % and at 200 %; a budget label stays readable over the bars.
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { programsDir, samplesDir } from '../support/programs.js';
import { shot, traceProgram, viewerOn, type Viewer } from './browser.js';

interface Box {
  text: string;
  left: number;
  top: number;
  width: number;
  height: number;
}

interface Marks {
  labels: Box[];
  budgets: Array<{ label: string; lineY: number | null; shaded: Array<[number, number]> }>;
}

const marks = (page: Page): Promise<Marks> => page.evaluate(() => (window as unknown as { ccMemwrapView: { marks(): Marks } }).ccMemwrapView.marks());

const heapTicks = (page: Page): Promise<string[]> => page.locator('svg.axes g.y-heap .tick text').allTextContents();
/** "4,096 B" → 4096; a KiB label → NaN (these charts stay under 10 KiB, printed exactly). */
const bytesOf = (label: string): number => (/^[\d,]+ B$/.test(label) ? Number(label.replace(/[, B]/g, '')) : NaN);
const heapTop = async (page: Page): Promise<number> => Math.max(...(await heapTicks(page)).map(bytesOf));

/** Pixels of the chart's canvas below the axis in the pink of an exceeded range (no bar covers them). */
const exceededPixels = (page: Page): Promise<number> =>
  page.evaluate(() => {
    const c = document.querySelector('canvas.plot') as HTMLCanvasElement;
    const scale = c.width / c.getBoundingClientRect().width;
    const zeroY = Math.ceil(Number(document.querySelector('svg.axes line.zero')!.getAttribute('y1')) * scale) + 2;
    const px = c.getContext('2d')!.getImageData(0, zeroY, c.width, c.height - zeroY).data;
    let n = 0;
    for (let i = 0; i < px.length; i += 4) if (px[i + 3]! > 0 && px[i + 3]! < 80 && Math.abs(px[i]! - 250) < 10 && Math.abs(px[i + 1]! - 82) < 10 && Math.abs(px[i + 2]! - 82) < 10) n++;
    return n;
  });

/** The axes' tick labels and side labels (SVG). */
async function svgLabelBoxes(page: Page): Promise<Box[]> {
  const svg = await page.$$eval('.chart svg.axes .tick text, .chart svg.axes .side-label', (ts) =>
    ts.map((t) => {
      const r = t.getBoundingClientRect();
      return { text: t.textContent ?? '', left: r.left, top: r.top, width: r.width, height: r.height };
    }),
  );
  return svg.filter((b) => b.text !== '' && b.width > 0);
}

/** Every label the chart shows: the axes' (SVG) and those drawn on the canvas. */
const labelBoxes = async (page: Page): Promise<Box[]> => [...(await svgLabelBoxes(page)), ...(await marks(page)).labels];

/** Pairs of labels whose boxes overlap by more than a pixel (the two axes' "0 B" at one place are one label). */
function overlapping(boxes: Box[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i]!;
      const b = boxes[j]!;
      if (a.text === b.text && Math.abs(a.left - b.left) < 1 && Math.abs(a.top - b.top) < 1) continue;
      const w = Math.min(a.left + a.width, b.left + b.width) - Math.max(a.left, b.left);
      const h = Math.min(a.top + a.height, b.top + b.height) - Math.max(a.top, b.top);
      if (w > 1 && h > 1) out.push(`"${a.text}" and "${b.text}"`);
    }
  }
  return out;
}

/** Shortens the chart with the bar under it (its arrow keys) until it gets no shorter. */
async function shortest(page: Page): Promise<number> {
  const height = async () => (await page.locator('#chart-area').boundingBox())!.height;
  await page.locator('#split').focus();
  for (let last = Infinity, now = await height(); now < last; last = now, now = await height()) {
    for (let i = 0; i < 4; i++) await page.keyboard.press('ArrowUp');
  }
  return height();
}

describe('a 4 KiB heap budget on test/programs/mq.c -DFIX', () => {
  let viewer: Viewer;
  let page: Page;

  beforeAll(async () => {
    const { trace } = traceProgram(path.join(programsDir, 'mq.c'), ['-DFIX']);
    viewer = await viewerOn(trace, { budgets: { heap: 4096 } });
    page = viewer.page;
  }, 120_000);
  afterAll(() => viewer?.close());

  test('with the libc heap hidden the axis fits the nodes, the budget is a marker at its edge and nothing is shaded', async () => {
    // Whole: the stdout buffer and the nodes reach past the budget, and the run is shaded.
    expect(await heapTop(page)).toBeGreaterThanOrEqual(4096);
    expect(await exceededPixels(page)).toBeGreaterThan(1000);

    await page.locator('#show-libc').uncheck();
    // The eight 24-byte messages live at most: 192 B.
    await expect.poll(() => heapTop(page)).toBeLessThanOrEqual(256);
    expect(await heapTop(page)).toBeGreaterThanOrEqual(192);
    expect(await exceededPixels(page)).toBe(0);
    const m = await marks(page);
    const hidden = m.budgets.find((b) => b.label === 'heap')!;
    expect(hidden.lineY).toBeNull();
    expect(hidden.shaded).toEqual([]);
    expect(m.labels.map((l) => l.text)).toContain('heap budget 4,096 B ↓ (below the axis)');
    await shot(page, 'budget-marker-libc-hidden');

    await page.locator('#show-libc').check();
    await expect.poll(() => heapTop(page)).toBeGreaterThanOrEqual(4096);
    expect(await exceededPixels(page)).toBeGreaterThan(1000);
    const shown = (await marks(page)).budgets.find((b) => b.label === 'heap')!;
    expect(shown.lineY).not.toBeNull();
    expect(shown.shaded.length).toBeGreaterThan(0);
    expect(viewer.errors).toEqual([]);
  });
});

describe('labels on test/programs/mq.c -DFIX with a heap and a stack budget', () => {
  let viewer: Viewer;
  let page: Page;

  beforeAll(async () => {
    const { trace } = traceProgram(path.join(programsDir, 'mq.c'), ['-DFIX']);
    viewer = await viewerOn(trace, { budgets: { heap: 1024, stack: 400 } });
    page = viewer.page;
  }, 120_000);
  afterAll(() => viewer?.close());

  test('the heap budget label is drawn on a white ground over the bars behind it', async () => {
    const label = (await marks(page)).labels.find((l) => l.text.startsWith('heap budget 1,024 B'))!;
    expect(label).toBeDefined();
    const seen = await page.evaluate((box) => {
      const c = document.querySelector('canvas.plot') as HTMLCanvasElement;
      const r = c.getBoundingClientRect();
      const scale = c.width / r.width;
      const read = (left: number, top: number, width: number, height: number) =>
        c.getContext('2d')!.getImageData(Math.round((left - r.left) * scale), Math.round((top - r.top) * scale), Math.max(1, Math.round(width * scale)), Math.max(1, Math.round(height * scale))).data;
      // The bars' own colours (allocation, free, call, return, the run's end), opaque.
      const bars = ['217,72,15', '47,158,68', '28,126,214', '112,72,232', '134,142,150'];
      const barPixels = (px: Uint8ClampedArray): number => {
        let n = 0;
        for (let i = 0; i < px.length; i += 4) if (px[i + 3] === 255 && bars.includes(`${px[i]},${px[i + 1]},${px[i + 2]}`)) n++;
        return n;
      };
      return { inside: barPixels(read(box.left, box.top, box.width, box.height)), beside: barPixels(read(box.left - 40, box.top, 30, box.height)) };
    }, label);
    // Bars run behind the label (beside it, at its height), and none shows through it.
    expect(seen.beside).toBeGreaterThan(0);
    expect(seen.inside).toBe(0);
  });

  for (const zoom of ['1', '2']) {
    test(`no label overlaps another with the chart shortened by the bar under it, at ${Number(zoom) * 100} %`, async () => {
      await page.selectOption('#zoom', zoom);
      await expect.poll(async () => (await svgLabelBoxes(page)).length).toBeGreaterThan(4);
      const h = await shortest(page);
      expect(h).toBeLessThan(260 * Number(zoom));
      // The axes' own labels first (SVG), then with the canvas's budget labels.
      await expect.poll(async () => overlapping(await svgLabelBoxes(page))).toEqual([]);
      expect(overlapping(await labelBoxes(page))).toEqual([]);
      const texts = (await labelBoxes(page)).map((b) => b.text);
      // The side labels, both budgets and the byte axes all still there.
      expect(texts).toContain('heap ↓');
      expect(texts.some((t) => t.startsWith('heap budget 1,024 B'))).toBe(true);
      expect(texts.some((t) => t.startsWith('stack budget 400 B'))).toBe(true);
      await shot(page, `budget-labels-short-${Number(zoom) * 100}`);
      await page.locator('#split').focus();
      for (let i = 0; i < 20; i++) await page.keyboard.press('ArrowDown');
      expect(viewer.errors).toEqual([]);
    });
  }
});

describe('a stack budget on samples/ring-buffer.c -DSTATIC_RING (2,048 B of static)', () => {
  test('its line is where stack + static reaches the budget, and its label says so', async () => {
    const { trace, model } = traceProgram(path.join(samplesDir, 'ring-buffer.c'), ['-DSTATIC_RING']);
    let statics = 0;
    for (let i = 0; i < model.statics.count; i++) statics += model.statics.size[i]!;
    expect(statics).toBe(2048);
    const viewer = await viewerOn(trace, { budgets: { stack: 400 } });
    try {
      const { page } = viewer;
      const line = (await marks(page)).budgets.find((b) => b.label === 'stack')!;
      expect(line.lineY).not.toBeNull();
      // Where 400 + 2,048 B lies on the axis, from the tick marks' own positions.
      const ticks = await page.$$eval('svg.axes g.y-above g.tick', (gs) =>
        gs.map((g) => ({ bytes: Number((g.textContent ?? '').replace(/[, B]/g, '')), y: g.querySelector('line')!.getBoundingClientRect().top })),
      );
      const [lo, hi] = [ticks.filter((t) => t.bytes <= 2448).at(-1)!, ticks.find((t) => t.bytes > 2448)!];
      const expected = lo.y + ((2448 - lo.bytes) / (hi.bytes - lo.bytes)) * (hi.y - lo.y);
      expect(Math.abs(line.lineY! - expected)).toBeLessThanOrEqual(2);
      expect((await marks(page)).labels.map((l) => l.text)).toContain('stack budget 400 B (from the stack base), over static 2,048 B');
      await shot(page, 'budget-stack-over-static');
      expect(viewer.errors).toEqual([]);
    } finally {
      await viewer.close();
    }
  }, 120_000);
});
