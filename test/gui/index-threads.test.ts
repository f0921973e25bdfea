// The thread filter and the "libc heap" toggle in index mode, in real Chromium: test/programs/thread-libc.c (four
// threads, a FILE and stdout's buffer allocated inside libc) shown whole and through its index; with a thread
// selected, with the libc heap hidden and with both, the chart draws the same numbers in both modes (the page's
// automation handle reads what the last frame drew) at full zoom-out, in the overview strip and zoomed into a range,
// lists the same threads, says the same in its status line, and n walks the selected thread's events; a report file
// of the trace through its index (report --html) draws the events it holds as the whole trace's report does.
import { copyFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { nextEventOfClass } from '../../analysis/event-sets.js';
import type { Model } from '../../analysis/model.js';
import { writeHtmlReport, writeSessionReport } from '../../host/html-report.js';
import { TraceSession } from '../../host/trace-session.js';
import { programsDir, scratch } from '../support/programs.js';
import { buildReportTemplate, launch, openReportFile, selectedEvent, traceProgram, wholeAndIndexed, type Viewer } from './browser.js';

interface Drawn {
  kind: string;
  events: number[];
  above: number[];
  heap: number[];
  static: number[];
  masks: number[];
}
type Handle = {
  mode: string;
  events: number;
  hasEvents(a: number, b: number): boolean;
  zoomToEvents(a: number, b: number): void;
  visibleEvents(): [number, number];
  drawn(which: 'view' | 'overview'): Drawn | null;
};

/** Shows events [a, b) and, in index mode, waits until they have arrived (drawn from the events, not summaries). */
async function showRange(page: Page, a: number, b: number): Promise<void> {
  await page.evaluate(([x, y]) => (window as unknown as { ccMemwrapView: Handle }).ccMemwrapView.zoomToEvents(x!, y!), [a, b]);
  await page.waitForFunction(
    ([x, y]) => {
      const h = (window as unknown as { ccMemwrapView: Handle }).ccMemwrapView;
      const [v0, v1] = h.visibleEvents();
      return h.mode !== 'index' || h.hasEvents(Math.max(0, v0 - 1), Math.min(h.events, v1 + 1)) || h.hasEvents(x!, y!);
    },
    [a, b],
  );
  // A zoom is drawn at the next animation frame: what is read after it is that frame's.
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
}

function drawn(page: Page, which: 'view' | 'overview'): Promise<Drawn | null> {
  return page.evaluate((w) => (window as unknown as { ccMemwrapView: Handle }).ccMemwrapView.drawn(w), which);
}

/** The toolbar set as a person sets it: a thread chosen ("all" or a row), the libc heap shown or not. */
async function setControls(page: Page, thread: string, libc: boolean): Promise<void> {
  await page.selectOption('#thread', thread);
  await page.setChecked('#show-libc', libc);
}

describe('index mode: thread filter and libc toggle', () => {
  let model: Model;
  let whole: Viewer;
  let indexed: Viewer;

  beforeAll(async () => {
    ({ model, whole, indexed } = await wholeAndIndexed(path.join(programsDir, 'thread-libc.c'), 'index-threads'));
  }, 120_000);
  afterAll(async () => {
    await whole?.close();
    await indexed?.close();
  });

  test('the controls are on and list the same threads', async () => {
    const mode = await indexed.page.evaluate(() => (window as unknown as { ccMemwrapView: Handle }).ccMemwrapView.mode);
    expect(mode).toBe('index');
    for (const id of ['#thread', '#show-libc']) expect(await indexed.page.locator(id).isDisabled(), id).toBe(false);
    const options = (p: Page): Promise<string[]> => p.locator('#thread option').allTextContents();
    const listed = await options(indexed.page);
    expect(listed).toEqual(await options(whole.page));
    expect(listed).toHaveLength(model.threads.length + 1);
  });

  // The busiest worker: its own stack is well below all threads' together.
  const cases: [string, () => string, boolean][] = [
    ['one thread', () => String(busiest(model)), true],
    ['libc heap hidden', () => 'all', false],
    ['one thread, libc heap hidden', () => String(busiest(model)), false],
    ['another thread', () => '1', true],
  ];
  for (const [name, thread, libc] of cases) {
    test(`${name}: the same numbers drawn as whole mode, zoomed out, in the overview and zoomed in`, async () => {
      const n = model.events.count;
      const shown: Record<string, (Drawn | null)[]> = {};
      for (const v of [whole, indexed]) {
        // Zoomed out with every event fetched, then the controls set: the overview is drawn from them too.
        await setControls(v.page, 'all', true);
        await showRange(v.page, 0, n);
        await setControls(v.page, thread(), libc);
        await showRange(v.page, 0, n);
        const out = [await drawn(v.page, 'view'), await drawn(v.page, 'overview')];
        await showRange(v.page, Math.floor(n / 3), Math.floor(n / 3) + 3000);
        out.push(await drawn(v.page, 'view'));
        await showRange(v.page, Math.floor(n / 2), Math.floor(n / 2) + 60);
        out.push(await drawn(v.page, 'view'));
        // The status line says what the libc toggle hid (else it says how the trace was opened, which differs).
        if (!libc) out.push([(await v.page.locator('#status-line').textContent()) ?? ''] as unknown as Drawn);
        shown[v === whole ? 'whole' : 'indexed'] = out;
      }
      const [w, ix] = [shown.whole!, shown.indexed!];
      expect(w[0]!.kind).toBe('columns');
      expect(w[3]!.kind).toBe('bars');
      for (let i = 0; i < w.length; i++) expect(ix[i], `${['zoomed out', 'overview', 'a range', 'bars', 'status line'][i]}`).toEqual(w[i]);
      if (!libc) expect(String(w[4])).toMatch(/^Hidden: \d+ blocks allocated inside libc/);
      expect(whole.errors).toEqual([]);
      expect(indexed.errors).toEqual([]);
    });
  }

  test('n walks the selected thread\'s events of the kind chosen, as in whole mode', async () => {
    const t = busiest(model);
    // The thread's allocations, the first few: other threads' events lie between them.
    const want: number[] = [];
    for (let from = -1; want.length < 3; ) want.push((from = nextEventOfClass(model, from, 1, 'alloc', t)!));
    expect(want[2]! - want[0]!).toBeGreaterThan(2);
    for (const v of [whole, indexed]) {
      await setControls(v.page, String(t), true);
      await v.page.selectOption('#walk-kind', 'alloc');
      // Keys typed into the toolbar's controls are theirs: the focus leaves them first.
      await v.page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
      for (const e of want) {
        await v.page.keyboard.press('n');
        await expect.poll(() => selectedEvent(v.page), v === whole ? 'whole' : 'indexed').toBe(e);
      }
      await setControls(v.page, 'all', true);
    }
    expect(indexed.errors).toEqual([]);
  });

  test('the filters change what is drawn (the comparisons above compare something)', async () => {
    const { page } = indexed;
    const n = model.events.count;
    await setControls(page, 'all', true);
    await showRange(page, 0, n);
    const all = (await drawn(page, 'view'))!;
    await setControls(page, String(busiest(model)), false);
    const filtered = (await drawn(page, 'view'))!;
    expect(Math.max(...filtered.above)).toBeLessThan(Math.max(...all.above));
    expect(Math.max(...filtered.heap)).toBeLessThan(Math.max(...all.heap));
    await setControls(page, 'all', true);
  });
});

describe('index mode in a report file: thread filter and libc toggle', () => {
  let browser: Browser;
  let model: Model;
  let whole: Page;
  let indexed: Page;
  let window_: { first: number; end: number };
  const errors: string[] = [];
  const blocked: string[] = [];

  beforeAll(async () => {
    const ran = traceProgram(path.join(programsDir, 'thread-libc.c'));
    model = ran.model;
    const dir = scratch('index-threads-report');
    const copy = path.join(dir, path.basename(ran.trace));
    copyFileSync(ran.trace, copy);
    const template = await buildReportTemplate();
    const wholeFile = path.join(dir, 'whole.html');
    writeHtmlReport(await TraceSession.open(ran.trace), wholeFile, template);
    const indexFile = path.join(dir, 'indexed.html');
    const n = model.events.count;
    await writeSessionReport(await TraceSession.open(copy, { index: true }), indexFile, template, { windowEvents: Math.floor(n / 2) });
    browser = await launch();
    whole = await openReportFile(browser, wholeFile, errors, blocked);
    indexed = await openReportFile(browser, indexFile, errors, blocked);
    const text = (await indexed.locator('#report-notice').textContent()) ?? '';
    const m = /only for events ([\d,]+)–([\d,]+), around the total peak/.exec(text);
    if (m === null) throw new Error(`the notice reads "${text}"`);
    const num = (v: string): number => Number(v.replace(/,/g, ''));
    window_ = { first: num(m[1]!), end: num(m[2]!) + 1 };
  }, 180_000);
  afterAll(() => browser?.close());

  test('a range of the events it holds, with a thread selected and the libc heap hidden, as the whole report draws it', async () => {
    expect(await indexed.evaluate(() => (window as unknown as { ccMemwrapView: Handle }).ccMemwrapView.mode)).toBe('index');
    const a = window_.first + Math.floor((window_.end - window_.first) / 4);
    const b = a + Math.floor((window_.end - window_.first) / 4);
    const t = String(busiest(model));
    const seen: (Drawn | null)[][] = [];
    for (const page of [whole, indexed]) {
      const out: (Drawn | null)[] = [];
      for (const [thread, libc] of [
        [t, true],
        ['all', false],
        [t, false],
      ] as const) {
        await setControls(page, thread, libc);
        await showRange(page, a, b);
        out.push(await drawn(page, 'view'));
      }
      await setControls(page, 'all', true);
      seen.push(out);
    }
    expect(seen[0]![0]!.kind).toBe('columns');
    expect(seen[1]).toEqual(seen[0]);
    expect(seen[0]![0]).not.toEqual(seen[0]![1]);
    expect(errors).toEqual([]);
    expect(blocked).toEqual([]);
  });
});

/** The thread row with the most events. */
function busiest(model: Model): number {
  let best = 0;
  for (let t = 1; t < model.threads.length; t++) if (model.threads[t]!.events > model.threads[best]!.events) best = t;
  return best;
}
