// The self-contained HTML report (`cc-memwrap report --html`) in real Chromium, opened from file:// with the network off: the chart of a lesson draws, clicking a malloc bar shows its source line from the sources inside the file, the panels work; a hostile trace's report runs none of its markup and carries no file from outside the source root; bad --html arguments are refused plainly.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runReport } from '../../cli/report.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import type { Model } from '../../analysis/model.js';
import { siteInfo } from '../../analysis/sites.js';
import { Kind } from '../../analysis/trace/format.js';
import { htmlReport, jsonBlockText, scriptText, writeHtmlReport } from '../../host/html-report.js';
import { TraceSession } from '../../host/trace-session.js';
import { capture } from '../fixtures/cli-capture.js';
import { buildInstrumented, runTraced, samplesDir, scratch, traceOf } from '../support/programs.js';
import { buildReportTemplate, clickEvent, paintedPixels, launch, openReportFile, shot } from './browser.js';
import { hostileTrace, IMG_NAME, SCRIPT_NAME, SECRET } from './hostile-trace.js';

function eventAt(model: Model, kind: number, line: number): number {
  for (let e = 0; e < model.events.count; e++) {
    if (model.events.kind[e] === kind && siteInfo(model, model.events.site[e]!)?.line === line) return e;
  }
  throw new Error(`no ${kind} event at line ${line}`);
}

let template: string;
let browser: Browser;

beforeAll(async () => {
  template = await buildReportTemplate();
  browser = await launch();
});

afterAll(() => browser?.close());

describe('the HTML report of samples/linked-list.c', () => {
  let page: Page;
  let model: Model;
  let report: string;
  const errors: string[] = [];
  const blocked: string[] = [];

  beforeAll(async () => {
    const dir = scratch('html-linked');
    const exe = path.join(dir, 'linked-list');
    buildInstrumented('gcc', ['-O0', '-g'], [path.join(samplesDir, 'linked-list.c')], exe);
    const ran = runTraced(exe, [], path.join(dir, 'traces'), { cwd: samplesDir });
    const trace = traceOf(path.join(dir, 'traces'), ran.pid);
    model = decodeTrace(new Uint8Array(readFileSync(trace)));
    report = path.join(dir, 'linked-list.html');
    writeHtmlReport(await TraceSession.open(trace), report, template);
    page = await openReportFile(browser, report, errors, blocked);
  });

  test('is one file that names nothing outside itself', () => {
    const html = readFileSync(report, 'utf8');
    expect(html).not.toMatch(/\b(src|href)="(?!data:,")/);
    expect(html).not.toContain('./assets/');
    // The bundle names the SVG namespace (http://www.w3.org/2000/svg) as a string; nothing loads from a URL.
    expect(html).not.toMatch(/url\(\s*['"]?(https?:|\/\/)|@import/);
    expect(html).toMatch(/<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'sha256-/);
  });

  test('opens from file:// offline, draws the chart and fetches nothing', async () => {
    expect(await page.evaluate(() => (window as unknown as { ccMemwrapView: { error: string | null } }).ccMemwrapView.error)).toBeNull();
    expect(await page.locator('#trace-name').textContent()).toContain(`${model.events.count} events`);
    const painted = await paintedPixels(page);
    expect(painted).toBeGreaterThan(20_000);
    // A report file has no recent list: none is offered (an empty "Recent…" would only disappoint).
    expect(await page.locator('#recent').isVisible()).toBe(false);
    expect(blocked).toEqual([]);
    expect(errors).toEqual([]);
  });

  test('clicking a malloc bar shows its source line from the file itself', async () => {
    await clickEvent(page, eventAt(model, Kind.ALLOC, 23));
    await page.waitForSelector('.code .ln.selected');
    expect(await page.locator('.code .ln.selected').getAttribute('data-line')).toBe('23');
    expect(await page.locator('.code .ln.selected .text').textContent()).toContain('malloc(sizeof *n)');
    expect((await page.locator('ol.stack li').allTextContents())[0]).toContain('make_node');
    await shot(page, 'html-report-linked-list');
    expect(blocked).toEqual([]);
    expect(errors).toEqual([]);
  });

  test('the tables are there', async () => {
    await page.locator('#panel-tabs button[data-panel=leaks]').click();
    expect(await page.locator('#panel-body').textContent()).toContain('linked-list.c:33');
    await page.locator('#panel-tabs button[data-panel=linked]').click();
    expect(await page.locator('#panel-body').textContent()).toContain('linked-list.c:38');
  });
});

describe('the HTML report of a hostile trace', () => {
  let page: Page;
  let html: string;
  const errors: string[] = [];
  const blocked: string[] = [];

  beforeAll(async () => {
    const dir = scratch('html-hostile');
    const { trace } = hostileTrace(dir);
    const report = path.join(dir, 'hostile.html');
    writeHtmlReport(await TraceSession.open(trace), report, template);
    html = readFileSync(report, 'utf8');
    page = await openReportFile(browser, report, errors, blocked);
  });

  const pwned = () => page.evaluate(() => (window as unknown as { pwned?: number }).pwned ?? null);

  test('carries no file from outside the source root, and no markup of the trace as markup', () => {
    expect(html).not.toContain(SECRET);
    expect(html).not.toContain(SCRIPT_NAME);
    expect(html).not.toContain(IMG_NAME);
    // Only the page's own script and its two data blocks.
    expect(html.match(/<script\b/g)).toHaveLength(3);
  });

  test('shows the names as text and runs none of them', async () => {
    await page.locator('#panel-tabs button[data-panel=function]').click();
    expect(await page.locator('#panel-body').textContent()).toContain(SCRIPT_NAME);
    await clickEvent(page, 5);
    await page.waitForSelector('.code .ln.selected');
    expect(await page.locator('.code').textContent()).toContain(IMG_NAME);
    await clickEvent(page, 2);
    await page.waitForSelector('#source-body .missing');
    expect(await page.locator('#source-body').textContent()).toMatch(/outside the source root/);
    expect(await page.locator('body script').count()).toBe(0);
    expect(await page.locator('#panel-body img, #detail img, .code img').count()).toBe(0);
    expect(await pwned()).toBeNull();
    await shot(page, 'html-report-hostile');
    expect(blocked).toEqual([]);
    expect(errors).toEqual([]);
  });
});

describe('writing the HTML report', () => {
  test('data and script are escaped for their blocks', () => {
    expect(jsonBlockText({ s: '</script><!-- & \u2028' })).toBe('{"s":"\\u003c/script\\u003e\\u003c!-- \\u0026 \\u2028"}');
    expect(scriptText('const a = "</script>";')).toBe('const a = "<\\/script>";');
    expect(() => scriptText('const a = "<!--";')).toThrow(/cannot be inlined/);
  });

  test('--html to a folder that does not exist, or to a folder: exit 2, one line naming it, no report on stdout', async () => {
    const { trace } = hostileTrace(scratch('html-errors'));
    for (const out of ['/nonexistent-dir/r.html', scratch('html-errors-dir')]) {
      const r = await capture(runReport, [trace, '--html', out]);
      expect(r.code, out).toBe(2);
      expect(r.err).toMatch(new RegExp(`--html ${out}: cannot write ${out} \\((ENOENT|EISDIR)\\)`));
      expect(r.out).toBe('');
    }
    const empty = await capture(runReport, [trace, '--html', '']);
    expect(empty.code).toBe(2);
    expect(empty.err).toContain('--html : wants a file name');
  });

  test('a missing template is named with the fix', async () => {
    const { trace } = hostileTrace(scratch('html-no-template'));
    await expect(async () => htmlReport(await TraceSession.open(trace), scratch('html-empty-template'))).rejects.toThrow(/template is missing .*run npm run build/);
  });
});
