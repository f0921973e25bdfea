// `export --format speedscope` opens in speedscope itself: its own page, from the npm package (no network), loads the
// exported file of test/programs/call-paths.c, and its Sandwich table shows the frames with the weights the program's
// comment works out by hand.
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runExport } from '../../cli/export.js';
import { capture } from '../fixtures/cli-capture.js';
import { buildInstrumented, programsDir, runTraced, scratch, traceOf } from '../support/programs.js';
import { CHROMIUM, CHROMIUM_ARGS, shot } from './browser.js';

const speedscopeApp = path.join(path.dirname(createRequire(import.meta.url).resolve('speedscope/package.json')), 'dist', 'release');
const TYPES: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json', '.wasm': 'application/wasm' };

let server: http.Server;
let base = '';
let profile = '';
let browser: Browser;

beforeAll(async () => {
  const dir = scratch('speedscope');
  const exe = path.join(dir, 'call-paths');
  buildInstrumented('gcc', ['-O0'], [path.join(programsDir, 'call-paths.c')], exe);
  const traces = path.join(dir, 'traces');
  const r = await capture(runExport, [traceOf(traces, runTraced(exe, [], traces).pid), '--format', 'speedscope']);
  expect(r.code).toBe(0);
  profile = r.out;
  // speedscope's page and the profile from one origin, as `speedscope file.json` serves them.
  server = http.createServer((req, res) => {
    const name = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (name === '/profile.json') return void res.writeHead(200, { 'content-type': 'application/json' }).end(profile);
    const file = path.join(speedscopeApp, path.normalize(name === '/' ? 'index.html' : name));
    if (!file.startsWith(speedscopeApp) || !existsSync(file)) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' }).end(readFileSync(file));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // speedscope draws with WebGL; without a GPU, Chromium gives it SwiftShader only when asked.
  browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, '--enable-unsafe-swiftshader'] });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  server?.close();
});

describe('speedscope opens the export', () => {
  test('its Sandwich view lists every function with the bytes each allocated (total and self)', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${base}/index.html#profileURL=${encodeURIComponent(`${base}/profile.json`)}`);
    await expect.poll(() => page.evaluate(() => document.body.innerText), { timeout: 20_000 }).toContain('heap: bytes allocated');
    await shot(page, 'speedscope-flame');
    await page.keyboard.press('3'); // the Sandwich view: a table of functions with their total and self weights
    await expect.poll(() => page.evaluate(() => document.body.innerText)).toContain('Symbol Name');
    // The table's rows may come a frame after its header: read until they are there.
    const rows = async () =>
      (await page.evaluate(() => document.body.innerText))
        .split(/\n(?=\d+ B \()/)
        .map((r) => r.replace(/\s+/g, ' ').trim())
        .filter((r) => /^\d+ B \(/.test(r));
    await expect
      .poll(rows, { timeout: 10_000 })
      .toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^452 B \(100%\) 232 B \(51%\) main/),
          expect.stringMatching(/^120 B \(27%\) 120 B \(27%\) new_node/),
          expect.stringMatching(/^100 B \(22%\) 100 B \(22%\) scratch/),
          expect.stringMatching(/^120 B \(27%\) 0 B \(<0\.01%\) build/),
        ]),
      );
    await shot(page, 'speedscope-sandwich');
    expect(await page.evaluate(() => document.body.innerText)).toContain('(1/5)'); // the five metrics are five profiles
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});
