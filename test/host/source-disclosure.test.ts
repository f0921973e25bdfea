// A trace cannot make the tools show a file the build did not read: crafted traces naming /etc/passwd (through a
// working directory of "/", through a symbolic link in an honest-looking source tree, with and without a content
// hash) are refused, in words, by the session (what `view` and Electron's IPC serve), the viewer's server, Electron's
// IPC handlers, `report --html` and the source lines of `report --peak`; a real build's sources are shown until they
// change, and a source root the user names shows old traces' files and changed files with a note.
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runReport } from '../../cli/report.js';
import { createHandlers, type HostState } from '../../gui/main/ipc.js';
import { RecentList } from '../../host/recent.js';
import { startServer, type RunningServer } from '../../host/server.js';
import { TraceSession, type SessionOptions } from '../../host/trace-session.js';
import { capture } from '../fixtures/cli-capture.js';
import { S, sourceSites, TraceBuilder, type SiteDef } from '../fixtures/trace-builder.js';
import { apiGet } from '../support/viewer-api.js';
import { buildInstrumented, runTraced, scratch, traceOf } from '../support/programs.js';

const dir = scratch('disclosure');
/** What /etc/passwd holds on every Linux machine, and no source file does. */
const PASSWD_LINE = /root:x?:0:0:/;
const REAL_PASSWD = readFileSync('/etc/passwd', 'utf8');

/** A trace of a run in `cwd` whose unit names `file` (malloc at line 1), with `extra` sites (e.g. SOURCE sites). */
function craft(name: string, cwd: string, file: string, extra: SiteDef[] = []): string {
  const b = new TraceBuilder({ complete: true });
  const t = b.thread(0);
  t.threadBegin(1);
  t.program(path.join(cwd, 'prog'), cwd);
  t.unit(1, [
    { kind: S.ENTRY, file, func: 'main', name: 'main', line: 1 }, // 1
    { kind: S.MALLOC, file, func: 'main', name: 'malloc', line: 1 }, // 2
    { kind: S.RETURN, file, func: 'main', name: 'main', line: 2 }, // 3
    ...extra,
  ]);
  t.enter(1, 128);
  t.alloc({ site: 2, size: 64, addr: 0x1000 });
  t.exit(3);
  t.end(0, 0);
  const trace = path.join(dir, name);
  writeFileSync(trace, b.build());
  return trace;
}

/** A honest-looking tree: <dir>/tree/src/main.c, built as an innocent file, now a symbolic link to /etc/passwd. */
const tree = path.join(dir, 'tree');
const innocent = path.join(dir, 'innocent.c');
mkdirSync(path.join(tree, 'src'), { recursive: true });
writeFileSync(innocent, 'int main(void) { return 0; }\n');
symlinkSync('/etc/passwd', path.join(tree, 'src', 'main.c'));
const built = sourceSites([{ file: 'src/main.c', disk: innocent }])[0]!;

/** Each crafted trace: what it names, and why it must be refused. */
const CRAFTED = {
  /** The working directory "/" makes the root "/", and the file /etc/passwd; no content hash. */
  rootNoHash: craft('root-no-hash.mwtrace', '/', 'etc/passwd'),
  /** The same with a content hash that is not /etc/passwd's. */
  rootWrongHash: craft('root-wrong-hash.mwtrace', '/', 'etc/passwd', [{ ...built, file: 'etc/passwd' }]),
  /** A relative name in a tree, a symbolic link leading out of the tree's root. */
  linkInTree: craft('link-in-tree.mwtrace', tree, 'src/main.c', [built]),
  /** The link named absolutely, in a run whose root is "/", so the link stays under the root: only its hash refuses it. */
  linkUnderSlash: craft('link-under-slash.mwtrace', '/', path.join(tree, 'src', 'main.c'), [{ ...built, file: path.join(tree, 'src', 'main.c') }]),
};

/** The file each crafted trace names. */
const NAMED: Record<keyof typeof CRAFTED, string> = {
  rootNoHash: 'etc/passwd',
  rootWrongHash: 'etc/passwd',
  linkInTree: 'src/main.c',
  linkUnderSlash: path.join(tree, 'src', 'main.c'),
};

const REASON: Record<keyof typeof CRAFTED, string> = {
  rootNoHash: 'unverified',
  rootWrongHash: 'changed',
  linkInTree: 'outside-root',
  linkUnderSlash: 'changed',
};

const open = (trace: string, options: SessionOptions = {}): Promise<TraceSession> => TraceSession.open(trace, { ...options, index: false });

describe('crafted traces naming /etc/passwd', () => {
  for (const [what, trace] of Object.entries(CRAFTED) as [keyof typeof CRAFTED, string][]) {
    test(`${what}: the session refuses it, in words`, async () => {
      const r = (await open(trace)).source(NAMED[what]);
      expect(r).toMatchObject({ ok: false, reason: REASON[what] });
      expect(JSON.stringify(r)).not.toMatch(PASSWD_LINE);
      expect(r.ok ? '' : r.message).toMatch(/records no content hash|changed since the build|outside the source root/);
    });

    test(`${what}: report --html embeds none of it`, async () => {
      const out = path.join(dir, `${what}.html`);
      const r = await capture(runReport, [trace, '--html', out]);
      expect(r.code, r.err).toBe(0);
      const html = readFileSync(out, 'utf8');
      expect(html).not.toMatch(PASSWD_LINE);
      expect(html).not.toContain(REAL_PASSWD.split('\n')[0]);
      expect(html).toMatch(/records no content hash|changed since the build|leads outside the source root/);
    });

    test(`${what}: report --peak prints none of its lines`, async () => {
      const r = await capture(runReport, [trace, '--peak']);
      expect(r.code, r.err).toBe(0);
      expect(r.out).not.toMatch(PASSWD_LINE);
      expect(r.out).toContain('(source not found)');
    });
  }

  describe('the viewer', () => {
    let server: RunningServer;
    const recent = new RecentList(path.join(dir, 'recent.json'));
    beforeAll(async () => {
      server = await startServer({ rendererDir: dir, session: await open(CRAFTED.rootNoHash), recent });
    });
    afterAll(() => server?.close());

    test("the server's /api/source refuses every crafted name", async () => {
      for (const [what, trace] of Object.entries(CRAFTED) as [keyof typeof CRAFTED, string][]) {
        recent.add(trace);
        expect((await apiGet(server, `api/open-recent?path=${encodeURIComponent(trace)}`, { method: 'POST' })).status).toBe(200);
        const r = await apiGet(server, `api/source?file=${encodeURIComponent(NAMED[what])}`);
        expect(r.status, what).toBe(403);
        const body = await r.text();
        expect(body).not.toMatch(PASSWD_LINE);
        expect(JSON.parse(body)).toMatchObject({ ok: false, reason: REASON[what] });
      }
    });

    test("Electron's IPC handlers refuse them through the same session", async () => {
      const state: HostState = { session: null };
      const h = createHandlers({ state, recent, options: {}, showOpenDialog: async () => ({ canceled: true, filePaths: [] }) });
      for (const [what, trace] of Object.entries(CRAFTED) as [keyof typeof CRAFTED, string][]) {
        await h.openRecent(trace);
        const r = await h.source(NAMED[what]);
        expect(r, what).toMatchObject({ ok: false, reason: REASON[what] });
        expect(JSON.stringify(r)).not.toMatch(PASSWD_LINE);
      }
    });
  });
});

describe('a real build: its sources as they were built', () => {
  const project = path.join(dir, 'project');
  const source = path.join(project, 'prog.c');
  const header = path.join(project, 'prog.h');
  let trace = '';
  beforeAll(() => {
    mkdirSync(project, { recursive: true });
    writeFileSync(header, '#include <stdlib.h>\nstatic inline void *grab(size_t n) { return malloc(n); }\n');
    writeFileSync(source, '#include "prog.h"\nint main(void) {\n  char *p = grab(32);\n  free(p);\n  return 0;\n}\n');
    buildInstrumented('gcc', ['-O0'], ['prog.c'], path.join(project, 'prog'), project);
    const ran = runTraced(path.join(project, 'prog'), [], path.join(project, 'traces'), { cwd: project });
    trace = traceOf(path.join(project, 'traces'), ran.pid);
  });

  test('the unit and its header are shown; once edited, each is refused as changed since the build', async () => {
    const s = await open(trace);
    expect(s.source(source)).toMatchObject({ ok: true, text: readFileSync(source, 'utf8') });
    expect(s.source(header)).toMatchObject({ ok: true });
    writeFileSync(header, readFileSync(header, 'utf8') + '/* edited */\n');
    const after = await open(trace);
    expect(after.source(source)).toMatchObject({ ok: true });
    expect(after.source(header)).toMatchObject({ ok: false, reason: 'changed', message: `${header}: changed since the build (its content is not what the build recorded), so it is not shown; to see it as it is now, name its folder: --source-root DIR` });
    // A root the user names shows the file as it is now, saying so.
    const chosen = await open(trace, { sourceRoot: project });
    expect(chosen.source(header)).toMatchObject({ ok: true, note: expect.stringMatching(/changed since the build/) });
    expect(chosen.source(source)).not.toHaveProperty('note');
  });

  test('an old trace without content hashes: shown only under a root the user names', async () => {
    const old = craft('old.mwtrace', project, 'prog.c');
    expect((await open(old)).source('prog.c')).toMatchObject({ ok: false, reason: 'unverified' });
    expect((await open(old, { sourceRoot: project })).source('prog.c')).toMatchObject({ ok: true, text: readFileSync(source, 'utf8') });
    // Under a chosen root the path checks still hold.
    expect((await open(CRAFTED.linkInTree, { sourceRoot: tree })).source('src/main.c')).toMatchObject({ ok: false, reason: 'outside-root' });
  });

  test('report --html --source-root: the changed header is in the report, with its note', async () => {
    const out = path.join(dir, 'chosen.html');
    const r = await capture(runReport, [trace, '--html', out, '--source-root', project]);
    expect(r.code, r.err).toBe(0);
    expect(readFileSync(out, 'utf8')).toContain('/* edited */');
    expect((await capture(runReport, [trace, '--html', out, '--source-root', path.join(dir, 'nowhere')])).err).toBe(`cc-memwrap report: --source-root ${path.join(dir, 'nowhere')}: no such folder\n`);
  });
});
