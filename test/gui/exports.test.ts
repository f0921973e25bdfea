// The chart's exports in real Chromium on test/programs/two-heaps.c with a heap and a stack budget: the SVG and the PNG are the screen's picture (the same bars, static layer, exceeded ranges and marks, compared pixel by pixel with the canvas), with a title band naming the program, the trace and the events shown, and a legend with the budgets and the words the panels use.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Model } from '../../analysis/model.js';
import { formatBytesFine } from '../../analysis/units.js';
import { programsDir } from '../support/programs.js';
import { clickEvent, SCREENSHOTS, shot, traceProgram, viewerOn, type Viewer } from './browser.js';

/** Height of the exports' title band (px), as gui/renderer/src/chart/export.ts lays it out. */
const TITLE_BAND = 44;

interface Comparison {
  /** Pixels of the chart compared, and those whose colour differs between the screen and the export. */
  compared: number;
  differing: number;
  /** Events in view whose bar shows just above the axis, on the screen and in the export. */
  screenBars: number;
  exportBars: number;
  /** Dark (text) pixels in the export's title band and below the chart (its legend). */
  titleInk: number;
  legendInk: number;
}

/**
 * Draws the export (an SVG text or PNG bytes) in the page and compares its chart, pixel by pixel, with the screen's
 * canvas laid on white (where the screen's axes draw, their own SVG, nothing is compared); and, at the centre of each
 * event in view, whether a bar shows 2 px above the zero line in each.
 */
function compareWithScreen(page: Page, exported: { svg: string } | { png: string }): Promise<Comparison> {
  return page.evaluate(
    async ({ exported, band }) => {
      const canvas = document.querySelector('canvas.plot') as HTMLCanvasElement;
      const w = canvas.clientWidth;
      const h = canvas.clientHeight;
      const image = async (blob: Blob): Promise<HTMLImageElement> => {
        const img = new Image();
        img.src = URL.createObjectURL(blob);
        await img.decode();
        return img;
      };
      const flat = (img: CanvasImageSource, height: number, background: string | null): Uint8ClampedArray => {
        const c = document.createElement('canvas');
        c.width = w;
        c.height = height;
        const ctx = c.getContext('2d')!;
        if (background !== null) {
          ctx.fillStyle = background;
          ctx.fillRect(0, 0, w, height);
        }
        ctx.drawImage(img, 0, 0, w, height);
        return ctx.getImageData(0, 0, w, height).data;
      };
      const mine = flat(canvas, h, '#ffffff');
      const axesSvg = new XMLSerializer().serializeToString(document.querySelector('svg.axes')!);
      const axes = flat(await image(new Blob([axesSvg], { type: 'image/svg+xml' })), h, null);
      const png = (b64: string): Blob => new Blob([Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0))], { type: 'image/png' });
      const img = await image('svg' in exported ? new Blob([exported.svg], { type: 'image/svg+xml' }) : png(exported.png));
      // The PNG is drawn at twice the size: scaled back to the screen's.
      const totalH = Math.round(img.naturalHeight / (img.naturalWidth / w));
      const theirs = flat(img, totalH, '#ffffff');
      // Where the axes draw (within a pixel), on the screen an SVG over the canvas: not compared.
      const axisAt = (x: number, y: number): boolean => {
        for (let dy = -1; dy <= 1; dy++) for (let dx = -1; dx <= 1; dx++) if ((axes[((y + dy) * w + x + dx) * 4 + 3] ?? 0) > 0) return true;
        return false;
      };
      let compared = 0;
      let differing = 0;
      // A pixel differs when no pixel of the export within one of its place has its colour (edges and text are
      // smoothed a little differently on a canvas and in an image).
      const near = (a: number, x: number, y: number): boolean => {
        for (let dy = -1; dy <= 1; dy++) {
          for (let dx = -1; dx <= 1; dx++) {
            const b = ((y + band + dy) * w + Math.min(w - 1, Math.max(0, x + dx))) * 4;
            if (Math.abs(mine[a]! - theirs[b]!) + Math.abs(mine[a + 1]! - theirs[b + 1]!) + Math.abs(mine[a + 2]! - theirs[b + 2]!) <= 24) return true;
          }
        }
        return false;
      };
      for (let y = 0; y < h; y++) {
        for (let x = 0; x < w; x++) {
          if (axisAt(x, y)) continue;
          compared++;
          if (!near((y * w + x) * 4, x, y)) differing++;
        }
      }
      const handle = (window as unknown as { ccMemwrapView: { visibleEvents(): [number, number]; eventClientX(e: number): number | null } }).ccMemwrapView;
      const zeroY = Math.round(Number(document.querySelector('svg.axes line.zero')!.getAttribute('y1')));
      const left = canvas.getBoundingClientRect().left;
      // A bar's pixel: neither the white background nor the pink shade of an exceeded range.
      const bar = (px: Uint8ClampedArray, x: number, y: number): boolean => {
        const i = (y * w + Math.round(x)) * 4;
        return px[i]! < 225 || px[i + 1]! < 225 || px[i + 2]! < 225;
      };
      let screenBars = 0;
      let exportBars = 0;
      const [first, end] = handle.visibleEvents();
      for (let e = first; e < end; e++) {
        const cx = handle.eventClientX(e);
        if (cx === null) continue;
        if (bar(mine, cx - left, zeroY - 2)) screenBars++;
        if (bar(theirs, cx - left, zeroY - 2 + band)) exportBars++;
      }
      const ink = (y0: number, y1: number): number => {
        let n = 0;
        for (let y = y0; y < y1; y++) for (let x = 0; x < w; x++) if (theirs[(y * w + x) * 4]! < 110 && theirs[(y * w + x) * 4 + 1]! < 110) n++;
        return n;
      };
      return { compared, differing, screenBars, exportBars, titleInk: ink(0, band), legendInk: ink(band + h, totalH) };
    },
    { exported, band: TITLE_BAND },
  );
}

/** The file an export button saves; kept in the screenshots folder to look at. */
async function exported(page: Page, kind: 'svg' | 'png'): Promise<Buffer> {
  const [file] = await Promise.all([page.waitForEvent('download'), page.locator(`#export-${kind}`).click()]);
  const bytes = readFileSync((await file.path())!);
  mkdirSync(SCREENSHOTS, { recursive: true });
  writeFileSync(path.join(SCREENSHOTS, `two-heaps-export.${kind}`), bytes);
  return bytes;
}

const exportSvg = async (page: Page): Promise<string> => (await exported(page, 'svg')).toString('utf8');
const exportPng = async (page: Page): Promise<string> => (await exported(page, 'png')).toString('base64');

/** The SVG's text elements, as a viewer of the file reads them. */
const svgTexts = (svg: string): string[] => Array.from(svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g), (m) => m[1]!.replace(/&#(\d+);/g, (_, c: string) => String.fromCharCode(Number(c))));

describe('exports of test/programs/two-heaps.c', () => {
  let viewer: Viewer;
  let page: Page;
  let model: Model;
  let trace: string;
  let stackLimit: number;

  beforeAll(async () => {
    ({ trace, model } = traceProgram(path.join(programsDir, 'two-heaps.c')));
    // Exceeded while the recursion is deepest; the heap one from main's third block on.
    stackLimit = Math.max(...model.events.stackTotal) - 300;
    viewer = await viewerOn(trace, { budgets: { heap: 300, stack: stackLimit } });
    page = viewer.page;
  });

  afterAll(() => viewer?.close());

  test('the SVG has a title band (program, trace, events shown), the legend, the budgets and what the words mean', async () => {
    const texts = svgTexts(await exportSvg(page));
    const n = model.events.count;
    expect(texts).toContain(`two-heaps — ${path.basename(trace)}`);
    expect(texts).toContain(`events 0–${(n - 1).toLocaleString('en-US')} of ${n.toLocaleString('en-US')}`);
    for (const key of ['allocation', 'free', 'call', 'return', 'static', 'selected', 'budget', 'budget exceeded']) expect(texts).toContain(key);
    expect(texts.some((t) => /^heap budget 300 B: exceeded in \d+ ranges? \(shaded\)$/.test(t))).toBe(true);
    expect(texts.some((t) => t.startsWith(`stack budget ${formatBytesFine(stackLimit)} (from the stack base): exceeded in`))).toBe(true);
    // On the budget lines themselves, as on the screen.
    expect(texts).toContain(`heap budget ${formatBytesFine(300)}`);
    expect(texts.join(' ')).toContain('Counts: allocations = blocks made');
    expect(texts.join(' ')).toContain('Stack = bytes from the stack base');
    expect(viewer.errors).toEqual([]);
  });

  test('the SVG is the screen: the whole run summarised, and zoomed in to bars with a selection', async () => {
    const whole = await compareWithScreen(page, { svg: await exportSvg(page) });
    expect(whole.differing / whole.compared).toBeLessThan(0.01);
    expect(whole.titleInk).toBeGreaterThan(300);
    expect(whole.legendInk).toBeGreaterThan(1000);

    // Bars: 40 events from main's first malloc, the static layer under each, the heap range shaded, one selected.
    const first = model.events.kind.findIndex((_, e) => model.events.newBlock[e] !== -1);
    await page.evaluate(([a, b]) => (window as unknown as { ccMemwrapView: { zoomToEvents(a: number, b: number): void } }).ccMemwrapView.zoomToEvents(a!, b!), [first, first + 40]);
    // Redrawn on the next frame: the x axis no longer reaches event 1000.
    await expect.poll(() => page.locator('svg.axes .x-axis').textContent()).not.toContain('1000');
    await clickEvent(page, first + 2);
    const bars = await compareWithScreen(page, { svg: await exportSvg(page) });
    expect(bars.screenBars).toBeGreaterThanOrEqual(39);
    expect(bars.exportBars).toBe(bars.screenBars);
    expect(bars.differing / bars.compared).toBeLessThan(0.01);
    await shot(page, 'two-heaps-bars');
  });

  test('the PNG is the SVG rendered: title band, the screen\'s plot, the legend', async () => {
    const png = await compareWithScreen(page, { png: await exportPng(page) });
    expect(png.titleInk).toBeGreaterThan(300);
    expect(png.legendInk).toBeGreaterThan(1000);
    expect(png.exportBars).toBe(png.screenBars);
    expect(png.differing / png.compared).toBeLessThan(0.02);
    expect(viewer.errors).toEqual([]);
  });
});
