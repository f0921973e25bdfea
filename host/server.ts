// The local server of `cc-memwrap view` without Electron: serves the built renderer and a narrow API (the open trace, the sources it names, the recent list) on 127.0.0.1 only. Every request must name this host (no DNS rebinding), come from no other origin, and carry the session's token (other users of the machine can reach 127.0.0.1 too): in the address the command prints, which sets it as a cookie for the rest; API calls must also carry the app's header (a cross-site page cannot send it without a preflight, which is refused).
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { statSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { contentType } from './content-types.js';
import { SECURITY_HEADERS } from './csp.js';
import type { RecentList } from './recent.js';
import type { LanesReply } from './session-types.js';
import { isInside } from './source-access.js';
import { TraceOpenError, TraceSession, type SessionOptions } from './trace-session.js';
import { useIndex } from './index-cache.js';
import { SessionComparison } from './compare-runs.js';
import { EventsBuildingError, IndexRebuildingError, IndexRequestError, indexDetail, indexEvents, indexFine, indexNext, indexPanelsText, indexReportText, indexStatus, indexSummary } from './index-api.js';

/** Every API request carries this header with value 1. */
export const API_HEADER = 'x-cc-memwrap';

export interface ServerOptions {
  /** The built renderer (index.html and assets/). */
  rendererDir: string;
  session: TraceSession;
  /** Where the recent list lives; opening a recent trace is allowed only for paths on it. */
  recent: RecentList;
  sessionOptions?: SessionOptions;
  /** 0 (default): an ephemeral port. */
  port?: number;
  /** The second trace of `view A --compare B` (B), served as run=b beside the session (A). */
  compare?: TraceSession;
  /**
   * The traces of `view A B C…` (absolute paths, already checked to be traces), one lane each: listed by /api/lanes;
   * a lane the viewer would open through its index (useIndex) answers /api/index…?lane=i from its own index-mode
   * session (opened on the page's first request, kept), any other is read from the file when the page asks for it
   * (the server holds none of them); /api/open-lane makes it the session.
   */
  lanes?: string[];
}


export interface RunningServer {
  /** The server's root, http://127.0.0.1:port/ (without the token: nothing is served from it alone). */
  url: string;
  port: number;
  /** The session's token: 32 random bytes, base64url. */
  token: string;
  /** What a client sends instead of the token once it has it: the Cookie header's value. */
  cookie: string;
  /** The address of a page (index.html when empty) with the token: what the command prints and a browser opens. */
  pageUrl(page?: string): string;
  server: Server;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, type: string, body: string | Uint8Array): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(value));
}

/** Host header is 127.0.0.1:port or localhost:port. */
export function isLocalHost(host: string | undefined, port: number): boolean {
  return host === `127.0.0.1:${port}` || host === `localhost:${port}`;
}

/** No Origin header (a navigation, a same-origin GET), or this server's own. */
export function isOwnOrigin(origin: string | undefined, port: number): boolean {
  return origin === undefined || origin === `http://127.0.0.1:${port}` || origin === `http://localhost:${port}`;
}

/** The query parameter that carries the token in the printed address. */
export const TOKEN_PARAMETER = 'token';

/** The cookie that carries it afterwards: one per port, so two viewers on one machine keep their own. */
export function tokenCookieName(port: number): string {
  return `cc-memwrap-${port}`;
}

/** The value of cookie `name` in a Cookie header, or null. */
function cookieValue(header: string | undefined, name: string): string | null {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

/** `given` is the token, compared in constant time. */
function sameToken(given: string | null, token: string): boolean {
  if (given === null) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

const TOKEN_REFUSED =
  'cc-memwrap view: this address needs the session token. Open the address the command printed (it ends in ?token=…); ' +
  'a request without it, from another user of this machine or a web page, is refused.\n';

export async function startServer(options: ServerOptions): Promise<RunningServer> {
  let session = options.session;
  /** `view A --compare B`: B - A streamed on the host (`/api/compare`), on the page's first request. */
  const comparison = options.compare ? new SessionComparison(options.session, options.compare) : null;
  const rendererDir = path.resolve(options.rendererDir);
  let port = 0;

  /** Makes trace `p` the session (the viewer's page then shows it; `opened`, when open already) and puts it on the recent list. */
  const openSession = async (res: ServerResponse, p: string, opened?: TraceSession): Promise<void> => {
    try {
      session = opened ?? (await TraceSession.open(p, options.sessionOptions));
    } catch (e) {
      return sendJson(res, 422, { error: e instanceof TraceOpenError ? e.message : String(e) });
    }
    options.recent.add(p);
    return sendJson(res, 200, { ...session.info, recent: options.recent.read() });
  };

  const api = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    if (req.headers[API_HEADER] !== '1') return sendJson(res, 403, { error: 'missing API header' });
    if (url.pathname === '/api/lanes' || url.searchParams.has('lane')) return laneApi(req, res, url);
    // ?run=b: the compared trace (B) of `view A --compare B`.
    const run = url.searchParams.get('run') === 'b' ? (options.compare ?? null) : session;
    if (run === null) return sendJson(res, 404, { error: 'no compared trace' });
    if (req.method === 'GET' && url.pathname === '/api/session') {
      return sendJson(res, 200, { ...run.info, recent: options.recent.read() });
    }
    if (req.method === 'GET' && url.pathname === '/api/trace') {
      if (run.info.mode === 'index') return sendJson(res, 409, { error: `${run.info.trace.name} is opened through its index: ask /api/index` });
      return send(res, 200, 'application/octet-stream', run.bytes);
    }
    if (req.method === 'GET' && url.pathname.startsWith('/api/index')) return indexApi(res, url, run);
    if (req.method === 'GET' && url.pathname === '/api/compare') {
      if (comparison === null) return sendJson(res, 404, { error: 'no compared trace' });
      return send(res, 200, 'application/json; charset=utf-8', comparison.replyText());
    }
    if (req.method === 'GET' && url.pathname === '/api/source') {
      const file = url.searchParams.get('file');
      if (file === null) return sendJson(res, 400, { error: 'file parameter missing' });
      const result = run.source(file);
      return sendJson(res, result.ok ? 200 : result.reason === 'missing' ? 404 : 403, result);
    }
    if (req.method === 'POST' && url.pathname === '/api/open-recent') {
      const p = url.searchParams.get('path');
      if (p === null || !options.recent.has(p)) return sendJson(res, 403, { error: 'not a recent trace' });
      return openSession(res, p);
    }
    return sendJson(res, 404, { error: 'no such API' });
  };

  /** An index-mode session's index (host/index-api.ts); the same answers as the Electron main process gives. */
  const indexApi = async (res: ServerResponse, url: URL, run: TraceSession): Promise<void> => {
    if (run.info.mode !== 'index') return sendJson(res, 409, { error: `${run.info.trace.name} is not opened through an index` });
    const q = (name: string): string | null => url.searchParams.get(name);
    try {
      switch (url.pathname) {
        case '/api/index':
          return sendJson(res, 200, await indexStatus(run));
        case '/api/index/summary':
          return send(res, 200, 'application/octet-stream', await indexSummary(run));
        case '/api/index/events':
          return send(res, 200, 'application/octet-stream', await indexEvents(run, q('from'), q('to')));
        case '/api/index/fine':
          return send(res, 200, 'application/octet-stream', await indexFine(run, q('from'), q('to')));
        case '/api/index/detail':
          return sendJson(res, 200, await indexDetail(run, q('event')));
        case '/api/index/report':
          return sendJson(res, 200, await indexReportText(run));
        case '/api/index/panels':
          return send(res, 200, 'application/json; charset=utf-8', indexPanelsText(run));
        case '/api/index/next':
          return sendJson(res, 200, await indexNext(run, q('from'), q('direction'), q('class'), q('thread')));
        default:
          return sendJson(res, 404, { error: 'no such API' });
      }
    } catch (e) {
      return sendJson(res, e instanceof IndexRequestError ? 400 : e instanceof EventsBuildingError || e instanceof IndexRebuildingError ? 503 : 500, { error: (e as Error).message });
    }
  };

  /** The index-mode sessions of lanes drawn from their index, by lane (the first lane's is the session when it is one). */
  const laneSessions = new Map<number, Promise<TraceSession>>();
  const laneSession = (i: number, p: string): Promise<TraceSession> => {
    let s = laneSessions.get(i);
    if (s === undefined) {
      s = p === options.session.path && options.session.info.mode === 'index' ? Promise.resolve(options.session) : TraceSession.open(p, { ...options.sessionOptions, index: true, deferReport: true, timedSummaries: true });
      laneSessions.set(i, s);
      s.catch(() => laneSessions.delete(i));
    }
    return s;
  };

  /** Which lanes are drawn from their index, decided once from their size (useIndex) as the server starts. */
  const laneIndexed = (options.lanes ?? []).map((p) => useIndex(statSync(p).size));

  const laneApi = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const lanes = options.lanes ?? [];
    if (req.method === 'GET' && url.pathname === '/api/lanes') {
      const reply: LanesReply = {
        lanes: await Promise.all(lanes.map(async (p, i) => ({ name: path.basename(p), path: p, bytes: (await stat(p)).size, ...(laneIndexed[i] ? { mode: 'index' as const } : {}) }))),
      };
      return sendJson(res, 200, reply);
    }
    const text = url.searchParams.get('lane') ?? '';
    const i = /^\d+$/.test(text) ? Number(text) : -1;
    const lane = lanes[i];
    if (lane === undefined) return sendJson(res, 404, { error: `no lane ${text}` });
    const indexed = laneIndexed[i]!;
    if (req.method === 'GET' && url.pathname === '/api/trace') {
      if (indexed) return sendJson(res, 409, { error: `${path.basename(lane)} is drawn through its index: ask /api/index?lane=${i}` });
      return send(res, 200, 'application/octet-stream', await readFile(lane));
    }
    if (req.method === 'GET' && url.pathname.startsWith('/api/index')) {
      if (!indexed) return sendJson(res, 409, { error: `${path.basename(lane)} is not drawn through an index` });
      let run: TraceSession;
      try {
        run = await laneSession(i, lane);
      } catch (e) {
        return sendJson(res, 422, { error: e instanceof TraceOpenError ? e.message : String(e) });
      }
      return indexApi(res, url, run);
    }
    if (req.method === 'POST' && url.pathname === '/api/open-lane') {
      const opened = laneSessions.get(i);
      return openSession(res, lane, opened === undefined ? undefined : await opened.catch(() => undefined));
    }
    return sendJson(res, 404, { error: 'no such API' });
  };

  const asset = async (res: ServerResponse, url: URL): Promise<void> => {
    const rel = url.pathname === '/' ? 'index.html' : decodeURIComponent(url.pathname.slice(1));
    const file = path.resolve(rendererDir, rel);
    if (rel.includes('\0') || !isInside(rendererDir, file)) return send(res, 403, 'text/plain', 'forbidden');
    try {
      const body = await readFile(file);
      send(res, 200, contentType(file), body);
    } catch {
      send(res, 404, 'text/plain', 'not found');
    }
  };

  const token = randomBytes(32).toString('base64url');
  /** The token from the address (then set as a cookie for the page's later requests) or from that cookie; else a refusal. */
  const admitted = (req: IncomingMessage, res: ServerResponse, url: URL): boolean => {
    if (!isOwnOrigin(req.headers.origin, port)) {
      send(res, 403, 'text/plain; charset=utf-8', 'cc-memwrap view: a request from another origin is refused\n');
      return false;
    }
    if (sameToken(cookieValue(req.headers.cookie, tokenCookieName(port)), token)) return true;
    if (sameToken(url.searchParams.get(TOKEN_PARAMETER), token)) {
      res.setHeader('Set-Cookie', `${tokenCookieName(port)}=${token}; Path=/; HttpOnly; SameSite=Strict`);
      return true;
    }
    send(res, 403, 'text/plain; charset=utf-8', TOKEN_REFUSED);
    return false;
  };

  const server = createServer((req, res) => {
    if (!isLocalHost(req.headers.host, port)) return send(res, 421, 'text/plain', 'wrong host');
    const url = new URL(req.url ?? '/', `http://127.0.0.1:${port}`);
    if (!admitted(req, res, url)) return;
    const work = url.pathname.startsWith('/api/') ? api(req, res, url) : req.method === 'GET' ? asset(res, url) : Promise.resolve(send(res, 405, 'text/plain', 'method not allowed'));
    work.catch((e: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: String(e) });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}/`;
  return {
    url,
    port,
    token,
    cookie: `${tokenCookieName(port)}=${token}`,
    pageUrl: (page = '') => `${url}${page}?${TOKEN_PARAMETER}=${token}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
