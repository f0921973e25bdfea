// `cc-memwrap view` interrupted while it builds a trace's index: the Ctrl-C tests of the index's stages.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { packageRoot } from '../../package-root.js';

/**
 * `cc-memwrap view --browser trace` with the index forced, sent SIGINT once its progress on stderr matches `progress`:
 * whether it got that far (false: it ended first), its stderr, and its exit code.
 */
export async function interruptViewAt(trace: string, progress: RegExp): Promise<{ interrupted: boolean; err: string; code: number | null }> {
  const child = spawn(path.join(packageRoot, 'bin', 'cc-memwrap'), ['view', '--browser', trace], { env: { ...process.env, MEMWRAP_VIEW_INDEX: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  const interrupted = await Promise.race([
    new Promise<boolean>((resolve) =>
      child.stderr.on('data', (d: Buffer) => {
        err += d.toString();
        if (progress.test(err)) resolve(true);
      }),
    ),
    exited.then(() => false),
  ]);
  if (interrupted) child.kill('SIGINT');
  const code = await exited;
  return { interrupted, err, code };
}
