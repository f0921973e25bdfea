// The detail pane's call stack in real Chromium on test/programs/bst.c, selected inside the checksum recursing six deep: each frame says the line its caller called it from, the bytes it took on the stack (the trace's depths) and the objects its body declares (char scratch[128]); a frame opens its call line in the source pane.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Model } from '../../analysis/model.js';
import { callStackAt } from '../../analysis/event-detail.js';
import { siteInfo } from '../../analysis/sites.js';
import { Kind } from '../../analysis/trace/format.js';
import { formatBytesFine } from '../../analysis/units.js';
import { programsDir } from '../support/programs.js';
import { clickEvent, selectedEvent, shot, traceProgram, viewerOn, type Viewer } from './browser.js';

const SOURCE = path.join(programsDir, 'bst.c');
/** The 1-based line of bst.c holding `text` (once). */
function lineOf(text: string): number {
  const lines = readFileSync(SOURCE, 'utf8').split('\n');
  const at = lines.findIndex((l) => l.includes(text));
  expect(at, text).toBeGreaterThanOrEqual(0);
  expect(lines.filter((l) => l.includes(text)), text).toHaveLength(1);
  return at + 1;
}

describe('the call stack of an event inside the recursive checksum of bst.c', () => {
  let model: Model;
  let viewer: Viewer;

  beforeAll(async () => {
    let trace: string;
    ({ trace, model } = traceProgram(SOURCE));
    viewer = await viewerOn(trace);
  });
  afterAll(() => viewer?.close());

  test('each frame names its call line, its bytes and its locals; a frame opens its call line', async () => {
    const { page } = viewer;
    const frames: number[] = [];
    for (let f = 0; f < model.frames.count; f++) if (siteInfo(model, model.frames.entrySite[f]!)?.name === 'checksum') frames.push(f);
    expect(frames).toHaveLength(6);
    const innermost = frames[5]!;
    await clickEvent(page, model.frames.enter[innermost]!);
    expect(await selectedEvent(page)).toBe(model.frames.enter[innermost]);

    const items = page.locator('#detail ol.stack li.frame');
    await expect.poll(() => items.count()).toBe(7);
    const texts = await items.allTextContents();
    // Where the numbers come from is said once, above the frames.
    expect(await page.locator('#detail .stack-note').textContent()).toMatch(/^frame: the stack bytes it took, from the trace .*; compiler: .*; locals: the objects its body declares/);
    const recursive = lineOf('sum ^= checksum(text, level + 1)');
    const fromMain = lineOf('checksum(b.text, 1)');
    // Innermost first: checksum × 6, then main.
    const chain = [...frames].reverse();
    chain.forEach((f, i) => {
      const text = texts[i]!;
      const caller = i < 5 ? chain[i + 1]! : model.frames.parent[f]!;
      expect(text).toContain(`checksum — called at bst.c:${i < 5 ? recursive : fromMain}`);
      expect(text).toContain(`frame ${formatBytesFine(model.frames.depth[f]! - model.frames.depth[caller]!)} · `);
      expect(text).toContain('locals: char scratch[128], unsigned sum, const char *p');
    });
    expect(texts[6]).toContain('main — outermost frame');
    expect(texts[6]).toContain(`${formatBytesFine(model.frames.depth[model.frames.parent[frames[0]!]!]!)} from the stack base`);
    // main's automatic objects, in order; not its static keys[], which is no part of the frame.
    expect(texts[6]).toContain('locals: struct node *root, struct builder b, char *title, int i');
    // Each checksum frame holds its 128-byte buffer.
    for (const f of frames.slice(1)) expect(model.frames.depth[f]! - model.frames.depth[model.frames.parent[f]!]!).toBeGreaterThan(128);
    await shot(page, 'call-stack');

    // A frame opens the line its caller called it from.
    const selectedLine = page.locator('#source-body .ln.selected');
    await items.nth(5).locator('button.frame-call').click();
    await expect.poll(() => selectedLine.getAttribute('data-line')).toBe(String(fromMain));
    expect(await selectedLine.textContent()).toContain('checksum(b.text, 1)');
    await items.nth(0).locator('button.frame-call').click();
    await expect.poll(() => selectedLine.getAttribute('data-line')).toBe(String(recursive));
    expect(await selectedLine.textContent()).toContain('sum ^= checksum(text, level + 1)');
    // Its definition stays a click away.
    await items.nth(0).locator('button.frame-def').click();
    await expect.poll(() => selectedLine.getAttribute('data-line')).toBe(String(lineOf('static unsigned checksum(')));
    expect(viewer.errors).toEqual([]);
  });

  test('a caller that calls a function on two lines names both, and the frame marks both', async () => {
    const { page } = viewer;
    // The allocation of a node three inserts deep: insert calls itself at two lines (left or right).
    const e = [...model.events.kind.keys()].find((i) => model.events.kind[i] === Kind.ALLOC && callStackAt(model, i).filter((f) => f.function === 'insert').length === 3)!;
    expect(e).toBeDefined();
    await clickEvent(page, e);
    expect(await selectedEvent(page)).toBe(e);
    const items = page.locator('#detail ol.stack li.frame');
    await expect.poll(() => items.count()).toBe(5);
    const texts = await items.allTextContents();
    const left = lineOf('root->left = insert(root->left, key)');
    const right = lineOf('root->right = insert(root->right, key)');
    expect(texts[0]).toContain(`new_node — called at bst.c:${lineOf('if (root == NULL) return new_node(key)')}`);
    expect(texts[0]).toContain('locals: struct node *n');
    expect(texts[1]).toContain(`insert — called at bst.c:${left} or ${right}`);
    expect(texts[2]).toContain(`insert — called at bst.c:${left} or ${right}`);
    expect(texts[3]).toContain(`insert — called at bst.c:${lineOf('root = insert(root, keys[i])')}`);
    await items.nth(1).locator('button.frame-call').click();
    await expect.poll(() => page.locator('#source-body .ln.selected').evaluateAll((ls) => ls.map((l) => l.getAttribute('data-line')))).toEqual([String(left), String(right)]);
    await shot(page, 'call-stack-two-lines');
    // The same on a projector (a picture only: projector.test.ts checks the sizes).
    await page.setViewportSize({ width: 1920, height: 1080 });
    await page.selectOption('#zoom', '1.5');
    await shot(page, 'call-stack-projector');
    expect(viewer.errors).toEqual([]);
  });
});
