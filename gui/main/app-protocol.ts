// The app's own URL scheme: serves the built renderer's files (and nothing outside its folder) with the viewer's Content-Security-Policy, so the Electron window loads no file:// page and no remote content.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { contentType } from '../../host/content-types.js';
import { SECURITY_HEADERS } from '../../host/csp.js';
import { isInside } from '../../host/source-access.js';

export const APP_SCHEME = 'cc-memwrap';
export const APP_ORIGIN = `${APP_SCHEME}://app`;
export const APP_INDEX = `${APP_ORIGIN}/index.html`;

/** Whether a parsed URL is on the app's scheme and host (a custom scheme's `origin` reads "null" outside Electron, so it is not compared). */
export function isAppLocation(u: URL): boolean {
  return u.protocol === `${APP_SCHEME}:` && u.host === 'app';
}

/** Privileges the scheme needs for module scripts, fetch and workers (registered before the app is ready). */
export const APP_SCHEME_PRIVILEGES = { standard: true, secure: true, supportFetchAPI: true, corsEnabled: false, stream: true };

export interface AppResponse {
  status: number;
  headers: Record<string, string>;
  body: Uint8Array;
}

/** The response to a request of the app scheme: a file of `rendererDir`, or 403/404. */
export async function appResponse(rendererDir: string, url: string): Promise<AppResponse> {
  const text = (status: number, msg: string): AppResponse => ({ status, headers: { ...SECURITY_HEADERS, 'Content-Type': 'text/plain' }, body: new TextEncoder().encode(msg) });
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return text(400, 'bad url');
  }
  if (!isAppLocation(u)) return text(403, 'forbidden');
  const root = path.resolve(rendererDir);
  let rel: string;
  try {
    rel = decodeURIComponent(u.pathname === '/' ? 'index.html' : u.pathname.slice(1));
  } catch {
    return text(400, 'bad path');
  }
  const file = path.resolve(root, rel);
  if (rel.includes('\0') || !isInside(root, file)) return text(403, 'forbidden');
  try {
    const body = await readFile(file);
    return { status: 200, headers: { ...SECURITY_HEADERS, 'Content-Type': contentType(file) }, body: new Uint8Array(body) };
  } catch {
    return text(404, 'not found');
  }
}
