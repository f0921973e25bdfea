// The app window's settings and guards: an isolated, sandboxed renderer without Node, with only the preload's narrow API; no navigation away from the app, no new windows, no permissions.
import type { WebContentsLike, WindowOptions } from './electron-api.js';
import { isAppLocation } from './app-protocol.js';

export function windowOptions(preload: string): WindowOptions {
  return {
    width: 1400,
    height: 900,
    title: 'cc-memwrap',
    show: true,
    backgroundColor: '#f8f9fa',
    webPreferences: {
      preload,
      contextIsolation: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      sandbox: true,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      spellcheck: false,
    },
  };
}

/** Whether `url` is a page of the app itself. */
export function isAppUrl(url: string): boolean {
  try {
    return isAppLocation(new URL(url));
  } catch {
    return false;
  }
}

/** Keeps the window on the app: navigations elsewhere and window.open are refused, permission requests denied. */
export function guardContents(contents: WebContentsLike): void {
  const stay = (e: { preventDefault(): void }, url: string): void => {
    if (!isAppUrl(url)) e.preventDefault();
  };
  contents.on('will-navigate', stay);
  contents.on('will-redirect', stay);
  contents.setWindowOpenHandler(() => ({ action: 'deny' }));
  contents.session.setPermissionRequestHandler((_c, _p, callback) => callback(false));
  contents.session.setPermissionCheckHandler(() => false);
}
