// The host layer without a browser: which source paths are served, the recent list, the local server's host and header checks, traces that cannot be opened.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { RecentList, RECENT_MAX } from '../../host/recent.js';
import { isInside, MAX_SOURCE_BYTES, SourceAccess } from '../../host/source-access.js';
import { startServer, type RunningServer } from '../../host/server.js';
import { TraceOpenError, TraceSession } from '../../host/trace-session.js';
import { basicTrace } from '../fixtures/scenarios.js';
import { scratch } from '../support/programs.js';
import { apiGet } from '../support/viewer-api.js';

describe('source access', () => {
  const dir = scratch('source-access');
  const root = path.join(dir, 'root');
  mkdirSync(path.join(root, 'src', 'dir.c'), { recursive: true });
  writeFileSync(path.join(root, 'src', 'a.c'), 'int a;\n');
  writeFileSync(path.join(dir, 'secret.c'), 'secret\n');
  writeFileSync(path.join(root, 'big.c'), Buffer.alloc(MAX_SOURCE_BYTES + 1, 32));
  symlinkSync(path.join(dir, 'secret.c'), path.join(root, 'escape.c'));
  symlinkSync(path.join(root, 'src', 'a.c'), path.join(root, 'inner.c'));
  const named = ['src/a.c', path.join(root, 'src', 'a.c'), '../secret.c', '../../etc/passwd', '/etc/passwd', 'escape.c', 'inner.c', 'src/dir.c', 'gone.c', 'big.c', 'src/../../secret.c', 'a\0.c'];
  // A root the user chose: the path checks alone decide (content hashes: test/host/source-disclosure.test.ts).
  const access = new SourceAccess({ files: named }, root, true);

  test('isInside: the root and below, never beside or above', () => {
    expect(isInside('/a/b', '/a/b')).toBe(true);
    expect(isInside('/a/b', '/a/b/c/d.c')).toBe(true);
    expect(isInside('/a/b', '/a/bc/d.c')).toBe(false);
    expect(isInside('/a/b', '/a')).toBe(false);
    expect(isInside('/a/b', '/etc/passwd')).toBe(false);
    expect(isInside('/a/b', '/a/b/..foo')).toBe(true);
    expect(isInside('/a/b', '/a/b/../c')).toBe(false);
  });

  test('files the trace names under the root are read, relative or absolute, through inner symlinks', () => {
    for (const f of ['src/a.c', path.join(root, 'src', 'a.c'), 'inner.c']) expect(access.read(f)).toMatchObject({ ok: true, text: 'int a;\n' });
  });

  test.each([
    ['../../etc/passwd', 'outside-root'],
    ['../secret.c', 'outside-root'],
    ['src/../../secret.c', 'outside-root'],
    ['/etc/passwd', 'outside-root'],
    ['escape.c', 'outside-root'],
    ['src/b.c', 'not-named'],
    ['/work/main/package.json', 'not-named'],
    ['gone.c', 'missing'],
    ['src/dir.c', 'not-a-file'],
    ['big.c', 'too-large'],
    ['a\0.c', 'outside-root'],
  ])('%s is refused: %s', (file, reason) => {
    const r = access.read(file);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.reason).toBe(reason);
      expect(r.message).toContain(file);
    }
  });

  test('a relative root is a programming error', () => {
    expect(() => new SourceAccess({ files: [] }, 'relative/root')).toThrow(/absolute/);
  });
});

describe('recent list', () => {
  const dir = scratch('recent');
  const list = new RecentList(path.join(dir, 'cache', 'recent.json'));
  const files = Array.from({ length: RECENT_MAX + 2 }, (_, i) => {
    const f = path.join(dir, `t${i}.mwtrace`);
    writeFileSync(f, '');
    return f;
  });

  test('newest first, no duplicates, at most RECENT_MAX, gone files dropped', () => {
    expect(list.read()).toEqual([]);
    for (const f of files) list.add(f);
    list.add(files[3]!);
    const got = list.read().map((e) => e.path);
    expect(got).toHaveLength(RECENT_MAX);
    expect(got[0]).toBe(files[3]);
    expect(got[1]).toBe(files[RECENT_MAX + 1]);
    expect(new Set(got).size).toBe(got.length);
    expect(list.has(files[3]!)).toBe(true);
    expect(list.has(path.join(dir, 'never.mwtrace'))).toBe(false);
  });

  test('a corrupt list reads as empty', () => {
    writeFileSync(list.file, '{not json');
    expect(list.read()).toEqual([]);
  });
});

describe('local server', () => {
  const dir = scratch('server');
  const trace = path.join(dir, 'demo.mwtrace');
  writeFileSync(trace, basicTrace().build());
  mkdirSync(path.join(dir, 'renderer'));
  writeFileSync(path.join(dir, 'renderer', 'index.html'), '<!doctype html><title>t</title>');
  writeFileSync(path.join(dir, 'outside.txt'), 'outside');
  let server: RunningServer;
  afterAll(() => server?.close());

  test('serves the app and the API on 127.0.0.1 with the CSP, and refuses the rest', async () => {
    const session = await TraceSession.open(trace);
    server = await startServer({ rendererDir: path.join(dir, 'renderer'), session, recent: new RecentList(path.join(dir, 'recent.json')) });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const index = await fetch(server.pageUrl());
    expect(index.status).toBe(200);
    expect(index.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(index.headers.get('content-security-policy')).toContain("default-src 'none'");
    const api = await apiGet(server, 'api/session');
    expect(await api.json()).toMatchObject({ trace: { name: 'demo.mwtrace' }, sourceRoot: '/home/student' });
    const bytes = await apiGet(server, 'api/trace');
    expect(new Uint8Array(await bytes.arrayBuffer())).toEqual(new Uint8Array(basicTrace().build()));
    expect((await apiGet(server, 'api/session', { headers: { 'x-cc-memwrap': '' } })).status).toBe(403);
    expect((await apiGet(server, '/..%2foutside.txt')).status).toBe(403);
    expect((await apiGet(server, 'api/open-recent?path=%2Fetc%2Fpasswd', { method: 'POST' })).status).toBe(403);
  });

  test('a request naming another host (DNS rebinding) is refused', async () => {
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: server.port, path: '/', headers: { host: 'evil.example:80' } }, (res) => resolve(res.statusCode ?? 0));
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(421);
  });

  test('a missing or non-trace file cannot be opened, with one clear line', async () => {
    await expect(TraceSession.open(path.join(dir, 'nope.mwtrace'))).rejects.toThrow(TraceOpenError);
    await expect(TraceSession.open(path.join(dir, 'nope.mwtrace'))).rejects.toThrow(/nope\.mwtrace: no such file/);
    await expect(TraceSession.open(path.join(dir, 'outside.txt'))).rejects.toThrow(/outside\.txt: .*trace/i);
  });
});
