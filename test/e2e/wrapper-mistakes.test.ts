// The compiler wrapper meets a user's plain mistakes and interruptions as the compiler would: an output it cannot
// write (-o nodir/x.o, a folder, a path through a file) is one line and status 1, never a JS stack or exit 70; a
// signal (Ctrl-C to the process group, SIGTERM or SIGHUP to the wrapper alone) reaches the compiler it runs, leaves no
// /tmp/cc-memwrap-* behind and no compiler running, and the wrapper's status is 128 + the signal's number.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { run, scratch, wrapper } from '../support/programs.js';

const dir = scratch('wrapper-mistakes');
chmodSync(dir, 0o755);
const source = path.join(dir, 'base.c');
writeFileSync(source, '#include <stdlib.h>\nint main(void) { void *p = malloc(8); free(p); return 0; }\n');
writeFileSync(path.join(dir, 'afile'), 'not a folder');
mkdirSync(path.join(dir, 'afolder'));

/** Runs `cc-memwrap gcc args…` in `dir` with its temporaries in a folder of their own, which it returns. */
function wrap(args: string[], env: NodeJS.ProcessEnv = {}): ReturnType<typeof run> & { tmp: string } {
  const tmp = scratch('wrapper-tmp');
  return { ...run(process.execPath, [wrapper, 'gcc', ...args], { cwd: dir, env: { ...process.env, TMPDIR: tmp, ...env } }), tmp };
}

describe('an output the wrapper cannot write', () => {
  test.each([
    ['nodir/x.o', 'no such directory'],
    ['afolder', 'is a directory'],
    ['afile/x.o', 'a part of the path is not a directory'],
  ])('-c base.c -o %s: one line, status 1, nothing left in the temporary folder', (out, words) => {
    const r = wrap(['-c', 'base.c', '-o', out]);
    expect(r.stderr).toBe(`cc-memwrap: error: cannot write ${out}: ${words}\n`);
    expect(r.status).toBe(1);
    expect(readdirSync(r.tmp)).toEqual([]);
    // As the compiler itself: status 1.
    expect(spawnSync('gcc', ['-c', 'base.c', '-o', out], { cwd: dir }).status).toBe(1);
  });

  test('a folder the user may not write to (as nobody): permission denied, status 1', (ctx) => {
    if (process.getuid?.() !== 0 || spawnSync('runuser', ['-u', 'nobody', '--', 'true']).status !== 0) return ctx.skip(); // needs root to act as nobody
    const locked = path.join(dir, 'locked');
    mkdirSync(locked, { mode: 0o755 });
    const cache = scratch('wrapper-nobody-cache');
    chmodSync(cache, 0o777);
    chmodSync(path.dirname(cache), 0o755);
    const tmp = scratch('wrapper-nobody-tmp');
    chmodSync(tmp, 0o777);
    const r = run('runuser', ['-u', 'nobody', '--', 'env', `TMPDIR=${tmp}`, `MEMWRAP_CACHE_DIR=${cache}`, `HOME=${tmp}`, process.execPath, wrapper, 'gcc', '-c', 'base.c', '-o', 'locked/x.o'], { cwd: dir });
    expect(r.stderr).toBe('cc-memwrap: error: cannot write locked/x.o: permission denied\n');
    expect(r.status).toBe(1);
    expect(readdirSync(tmp)).toEqual([]);
  });
});

describe('signals during a slow compile', () => {
  /**
   * A compiler that is gcc, except that it compiles the rewritten unit (-x cpp-output) slowly: it writes its pid and
   * sleeps, so a signal always finds it running.
   */
  const slowcc = path.join(dir, 'slowcc');
  writeFileSync(slowcc, `#!/bin/sh\ncase "$*" in *cpp-output*) echo $$ > "$SLOW_PID"; exec sleep 600;; esac\nexec gcc "$@"\n`);
  chmodSync(slowcc, 0o755);

  /** Starts the wrapper on slowcc (its own process group) and waits until the slow compile runs. */
  async function startSlow(): Promise<{ wrapperPid: number; compilerPid: number; tmp: string; done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> }> {
    const tmp = scratch('wrapper-signal-tmp');
    const pidFile = path.join(tmp, '..', `${path.basename(tmp)}.pid`);
    const child = spawn(process.execPath, [wrapper, slowcc, '-c', 'base.c', '-o', 'slow.o'], { cwd: dir, env: { ...process.env, TMPDIR: tmp, SLOW_PID: pidFile }, detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stderr })));
    // Wait on the condition (the compile has started), never a fixed time.
    while (!existsSync(pidFile) || readFileSync(pidFile, 'utf8').trim() === '') await new Promise((r) => setTimeout(r, 20));
    const compilerPid = Number(readFileSync(pidFile, 'utf8'));
    rmSync(pidFile);
    return { wrapperPid: child.pid!, compilerPid, tmp, done };
  }

  const alive = (pid: number): boolean => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };

  test.each([
    ['SIGTERM to the wrapper alone', 'SIGTERM', false],
    ['SIGHUP to the wrapper alone', 'SIGHUP', false],
    ['Ctrl-C: SIGINT to the whole process group', 'SIGINT', true],
  ] as const)('%s: the compiler stops, the temporaries go, status 128 + signal', async (_what, signal, group) => {
    const { wrapperPid, compilerPid, tmp, done } = await startSlow();
    expect(readdirSync(tmp).filter((f) => f.startsWith('cc-memwrap-'))).toHaveLength(1);
    process.kill(group ? -wrapperPid : wrapperPid, signal);
    const r = await done;
    expect(r.stderr).toBe('');
    expect(r.signal).toBeNull();
    expect(r.code).toBe(128 + os.constants.signals[signal]);
    expect(alive(compilerPid)).toBe(false);
    expect(readdirSync(tmp)).toEqual([]);
  });
});
