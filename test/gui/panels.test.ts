// The leak-cause and worst-case stack panels in real Chromium: samples/leak-causes.c built with --mw-branches names error condition 1's branch, highlights its line in the source pane and shows a freeing and a leaking path side by side; a lesson's worst-case stack (from the frame sizes the host reads from the program) stands beside the deepest observed stack, in the served viewer and in the HTML report.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { leakCauses, type LeakCauses } from '../../analysis/leak-causes.js';
import { observedHeadline, stackReport, worstHeadline, type StackReport } from '../../analysis/stack-report.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { readStackInfo } from '../../host/stack-info.js';
import { tracedProgram } from '../../host/traced-program.js';
import { writeHtmlReport } from '../../host/html-report.js';
import { TraceSession } from '../../host/trace-session.js';
import { must, runTraced, samplesDir, scratch, traceOf, wrapper } from '../support/programs.js';
import { buildReportTemplate, launch, openReportFile, selectedEvent, shot, viewerOn, type Viewer } from './browser.js';

/** Builds a sample through cc-memwrap (wrapper flags first) and runs it in samples/, so the sources are under the source root. */
function tracedSample(name: string, wrapperFlags: string[]): string {
  const dir = scratch(`panels-${name}`);
  const exe = path.join(dir, name);
  must(wrapper, ['--mw-strict', ...wrapperFlags, 'gcc', '-O0', '-g', path.join(samplesDir, `${name}.c`), '-o', exe]);
  const ran = runTraced(exe, [], path.join(dir, 'traces'), { cwd: samplesDir });
  return traceOf(path.join(dir, 'traces'), ran.pid);
}

const openPanel = (page: Page, name: string) => page.locator(`#panel-tabs button[data-panel=${name}]`).click();

describe('leak-cause panel on samples/leak-causes.c built with --mw-branches', () => {
  let viewer: Viewer;
  let page: Page;
  let causes: LeakCauses;

  beforeAll(async () => {
    const trace = tracedSample('leak-causes', ['--mw-branches']);
    causes = leakCauses(decodeTrace(new Uint8Array(readFileSync(trace))));
    viewer = await viewerOn(trace);
    page = viewer.page;
  });

  afterAll(() => viewer?.close());

  test('shows freed N / leaked M and the culprit branch of the analysis', async () => {
    const s = causes.suspects[0]!;
    expect(s.culprit?.text).toBe('if (error == 1)');
    await openPanel(page, 'causes');
    const suspects = page.locator('.suspect');
    expect(await suspects.count()).toBe(causes.suspects.length);
    expect(await suspects.first().locator('h4').first().textContent()).toContain(`freed ${s.freed}, leaked ${s.leaked}`);
    const culprit = suspects.first().locator('[data-role=culprit]');
    expect(await culprit.textContent()).toBe(`leak-causes.c:${s.culprit!.line} funcA: if (error == 1) taken`);
    // The two sites that are not suspect are listed apart.
    expect(await page.locator('.leak-causes table').textContent()).toContain('main → malloc');
  });

  test('clicking the culprit highlights its line in the source pane, the allocation beside it', async () => {
    const s = causes.suspects[0]!;
    await page.locator('.suspect').first().locator('[data-role=culprit]').click();
    await page.waitForSelector('.code .ln.selected');
    expect(await page.locator('.code .ln.selected').getAttribute('data-line')).toBe(String(s.culprit!.line));
    expect(await page.locator('.code .ln.selected .text').textContent()).toContain('if (error == 1)');
    expect(await page.locator('.code .ln.selected .note').textContent()).toBe('leaks when taken');
    expect(await page.locator('.code .ln.related').getAttribute('data-line')).toBe(String(s.allocation.line));
  });

  test('one freeing and one leaking path side by side, the culprit marked in the leaking one', async () => {
    const s = causes.suspects[0]!;
    const freeing = page.locator('.suspect').first().locator('[data-role=freeing-path] li [data-role=step]');
    const leaking = page.locator('.suspect').first().locator('[data-role=leaking-path] li [data-role=step]');
    expect(await freeing.count()).toBe(s.freeingPath.length);
    expect(await leaking.count()).toBe(s.leakingPath.length);
    expect(await page.locator('[data-role=leaking-path] li.culprit').textContent()).toContain('if (error == 1) taken');
    expect(await page.locator('[data-role=freeing-path] li.culprit').count()).toBe(0);
    const boxes = await Promise.all(['freeing-path', 'leaking-path'].map((r) => page.locator(`.suspect >> nth=0 >> [data-role=${r}]`).boundingBox()));
    expect(boxes[1]!.x).toBeGreaterThan(boxes[0]!.x + boxes[0]!.width - 1); // beside, not below
    await page.locator('.suspect >> nth=0 >> [data-role=leaking-path]').scrollIntoViewIfNeeded();
    await shot(page, 'panel-leak-causes');
    expect(viewer.errors).toEqual([]);
  });
});

describe('worst-case stack panel', () => {
  let browser: Browser;
  let template: string;

  beforeAll(async () => {
    template = await buildReportTemplate();
    browser = await launch();
  });

  afterAll(() => browser?.close());

  /** The report `report --stack` computes for the trace. */
  function expected(trace: string): StackReport {
    const model = decodeTrace(new Uint8Array(readFileSync(trace)));
    const info = readStackInfo(tracedProgram(model.program?.path, model.program?.cwd));
    return stackReport(model, info.program, info.units, info.missing);
  }

  async function checkPanel(page: Page, r: StackReport): Promise<void> {
    await openPanel(page, 'stack');
    const worst = page.locator('[data-role=worst-case]');
    expect(await worst.locator('.headline').textContent()).toBe(worstHeadline(r.worstCase!));
    expect(await worst.locator('ol.stack li').allTextContents()).toEqual(r.worstCase!.path.map((s) => expect.stringContaining(`${s.function} ${s.frameBytes} B`)));
    const observed = page.locator('[data-role=observed]');
    expect(await observed.locator('.headline').textContent()).toBe(`${observedHeadline(r.observed)}, event ${r.observed.event}`);
    expect(await observed.locator('ol.stack li').count()).toBe(Math.min(200, r.observed.path.length));
  }

  test('recursion-iterative.c in the viewer: a bounded worst case from main beside the observed path; a frame selects its call', async () => {
    const trace = tracedSample('recursion-iterative', []);
    const r = expected(trace);
    expect(r.worstCase?.status).toBe('bounded');
    expect(r.worstCase!.path.map((s) => s.function)).toEqual(['main', 'depth', 'level']);
    const viewer = await viewerOn(trace);
    try {
      await checkPanel(viewer.page, r);
      const deepest = r.observed.path[r.observed.path.length - 1]!;
      await viewer.page.locator('[data-role=observed] ol.stack li button').last().click();
      expect(await selectedEvent(viewer.page)).toBe(deepest.event);
      await shot(viewer.page, 'panel-stack-viewer');
      expect(viewer.errors).toEqual([]);
    } finally {
      await viewer.close();
    }
  });

  test('recursion.c in the HTML report from file://: the worst case is unbounded and the recursion is named', async () => {
    const trace = tracedSample('recursion', []);
    const r = expected(trace);
    expect(r.worstCase?.status).toBe('unbounded');
    const out = path.join(path.dirname(trace), 'recursion.html');
    writeHtmlReport(await TraceSession.open(trace), out, template);
    const errors: string[] = [];
    const blocked: string[] = [];
    const page = await openReportFile(browser, out, errors, blocked);
    await checkPanel(page, r);
    expect(await page.locator('[data-role=worst-case] .note').first().textContent()).toMatch(/^recursion: .* \(unbounded\)$/);
    await shot(page, 'panel-stack-html-report');
    expect(blocked).toEqual([]);
    expect(errors).toEqual([]);
  });
});
