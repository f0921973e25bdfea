// What the tools create is their user's alone: traces, HTML reports (which embed sources), exports, the recent list,
// the index and cache files in a trace's cache folder are created 0600, and folders they create 0700,
// under any umask; the helper never changes the mode of a device it writes to.
import { spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { makePrivateDir, openPrivate, writePrivateFile } from '../../host/private-files.js';
import { basicTrace } from '../fixtures/scenarios.js';
import { buildInstrumented, scratch, wrapper } from '../support/programs.js';
import { packageRoot } from '../../package-root.js';

const dir = scratch('private-outputs');
const mode = (f: string): string => (statSync(f).mode & 0o777).toString(8).padStart(3, '0');

/** `cc-memwrap args…` under `umask`, in a shell (the umask of a worker thread cannot be set). */
function runUnder(umask: string, args: string[], env: NodeJS.ProcessEnv = {}): { status: number | null; stderr: string } {
  const quoted = [process.execPath, wrapper, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const r = spawnSync('sh', ['-c', `umask ${umask} && exec ${quoted}`], { encoding: 'utf8', env: { ...process.env, ...env } });
  return { status: r.status, stderr: r.stderr };
}

describe('private outputs', () => {
  for (const umask of ['000', '022']) {
    test(`umask ${umask}: report --html, export -o and the index files are 0600`, () => {
      const here = path.join(dir, `umask-${umask}`);
      mkdirSync(here);
      const trace = path.join(here, 'demo.mwtrace');
      writeFileSync(trace, basicTrace().build());
      const html = path.join(here, 'report.html');
      expect(runUnder(umask, ['report', trace, '--html', html])).toMatchObject({ status: 0 });
      expect(mode(html)).toBe('600');
      const csv = path.join(here, 'timeline.csv');
      expect(runUnder(umask, ['export', trace, '--format', 'csv', '-o', csv])).toMatchObject({ status: 0 });
      expect(mode(csv)).toBe('600');
      // Through the index: the report, and the cache folder beside the trace with the index and its caches.
      const indexed = path.join(here, 'indexed.html');
      expect(runUnder(umask, ['report', trace, '--html', indexed], { MEMWRAP_VIEW_INDEX: '1' })).toMatchObject({ status: 0 });
      expect(mode(indexed)).toBe('600');
      const cache = path.join(here, 'demo.mwtrace.mwcache');
      expect(mode(cache)).toBe('700');
      const inside = readdirSync(cache);
      expect(inside).toEqual(expect.arrayContaining(['cache.json', 'index', 'panels']));
      for (const f of inside) expect(`${f} ${mode(path.join(cache, f))}`).toBe(`${f} 600`);
    });
  }

  test('umask 000: the trace an instrumented program writes is 0600', () => {
    const source = path.join(dir, 'prog.c');
    writeFileSync(source, '#include <stdlib.h>\nint main(void) { free(malloc(8)); return 0; }\n');
    const exe = path.join(dir, 'prog');
    buildInstrumented('gcc', ['-O0'], [source], exe);
    const traces = path.join(dir, 'traces');
    mkdirSync(traces);
    const r = spawnSync('sh', ['-c', `umask 000 && MEMWRAP_TRACE='${traces}/%p.mwtrace' exec '${exe}'`], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    const [trace] = readdirSync(traces);
    expect(mode(path.join(traces, trace!))).toBe('600');
  });

  test('the helper: files 0600 and the folders it creates 0700 under umask 0; an existing folder and a device keep their mode', () => {
    // The compiled helper (npm run build) in a process of its own, whose umask can be set.
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', `
      const { makePrivateDir, writePrivateFile } = await import(${JSON.stringify(path.join(packageRoot, 'dist', 'host', 'private-files.js'))});
      process.umask(0);
      makePrivateDir(${JSON.stringify(path.join(dir, 'made', 'a', 'b'))});
      writePrivateFile(${JSON.stringify(path.join(dir, 'made', 'a', 'b', 'f'))}, 'x');
    `], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(mode(path.join(dir, 'made'))).toBe('700');
    expect(mode(path.join(dir, 'made', 'a', 'b'))).toBe('700');
    expect(mode(path.join(dir, 'made', 'a', 'b', 'f'))).toBe('600');
    makePrivateDir(dir); // exists: left as it is
    expect(mode(dir)).toBe('700');
    const before = mode('/dev/null');
    closeSync(openPrivate('/dev/null', 'w'));
    expect(mode('/dev/null')).toBe(before);
    writePrivateFile(path.join(dir, 'plain'), 'x');
    expect(mode(path.join(dir, 'plain'))).toBe('600');
  });
});
