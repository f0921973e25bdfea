// `cc-memwrap view A --compare B` in Chromium, on lesson 6 built before and after -DSTATIC_RING with its memwrap.json:
// what a person sees is both runs drawn one above the other on the same axes (the heap of A below the axis, the static
// ring of B above it), the differences listed under them, and a zoom in one chart followed by the other. The page
// behaves as the timeline does: a legend, a hover's tooltip, a click's detail and source line (of the run clicked),
// the zoom keys (0: the whole run) and the zoom control; and `report A --compare B --html` is the same page in one
// file, opened from disk with the network off.
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { notX86_64Glibc, skipAllWhen } from '../support/machine.js';
import { buildInstrumented, runTraced, samplesDir, scratch, traceOf } from '../support/programs.js';
import { apiGet } from '../support/viewer-api.js';
import { buildRenderer, launch, SCREENSHOTS, viewInBrowser, type ViewPage } from './browser.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { Kind } from '../../analysis/trace/format.js';
import { runReport } from '../../cli/report.js';
import { capture } from '../fixtures/cli-capture.js';
import { pathToFileURL } from 'node:url';
import { readFileSync } from 'node:fs';

/** Builds samples/ring-buffer.c (with `defines`) beside the lesson's memwrap.json and runs it: its trace. */
function ring(dir: string, exe: string, defines: string[]): string {
  buildInstrumented('gcc', ['-O0', '-g', ...defines], [path.join(dir, 'samples', 'ring-buffer.c')], path.join(dir, exe), dir);
  const ran = runTraced(path.join(dir, exe), [], path.join(dir, 'traces'), { cwd: dir });
  return traceOf(path.join(dir, 'traces'), ran.pid);
}

/**
 * Painted pixels on the plot canvas of `#chart-<side>` between the heights of two tick labels of one byte axis (a
 * share `from`..`to` of the way from the first to the second), away from the axis labels at the left and the right
 * edge: where bars reach, not budget lines or their labels.
 */
function paintedBetween(page: Page, side: 'a' | 'b', axis: 'y-above' | 'y-heap', labels: [string, string], from: number, to: number): Promise<number> {
  return page.evaluate(
    ([s, ax, l0, l1, f, t]) => {
      const tickY = (label: string): number => {
        const tick = [...document.querySelectorAll(`#chart-${s} svg.axes .${ax} .tick`)].find((n) => n.textContent === label);
        if (tick === undefined) throw new Error(`no tick ${label}`);
        const g = tick.closest(`.${ax}`)!;
        const y = (el: Element): number => Number(/translate\([^,]+,\s*([-\d.]+)\)/.exec(el.getAttribute('transform')!)![1]);
        return y(g) + y(tick);
      };
      const [y0, y1] = [tickY(l0 as string), tickY(l1 as string)];
      const c = document.querySelector(`#chart-${s} canvas.plot`) as HTMLCanvasElement;
      const k = c.width / c.clientWidth;
      const top = Math.round(Math.min(y0 + (y1 - y0) * (f as number), y0 + (y1 - y0) * (t as number)) * k);
      const bottom = Math.round(Math.max(y0 + (y1 - y0) * (f as number), y0 + (y1 - y0) * (t as number)) * k);
      const left = Math.round(200 * k);
      const px = c.getContext('2d')!.getImageData(left, top, c.width - left - Math.round(60 * k), bottom - top).data;
      let n = 0;
      for (let i = 3; i < px.length; i += 4) if (px[i]! > 0) n++;
      return n;
    },
    [side, axis, labels[0], labels[1], from, to] as const,
  );
}

/** The tick labels of one axis of `#chart-<side>` as drawn. */
function ticks(page: Page, side: 'a' | 'b', axis: 'x-axis' | 'y-above' | 'y-heap'): Promise<string[]> {
  return page.$$eval(`#chart-${side} svg.axes .${axis} .tick text`, (nodes) => nodes.map((n) => n.textContent ?? ''));
}

/** Zooms into chart A: B's x axis leaves `before` and follows A's. */
async function zoomA(page: Page, before: string[]): Promise<void> {
  const box = (await page.locator('#chart-a canvas.plot').boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 3);
  await page.mouse.wheel(0, -600);
  await expect.poll(() => ticks(page, 'b', 'x-axis')).not.toEqual(before);
  await expect.poll(async () => JSON.stringify(await ticks(page, 'b', 'x-axis'))).toBe(JSON.stringify(await ticks(page, 'a', 'x-axis')));
}

/** Lesson 6 built before and after -DSTATIC_RING beside its memwrap.json, once for the file: the folder and both traces. */
let lesson: Promise<{ dir: string; a: string; b: string }> | null = null;
function ringLesson(): Promise<{ dir: string; a: string; b: string }> {
  lesson ??= (async () => {
    const dir = scratch('gui-compare');
    const samples = path.join(dir, 'samples');
    mkdirSync(samples);
    copyFileSync(path.join(samplesDir, 'ring-buffer.c'), path.join(samples, 'ring-buffer.c'));
    writeFileSync(path.join(dir, 'memwrap.json'), '{ "budgets": { "heap": "1K", "static": "4K" } }\n');
    return { dir, a: ring(dir, 'ring', []), b: ring(dir, 'ring2', ['-DSTATIC_RING']) };
  })();
  return lesson;
}

/** `view A --compare B` in Chromium with MEMWRAP_VIEW_INDEX set to `index` while the command starts (then restored). */
async function comparePage(a: string, b: string, dir: string, index?: '0' | '1'): Promise<ViewPage> {
  const saved = process.env.MEMWRAP_VIEW_INDEX;
  if (index !== undefined) process.env.MEMWRAP_VIEW_INDEX = index;
  try {
    return await viewInBrowser([a, '--compare', b], { rendererDir: await buildRenderer(), recentFile: path.join(dir, 'recent.json'), handle: 'ccMemwrapCompare', viewport: { width: 1300, height: 1100 } });
  } finally {
    if (saved === undefined) delete process.env.MEMWRAP_VIEW_INDEX;
    else process.env.MEMWRAP_VIEW_INDEX = saved;
  }
}

describe('view A --compare B (Chromium)', () => {
  skipAllWhen(notX86_64Glibc);
  let view: ViewPage | null = null;
  let page: Page;
  let printed = '';
  let errors: string[] = [];

  beforeAll(async () => {
    const { dir, a, b } = await ringLesson();
    view = await comparePage(a, b, dir, '0');
    ({ page, printed, errors } = view);
  });

  afterAll(async () => {
    await view?.close();
  });

  test('the command names both traces and the compare page', () => {
    expect(printed).toMatch(/^cc-memwrap view: \d+\.mwtrace compared with \d+\.mwtrace at http:\/\/127\.0\.0\.1:\d+\/compare\.html\?token=[\w-]{43}$/m);
  });

  test('the differences are listed: totals, the site only in A, the budgets', async () => {
    expect(await page.textContent('#error')).toBe('');
    const rows = await page.$$eval('#differences tr', (trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent ?? '')));
    expect(rows).toContainEqual(['static', '0 B', '2,048 B', '+2,048 B']);
    expect(rows).toContainEqual(['peak heap', '2,048 B', '0 B', '-2,048 B']);
    expect(rows).toContainEqual(['samples/ring-buffer.c:32 ring_init → malloc (only in A)', '1 → -', '-1', '2,048 B → -', '-2,048 B', '0 B → -', '0 B']);
    expect(await page.textContent('#differences .budget-diff')).toContain('heap ≤ 1,024 B: max 2,048 B → 0 B (-2,048 B), EXCEEDED → ok');
    expect(await page.textContent('#run-a-title')).toMatch(/^A {2}\d+\.mwtrace: 210 events, peak heap 2,048 B, peak stack 416 B, static 0 B$/);
    expect(await page.textContent('#run-b-title')).toMatch(/^B {2}\d+\.mwtrace: 209 events, peak heap 0 B, peak stack 416 B, static 2,048 B$/);
  });

  test('both charts are drawn: the heap ring of A below the axis, the static ring of B above it', async () => {
    // Below the axis, from 0 to half way to 1,024 B (above the heap budget's line): A's 2,048 B ring fills it, B has no heap.
    expect(await paintedBetween(page, 'a', 'y-heap', ['0 B', '1,024 B'], 0.1, 0.5)).toBeGreaterThan(5000);
    expect(await paintedBetween(page, 'b', 'y-heap', ['0 B', '1,024 B'], 0.1, 0.5)).toBe(0);
    // Above it, between 1,024 and 2,048 B: B's static ring; A has only its 416 B of stack there.
    expect(await paintedBetween(page, 'b', 'y-above', ['0 B', '2,048 B'], 0.5, 0.9)).toBeGreaterThan(5000);
    expect(await paintedBetween(page, 'a', 'y-above', ['0 B', '2,048 B'], 0.5, 0.9)).toBe(0);
    // Both have their stack just above the axis.
    expect(await paintedBetween(page, 'a', 'y-above', ['0 B', '2,048 B'], 0.02, 0.1)).toBeGreaterThan(2000);
    expect(await paintedBetween(page, 'b', 'y-above', ['0 B', '2,048 B'], 0.02, 0.1)).toBeGreaterThan(2000);
  });

  test('the axes are the same in both charts, and a zoom in one is followed by the other', async () => {
    for (const axis of ['x-axis', 'y-above', 'y-heap'] as const) expect(await ticks(page, 'b', axis)).toEqual(await ticks(page, 'a', axis));
    // B has no heap: its heap axis reaches A's 2,048 B all the same. Above, B's 2,048 static bytes set both scales.
    expect((await ticks(page, 'b', 'y-heap')).at(-1)).toBe('2,048 B');
    const top = (labels: string[]): number => Number(labels.at(-1)!.replace(/[^0-9]/g, ''));
    expect(top(await ticks(page, 'a', 'y-above'))).toBeGreaterThanOrEqual(2048);
    const before = await ticks(page, 'b', 'x-axis');
    await zoomA(page, before);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'compare-view-zoomed.png') });
    await page.mouse.wheel(0, 600);
    await expect.poll(() => ticks(page, 'b', 'x-axis')).toEqual(before);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'compare-view.png'), fullPage: true });
    expect(errors).toEqual([]);
  });

  test('as the timeline: a legend, a tooltip on hover, a click shows the run, its detail and its source line', async () => {
    await behavesAsTimeline(page, (await ringLesson()).a);
    expect(errors).toEqual([]);
  });

  test('0 shows the whole run again after a zoom, in both charts; the zoom control scales the text', async () => {
    await zeroResets(page);
    expect(await page.locator('#zoom').count()).toBe(1);
    await page.selectOption('#zoom', '2');
    await expect.poll(() => fontPx(page, '#run-a-title')).toBe(26);
    expect(await fontPx(page, 'table.diff')).toBe(24);
    expect(await fontPx(page, '#legend .key')).toBe(24);
    expect(await page.locator('#chart-a svg.axes .y-heap .tick text').first().evaluate((t) => t.getBoundingClientRect().height)).toBeGreaterThanOrEqual(20);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'compare-200.png') });
    await page.selectOption('#zoom', '1');
    expect(errors).toEqual([]);
  });
});

const fontPx = (page: Page, selector: string): Promise<number> => page.locator(selector).first().evaluate((e) => parseFloat(getComputedStyle(e).fontSize));

/** The compare page's handle. */
interface CompareHandle {
  eventClientX(side: string, e: number): number | null;
  plotClientY(side: string, where: string): number;
  visibleEvents(side: string): [number, number];
  selected: { side: string; event: number } | null;
}

/** Where on the screen run `side`'s bar of event `e` is (its upper half). */
async function barPoint(page: Page, side: 'a' | 'b', e: number): Promise<{ x: number; y: number }> {
  const at = await page.evaluate(([s, ev]) => {
    const h = (window as unknown as { ccMemwrapCompare: CompareHandle }).ccMemwrapCompare;
    return { x: h.eventClientX(s as string, ev as number), y: h.plotClientY(s as string, 'above') };
  }, [side, e] as const);
  if (at.x === null) throw new Error(`event ${e} of ${side} is not in view`);
  return { x: at.x, y: at.y };
}

/**
 * The page as a person meets the timeline: the legend's keys; over A's malloc in ring_init, zoomed in to its bars, a
 * tooltip naming it; a click on it: the detail names run A and the event, the source pane shows ring-buffer.c at line
 * 32; then B's bar at the same place selects in B, and A's mark goes.
 */
async function behavesAsTimeline(page: Page, traceA: string): Promise<void> {
  expect(await page.locator('#legend .key').allTextContents()).toEqual(expect.arrayContaining(['allocation', 'free', 'call', 'return', 'budget']));
  const model = decodeTrace(new Uint8Array(readFileSync(traceA)));
  let malloc = -1;
  for (let e = 0; e < model.events.count && malloc < 0; e++) if (model.events.kind[e] === Kind.ALLOC) malloc = e;
  expect(malloc).toBeGreaterThan(0);
  // The keys zoom both charts (+), and show the whole run again (0).
  const visible = (side: string) => page.evaluate((s) => (window as unknown as { ccMemwrapCompare: CompareHandle }).ccMemwrapCompare.visibleEvents(s), side);
  await page.locator('#chart-a canvas.plot').hover();
  for (let i = 0; i < 3; i++) await page.keyboard.press('+');
  await expect.poll(async () => (await visible('b'))[1] - (await visible('b'))[0]).toBeLessThan(model.events.count);
  await page.keyboard.press('0');
  await expect.poll(async () => (await visible('a'))[1]).toBe(model.events.count);
  const at = await barPoint(page, 'a', malloc);
  await page.mouse.move(at.x, at.y);
  await expect.poll(() => page.locator('#tooltip-a').isVisible()).toBe(true);
  expect(await page.locator('#tooltip-a strong').textContent()).toMatch(new RegExp(`^(ALLOC|REALLOC) · event ${malloc}$`));
  expect(await page.locator('#tooltip-a').textContent()).toContain('ring-buffer.c:32 ring_init → malloc');
  await page.mouse.click(at.x, at.y);
  await expect.poll(() => page.evaluate(() => (window as unknown as { ccMemwrapCompare: CompareHandle }).ccMemwrapCompare.selected)).toEqual({ side: 'a', event: malloc });
  expect(await page.locator('#detail [data-role=detail-run]').textContent()).toBe(`A  ${path.basename(traceA)}`);
  expect(await page.locator('#detail dl.facts dd').first().textContent()).toMatch(new RegExp(`^${malloc} · ALLOC`));
  await page.waitForSelector('#source-body .ln.selected');
  expect(await page.locator('#source-body .ln.selected').getAttribute('data-line')).toBe('32');
  expect(await page.locator('#source-head').textContent()).toContain('ring-buffer.c');
  await page.mouse.move(at.x, at.y - 200); // off the bars: the tooltip goes
  await page.screenshot({ path: path.join(SCREENSHOTS, 'compare-selected.png'), fullPage: true });
  // The same place in B: B's event is selected and the detail names B.
  const inB = await barPoint(page, 'b', malloc);
  await page.mouse.click(inB.x, inB.y);
  await expect.poll(() => page.evaluate(() => (window as unknown as { ccMemwrapCompare: CompareHandle }).ccMemwrapCompare.selected?.side)).toBe('b');
  expect(await page.locator('#detail [data-role=detail-run]').textContent()).toMatch(/^B {2}\d+\.mwtrace$/);
}

/** A zoom (wheel on A) shows fewer events in both charts; the key 0 brings back the whole run in both. */
async function zeroResets(page: Page): Promise<void> {
  const visible = (side: string) => page.evaluate((s) => (window as unknown as { ccMemwrapCompare: CompareHandle }).ccMemwrapCompare.visibleEvents(s), side);
  const [wholeA, wholeB] = [await visible('a'), await visible('b')];
  const box = (await page.locator('#chart-a canvas.plot').boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 3);
  await page.mouse.wheel(0, -600);
  await expect.poll(async () => (await visible('b'))[1] - (await visible('b'))[0]).toBeLessThan(wholeB[1] - wholeB[0]);
  await page.keyboard.press('0');
  await expect.poll(() => visible('a')).toEqual(wholeA);
  await expect.poll(() => visible('b')).toEqual(wholeB);
}

describe('report A --compare B --html: the compare page in one file (Chromium, from disk, network off)', () => {
  skipAllWhen(notX86_64Glibc);

  test('written by the command; opened from disk it draws both runs, lists the differences and explains a click', async () => {
    const { dir, a, b } = await ringLesson();
    const out = path.join(dir, 'compare.html');
    const r = await capture(runReport, [a, '--compare', b, '--html', out]);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/^cc-memwrap report: wrote .*compare\.html \([\d.]+ KiB\): open it in a browser, no server needed\n$/);
    expect(r.out).toMatch(/^Compare {6}A /);
    const browser = await launch();
    try {
      const context = await browser.newContext({ viewport: { width: 1300, height: 1100 }, offline: true });
      const blocked: string[] = [];
      await context.route('**/*', (route) => (route.request().url().startsWith('file:') ? route.continue() : (blocked.push(route.request().url()), route.abort())));
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(pathToFileURL(out).href);
      await page.waitForFunction(() => {
        const h = (window as unknown as { ccMemwrapCompare?: { ready: boolean; error: string | null } }).ccMemwrapCompare;
        return h?.ready === true || (h?.error ?? null) !== null;
      }, null, { timeout: 60_000 });
      expect(await page.textContent('#error')).toBe('');
      const rows = await page.$$eval('#differences tr', (trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent ?? '')));
      expect(rows).toContainEqual(['samples/ring-buffer.c:32 ring_init → malloc (only in A)', '1 → -', '-1', '2,048 B → -', '-2,048 B', '0 B → -', '0 B']);
      expect(await page.textContent('#differences .budget-diff')).toContain('heap ≤ 1,024 B: max 2,048 B → 0 B (-2,048 B), EXCEEDED → ok');
      await behavesAsTimeline(page, a);
      await zeroResets(page);
      await page.screenshot({ path: path.join(SCREENSHOTS, 'compare-report-file.png'), fullPage: true });
      expect(errors).toEqual([]);
      expect(blocked).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 180_000);

  test('a trace the viewer opens through its index is refused by name', async () => {
    const { dir, a, b } = await ringLesson();
    const saved = process.env.MEMWRAP_VIEW_INDEX;
    process.env.MEMWRAP_VIEW_INDEX = '1';
    try {
      const r = await capture(runReport, [a, '--compare', b, '--html', path.join(dir, 'big.html')]);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/^cc-memwrap report: --html with --compare: \d+\.mwtrace is [\d,.]+ \w+, larger than a compare report holds whole \(the viewer opens it through its index\); cc-memwrap view A --compare B shows both\n$/);
    } finally {
      if (saved === undefined) delete process.env.MEMWRAP_VIEW_INDEX;
      else process.env.MEMWRAP_VIEW_INDEX = saved;
    }
  });
});

/** What a person reads and sees on the compare page: its titles, the differences, the axes and both pictures. */
async function compareSeen(page: Page): Promise<{ texts: string[]; rows: string[][]; ticks: string[][]; pictures: string[] }> {
  return {
    texts: await page.$$eval('#compare-title, #run-a-title, #run-b-title, #differences h2, #differences h3, #differences .budget-diff', (ns) => ns.map((n) => n.textContent ?? '')),
    rows: await page.$$eval('#differences tr', (trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent ?? ''))),
    ticks: [...(await Promise.all((['a', 'b'] as const).flatMap((side) => (['x-axis', 'y-above', 'y-heap'] as const).map((axis) => ticks(page, side, axis)))))],
    pictures: await page.$$eval('#chart-a canvas.plot, #chart-b canvas.plot', (cs) => cs.map((c) => (c as HTMLCanvasElement).toDataURL())),
  };
}

describe('view A --compare B through the index (MEMWRAP_VIEW_INDEX=1): the same page, no trace served whole (Chromium)', () => {
  skipAllWhen(notX86_64Glibc);
  let whole: Awaited<ReturnType<typeof compareSeen>>;
  let wholeRequests: string[] = [];
  let view: ViewPage | null = null;
  let page: Page;

  beforeAll(async () => {
    const { dir, a, b } = await ringLesson();
    const w = await comparePage(a, b, dir, '0');
    try {
      whole = await compareSeen(w.page);
      wholeRequests = w.requests;
    } finally {
      await w.close();
    }
    view = await comparePage(a, b, dir, '1');
    page = view.page;
  });

  afterAll(async () => {
    await view?.close();
  });

  test('the whole-trace page fetched both traces; this one none, and the differences from the host', () => {
    expect(wholeRequests.filter((r) => r.startsWith('/api/trace'))).toEqual(['/api/trace?run=a', '/api/trace?run=b']);
    expect(wholeRequests).not.toContain('/api/compare');
    expect(view!.requests.filter((r) => r.startsWith('/api/trace'))).toEqual([]);
    expect(view!.requests).toContain('/api/index/summary');
    expect(view!.requests).toContain('/api/index/summary?run=b');
    expect(view!.requests).toContain('/api/compare');
  });

  test('the same titles, differences, budgets, axes and pictures as the whole traces give', async () => {
    expect(await page.textContent('#error')).toBe('');
    const seen = await compareSeen(page);
    expect(seen.texts).toEqual(whole.texts);
    expect(seen.rows).toEqual(whole.rows);
    expect(seen.rows).toContainEqual(['samples/ring-buffer.c:32 ring_init → malloc (only in A)', '1 → -', '-1', '2,048 B → -', '-2,048 B', '0 B → -', '0 B']);
    expect(seen.ticks).toEqual(whole.ticks);
    // Drawn from the summaries first, then from the events in view, fetched from the host.
    await expect.poll(async () => (await compareSeen(page)).pictures, { timeout: 10_000 }).toEqual(whole.pictures);
  });

  test('a zoom in one chart is followed by the other, and back', async () => {
    const before = await ticks(page, 'b', 'x-axis');
    await zoomA(page, before);
    await page.mouse.wheel(0, 600);
    await expect.poll(() => ticks(page, 'b', 'x-axis')).toEqual(before);
    await expect.poll(async () => (await compareSeen(page)).pictures).toEqual(whole.pictures);
    expect(view!.errors).toEqual([]);
  });

  test('the API: a trace opened through its index is refused whole, /api/compare answers', async () => {
    const get = (q: string): Promise<Response> => apiGet(view!.server, `api/${q}`);
    expect((await get('trace?run=b')).status).toBe(409);
    const reply = (await (await get('compare')).json()) as { state: string; comparison: { totals: { name: string; change: number }[] } };
    expect(reply.state).toBe('ready');
    expect(reply.comparison.totals.find((t) => t.name === 'static')!.change).toBe(2048);
  });
});
