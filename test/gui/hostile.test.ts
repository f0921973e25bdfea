// A hostile trace: function, file and object names holding markup, a source file full of markup, and source paths that climb out of the source root. The viewer must show all of it as text, run none of it, and read no file outside the root.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { S, TraceBuilder } from '../fixtures/trace-builder.js';
import { scratch } from '../support/programs.js';
import { clickEvent, shot, viewerOn, type Viewer } from './browser.js';

const SCRIPT_NAME = '<script>window.pwned = 1</script>';
const IMG_NAME = '<img src=x onerror="window.pwned = 2">';
const SECRET = 'SECRET-OUTSIDE-THE-ROOT';

/**
 * Layout: <tmp>/outside/etc/passwd (a secret) and <tmp>/outside/root/src/{evil.c, link.c → the secret}. The run's
 * working directory, the source root, is <tmp>/outside/root: "../etc/passwd" reaches the secret, "../../etc/passwd"
 * climbs further, and link.c is inside by name but not after its symlink.
 */
function hostileTrace(dir: string): { trace: string; root: string } {
  const outside = path.join(dir, 'outside');
  const root = path.join(outside, 'root');
  mkdirSync(path.join(outside, 'etc'), { recursive: true });
  mkdirSync(path.join(root, 'src'), { recursive: true });
  writeFileSync(path.join(outside, 'etc', 'passwd'), `${SECRET}\n`);
  writeFileSync(
    path.join(root, 'src', 'evil.c'),
    `/* ${SCRIPT_NAME} */\nint main(void) {\n  char *s = "${IMG_NAME}";\n  return s[0];\n}\n`,
  );
  symlinkSync(path.join(outside, 'etc', 'passwd'), path.join(root, 'src', 'link.c'));
  const b = new TraceBuilder({ complete: true });
  const t = b.thread(0);
  t.threadBegin(1);
  t.program(path.join(root, 'prog'), root);
  t.unit(1, [
    { kind: S.ENTRY, file: 'src/evil.c', func: SCRIPT_NAME, name: SCRIPT_NAME, line: 2 }, // 1
    { kind: S.MALLOC, file: '../etc/passwd', func: SCRIPT_NAME, name: 'malloc', line: 1 }, // 2
    { kind: S.MALLOC, file: '../../etc/passwd', func: IMG_NAME, name: IMG_NAME, line: 1 }, // 3
    { kind: S.MALLOC, file: 'src/link.c', func: SCRIPT_NAME, name: 'malloc', line: 1 }, // 4
    { kind: S.MALLOC, file: 'src/evil.c', func: SCRIPT_NAME, name: 'malloc', line: 3 }, // 5
    { kind: S.RETURN, file: 'src/evil.c', func: SCRIPT_NAME, name: SCRIPT_NAME, line: 4 }, // 6
  ]);
  t.enter(1, 128);
  for (const site of [2, 3, 4, 5]) t.alloc({ site, size: 64, addr: 0x1000 * site });
  t.exit(6);
  t.end(0, 0);
  const trace = path.join(dir, 'hostile.mwtrace');
  writeFileSync(trace, b.build());
  return { trace, root };
}

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
    const get = (q: string, headers: Record<string, string> = { 'x-cc-memwrap': '1' }) => fetch(new URL(q, server.url), { headers });
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
