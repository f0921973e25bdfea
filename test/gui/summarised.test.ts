// The viewer names summarised leaf call trees: test/programs/leaf-calls.c built at -O2 (its leaves summarised by
// default), shown whole and through its index in real Chromium; the summary panel lists each summarised function
// with the stack its tree takes, as `report --json` gives them, and the peak stack that counts them; and it says that
// the other recorded calls were written only where they matter.
import { copyFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { formatBytes } from '../../analysis/units.js';
import { buildInstrumented, programsDir, reportJson, runTraced, scratch, traceOf } from '../support/programs.js';
import { openPanel, shot, viewerOn, type Viewer } from './browser.js';

describe('summarised leaf call trees in the viewer', () => {
  let whole: Viewer;
  let indexed: Viewer;
  let report: { peakStack: { bytes: number }; summarisedFunctions: { name: string; stackBytes: number; measured?: boolean }[] };

  beforeAll(async () => {
    const dir = scratch('gui-summarised');
    const exe = path.join(dir, 'leaf-calls');
    buildInstrumented('gcc', ['-O2', '-g'], [path.join(programsDir, 'leaf-calls.c'), path.join(programsDir, 'leaf-calls-other.c')], exe);
    const ran = runTraced(exe, [], path.join(dir, 'traces'), { cwd: programsDir });
    const trace = traceOf(path.join(dir, 'traces'), ran.pid);
    report = reportJson(trace) as typeof report;
    const copy = path.join(scratch('gui-summarised-index'), path.basename(trace));
    copyFileSync(trace, copy);
    whole = await viewerOn(trace);
    indexed = await viewerOn(copy, { index: true });
    await indexed.page.waitForSelector('#panel-tabs button[data-panel=function]', { timeout: 60_000 });
  }, 180_000);
  afterAll(async () => {
    await whole?.close();
    await indexed?.close();
  });

  /** The summary panel's rows as [label, value]. */
  const summaryRows = async (page: Page): Promise<Map<string, string>> => {
    await openPanel(page, 'summary');
    const rows = page.locator('#panel-body tr');
    const out = new Map<string, string>();
    for (let i = 0; i < (await rows.count()); i++) {
      const cells = await rows.nth(i).locator('td').allTextContents();
      if (cells.length === 2) out.set(cells[0]!, cells[1]!);
    }
    return out;
  };

  test('the summary panel lists each summarised function with its bound, in both modes, and the peak stack counting them', async () => {
    // count_down and walk recurse without heap work, through_pointer is called through a pointer and other_unit from
    // another unit: measured, named as such.
    expect(report.summarisedFunctions.map((f) => f.name)).toEqual(['checksum', 'count_down', 'fill', 'mix', 'note_depth', 'other_unit', 'scramble', 'through_pointer', 'walk']);
    const want = report.summarisedFunctions.map((f) => `${f.name} (${f.measured === true ? 'no heap work: deepest calls recorded' : `≤ ${formatBytes(f.stackBytes)}`})`).join(', ');
    for (const v of [whole, indexed]) {
      const rows = await summaryRows(v.page);
      expect(rows.get('Summarised')).toBe(`calls of 9 functions not recorded, their call trees known; peak stack counts the stack they take: ${want}`);
      expect(rows.get('Peak stack')).toMatch(new RegExp(`^${formatBytes(report.peakStack.bytes).replace('.', '\\.')} at event \\d+$`));
      expect(rows.has('Left out')).toBe(false);
      // -O2 writes the other recorded calls only with heap work inside or at a new depth (--mw-calls=heap): said so.
      expect(rows.get('Calls')).toBe('of 2 functions written only with heap work inside or a new depth; the others are not shown (heap, leaks and stack as with every call recorded)');
      expect(v.errors).toEqual([]);
    }
    await whole.page.locator('#panel-body tr', { hasText: 'Summarised' }).last().scrollIntoViewIfNeeded();
    await shot(whole.page, 'summary-summarised');
    await whole.page.locator('#panel-body tr', { hasText: 'written only with heap work' }).last().scrollIntoViewIfNeeded();
    await shot(whole.page, 'summary-pending-calls');
  });
});
