// What this machine can do, for the tests that need a tool or an ability it may lack: such a test skips visibly,
// with the reason in the test report (vitest's verbose reporter prints it beside the test), and never passes silently.
import { spawnSync } from 'node:child_process';
import { beforeEach, type TestContext } from 'vitest';

/** Whether `tool` is a command on PATH. */
export function haveCommand(tool: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;
}

/** Skips the running test, with `why` shown in the report, when `why` is not null. */
export function skipWhen(ctx: TestContext, why: string | null): void {
  ctx.skip(why !== null, why ?? undefined);
}

/** Inside a describe: every test of it skips with `why` when it is not null. */
export function skipAllWhen(why: string | null): void {
  beforeEach((ctx) => skipWhen(ctx, why));
}

const glibc = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header?.glibcVersionRuntime;

/** Why numbers written down for gcc on x86-64 glibc (heap chunk sizes, frame sizes) cannot be checked here, or null. */
export const notX86_64Glibc: string | null =
  process.platform === 'linux' && process.arch === 'x64' && glibc !== undefined
    ? null
    : `these numbers are gcc's on x86-64 glibc; this is ${process.platform} ${process.arch}${glibc === undefined ? ' without glibc' : ''}`;
