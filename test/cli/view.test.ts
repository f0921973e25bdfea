// `cc-memwrap view`'s arguments and errors, and its local server when Electron is absent.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { runView, type ViewHooks } from '../../cli/view.js';
import type { RunningServer } from '../../host/server.js';
import { basicTrace } from '../fixtures/scenarios.js';
import { capture } from '../fixtures/cli-capture.js';
import { scratch, wrapper } from '../support/programs.js';

describe('cc-memwrap view', () => {
  const dir = scratch('view-cli');
  const trace = path.join(dir, 'demo.mwtrace');
  writeFileSync(trace, basicTrace().build());
  writeFileSync(path.join(dir, 'notes.txt'), 'hello');
  const view = (args: string[], hooks: ViewHooks = {}) => capture((a, io) => runView(a, io, { electron: null, recentFile: path.join(dir, 'recent.json'), ...hooks }), args);

  test('--help', async () => {
    const r = await view(['--help']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('Usage: cc-memwrap view <trace>');
  });

  test.each([
    [[], /expected a trace file \(or several, or a folder of them\)/],
    // Several traces are lanes: each is checked, the first missing one named.
    [['/no/such/a.mwtrace', 'b'], /^cc-memwrap view: \/no\/such\/a\.mwtrace: no such file/],
    [['--port', 'http', 'x'], /--port must be a number/],
    [['--bogus', 'x'], /Unknown option '--bogus'/],
    [['--budget', 'heap=lots', 'x'], /'lots' is not a size/],
    [['--source-root', '/no/such/dir', 'x'], /--source-root \/no\/such\/dir: no such directory/],
    [['/no/such/missing.mwtrace'], /missing\.mwtrace: no such file/],
  ])('%j fails with exit 2', async (args, message) => {
    const r = await view(args as string[]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
  });

  test('--compare with a missing or non-trace B is refused by name', async () => {
    const missing = await view([trace, '--compare', path.join(dir, 'missing-b.mwtrace')]);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/^cc-memwrap view: .*missing-b\.mwtrace: no such file/m);
    const notes = await view([trace, '--compare', path.join(dir, 'notes.txt')]);
    expect(notes.code).toBe(2);
    expect(notes.err).toMatch(/notes\.txt: /);
  });

  test('a file that is not a trace is refused by name', async () => {
    const r = await view([path.join(dir, 'notes.txt')]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/notes\.txt: /);
  });

  test('without Electron it serves on 127.0.0.1 and prints the address', async () => {
    const renderer = path.join(dir, 'renderer');
    mkdirSync(renderer, { recursive: true });
    writeFileSync(path.join(renderer, 'index.html'), '<!doctype html>');
    let running: RunningServer | null = null;
    const r = await view([trace, '--browser'], { rendererDir: renderer, onServer: (s) => (running = s) });
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/demo\.mwtrace at http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{43}\n/);
    const server = running as RunningServer | null;
    expect(server).not.toBeNull();
    // The printed address opens the page; the server's root without the token does not.
    expect((await fetch(/at (http:\S+)/.exec(r.out)![1]!)).status).toBe(200);
    expect((await fetch(server!.url)).status).toBe(403);
    await server!.close();
  });

  test('a port in use: one line, exit 1, no stack (the one run as a separate process, as a user would)', async () => {
    const renderer = path.join(dir, 'renderer');
    mkdirSync(renderer, { recursive: true });
    writeFileSync(path.join(renderer, 'index.html'), '<!doctype html>');
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as AddressInfo).port;
    try {
      const r = await view([trace, '--browser', '--port', String(port)], { rendererDir: renderer });
      expect(r.err).toBe(`cc-memwrap view: port ${port} is in use; give another with --port, or leave --port out for a free one\n`);
      expect(r.code).toBe(1);
      // The command itself: no JS stack, not exit 70.
      const cli = await new Promise<{ code: number | null; err: string }>((resolve) => {
        const child = spawn(process.execPath, [wrapper, 'view', '--browser', '--port', String(port), trace], { stdio: ['ignore', 'ignore', 'pipe'] });
        let err = '';
        child.stderr.on('data', (d: Buffer) => (err += d.toString()));
        child.on('close', (code) => resolve({ code, err }));
      });
      expect(cli).toEqual({ code: 1, err: `cc-memwrap view: port ${port} is in use; give another with --port, or leave --port out for a free one\n` });
    } finally {
      busy.close();
    }
  });

  test('an unbuilt viewer is said plainly', async () => {
    const r = await view([trace], { rendererDir: path.join(dir, 'nothing') });
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/the viewer is not built .*npm run build/);
  });
});
