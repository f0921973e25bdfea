// The viewer's local server answers only whoever holds the session's token (item 2 of the security issue): the
// address `view` prints carries it and sets it as a cookie; a request without it (another user of the machine, a web
// page, a guessed address) is refused, on the API and on the page's own files alike, and so is one from another origin.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import path from 'node:path';
import { RecentList } from '../../host/recent.js';
import { startServer, tokenCookieName, type RunningServer } from '../../host/server.js';
import { TraceSession } from '../../host/trace-session.js';
import { basicTrace } from '../fixtures/scenarios.js';
import { scratch } from '../support/programs.js';
import { apiGet } from '../support/viewer-api.js';

const dir = scratch('viewer-token');
const trace = path.join(dir, 'demo.mwtrace');
writeFileSync(trace, basicTrace().build());
mkdirSync(path.join(dir, 'renderer'));
writeFileSync(path.join(dir, 'renderer', 'index.html'), '<!doctype html><title>t</title>');
writeFileSync(path.join(dir, 'renderer', 'app.js'), 'export {};');

describe("the viewer's session token", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ rendererDir: path.join(dir, 'renderer'), session: await TraceSession.open(trace), recent: new RecentList(path.join(dir, 'recent.json')) });
  });
  afterAll(() => server?.close());

  test('the printed address opens the page and sets the token as a strict, script-proof cookie', async () => {
    expect(server.token).toMatch(/^[\w-]{43}$/);
    const page = await fetch(server.pageUrl());
    expect(page.status).toBe(200);
    expect(page.headers.get('set-cookie')).toBe(`${tokenCookieName(server.port)}=${server.token}; Path=/; HttpOnly; SameSite=Strict`);
    // With the cookie, the page's files and the API answer (the page's own requests carry it).
    expect((await fetch(new URL('app.js', server.url), { headers: { cookie: server.cookie } })).status).toBe(200);
    expect((await apiGet(server, 'api/session')).status).toBe(200);
  });

  test('without the token, or with a wrong one, nothing is served: API, trace, sources, page and its files', async () => {
    const wrong = `${tokenCookieName(server.port)}=${'A'.repeat(43)}`;
    for (const p of ['', 'app.js', 'api/session', 'api/trace', 'api/source?file=demo.c', `?token=${'A'.repeat(43)}`, '?token=']) {
      const bare = await fetch(new URL(p, server.url), { headers: { 'x-cc-memwrap': '1' } });
      expect(bare.status, p).toBe(403);
      expect(await bare.text()).toMatch(/needs the session token/);
      expect((await fetch(new URL(p, server.url), { headers: { 'x-cc-memwrap': '1', cookie: wrong } })).status, p).toBe(403);
    }
    // Another viewer's cookie (another port) is not this one's.
    expect((await fetch(new URL('api/session', server.url), { headers: { 'x-cc-memwrap': '1', cookie: `${tokenCookieName(server.port + 1)}=${server.token}` } })).status).toBe(403);
  });

  test('a request from another origin is refused even with the token', async () => {
    for (const origin of ['http://evil.example', 'null', `http://127.0.0.1:${server.port + 1}`]) {
      expect((await apiGet(server, 'api/session', { headers: { origin } })).status, origin).toBe(403);
    }
    expect((await apiGet(server, 'api/session', { headers: { origin: `http://127.0.0.1:${server.port}` } })).status).toBe(200);
  });

  test('another local user (nobody) is refused', async (ctx) => {
    const runuser = spawnSync('runuser', ['-u', 'nobody', '--', 'true']);
    if (process.getuid?.() !== 0 || runuser.status !== 0) return ctx.skip(); // needs root and runuser to act as nobody
    const script = `fetch(${JSON.stringify(new URL('api/session', server.url).href)}, { headers: { 'x-cc-memwrap': '1' } }).then(async (r) => console.log(r.status, await r.text()))`;
    // Without the token, which only the viewer's user saw printed.
    // Not spawnSync: the server answers from this process's event loop.
    const child = spawn('runuser', ['-u', 'nobody', '--', process.execPath, '-e', script], { cwd: '/' });
    const r = { stdout: '', stderr: '' };
    child.stdout.on('data', (d: Buffer) => (r.stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (r.stderr += d.toString()));
    await new Promise((resolve) => child.on('close', resolve));
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^403 cc-memwrap view: this address needs the session token/);
  });
});
