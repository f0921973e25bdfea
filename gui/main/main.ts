// The Electron main process, kept thin: register the app scheme, answer the preload's calls (ipc.ts), open one guarded window (window.ts) on the trace given by `cc-memwrap view`. Started as `electron dist/gui/main/main.js -- <trace> [--source-root DIR] [--budget SPEC]`.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parseBudgets } from '../../analysis/budgets.js';
import { defaultRecentFile, RecentList } from '../../host/recent.js';
import type { SessionOptions } from '../../host/trace-session.js';
import { APP_INDEX, APP_SCHEME, APP_SCHEME_PRIVILEGES, appResponse } from './app-protocol.js';
import type { OpenDialogResult, WebContentsLike, WindowOptions } from './electron-api.js';
import { CHANNELS, createHandlers, type HostState } from './ipc.js';
import { guardContents, windowOptions } from './window.js';

interface ElectronMain {
  app: { whenReady(): Promise<void>; on(event: 'window-all-closed', listener: () => void): void; quit(): void };
  protocol: {
    registerSchemesAsPrivileged(schemes: Array<{ scheme: string; privileges: typeof APP_SCHEME_PRIVILEGES }>): void;
    handle(scheme: string, handler: (request: { url: string }) => Promise<Response>): void;
  };
  ipcMain: { handle(channel: string, listener: (event: unknown, ...args: unknown[]) => Promise<unknown>): void };
  dialog: { showOpenDialog(options: object): Promise<OpenDialogResult> };
  BrowserWindow: new (options: WindowOptions) => { webContents: WebContentsLike; loadURL(url: string): Promise<void> };
}

const here = path.dirname(fileURLToPath(import.meta.url));
const rendererDir = path.join(here, '..', 'renderer');
const preload = path.join(here, '..', 'preload', 'preload.cjs');

/** The trace and options after `--` on the command line. */
function sessionArgs(argv: string[]): { trace: string | null; options: SessionOptions } {
  // From `cc-memwrap view`: everything after "--". Opened as a desktop app (a file association): any .mwtrace argument.
  const dash = argv.indexOf('--');
  const rest = dash >= 0 ? argv.slice(dash + 1) : argv.slice(1).filter((a) => a.endsWith('.mwtrace'));
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, strict: false, options: { 'source-root': { type: 'string' }, budget: { type: 'string' } } });
  const options: SessionOptions = {};
  if (typeof values['source-root'] === 'string') options.sourceRoot = path.resolve(values['source-root']);
  if (typeof values.budget === 'string') options.budgets = parseBudgets(values.budget);
  return { trace: positionals[0] ?? null, options };
}

async function main(): Promise<void> {
  const electron = createRequire(import.meta.url)('electron') as ElectronMain;
  const { app, protocol, ipcMain, dialog, BrowserWindow } = electron;
  protocol.registerSchemesAsPrivileged([{ scheme: APP_SCHEME, privileges: APP_SCHEME_PRIVILEGES }]);
  const { trace, options } = sessionArgs(process.argv);
  const state: HostState = { session: null };
  const recent = new RecentList(defaultRecentFile());
  const handlers = createHandlers({
    state,
    recent,
    options,
    showOpenDialog: () => dialog.showOpenDialog({ properties: ['openFile'], filters: [{ name: 'cc-memwrap traces', extensions: ['mwtrace'] }] }),
  });
  await app.whenReady();
  protocol.handle(APP_SCHEME, async (request) => {
    const r = await appResponse(rendererDir, request.url);
    return new Response(new Uint8Array(r.body).buffer, { status: r.status, headers: r.headers });
  });
  for (const [name, channel] of Object.entries(CHANNELS)) {
    const handler = handlers[name as keyof typeof CHANNELS];
    ipcMain.handle(channel, (_event, ...args) => handler(...args));
  }
  if (trace !== null) await handlers.openRecent(path.resolve(trace)).catch(() => undefined);
  const win = new BrowserWindow(windowOptions(preload));
  guardContents(win.webContents);
  await win.loadURL(APP_INDEX);
  app.on('window-all-closed', () => app.quit());
}

main().catch((e: unknown) => {
  process.stderr.write(`cc-memwrap view: ${(e as Error).message}\n`);
  process.exit(1);
});
