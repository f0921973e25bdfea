// The progress line on a real terminal: every command that reads a large trace (report, its two passes for
// --leak-causes, report --html's index and panels' passes, export, dump) draws one on a pseudo-terminal (util-linux `script`), with the rate and the time left,
// and erases it; off a terminal there is none.
import { spawnSync } from 'node:child_process';
import { copyFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../package-root.js';
import { INDEX_THRESHOLD } from '../../host/index-cache.js';
import { buildInstrumented, runTraced, scratch, traceOf } from '../support/programs.js';

const cli = path.join(packageRoot, 'bin', 'cc-memwrap');

/** Three million events, a site that leaks one block in a thousand on its error path: --leak-causes reads it twice. */
const LEAKY = `#include <stdlib.h>
static int sink;
static char *keep;
static void work(int i) {
  char *p = malloc(16 + i % 32);
  p[0] = (char)i;
  if (i % 1000 == 7) { keep = p; return; }
  sink += p[0];
  free(p);
}
int main(void) {
  for (int i = 0; i < 750000; i++) work(i);
  return sink == 12345;
}
`;

/** What `command` (a shell line) writes to the terminal it runs on; its progress lines start at once, so that what is
 *  drawn does not depend on how fast this machine reads the trace. */
function onTerminal(command: string): string {
  const env = { ...process.env, MEMWRAP_PROGRESS_AFTER_MS: '0' };
  const ran = spawnSync('script', ['-qfec', command, '/dev/null'], { encoding: 'utf8', timeout: 120_000, env });
  expect(ran.status, ran.stdout + ran.stderr).toBe(0);
  return ran.stdout;
}

/** The progress lines drawn, without the erasing. */
const lines = (tty: string): string[] => tty.split('\r\x1b[K').filter((l) => l !== '');

describe('progress on a terminal', () => {
  let dir = '';
  let trace = '';
  beforeAll(() => {
    dir = scratch('progress-tty');
    writeFileSync(path.join(dir, 'leaky.c'), LEAKY);
    const exe = path.join(dir, 'leaky');
    buildInstrumented('gcc', ['-O1', '--mw-branches'], [path.join(dir, 'leaky.c')], exe);
    const traces = path.join(dir, 'traces');
    trace = traceOf(traces, runTraced(exe, [], traces).pid);
  }, 120_000);

  it('report --leak-causes: each of its two passes, with the rate and the time left, erased at the end', () => {
    const tty = onTerminal(`${process.execPath} ${cli} report --leak-causes ${trace} > ${path.join(dir, 'report.txt')}`);
    const drawn = lines(tty);
    expect(drawn.length).toBeGreaterThan(2);
    for (const l of drawn) expect(l).toMatch(/^\S+\.mwtrace: (pass 2, )?reading the events \d+%/);
    expect(drawn.some((l) => /reading the events \d+%, \d+ MiB\/s, about [\d.]+ s left$/.test(l))).toBe(true);
    expect(drawn.some((l) => l.includes('pass 2, '))).toBe(true);
    expect(tty.endsWith('\r\x1b[K')).toBe(true);
  }, 120_000);

  it('dump into a file: checking the records, then writing them', () => {
    const tty = onTerminal(`${process.execPath} ${cli} dump ${trace} > /dev/null`);
    const drawn = lines(tty);
    expect(drawn.some((l) => /: checking the records \d+%, \d+ MiB\/s/.test(l))).toBe(true);
    expect(drawn.some((l) => /: writing the records \d+%, \d+ MiB\/s/.test(l))).toBe(true);
    expect(tty.endsWith('\r\x1b[K')).toBe(true);
  }, 120_000);

  it('export -o: the pass over the events', () => {
    const tty = onTerminal(`${process.execPath} ${cli} export ${trace} --format massif -o ${path.join(dir, 'massif.out')}`);
    expect(lines(tty).some((l) => /: reading the events \d+%, \d+ MiB\/s/.test(l))).toBe(true);
  }, 120_000);

  it('report --html of a trace over 4 MiB: the index built, then the panels\' passes, each with the time left', () => {
    expect(statSync(trace).size).toBeGreaterThan(INDEX_THRESHOLD);
    // A copy of its own: the index and the panels' data go beside it.
    const copy = path.join(scratch('progress-tty-html'), 'leaky.mwtrace');
    copyFileSync(trace, copy);
    const out = path.join(dir, 'report.html');
    const tty = onTerminal(`${process.execPath} ${cli} report ${copy} --html ${out} > /dev/null`);
    const drawn = lines(tty);
    expect(drawn.some((l) => /^\S+\.mwtrace \(index\): .* \d+%/.test(l))).toBe(true);
    expect(drawn.some((l) => /^\S+\.mwtrace \(panels\): (pass \d+, )?the tables \d+%, about [\d.]+ s left$/.test(l))).toBe(true);
    expect(drawn.some((l) => /^\S+\.mwtrace \(panels\): (pass \d+, )?call paths and the live heap by site \d+%/.test(l))).toBe(true);
    expect(tty).toMatch(/\r\x1b\[Kcc-memwrap report: wrote \S+report\.html \(.*\): open it in a browser/);
    expect(readFileSync(out, 'utf8')).toContain('id="mw-index-panels"');
  }, 300_000);

  it('none off a terminal', () => {
    const piped = spawnSync(process.execPath, [cli, 'report', '--leak-causes', trace], { encoding: 'utf8' });
    expect(piped.status).toBe(0);
    expect(piped.stderr).toBe('');
  }, 120_000);
});
