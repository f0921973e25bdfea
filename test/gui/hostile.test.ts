// A hostile trace: function, file and object names holding markup, a source file full of markup, and source paths that climb out of the source root. The viewer must show all of it as text, run none of it, and read no file outside the root.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { scratch } from '../support/programs.js';
import { clickEvent, shot, viewerOn, type Viewer } from './browser.js';
import { hostileTrace, IMG_NAME, SCRIPT_NAME, SECRET } from './hostile-trace.js';

describe('a hostile trace', () => {
  let viewer: Viewer;
  let page: Page;
  let server: Viewer['server'];
  let errors: string[];

  beforeAll(async () => {
    viewer = await viewerOn(hostileTrace(scratch('gui-hostile')).trace);
    ({ page, server, errors } = viewer);
  });

  afterAll(() => viewer?.close());

  const pwned = () => page.evaluate(() => (window as unknown as { pwned?: number }).pwned ?? null);

  test('names with markup are shown as text in the tables and the detail', async () => {
    await page.locator('#panel-tabs button[data-panel=function]').click();
    expect(await page.locator('#panel-body').textContent()).toContain(SCRIPT_NAME);
    await page.locator('#panel-tabs button[data-panel=site]').click();
    expect(await page.locator('#panel-body').textContent()).toContain(IMG_NAME);
    // Events: 0 THREAD_BEGIN, 1 ENTER, 2..5 ALLOC at sites 2..5.
    await clickEvent(page, 3);
    expect(await page.locator('#detail').textContent()).toContain(IMG_NAME);
    expect(await page.locator('#panel-body script, #detail script, #panel-body img, #detail img').count()).toBe(0);
    expect(await pwned()).toBeNull();
  });

  test('a path climbing out of the source root is refused, and nothing of the file outside is shown', async () => {
    // Paths that climb out by their text are refused in the page (the pane says so; no request the browser would log
    // as a failed one); a symbolic link leading out can only be found by the server, which refuses it.
    const consoleErrors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    for (const e of [2, 3]) {
      await clickEvent(page, e);
      await page.waitForSelector('#source-body .missing');
      expect(await page.locator('#source-body').textContent(), `event ${e}`).toMatch(/outside the source root/);
    }
    expect(consoleErrors).toEqual([]);
    for (const e of [2, 3, 4]) {
      await clickEvent(page, e);
      await page.waitForSelector('#source-body .missing');
      const text = await page.locator('#source-body').textContent();
      expect(text, `event ${e}`).toMatch(/outside the source root|leads outside the source root/);
      expect(text).not.toContain(SECRET);
    }
    await shot(page, 'hostile-refused');
  });

  test('a source file full of markup is highlighted as text', async () => {
    await clickEvent(page, 5);
    await page.waitForSelector('.code .ln.selected');
    expect(await page.locator('.code').textContent()).toContain(IMG_NAME);
    expect(await page.locator('.code').textContent()).toContain(SCRIPT_NAME);
    expect(await page.locator('.code script, .code img').count()).toBe(0);
    expect(await pwned()).toBeNull();
    await shot(page, 'hostile-source');
    expect(errors).toEqual([]);
  });

  test('the server itself refuses such paths, unnamed files and requests without its header', async () => {
    const get = (q: string, headers: Record<string, string> = { 'x-cc-memwrap': '1' }) => fetch(new URL(q, server.url), { headers: { cookie: server.cookie, ...headers } });
    for (const file of ['../etc/passwd', '../../etc/passwd', 'src/link.c']) {
      const r = await get(`api/source?file=${encodeURIComponent(file)}`);
      expect(r.status, file).toBe(403);
      expect(await r.text()).not.toContain(SECRET);
    }
    expect((await (await get(`api/source?file=${encodeURIComponent('/etc/passwd')}`)).json()).reason).toBe('not-named');
    expect((await get('api/source?file=src%2Fevil.c')).status).toBe(200);
    expect((await get('api/source?file=src%2Fevil.c', {})).status).toBe(403);
    expect((await get('api/trace', {})).status).toBe(403);
    expect((await get('/..%2f..%2f..%2fetc%2fpasswd')).status).toBe(403);
  });
});
