// Requests to the viewer's local server as its page makes them: the app's header and the session's cookie (which the
// page gets from the address `cc-memwrap view` prints).
import type { RunningServer } from '../../host/server.js';

/** `p` (relative to the server's root, e.g. "api/session") fetched with the header and the token's cookie. */
export function apiGet(server: RunningServer, p: string, init: RequestInit & { headers?: Record<string, string> } = {}): Promise<Response> {
  return fetch(new URL(p, server.url), { ...init, headers: { 'x-cc-memwrap': '1', cookie: server.cookie, ...init.headers } });
}
