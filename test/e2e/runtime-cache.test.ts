// The runtime's per-user cache (MEMWRAP_CACHE_DIR, default ~/.cache/cc-memwrap): two builds that start at once
// into an empty cache both link and run, leaving one whole runtime and no half-built folder; a cache that cannot
// be written is said in one line naming it; `--version` names the runtime's sources and the cache.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../package-root.js';
import { must, run, runTraced, samplesDir, scratch, traceOf, wrapper } from '../support/programs.js';

interface Finished {
  status: number | null;
  stderr: string;
}

/** Starts a command and resolves when it has ended. */
function started(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stderr }));
  });
}

/** A compiler that, when it compiles a runtime source, first waits until `count` builds have reached that point
 *  (each leaves a file named for its driver's pid in `meet`): so the builds are inside the runtime's build at the
 *  same time, whatever the machine's load. It waits on that condition, for at most two minutes. */
function meetingCompiler(dir: string, meet: string, count: number): string {
  const file = path.join(dir, 'meeting-gcc');
  writeFileSync(
    file,
    `#!/bin/sh
case "$*" in
  *${path.join(packageRoot, 'runtime')}/*.c*)
    touch "${meet}/$PPID"
    tries=0
    while [ "$(ls "${meet}" | wc -l)" -lt ${count} ] && [ $tries -lt 2400 ]; do sleep 0.05; tries=$((tries + 1)); done ;;
esac
exec gcc "$@"
`,
  );
  chmodSync(file, 0o755);
  return file;
}

describe('the runtime cache', () => {
  it('two builds starting at once into an empty cache both work, and leave one whole runtime', async () => {
    const dir = scratch('cache-race');
    const cache = path.join(dir, 'cache');
    const meet = path.join(dir, 'meet');
    mkdirSync(meet);
    const cc = meetingCompiler(dir, meet, 2);
    const env = { ...process.env, MEMWRAP_CACHE_DIR: cache };
    const builds = await Promise.all(
      ['a', 'b'].map((name) => started(wrapper, ['--mw-verbose', cc, '-O0', path.join(samplesDir, 'linked-list.c'), '-o', path.join(dir, name)], env)),
    );
    for (const build of builds) {
      expect(build.status, build.stderr).toBe(0);
      expect(build.stderr).toContain('building the runtime'); // each built it: the race did happen
    }
    expect(readdirSync(meet)).toHaveLength(2);
    // One runtime folder, whole; the loser's private folder removed.
    const entries = readdirSync(cache);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatch(/^[0-9a-f]{20}$/);
    expect(readdirSync(path.join(cache, entries[0]!))).toEqual(expect.arrayContaining(['memwrap-weak.o', 'memwrap.o']));
    for (const name of ['a', 'b']) {
      const ran = runTraced(path.join(dir, name), [], path.join(dir, `traces-${name}`));
      expect(ran.stdout).toBe('first=1 second=4\n');
      expect(existsSync(traceOf(path.join(dir, `traces-${name}`), ran.pid))).toBe(true);
    }
  });

  it('a cache that cannot be written is said in one line, naming it and MEMWRAP_CACHE_DIR', () => {
    const dir = scratch('cache-unwritable');
    writeFileSync(path.join(dir, 'a-file'), '');
    const cache = path.join(dir, 'a-file', 'cache'); // under a file: not even root can make it
    const r = run(wrapper, ['gcc', path.join(samplesDir, 'linked-list.c'), '-o', path.join(dir, 'prog')], { env: { ...process.env, MEMWRAP_CACHE_DIR: cache } });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toBe(`cc-memwrap: cannot write the runtime's cache in ${cache} (ENOTDIR): set MEMWRAP_CACHE_DIR to a folder you can write\n`);
    expect(existsSync(path.join(dir, 'prog'))).toBe(false);
  });

  it('--version names the version, the runtime sources and the cache', () => {
    const cache = path.join(scratch('cache-version'), 'somewhere');
    const out = must(wrapper, ['--version'], { env: { ...process.env, MEMWRAP_CACHE_DIR: cache } }).stdout;
    expect(out.split('\n').slice(0, 3)).toEqual([
      `cc-memwrap ${(JSON.parse(readFileSync(path.join(packageRoot, 'package.json'), 'utf8')) as { version: string }).version}`,
      `runtime   ${path.join(packageRoot, 'runtime')}  (C sources, compiled with your compiler on first use)`,
      `cache     ${cache}  (the compiled runtime, per compiler and ABI; MEMWRAP_CACHE_DIR moves it)`,
    ]);
  });
});
