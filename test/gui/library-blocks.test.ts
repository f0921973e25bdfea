// The block libc makes behind a student's back, in real Chromium on test/programs/mq.c built with -DFIX and a 1 KiB
// heap budget: the first printf (line 47, in drain) makes stdout's 4 KiB buffer, which alone breaks the budget. A click
// on its bar names it ("stdout buffer — printf at mq.c:47"), says why it exists and how setvbuf avoids it, and points
// the source pane at line 47, not at drain's definition; the budgets panel says the same; with libraryBlocks false in
// memwrap.json the budget leaves it out (kept, its label says so, nothing shaded).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Model } from '../../analysis/model.js';
import { Kind } from '../../analysis/trace/format.js';
import { programsDir } from '../support/programs.js';
import { clickEvent, openPanel, panelText, selectedEvent, shot, traceProgram, viewerOn, type Viewer } from './browser.js';

const ADVICE = /setvbuf\(stdout, NULL, _IONBF, 0\) before it \(no buffer\), or setvbuf with a static buffer of your own, avoids it/;

describe("libc's stdout buffer on test/programs/mq.c -DFIX with a 1 KiB heap budget", () => {
  let viewer: Viewer;
  let model: Model;
  let trace: string;

  beforeAll(async () => {
    ({ trace, model } = traceProgram(path.join(programsDir, 'mq.c'), ['-DFIX']));
    viewer = await viewerOn(trace, { budgets: { heap: 1024 } });
  }, 120_000);
  afterAll(() => viewer?.close());

  test('a click on its bar names it, says why it exists, and points at the printf', async () => {
    const { page } = viewer;
    const buffer = model.events.newBlock.findIndex((b, e) => b >= 0 && model.blocks.interposed[b] === 1 && model.events.kind[e] === Kind.ALLOC);
    expect(buffer).toBeGreaterThan(0);
    await clickEvent(page, buffer, 'heap');
    expect(await selectedEvent(page)).toBe(buffer);
    expect(await page.locator('#detail [data-role=made-by]').textContent()).toBe('stdout buffer — printf at mq.c:47');
    expect(await page.locator('#detail [data-role=made-by-advice]').textContent()).toMatch(ADVICE);
    await page.waitForSelector('#source-body .ln.selected');
    expect(await page.locator('#source-body .ln.selected').getAttribute('data-line')).toBe('47');
    expect(await page.locator('#source-body .ln.selected .text').textContent()).toContain('printf("message %d: %s\\n"');
    expect(await page.locator('#source-body .ln.selected .note').textContent()).toBe('stdout buffer made here');
    await shot(page, 'library-block-selected');
    expect(viewer.errors).toEqual([]);
  });

  test('the budgets panel names it among what the budget counted, with how to do without it', async () => {
    const { page } = viewer;
    await openPanel(page, 'budgets');
    const notes = page.locator('#panel-body [data-role=made-by]');
    expect(await notes.locator('li').allTextContents()).toEqual([expect.stringMatching(/^stdout buffer — printf at mq\.c:47 \(4\.0 KiB\): libc makes stdout's buffer/)]);
    expect(await notes.locator('li').first().textContent()).toMatch(ADVICE);
    expect(await notes.locator('p.hint').textContent()).toContain('"libraryBlocks": false in memwrap.json');
    expect(await panelText(page)).toMatch(/heap ≤ 1\.0 KiBexceeded/);
    await shot(page, 'library-block-budgets');
  });

  test('with "libraryBlocks": false beside the program, the budget leaves it out and is kept', async () => {
    const program = path.resolve(model.program!.cwd, model.program!.path);
    writeFileSync(path.join(path.dirname(program), 'memwrap.json'), '{ "budgets": { "heap": "1K", "libraryBlocks": false } }\n');
    const kept = await viewerOn(trace);
    try {
      await openPanel(kept.page, 'budgets');
      const row = (await kept.page.locator('#panel-body tr.clickable').allTextContents())[0]!;
      expect(row).toMatch(/^heap ≤ 1\.0 KiB \(blocks libraries made left out\)kept \(max 192 B\)/);
      const marks = await kept.page.evaluate(() => (window as unknown as { ccMemwrapView: { marks(): { labels: { text: string }[]; budgets: { shaded: unknown[] }[] } } }).ccMemwrapView.marks());
      expect(marks.labels.some((l) => l.text.startsWith('heap budget 1,024 B (blocks libraries made left out)'))).toBe(true);
      expect(marks.budgets[0]!.shaded).toEqual([]);
      await shot(kept.page, 'library-block-left-out');
      expect(kept.errors).toEqual([]);
    } finally {
      await kept.close();
    }
  }, 120_000);
});
