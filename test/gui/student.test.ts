// The viewer in real Chromium on a student's program, test/programs/bst.c (a tree, a realloc'd string builder, a checksum recursing six deep with a 128-byte buffer per frame): a stack budget names the frames on the stack, each with its bytes, not the heap; the two peaks (heap; heap + stack + static) are named for what they are and each goes to its own event; counts read "1 event", "1 object"; the run's end is not said to be inside libc; the title says a trace is loading while it loads.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Model } from '../../analysis/model.js';
import { peaks } from '../../analysis/peak.js';
import { siteInfo } from '../../analysis/sites.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { formatBytes, formatCount } from '../../analysis/units.js';
import { programsDir, scratch } from '../support/programs.js';
import { Kind } from '../../analysis/trace/format.js';
import { TraceBuilder } from '../fixtures/trace-builder.js';
import { buildRenderer, clickEvent, openViewer, selectedEvent, serve, shot, traceProgram, viewerOn, type Viewer } from './browser.js';

/** The frames of `name`, in order of entry. */
function framesOf(model: Model, name: string): number[] {
  const out: number[] = [];
  for (let f = 0; f < model.frames.count; f++) if (siteInfo(model, model.frames.entrySite[f]!)?.name === name) out.push(f);
  return out;
}

const openPanel = (page: Page, name: string) => page.locator(`#panel-tabs button[data-panel=${name}]`).click();

describe('viewer on test/programs/bst.c', () => {
  let trace: string;
  let model: Model;
  let viewer: Viewer;

  beforeAll(async () => {
    ({ trace, model } = traceProgram(path.join(programsDir, 'bst.c')));
    viewer = await viewerOn(trace);
  });

  afterAll(() => viewer?.close());

  test('a stack budget lists the frames on the stack when it was exceeded, checksum × 6 with the bytes of each', async () => {
    const checksums = framesOf(model, 'checksum');
    expect(checksums).toHaveLength(6);
    const [main] = framesOf(model, 'main');
    const depth = (f: number) => model.frames.depth[f]!;
    // Above the fifth call's depth: only while the sixth is on the stack.
    const limit = depth(checksums[4]!);
    const budgeted = await serve(await buildRenderer(), trace, { budgets: { heap: 4200, stack: limit } });
    const page = await openViewer(viewer.browser, budgeted.pageUrl(), viewer.errors);
    try {
      await openPanel(page, 'budgets');
      const rows = await page.locator('#panel-body tr.clickable').allTextContents();
      const stackRow = rows.find((r) => r.startsWith('stack ≤'));
      expect(stackRow).toContain('exceeded');
      expect(stackRow).toMatch(/main, checksum × 6$/);
      expect(stackRow).not.toContain('heap');
      // The heap budget still names the heap.
      expect(rows.find((r) => r.startsWith('heap ≤'))).toMatch(/heap: .*main.* 4\.0 KiB$/);

      const sixth = model.frames.enter[checksums[5]!]!;
      const box = page.locator('[data-role=budget-stack]');
      expect(await box.locator('h4').textContent()).toContain(`the stack at its start (event ${sixth})`);
      expect(await box.locator('.headline').textContent()).toBe(`thread 0: ${formatCount(depth(checksums[5]!))} B in 7 frames`);
      const expected = [
        `main ${formatCount(depth(main!))} B from the stack base`,
        ...checksums.map((f, i) => `checksum ${formatCount(depth(f) - (i === 0 ? depth(main!) : depth(checksums[i - 1]!)))} B`),
      ];
      expect(await box.locator('ol.stack li').allTextContents()).toEqual(expected);
      // Every checksum frame holds its char scratch[128]: more than 128 bytes each.
      for (let i = 1; i < 6; i++) expect(depth(checksums[i]!) - depth(checksums[i - 1]!)).toBeGreaterThan(128);
      await box.locator('ol.stack li').last().scrollIntoViewIfNeeded();
      await shot(page, 'student-budget-stack');
      // A frame selects its call.
      await box.locator('ol.stack li button').nth(3).click();
      expect(await selectedEvent(page)).toBe(model.frames.enter[checksums[2]!]);
      expect(viewer.errors).toEqual([]);
    } finally {
      await page.close();
      await budgeted.close();
    }
  });

  test('"Total peak" in the toolbar goes to the most heap + stack + static; the "Heap peak" tab to the most heap', async () => {
    const { page } = viewer;
    const p = peaks(model);
    // bst.c: the heap peaks at the sixth node, the total while checksum is six deep.
    const nodes: number[] = [];
    for (let b = 0; b < model.blocks.count; b++) if (siteInfo(model, model.blocks.site[b]!)?.line === 34) nodes.push(b);
    expect(nodes).toHaveLength(6);
    expect(p.heap.event).toBe(model.blocks.allocEvent[nodes[5]!]);
    expect(p.total.event).not.toBe(p.heap.event);
    expect(p.total.event).toBe(model.frames.enter[framesOf(model, 'checksum')[5]!]);

    const button = page.locator('#peak');
    expect((await button.textContent())!.trim()).toBe('Total peak');
    expect(await button.getAttribute('title')).toContain('heap + stack + static');
    await button.click();
    expect(await selectedEvent(page)).toBe(p.total.event);
    expect(await selectedEvent(page)).toBe(p.total.event);

    const tab = page.locator('#panel-tabs button[data-panel=peak]');
    expect(await tab.textContent()).toBe('Heap peak');
    await tab.click();
    const heapLink = page.locator('#panel-body [data-role=heap-peak]');
    expect(await heapLink.textContent()).toBe(`Heap peak: ${formatBytes(p.heap.peakBytes)} at event ${p.heap.event} (${p.heap.liveBlocks} live blocks)`);
    await heapLink.click();
    expect(await selectedEvent(page)).toBe(p.heap.event);
    // The panel names the total peak too, and its link goes where the toolbar's button goes.
    const totalLink = page.locator('#panel-body [data-role=total-peak]');
    expect(await totalLink.textContent()).toBe(`${formatBytes(p.total.peakBytes)} at event ${p.total.event}`);
    expect(await page.locator('#panel-body p.hint').textContent()).toContain('Total peak (heap + stack + static');
    await shot(page, 'student-peaks');
    await totalLink.click();
    expect(await selectedEvent(page)).toBe(p.total.event);
    expect(viewer.errors).toEqual([]);
  });

  test('counts of one read in the singular: "1 object" in the summary, "1 event" in the title', async () => {
    const { page } = viewer;
    await openPanel(page, 'summary');
    const cell = (label: string) => page.locator('#panel-body tr', { has: page.locator(`td:text-is("${label}")`) }).locator('td').nth(1).textContent();
    expect(model.statics.count).toBe(1); // keys[], 24 bytes
    expect(await cell('Static')).toBe('24 B in 1 object');
    expect(await cell('Live at exit')).toMatch(/^3 blocks, /);
    expect(await page.locator('#trace-name').textContent()).toBe(`${path.basename(trace)} — ${model.events.count} events`);

    const b = new TraceBuilder({ complete: false });
    b.thread(0).threadBegin(7);
    const one = path.join(scratch('gui-one-event'), 'one.1.mwtrace');
    writeFileSync(one, b.build());
    expect(decodeTrace(b.build()).events.count).toBe(1);
    const served = await serve(await buildRenderer(), one);
    const p = await openViewer(viewer.browser, served.pageUrl(), viewer.errors);
    try {
      expect(await p.locator('#trace-name').textContent()).toBe('one.1.mwtrace — 1 event');
      expect(await p.title()).toBe('one.1.mwtrace — 1 event · cc-memwrap');
      expect(await p.locator('body').textContent()).not.toMatch(/\b1 (events|objects|blocks|frames)\b/);
    } finally {
      await p.close();
      await served.close();
    }
    expect(viewer.errors).toEqual([]);
  });

  test("the run's end says it is the run's end, not libc", async () => {
    const { page } = viewer;
    const end = model.events.count - 1;
    expect(model.events.kind[end]).toBe(Kind.END);
    await clickEvent(page, end);
    expect(await selectedEvent(page)).toBe(end);
    const pane = page.locator('#source-body');
    expect(await pane.textContent()).toBe('The run ended here (normal exit, status 0). The end of a run has no source line.');
    await shot(page, 'student-end');
    // An allocation inside libc still says so: the stdout buffer of the first puts.
    const stdoutBuffer = model.events.newBlock.findIndex((b, e) => b >= 0 && model.blocks.interposed[b] === 1 && model.events.kind[e] === Kind.ALLOC);
    expect(stdoutBuffer).toBeGreaterThan(0);
    await clickEvent(page, stdoutBuffer);
    expect(await selectedEvent(page)).toBe(stdoutBuffer);
    expect(await page.locator('#detail dl.facts dd').first().textContent()).toContain('ALLOC (via libc/uninstrumented)');
    expect(viewer.errors).toEqual([]);
  });

  test('the title says the trace is loading while it loads, then names it', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const page = await viewer.browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on('pageerror', (e) => viewer.errors.push(e.message));
    await page.route('**/api/trace', async (route) => {
      await gate;
      await route.continue();
    });
    try {
      await page.goto(viewer.server.pageUrl());
      await page.waitForSelector('#progress:not([hidden])');
      const name = path.basename(trace);
      expect(await page.locator('#trace-name').textContent()).toBe(`Loading ${name}…`);
      expect(await page.title()).toBe(`Loading ${name}… · cc-memwrap`);
      await shot(page, 'student-loading');
      release();
      await page.waitForFunction(() => (window as unknown as { ccMemwrapView?: { ready: boolean } }).ccMemwrapView?.ready === true);
      expect(await page.locator('#trace-name').textContent()).toBe(`${name} — ${model.events.count} events`);
    } finally {
      release();
      await page.close();
    }
    expect(viewer.errors).toEqual([]);
  });
});
