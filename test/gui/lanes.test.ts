// `cc-memwrap view A B C…` in Chromium, on test/programs/fork-lanes.c (a parent that forks a child part way through):
// what a person sees is one lane per process, each labelled with its pid and program, all on one wall-time axis, so
// the child's chart begins to the right of the parent's, by the time between their starts; a zoom in one lane moves
// the other; a click on a lane opens its trace in the viewer. And what the command refuses: a file that is not a
// trace among them, more traces than the page shows.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MAX_LANES, runView } from '../../cli/view.js';
import type { RunningServer } from '../../host/server.js';
import { readHeader, type TraceHeader } from '../../analysis/trace/header.js';
import { withFileSource } from '../../analysis/trace/file-source.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { capture } from '../fixtures/cli-capture.js';
import { basicTrace, rareRecords13Trace } from '../fixtures/scenarios.js';
import { notX86_64Glibc, skipAllWhen } from '../support/machine.js';
import { buildInstrumented, programsDir, runTraced, scratch, traceOf } from '../support/programs.js';
import { apiGet } from '../support/viewer-api.js';
import { buildRenderer, SCREENSHOTS, viewInBrowser, type ViewPage } from './browser.js';

const dir = scratch('gui-lanes');
const traces = path.join(dir, 'traces');
let parent = '';
let child = '';
let rendererDir = '';

function readTraceHeader(file: string): TraceHeader {
  return withFileSource(file, readHeader);
}

/** Wall time of a trace's first (or last) event, in ns after `since`: its header's start plus the event's time. */
function eventAt(file: string, since: bigint, which: 'first' | 'last'): number {
  const m = decodeTrace(new Uint8Array(readFileSync(file)));
  const t = m.events.time;
  return Number(m.header.startTimeNs - since) + (which === 'first' ? t[0]! : Math.max(...t));
}

/** `cc-memwrap view` with `args`: its exit status and output, and whether it served a page (its server closed again). */
async function view(args: string[]): Promise<{ code: number; out: string; err: string; served: boolean }> {
  let server: RunningServer | null = null;
  const r = await capture((a, io) => runView(a, io, { electron: null, rendererDir, recentFile: path.join(dir, 'recent.json'), onServer: (s) => (server = s) }), args);
  await (server as RunningServer | null)?.close();
  return { ...r, served: server !== null };
}

/** The first (or last) pixel column (from the canvas's left edge, in CSS px) where lane `i`'s plot canvas has anything painted. */
function painted(page: Page, i: number, which: 'first' | 'last' = 'first'): Promise<number> {
  return page.evaluate(
    ([lane, w]) => {
      const c = document.querySelector(`#lane-${lane} canvas.plot`) as HTMLCanvasElement;
      const px = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
      const any = (x: number): boolean => {
        for (let y = 0; y < c.height; y++) if (px[(y * c.width + x) * 4 + 3]! > 0) return true;
        return false;
      };
      if (w === 'first') {
        for (let x = 0; x < c.width; x++) if (any(x)) return x / (c.width / c.clientWidth);
      } else for (let x = c.width - 1; x >= 0; x--) if (any(x)) return x / (c.width / c.clientWidth);
      return -1;
    },
    [i, which] as const,
  );
}

/** How many pixels of lane `i`'s plot canvas are painted. */
function paintedCount(page: Page, i: number): Promise<number> {
  return page.evaluate((lane) => {
    const c = document.querySelector(`#lane-${lane} canvas.plot`) as HTMLCanvasElement;
    const px = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let k = 3; k < px.length; k += 4) if (px[k]! > 0) n++;
    return n;
  }, i);
}

function ticks(page: Page, i: number): Promise<string[]> {
  return page.$$eval(`#lane-${i} svg.axes .x-axis .tick text`, (nodes) => nodes.map((n) => n.textContent ?? ''));
}

/** Zooms into lane 1: lane 0 follows it; then "whole run" brings both back to the x ticks `before`. */
async function zoomLaneAndBack(page: Page, before: string[]): Promise<void> {
  const box = (await page.locator('#lane-1 canvas.plot').boundingBox())!;
  await page.mouse.move(box.x + box.width * 0.6, box.y + box.height / 3);
  await page.mouse.wheel(0, -500);
  await expect.poll(() => ticks(page, 0)).not.toEqual(before);
  await expect.poll(async () => JSON.stringify(await ticks(page, 0))).toBe(JSON.stringify(await ticks(page, 1)));
  await page.click('#whole-run');
  await expect.poll(() => ticks(page, 0)).toEqual(before);
  await expect.poll(() => ticks(page, 1)).toEqual(before);
}

beforeAll(async () => {
  const exe = path.join(dir, 'fork-lanes');
  buildInstrumented('gcc', ['-O0', '-g'], [path.join(programsDir, 'fork-lanes.c')], exe);
  const ran = runTraced(exe, [], traces);
  if (ran.status !== 0) throw new Error(`fork-lanes exited ${ran.status}: ${ran.stderr}`);
  parent = traceOf(traces, ran.pid);
  child = readdirSync(traces).map((f) => path.join(traces, f)).find((f) => f !== parent)!;
  rendererDir = await buildRenderer();
}, 120_000);

describe('view A B: lanes on one wall-time axis (Chromium)', () => {
  skipAllWhen(notX86_64Glibc);
  let lanes: ViewPage | null = null;
  let page: Page;
  let printed = '';
  let errors: string[] = [];

  beforeAll(async () => {
    lanes = await viewInBrowser([parent, child], { rendererDir, recentFile: path.join(dir, 'recent.json'), handle: 'ccMemwrapLanes', viewport: { width: 1200, height: 480 } });
    ({ page, printed, errors } = lanes);
  }, 120_000);

  afterAll(async () => {
    await lanes?.close();
  });

  test('the command says how many traces and where the lanes page is', () => {
    expect(printed).toMatch(/^cc-memwrap view: 2 traces as lanes at http:\/\/127\.0\.0\.1:\d+\/lanes\.html\?token=[\w-]{43}$/m);
  });

  test('one lane per process, labelled with its pid, its parent and its program', async () => {
    expect(await page.textContent('#error')).toBe('');
    const [p, c] = [readTraceHeader(parent), readTraceHeader(child)];
    expect(c.ppid).toBe(p.pid);
    const titles = await page.$$eval('.lane-title', (hs) => hs.map((h) => h.textContent ?? ''));
    expect(titles).toHaveLength(2);
    expect(titles[0]).toMatch(new RegExp(`^pid ${p.pid} · fork-lanes${path.basename(parent).replace('.', '\\.')} · started first · parent ${p.ppid} · `));
    expect(titles[1]).toMatch(new RegExp(`^pid ${c.pid} · fork-lanes${path.basename(child).replace('.', '\\.')} · started \\+[\\d.]+ ms · parent ${p.pid} · `));
    // The parent's 40 KiB and the child's 60 KiB of heap at their peaks.
    expect(titles[0]).toContain('peak heap 40,960 B');
    expect(titles[1]).toContain('peak heap 61,440 B');
  });

  test('the child begins right of the parent, by the time between their starts, on the same x axis', async () => {
    const [p, c] = [readTraceHeader(parent), readTraceHeader(child)];
    const delayNs = Number(c.startTimeNs - p.startTimeNs);
    expect(delayNs).toBeGreaterThan(15e6); // forked after 20 steps of at least 1 ms each
    expect(await ticks(page, 1)).toEqual(await ticks(page, 0));
    // The picture in docs/processes.md (docs/images/view-lanes-fork.png) is this one, looked at and copied there.
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOTS, 'view-lanes-fork.png'), fullPage: true });
    const [p0, c0] = [await painted(page, 0), await painted(page, 1)];
    expect(p0).toBeGreaterThanOrEqual(0);
    // The x axis runs from the parent's start to the last event of either: where the child must begin.
    const { plotLeft, plotWidth, endNs } = await page.evaluate(() => {
      const axis = document.querySelector('#lane-0 svg.axes .x-axis') as SVGGElement;
      const left = Number(/translate\(([-\d.]+)/.exec(axis.getAttribute('transform')!)![1]);
      const text = document.getElementById('lanes-axis')!.textContent!;
      const m = /to its last event ([\d.]+) ms later/.exec(text)!;
      const plot = axis.querySelector('.domain')!.getBoundingClientRect();
      return { plotLeft: left, plotWidth: plot.width, endNs: Number(m[1]) * 1e6 };
    });
    // Each lane begins at its first event: its trace's start plus that event's time (the runtime's set-up comes first).
    const at = (file: string, which: 'first' | 'last'): number => plotLeft + (plotWidth * eventAt(file, p.startTimeNs, which)) / endNs;
    expect(Math.abs(p0 - at(parent, 'first'))).toBeLessThan(3);
    expect(Math.abs(c0 - at(child, 'first'))).toBeLessThan(3);
    expect(c0).toBeGreaterThan(p0 + 100);
    // The child ends before the parent, with 2 KiB still live: its lane stops at its last event all the same.
    const [p1, c1] = [await painted(page, 0, 'last'), await painted(page, 1, 'last')];
    expect(Math.abs(c1 - at(child, 'last'))).toBeLessThan(4);
    expect(p1).toBeGreaterThan(c1 + 20);
    // Where the page says each lane's first event is agrees.
    const [x0, x1] = await page.evaluate(() => {
      const h = (window as unknown as { ccMemwrapLanes: { firstEventClientX(i: number): number | null } }).ccMemwrapLanes;
      return [h.firstEventClientX(0)!, h.firstEventClientX(1)!];
    });
    expect(x1 - x0).toBeCloseTo(c0 - p0, -1);
  });

  test('a zoom in one lane moves the other with it; back to the whole run, both are drawn as before', async () => {
    const before = await ticks(page, 0);
    const pictures = (): Promise<string[]> => page.$$eval('.lane canvas.plot', (cs) => cs.map((c) => (c as HTMLCanvasElement).toDataURL()));
    const drawn = await pictures();
    await zoomLaneAndBack(page, before);
    // Nothing of the zoomed frames is left: not before the child's start, where its lane is empty.
    await expect.poll(pictures).toEqual(drawn);
  });

  test('a click on a lane opens its trace in the viewer', async () => {
    const box = (await page.locator('#lane-1 canvas.plot').boundingBox())!;
    const c0 = await painted(page, 1);
    await page.mouse.click(box.x + c0 + 2, box.y + box.height / 3);
    await page.waitForURL(/\/index\.html$/, { timeout: 10_000 });
    await page.waitForFunction(() => (window as unknown as { ccMemwrapView?: { ready: boolean } }).ccMemwrapView?.ready === true, null, { timeout: 30_000 });
    expect(page.url()).toMatch(/\/index\.html$/);
    expect(await page.textContent('#trace-name')).toContain(path.basename(child));
    expect(errors).toEqual([]);
  });
});

/** Runs `fn` with MEMWRAP_VIEW_INDEX set to `value` (the mode `view` picks as it starts), then restores it. */
async function withIndexEnv<T>(value: '0' | '1', fn: () => Promise<T>): Promise<T> {
  const saved = process.env.MEMWRAP_VIEW_INDEX;
  process.env.MEMWRAP_VIEW_INDEX = value;
  try {
    return await fn();
  } finally {
    if (saved === undefined) delete process.env.MEMWRAP_VIEW_INDEX;
    else process.env.MEMWRAP_VIEW_INDEX = saved;
  }
}

/** What a person reads and sees on a lanes page: the toolbar's texts, each lane's title, axis ticks and picture. */
async function lanesSeen(page: Page): Promise<{ title: string; axis: string; titles: string[]; ticks: string[][]; pictures: string[] }> {
  return {
    title: (await page.textContent('#lanes-title')) ?? '',
    axis: (await page.textContent('#lanes-axis')) ?? '',
    titles: await page.$$eval('.lane-title', (hs) => hs.map((h) => h.textContent ?? '')),
    ticks: [await ticks(page, 0), await ticks(page, 1)],
    pictures: await page.$$eval('.lane canvas.plot', (cs) => cs.map((c) => (c as HTMLCanvasElement).toDataURL())),
  };
}

describe('view A B through the index (MEMWRAP_VIEW_INDEX=1): the same lanes, no trace served whole (Chromium)', () => {
  skipAllWhen(notX86_64Glibc);
  let whole: ReturnType<typeof lanesSeen> extends Promise<infer T> ? T : never;
  let wholeRequests: string[] = [];
  /** The same traces decoded whole, kept open to be zoomed as this page is. */
  let wholeView: ViewPage | null = null;
  let indexed: ViewPage | null = null;
  let page: Page;
  const copies = path.join(dir, 'indexed');

  beforeAll(async () => {
    // Copies, so that the indexes are written beside them and not beside the traces the other tests read.
    mkdirSync(copies);
    const files = [parent, child].map((f) => path.join(copies, path.basename(f)));
    copyFileSync(parent, files[0]!);
    copyFileSync(child, files[1]!);
    const o = { rendererDir, recentFile: path.join(dir, 'recent.json'), handle: 'ccMemwrapLanes', viewport: { width: 1200, height: 480 } };
    // Each server decides its lanes' mode as it starts: both pages stay open side by side.
    wholeView = await withIndexEnv('0', () => viewInBrowser(files, o));
    whole = await lanesSeen(wholeView.page);
    wholeRequests = [...wholeView.requests];
    indexed = await withIndexEnv('1', () => viewInBrowser(files, o));
    page = indexed.page;
  }, 120_000);

  afterAll(async () => {
    await indexed?.close();
    await wholeView?.close();
  });

  test('the whole-trace page fetched both traces; this one none, asking each lane\'s index instead', () => {
    expect(wholeRequests.filter((r) => r.startsWith('/api/trace'))).toEqual(['/api/trace?lane=0', '/api/trace?lane=1']);
    expect(indexed!.requests.filter((r) => r.startsWith('/api/trace'))).toEqual([]);
    expect(indexed!.requests).toContain('/api/index/summary?lane=0');
    expect(indexed!.requests).toContain('/api/index/summary?lane=1');
  });

  test('the same titles, facts and axis as the whole traces give, and the same pictures', async () => {
    expect(await page.textContent('#error')).toBe('');
    const seen = await lanesSeen(page);
    expect(seen.title).toBe(whole.title);
    expect(seen.axis).toBe(whole.axis);
    expect(seen.titles).toEqual(whole.titles);
    expect(seen.ticks).toEqual(whole.ticks);
    // The lanes are drawn from their summaries first, then from the events in view, fetched from the host.
    await expect.poll(async () => (await lanesSeen(page)).pictures, { timeout: 10_000 }).toEqual(whole.pictures);
  });

  test('a zoom in one lane moves the other; back to the whole run, both are drawn as before', async () => {
    const before = await ticks(page, 0);
    const drawn = (await lanesSeen(page)).pictures;
    await zoomLaneAndBack(page, before);
    await expect.poll(async () => (await lanesSeen(page)).pictures).toEqual(drawn);
  });

  test("zoomed far in at the child's first event, the same ticks and bars as the whole traces give", async () => {
    const zoom = async (p: Page): Promise<void> => {
      const box = (await p.locator('#lane-1 canvas.plot').boundingBox())!;
      const x = await p.evaluate(() => (window as unknown as { ccMemwrapLanes: { firstEventClientX(i: number): number | null } }).ccMemwrapLanes.firstEventClientX(1)!);
      await p.mouse.move(x + 1, box.y + box.height / 3);
      for (let i = 0; i < 12; i++) await p.mouse.wheel(0, -300);
    };
    await zoom(wholeView!.page);
    await zoom(page);
    await expect.poll(() => ticks(page, 1)).toEqual(await ticks(wholeView!.page, 1));
    expect(await ticks(page, 1)).not.toEqual(whole.ticks[1]);
    // The events in view, fetched from the host, drawn one by one as the whole traces draw them: the same bars, but
    // not to the pixel (the index keeps times to the nanosecond, the decoded trace their fractions: at this zoom a
    // nanosecond is a fraction of a pixel).
    const bars = async (p: Page, i: number): Promise<number[]> => [await painted(p, i, 'first'), await painted(p, i, 'last'), await paintedCount(p, i)];
    for (const i of [0, 1]) {
      const want = await bars(wholeView!.page, i);
      await expect.poll(async () => {
        const got = await bars(page, i);
        return Math.abs(got[0]! - want[0]!) <= 1 && Math.abs(got[1]! - want[1]!) <= 1 && Math.abs(got[2]! - want[2]!) <= want[2]! * 0.01;
      }, { timeout: 10_000 }).toBe(true);
    }
    await wholeView!.page.click('#whole-run');
    await page.click('#whole-run');
    await expect.poll(() => ticks(page, 0)).toEqual(whole.ticks[0]);
  });

  test('the API refuses a lane drawn from its index whole, and answers its index', async () => {
    const get = (q: string): Promise<Response> => apiGet(indexed!.server, `api/${q}`);
    const refused = await get('trace?lane=1');
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { error: string }).error).toBe(`${path.basename(child)} is drawn through its index: ask /api/index?lane=1`);
    expect((await get('index?lane=1')).status).toBe(200);
    expect((await get('index?lane=2')).status).toBe(404);
    // No compared trace here: nothing to compare.
    expect((await get('compare')).status).toBe(404);
  });

  test('a click on a lane opens its trace in the viewer, through its index', async () => {
    const box = (await page.locator('#lane-1 canvas.plot').boundingBox())!;
    const c0 = await painted(page, 1);
    await page.mouse.click(box.x + c0 + 2, box.y + box.height / 3);
    await page.waitForURL(/\/index\.html$/, { timeout: 10_000 });
    await page.waitForFunction(() => (window as unknown as { ccMemwrapView?: { ready: boolean } }).ccMemwrapView?.ready === true, null, { timeout: 30_000 });
    expect(await page.textContent('#trace-name')).toContain(path.basename(child));
    expect(await page.evaluate(() => (window as unknown as { ccMemwrapView: { mode: string } }).ccMemwrapView.mode)).toBe('index');
    expect(indexed!.requests.filter((r) => r.startsWith('/api/trace'))).toEqual([]);
    expect(indexed!.errors).toEqual([]);
  });
});

describe('view A B: MPI ranks and the lanes API (Chromium)', () => {
  skipAllWhen(notX86_64Glibc);
  let lanes: ViewPage | null = null;

  beforeAll(async () => {
    const made = path.join(dir, 'made');
    mkdirSync(made);
    writeFileSync(path.join(made, 'a.mwtrace'), basicTrace().build());
    writeFileSync(path.join(made, 'b.mwtrace'), rareRecords13Trace().build());
    lanes = await viewInBrowser([made], { rendererDir, recentFile: path.join(dir, 'recent.json'), handle: 'ccMemwrapLanes', viewport: { width: 1000, height: 500 } });
  }, 120_000);

  afterAll(async () => {
    await lanes?.close();
  });

  test('a trace with an MPI rank is labelled with it, before its pid', async () => {
    const titles = await lanes!.page.$$eval('.lane-title button', (bs) => bs.map((b) => b.textContent ?? ''));
    expect(titles).toEqual(['pid 1234 · demo', 'rank 3 · pid 4322 · demo']);
    expect(lanes!.errors).toEqual([]);
  });

  test('the API serves only the listed lanes, and only with its header', async () => {
    const get = (q: string, headers: Record<string, string> = { 'x-cc-memwrap': '1' }): Promise<number> => fetch(new URL(`api/${q}`, lanes!.server.url), { headers: { cookie: lanes!.server.cookie, ...headers } }).then((r) => r.status);
    expect(await get('trace?lane=1')).toBe(200);
    expect(await get('trace?lane=2')).toBe(404);
    expect(await get('trace?lane=../a.mwtrace')).toBe(404);
    expect(await get('trace?lane=1', {})).toBe(403);
    const listed = (await (await apiGet(lanes!.server, 'api/lanes')).json()) as { lanes: { name: string }[] };
    expect(listed.lanes.map((l) => l.name)).toEqual(['a.mwtrace', 'b.mwtrace']);
  });
});

describe('view A B: what it refuses', () => {
  test('a file that is not a trace among them: exit 2, naming it', async () => {
    const bogus = path.join(dir, 'notes.mwtrace');
    writeFileSync(bogus, 'not a trace at all, just some text\n');
    const r = await view([parent, bogus, child]);
    expect(r.served).toBe(false);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/^cc-memwrap view: .*notes\.mwtrace: /);
  });

  test(`more than ${MAX_LANES} traces: exit 2, saying the limit`, async () => {
    const many = path.join(dir, 'many');
    mkdirSync(many);
    for (let i = 0; i <= MAX_LANES; i++) copyFileSync(parent, path.join(many, `${1000 + i}.mwtrace`));
    const r = await view([many]);
    expect(r.served).toBe(false);
    expect(r.code).toBe(2);
    expect(r.err).toBe(`cc-memwrap view: ${MAX_LANES + 1} traces: the lanes page shows at most ${MAX_LANES}, one lane per process; name fewer (or report them all: cc-memwrap report)\n`);
    // Exactly the limit is served.
    const fewer = path.join(dir, 'fewer');
    mkdirSync(fewer);
    for (let i = 0; i < MAX_LANES; i++) copyFileSync(parent, path.join(fewer, `${1000 + i}.mwtrace`));
    const r3 = await view([fewer]);
    expect(r3.err).toBe('');
    expect(r3.served).toBe(true);
    expect(r3.out).toContain(`${MAX_LANES} traces as lanes at`);
  });

  test('--compare with several traces is refused', async () => {
    const r = await view([parent, child, '--compare', parent]);
    expect(r.served).toBe(false);
    expect(r.code).toBe(2);
    expect(r.err).toContain('--compare compares two traces');
  });
});
