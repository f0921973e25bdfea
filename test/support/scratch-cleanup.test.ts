// A test file's scratch directories are removed once its tests have run, and kept when one of them failed or
// CC_MEMWRAP_KEEP_SCRATCH=1 asks: the suite's set-up run by vitest itself on two fixture files.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../package-root.js';
import { run, scratch } from './programs.js';

const vitest = path.join(packageRoot, 'node_modules', 'vitest', 'vitest.mjs');
const config = path.join(packageRoot, 'test', 'fixtures', 'scratch', 'vitest.config.ts');

/** Runs the two fixture files; the scratch directories each made, by outcome. */
function runFixtures(env: NodeJS.ProcessEnv = {}): { status: number | null; pass: string[]; fail: string[] } {
  const notes = path.join(scratch('scratch-notes'), 'notes.txt');
  const r = run(process.execPath, [vitest, 'run', '--config', config], { cwd: packageRoot, env: { ...process.env, ...env, SCRATCH_NOTES: notes } });
  const lines = readFileSync(notes, 'utf8').trim().split('\n').map((l) => l.split(' '));
  return { status: r.status, pass: lines.filter(([k]) => k === 'pass').map(([, d]) => d!), fail: lines.filter(([k]) => k === 'fail').map(([, d]) => d!) };
}

describe('scratch directories', () => {
  it('are removed after a file whose tests passed, and kept after one that failed', () => {
    const r = runFixtures();
    expect(r.status).toBe(1); // the failing fixture
    expect([r.pass.length, r.fail.length]).toEqual([2, 1]);
    expect(r.pass.map(existsSync)).toEqual([false, false]);
    expect(r.fail.map(existsSync)).toEqual([true]);
    for (const dir of r.fail) rmSync(dir, { recursive: true, force: true });
  });

  it('are all kept with CC_MEMWRAP_KEEP_SCRATCH=1', () => {
    const r = runFixtures({ CC_MEMWRAP_KEEP_SCRATCH: '1' });
    expect([...r.pass, ...r.fail].map(existsSync)).toEqual([true, true, true]);
    for (const dir of [...r.pass, ...r.fail]) rmSync(dir, { recursive: true, force: true });
  });
});
