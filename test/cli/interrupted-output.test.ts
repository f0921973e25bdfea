// Output files appear whole or not at all: an export or an HTML report stopped with Ctrl-C (SIGINT) half-way through
// (for a trace over 4 MiB, also in its panels' passes) leaves no file at its name and no temporary one beside it; a
// write that fails leaves nothing either.
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { writeWholeFile } from '../../host/whole-file.js';
import { buildInstrumented, runTraced, scratch, traceOf } from '../support/programs.js';
import { packageRoot } from '../../package-root.js';
import { INDEX_THRESHOLD } from '../../host/index-cache.js';

const cli = path.join(packageRoot, 'bin', 'cc-memwrap');

/** Three million heap events: long enough for a progress line before the pass ends. */
const CHURN = `#include <stdlib.h>
int main(void) {
  for (int i = 0; i < 1500000; i++) { char *p = malloc(16 + i % 64); p[0] = 1; free(p); }
  return 0;
}
`;

/**
 * Runs a shell line on a pseudo-terminal (util-linux `script`) and types Ctrl-C once its progress line shows the
 * trace being read, so the signal lands inside the pass whatever the machine's speed (a fixed delay once came
 * after a fast machine had already written the file). Resolves to the exit code `script` passes on (130: stopped by
 * SIGINT) and whether the progress line seen was short of 100 %.
 */
function ctrlCWhileReading(command: string, pass = /reading the events (\d+)%/): Promise<{ code: number | null; beforeEnd: boolean }> {
  // The line drawn from the first update (no 300 ms wait): a pass that took about that long once showed its first
  // line at 100 %, after the events had all been read.
  const env = { ...process.env, MEMWRAP_PROGRESS_AFTER_MS: '0' };
  const child = spawn('script', ['-qfec', command, '/dev/null'], { stdio: ['pipe', 'pipe', 'ignore'], env });
  let tty = '';
  let percent = -1;
  child.stdout.on('data', (d: Buffer) => {
    tty += d.toString();
    const m = pass.exec(tty);
    if (percent < 0 && m !== null) {
      percent = Number(m[1]);
      child.stdin.write('\x03');
    }
  });
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, beforeEnd: percent >= 0 && percent < 100 })));
}

describe('interrupted and failed output', () => {
  let dir = '';
  let trace = '';
  beforeAll(() => {
    dir = scratch('interrupted-output');
    writeFileSync(path.join(dir, 'churn.c'), CHURN);
    const exe = path.join(dir, 'churn');
    buildInstrumented('gcc', ['-O1'], [path.join(dir, 'churn.c')], exe);
    const traces = path.join(dir, 'traces');
    trace = traceOf(traces, runTraced(exe, [], traces).pid);
  }, 120_000);

  it('Ctrl-C during an export leaves no output file and no temporary file', async () => {
    const out = path.join(dir, 'out');
    mkdirSync(out, { recursive: true });
    const stopped = await ctrlCWhileReading(`${process.execPath} ${cli} export ${trace} --format csv -o ${path.join(out, 'heap.csv')}`);
    expect(stopped).toEqual({ code: 130, beforeEnd: true });
    expect(readdirSync(out)).toEqual([]);
  }, 60_000);

  it('Ctrl-C during report --html leaves no HTML file and no temporary file', async () => {
    const out = path.join(dir, 'html');
    mkdirSync(out, { recursive: true });
    const stopped = await ctrlCWhileReading(`${process.execPath} ${cli} report ${trace} --html ${path.join(out, 'report.html')} > /dev/null`);
    expect(stopped).toEqual({ code: 130, beforeEnd: true });
    expect(readdirSync(out)).toEqual([]);
  }, 60_000);

  it('Ctrl-C during the panels\' passes of report --html (a trace over 4 MiB) leaves no HTML file and no panels\' file', async () => {
    expect(statSync(trace).size).toBeGreaterThan(INDEX_THRESHOLD);
    // A copy in a folder of its own: the index and the panels' data are written beside it.
    const beside = path.join(dir, 'beside');
    mkdirSync(beside, { recursive: true });
    const copy = path.join(beside, 'churn.mwtrace');
    copyFileSync(trace, copy);
    const out = path.join(dir, 'html-panels');
    mkdirSync(out, { recursive: true });
    const stopped = await ctrlCWhileReading(`${process.execPath} ${cli} report ${copy} --html ${path.join(out, 'report.html')} > /dev/null`, /\(panels\): the tables (\d+)%/);
    expect(stopped).toEqual({ code: 130, beforeEnd: true });
    expect(readdirSync(out)).toEqual([]);
    // The index was whole before the panels began; nothing of the panels is left.
    expect(readdirSync(beside).filter((f) => f.includes('.panels'))).toEqual([]);
  }, 120_000);

  it('a write that fails leaves nothing behind', () => {
    const out = path.join(dir, 'failed');
    mkdirSync(path.join(out, 'taken'), { recursive: true });
    expect(() => writeWholeFile(path.join(out, 'taken'), 'text')).toThrow(/EISDIR|ENOTEMPTY|EEXIST/);
    expect(readdirSync(out)).toEqual(['taken']);
    expect(readdirSync(path.join(out, 'taken'))).toEqual([]);
  });
});
