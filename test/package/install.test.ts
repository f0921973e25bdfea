// The package as a user installs it: this tree packed by `npm pack` (its prepack build included), the tarball
// installed with `npm install -g` into an empty prefix, the installed folder made read-only, and the demo's steps
// run through the installed command (build, run, report, report --html, view's server); also `npm install` of the
// tarball in a project with `npx cc-memwrap`, and `npx --package=<tarball>`. npm uses its local cache first
// (--prefer-offline): the package's one dependency, web-tree-sitter, is there after `npm ci`.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../package-root.js';
import { run, scratch, type Ran } from '../support/programs.js';

/** What `npm pack --json` says of the tarball. */
interface Packed {
  filename: string;
  size: number;
  unpackedSize: number;
  files: Array<{ path: string }>;
}

/** Folders of a clone that are built or fetched, not sources: left out of the copy that is packed. */
const NOT_SOURCES = new Set(['node_modules', 'dist', '.git', '.cache', 'release', 'build']);

/** A copy of this tree's sources, as a fresh clone has them, with the installed node_modules linked in. */
function copyOfTree(dir: string): string {
  const tree = path.join(dir, 'tree');
  cpSync(packageRoot, tree, {
    recursive: true,
    filter: (source) => {
      const relative = path.relative(packageRoot, source);
      return !NOT_SOURCES.has(relative.split(path.sep)[0]!) && !source.endsWith('.mwtrace');
    },
  });
  symlinkSync(path.join(packageRoot, 'node_modules'), path.join(tree, 'node_modules'));
  return tree;
}

/** Runs npm; its failure is the test's, with what npm said. */
function npm(args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Ran {
  const r = run('npm', args, { cwd, env, timeout: 600_000 });
  if (r.status !== 0) throw new Error(`npm ${args.join(' ')} exited ${r.status}:\n${r.stderr}${r.stdout}`);
  return r;
}

const root = process.getuid?.() === 0;
/** Root writes anywhere: as root, the installed command runs as `nobody`, to whom the install folder is read-only. */
const NOBODY = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'];

/** Every file of a folder with its size and modification time, to see that nothing was written there. */
function listing(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .sort()
    .map((name) => {
      const st = lstatSync(path.join(dir, name));
      return `${name} ${st.size} ${st.mtimeMs}`;
    });
}

describe('the package, packed and installed as a user would', () => {
  let dir = '';
  let packed: Packed;
  let tarball = '';
  let prefix = '';
  let installed = '';

  beforeAll(() => {
    dir = scratch('package');
    const tree = copyOfTree(dir);
    const out = npm(['pack', '--json', '--pack-destination', dir], tree);
    packed = (JSON.parse(out.stdout) as Packed[])[0]!;
    tarball = path.join(dir, packed.filename);
  }, 900_000);

  afterAll(() => {
    if (!root && installed !== '' && existsSync(installed)) spawnSync('chmod', ['-R', 'u+w', installed]); // so the scratch folder can be removed
  });

  it('holds the built command, the viewer, the grammar, the runtime sources and the lessons; no tests, benchmarks or maps', () => {
    const files = packed.files.map((f) => f.path);
    for (const needed of [
      'bin/cc-memwrap',
      'package.json',
      'README.md',
      'dist/bin/main.js',
      'dist/instrumenter/driver.js',
      'dist/instrumenter/tree-sitter-c.wasm',
      'dist/gui/renderer/index.html',
      'dist/gui/report/index.html',
      'dist/gui/main/main.js',
      'dist/host/index-build-worker.js',
      'instrumenter/queries/calls.scm',
      'runtime/memwrap.h',
      'runtime/core/mw-records.c',
      'runtime/mw-file.c',
      'runtime/exports.list',
      'runtime/module/mw-module.c',
      'runtime/valgrind/cc-memwrap.supp',
      'runtime/TRACE-FORMAT.md',
      'samples/linked-list.c',
      'samples/linked-list.md',
      'docs/using.md',
    ]) {
      expect(files).toContain(needed);
    }
    const unwanted = files.filter((f) => /^(test|bench|gui\/bench|runtime\/test|dist\/bench|dist\/gui\/bench)\//.test(f) || f.endsWith('.map') || (f.endsWith('.ts') && !f.endsWith('.d.ts')));
    expect(unwanted).toEqual([]);
  });

  it('installs with `npm install -g` into an empty prefix, running no install script of its own', () => {
    prefix = path.join(dir, 'prefix');
    mkdirSync(prefix);
    const r = npm(['install', '-g', tarball, '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund'], dir);
    installed = path.join(prefix, 'lib', 'node_modules', 'cc-memwrap');
    expect(r.stderr).not.toMatch(/install-scripts/); // npm lists scripts it wants allowed: none
    expect(existsSync(path.join(prefix, 'bin', 'cc-memwrap'))).toBe(true);
    const dependencies = readdirSync(path.join(installed, 'node_modules')).filter((name) => readdirSync(path.join(installed, 'node_modules', name)).length > 0);
    expect(dependencies.filter((name) => !name.startsWith('.') && !name.startsWith('@'))).toEqual(['web-tree-sitter']);
  });

  it("runs the demo's steps through the installed command, its folder read-only and the runtime built into the user's cache", async () => {
    expect(installed, 'the install above failed').not.toBe('');
    const work = path.join(dir, 'work');
    const home = path.join(dir, 'home');
    mkdirSync(work);
    mkdirSync(home);
    if (root) {
      chmodSync(dir, 0o755); // a scratch folder is the creator's alone
      spawnSync('chown', ['65534:65534', work, home]);
    } else {
      expect(spawnSync('chmod', ['-R', 'a-w', installed]).status).toBe(0);
    }
    const env = { PATH: `${path.join(prefix, 'bin')}${path.delimiter}${process.env.PATH ?? ''}`, HOME: home, LC_ALL: 'C' };
    const as = (command: string, args: string[]): Ran => (root ? run(NOBODY[0]!, [...NOBODY.slice(1), command, ...args], { cwd: work, env }) : run(command, args, { cwd: work, env }));
    const before = listing(installed);

    const version = as('cc-memwrap', ['--version']);
    expect(version.status, version.stderr).toBe(0);
    expect(version.stdout).toContain(`runtime   ${path.join(installed, 'runtime')}`);
    expect(version.stdout).toContain(`cache     ${path.join(home, '.cache', 'cc-memwrap')}`);
    expect(version.stdout).toContain(`samples   ${path.join(installed, 'samples')}`);
    expect(as('cp', ['-r', path.join(installed, 'samples'), 'samples']).status).toBe(0);

    const build = as('cc-memwrap', ['gcc', '-g', 'samples/linked-list.c', '-o', 'linked-list']);
    expect(build.status, build.stderr).toBe(0);
    expect(readdirSync(path.join(home, '.cache', 'cc-memwrap'))).toHaveLength(1); // the runtime, compiled on first use
    const ran = as('./linked-list', []);
    expect(ran.stdout).toBe('first=1 second=4\n');
    const trace = readdirSync(work).find((name) => name.endsWith('.mwtrace'))!;
    expect(trace).toMatch(/^linked-list\.\d+\.mwtrace$/);

    const report = as('cc-memwrap', ['report', trace, '--linked', '--leaks']);
    expect(report.status, report.stderr).toBe(0);
    expect(report.stdout).toContain('linked  samples/linked-list.c:33 main → malloc (16 B)  orphaned');
    expect(report.stdout).toContain('total heap usage: 5 allocs, 2 frees, 4,160 bytes allocated');

    const html = as('cc-memwrap', ['report', trace, '--html', 'linked-list.html']);
    expect(html.status, html.stderr).toBe(0);
    const page = readFileSync(path.join(work, 'linked-list.html'), 'utf8');
    expect(page).toContain('id="mw-trace"');
    expect(page).toContain('make_node'); // the sample's source, inside the file

    await viewServes(root ? NOBODY[0]! : 'cc-memwrap', root ? [...NOBODY.slice(1), 'cc-memwrap', 'view', '--browser', trace] : ['view', '--browser', trace], work, env);
    expect(listing(installed)).toEqual(before);
  });

  it('installs into a project with `npm install <tarball>` and runs as `npx cc-memwrap`', () => {
    const project = path.join(dir, 'project');
    mkdirSync(project);
    npm(['init', '-y'], project);
    npm(['install', tarball, '--prefer-offline', '--no-audit', '--no-fund'], project);
    const version = run('npx', ['--no-install', 'cc-memwrap', '--version'], { cwd: project });
    expect(version.status, version.stderr).toBe(0);
    expect(version.stdout).toContain(`runtime   ${path.join(project, 'node_modules', 'cc-memwrap', 'runtime')}`);
    const build = run('npx', ['--no-install', 'cc-memwrap', 'gcc', path.join(packageRoot, 'samples', 'linked-list.c'), '-o', 'linked-list'], { cwd: project });
    expect(build.status, build.stderr).toBe(0);
    expect(statSync(path.join(project, 'linked-list')).isFile()).toBe(true);
  });

  it('runs without installing: `npx --package=<tarball> cc-memwrap`', () => {
    const somewhere = path.join(dir, 'somewhere');
    mkdirSync(somewhere);
    const r = run('npx', ['--yes', `--package=${tarball}`, 'cc-memwrap', '--version'], { cwd: somewhere, env: { ...process.env, npm_config_prefer_offline: 'true' }, timeout: 600_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^cc-memwrap \d+\.\d+\.\d+\nruntime {3}\S+\/node_modules\/cc-memwrap\/runtime /);
  });
});

/** `view --browser`: it prints the address, serves the viewer's page and the trace's session there, and ends on
 *  Ctrl-C (SIGINT) with status 0. */
async function viewServes(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<void> {
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const ended = new Promise<number | null>((resolve) => child.on('close', (status) => resolve(status)));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const m = /(http:\/\/127\.0\.0\.1:\d+\/\S*)/.exec(stdout);
      if (m) resolve(m[1]!);
    });
    void ended.then((status) => reject(new Error(`view ended (status ${status}) before printing an address:\n${stdout}${stderr}`)));
  });
  try {
    // The printed address carries the session's token; the page's later requests carry the cookie it sets.
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<script');
    const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0]!;
    expect(cookie).toMatch(/=/);
    const session = await fetch(new URL('api/session', url), { headers: { 'x-cc-memwrap': '1', cookie } });
    expect(session.status).toBe(200);
    expect(JSON.stringify(await session.json())).toContain('linked-list');
  } finally {
    child.kill('SIGINT');
  }
  expect(await ended, stderr).toBe(0);
}
