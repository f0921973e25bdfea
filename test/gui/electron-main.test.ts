// The Electron main process and preload script without the Electron binary: window options, navigation and permission guards, the app scheme's file serving, the IPC handlers' checks, and the preload's exposed API (compiled from its source and run with a fake Electron).
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import ts from 'typescript';
import { describe, expect, test } from 'vitest';
import { packageRoot } from '../../package-root.js';
import { RecentList } from '../../host/recent.js';
import { APP_INDEX, APP_ORIGIN, appResponse } from '../../gui/main/app-protocol.js';
import type { WebContentsLike } from '../../gui/main/electron-api.js';
import { CHANNELS, createHandlers, type HostState } from '../../gui/main/ipc.js';
import { guardContents, isAppUrl, windowOptions } from '../../gui/main/window.js';
import { basicTrace } from '../fixtures/scenarios.js';
import { scratch } from '../support/programs.js';

describe('window', () => {
  test('an isolated, sandboxed renderer without Node, with the preload only', () => {
    const o = windowOptions('/app/preload.cjs');
    expect(o.webPreferences).toEqual({
      preload: '/app/preload.cjs',
      contextIsolation: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      sandbox: true,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      spellcheck: false,
    });
  });

  test('navigation away from the app, new windows and permissions are refused', () => {
    const listeners = new Map<string, (e: { preventDefault(): void }, url: string) => void>();
    let openHandler: ((d: { url: string }) => { action: string }) | null = null;
    let permission: ((c: unknown, p: string, cb: (g: boolean) => void) => void) | null = null;
    let check: (() => boolean) | null = null;
    const contents: WebContentsLike = {
      on: (event, l) => void listeners.set(event, l),
      setWindowOpenHandler: (h) => void (openHandler = h),
      session: { setPermissionRequestHandler: (h) => void (permission = h), setPermissionCheckHandler: (h) => void (check = h) },
    };
    guardContents(contents);
    const navigate = (event: string, url: string): boolean => {
      let prevented = false;
      listeners.get(event)!({ preventDefault: () => (prevented = true) }, url);
      return prevented;
    };
    expect(navigate('will-navigate', 'https://example.com/')).toBe(true);
    expect(navigate('will-navigate', 'file:///etc/passwd')).toBe(true);
    expect(navigate('will-redirect', 'http://127.0.0.1:1234/')).toBe(true);
    expect(navigate('will-navigate', `${APP_ORIGIN}/index.html`)).toBe(false);
    expect(openHandler!({ url: 'https://example.com' })).toEqual({ action: 'deny' });
    let granted: boolean | null = null;
    permission!(null, 'media', (g) => (granted = g));
    expect(granted).toBe(false);
    expect(check!()).toBe(false);
    expect(isAppUrl('not a url')).toBe(false);
  });
});

describe('app scheme', () => {
  const dir = scratch('app-scheme');
  const renderer = path.join(dir, 'renderer');
  mkdirSync(path.join(renderer, 'assets'), { recursive: true });
  writeFileSync(path.join(renderer, 'index.html'), '<!doctype html>');
  writeFileSync(path.join(renderer, 'assets', 'a.js'), 'export {}');
  writeFileSync(path.join(dir, 'secret.txt'), 'secret');

  test('serves the renderer with the CSP', async () => {
    const index = await appResponse(renderer, APP_INDEX);
    expect(index.status).toBe(200);
    expect(index.headers['Content-Security-Policy']).toContain("default-src 'none'");
    expect(index.headers['Content-Type']).toContain('text/html');
    expect((await appResponse(renderer, `${APP_ORIGIN}/assets/a.js`)).headers['Content-Type']).toContain('javascript');
  });

  test.each([
    [`${APP_ORIGIN}/..%2fsecret.txt`, 403],
    [`${APP_ORIGIN}/assets/..%2f..%2fsecret.txt`, 403],
    ['cc-memwrap://other/index.html', 403],
    [`${APP_ORIGIN}/missing.js`, 404],
    [`${APP_ORIGIN}/%E0%A4%A`, 400],
  ])('%s → %i', async (url, status) => {
    const r = await appResponse(renderer, url);
    expect(r.status).toBe(status);
    expect(new TextDecoder().decode(r.body)).not.toContain('secret');
  });
});

describe('IPC handlers', () => {
  const dir = scratch('ipc');
  const trace = path.join(dir, 'demo.mwtrace');
  writeFileSync(trace, basicTrace().build());
  const other = path.join(dir, 'other.mwtrace');
  writeFileSync(other, basicTrace().build());
  const recent = new RecentList(path.join(dir, 'recent.json'));
  recent.add(trace);
  const state: HostState = { session: null };
  let dialogAnswer = { canceled: true, filePaths: [] as string[] };
  const h = createHandlers({ state, recent, options: {}, showOpenDialog: async () => dialogAnswer });

  test('nothing open: no session, no bytes, sources refused', async () => {
    expect(await h.session()).toBeNull();
    await expect(h.traceBytes()).rejects.toThrow(/no trace is open/);
    expect(await h.source('demo.c')).toMatchObject({ ok: false });
  });

  test('only traces on the recent list open on request', async () => {
    await expect(h.openRecent(other)).rejects.toThrow(/not on the recent list/);
    await expect(h.openRecent(42)).rejects.toThrow(TypeError);
    const info = (await h.openRecent(trace)) as { trace: { name: string }; recent: unknown[] };
    expect(info.trace.name).toBe('demo.mwtrace');
    expect(new Uint8Array((await h.traceBytes()) as Uint8Array)).toEqual(new Uint8Array(readFileSync(trace)));
  });

  test('sources go through the path checks; non-strings are refused', async () => {
    expect(await h.source('../../etc/passwd')).toMatchObject({ ok: false, reason: 'not-named' });
    expect(await h.source('demo.c')).toMatchObject({ ok: false, reason: 'unverified' });
    await expect(h.source({ toString: () => 'demo.c' })).rejects.toThrow(TypeError);
  });

  test('the file dialog opens what the user chose, and adds it to the recent list', async () => {
    expect(await h.openDialog()).toBeNull();
    dialogAnswer = { canceled: false, filePaths: [other] };
    expect(((await h.openDialog()) as { trace: { path: string } }).trace.path).toBe(other);
    expect(recent.read()[0]!.path).toBe(other);
    dialogAnswer = { canceled: false, filePaths: [path.join(dir, 'recent.json')] };
    await expect(h.openDialog()).rejects.toThrow(/recent\.json/);
  });

  test('a trace opened through its index: the index requests answer, with their checks; a whole trace refuses them', async () => {
    await expect(h.indexStatus()).rejects.toThrow(/is not opened through an index/);
    const indexed: HostState = { session: null };
    const big = path.join(dir, 'indexed.mwtrace');
    writeFileSync(big, basicTrace().build());
    recent.add(big);
    const hi = createHandlers({ state: indexed, recent, options: { index: true }, showOpenDialog: async () => dialogAnswer });
    await expect(hi.indexStatus()).rejects.toThrow(/no trace is open/);
    const info = (await hi.openRecent(big)) as { mode?: string };
    expect(info.mode).toBe('index');
    await expect(hi.traceBytes()).rejects.toThrow(/opened through its index/);
    await indexed.session!.index();
    const status = (await hi.indexStatus()) as { state: string; meta: { events: number } };
    expect(status.state).toBe('ready');
    const detail = (await hi.indexDetail('3')) as { detail: { event: number } };
    expect(detail.detail.event).toBe(3);
    const range = (await hi.indexEvents('0', String(status.meta.events))) as Uint8Array;
    expect(new DataView(range.buffer, range.byteOffset).getUint32(0, true)).toBe(status.meta.events);
    const fine = (await hi.indexFine('0', String(status.meta.events))) as Uint8Array;
    expect(new DataView(fine.buffer, fine.byteOffset).getUint32(0, true)).toBe(Math.ceil(status.meta.events / 256));
    await expect(hi.indexFine('9', '3')).rejects.toThrow(/ends before it starts/);
    await expect(hi.indexDetail('-4')).rejects.toThrow(/event must be a whole number/);
    await expect(hi.indexNext('0', '1', 'nothing', 'all')).rejects.toThrow(/class must be one of/);
  });
});

describe('preload', () => {
  /** Compiles gui/preload/preload.cts and runs it with a fake Electron; returns what it exposed and the IPC calls. */
  function runPreload(): { exposed: Map<string, Record<string, (...a: unknown[]) => unknown>>; calls: unknown[][] } {
    const source = readFileSync(path.join(packageRoot, 'gui', 'preload', 'preload.cts'), 'utf8');
    const js = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } }).outputText;
    const exposed = new Map<string, Record<string, (...a: unknown[]) => unknown>>();
    const calls: unknown[][] = [];
    const required: string[] = [];
    const electron = {
      contextBridge: { exposeInMainWorld: (k: string, api: Record<string, (...a: unknown[]) => unknown>) => exposed.set(k, api) },
      ipcRenderer: { invoke: async (...args: unknown[]) => calls.push(args) },
    };
    const module = { exports: {} };
    vm.runInNewContext(js, {
      require: (name: string) => {
        required.push(name);
        if (name !== 'electron') throw new Error(`a sandboxed preload cannot require ${name}`);
        return electron;
      },
      module,
      exports: module.exports,
    });
    expect(required).toEqual(['electron']);
    return { exposed, calls };
  }

  test('exposes thirteen calls on the main process channels, passing strings only', async () => {
    const { exposed, calls } = runPreload();
    expect([...exposed.keys()]).toEqual(['ccMemwrap']);
    const api = exposed.get('ccMemwrap')!;
    expect(Object.keys(api).sort()).toEqual(Object.keys(CHANNELS).sort());
    expect(Object.isFrozen(api)).toBe(true);
    await api.session!();
    await api.traceBytes!();
    await api.source!({ toString: () => '../x.c' });
    await api.openRecent!('/t.mwtrace');
    await api.openDialog!();
    await api.indexStatus!();
    await api.indexSummary!();
    await api.indexEvents!(5, { toString: () => '9' });
    await api.indexFine!(256, 512);
    await api.indexDetail!(7);
    await api.indexNext!(-1, 1, 'alloc', 'all');
    await api.indexReport!();
    await api.indexPanels!();
    expect(calls).toEqual([
      [CHANNELS.session],
      [CHANNELS.traceBytes],
      [CHANNELS.source, '../x.c'],
      [CHANNELS.openRecent, '/t.mwtrace'],
      [CHANNELS.openDialog],
      [CHANNELS.indexStatus],
      [CHANNELS.indexSummary],
      [CHANNELS.indexEvents, '5', '9'],
      [CHANNELS.indexFine, '256', '512'],
      [CHANNELS.indexDetail, '7'],
      [CHANNELS.indexNext, '-1', '1', 'alloc', 'all'],
      [CHANNELS.indexReport],
      [CHANNELS.indexPanels],
    ]);
  });
});
