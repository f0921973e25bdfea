// Output files appear whole or not at all: an export or an HTML report stopped with Ctrl-C (SIGINT) half-way through
// leaves no file at its name and no temporary one beside it; a write that fails leaves nothing either.
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { writeWholeFile } from '../../host/whole-file.js';
import { buildInstrumented, runTraced, scratch, traceOf } from '../support/programs.js';
import { packageRoot } from '../../package-root.js';

const cli = path.join(packageRoot, 'bin', 'cc-memwrap');

/** Three million heap events: long enough to read that a signal lands half-way. */
const CHURN = `#include <stdlib.h>
int main(void) {
  for (int i = 0; i < 1500000; i++) { char *p = malloc(16 + i % 64); p[0] = 1; free(p); }
  return 0;
}
`;

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
    const child = spawn(process.execPath, [cli, 'export', trace, '--format', 'csv', '-o', path.join(out, 'heap.csv')], { stdio: 'ignore' });
    const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
    await new Promise((r) => setTimeout(r, 700));
    child.kill('SIGINT');
    const { code, signal } = await ended;
    // The export must still have been running when the signal came, or this test proves nothing.
    expect({ code, signal }).toEqual({ code: null, signal: 'SIGINT' });
    expect(readdirSync(out)).toEqual([]);
  }, 60_000);

  it('Ctrl-C during report --html leaves no HTML file and no temporary file', async () => {
    const out = path.join(dir, 'html');
    mkdirSync(out, { recursive: true });
    const child = spawn(process.execPath, [cli, 'report', trace, '--html', path.join(out, 'report.html')], { stdio: 'ignore' });
    // Past the start (the trace opened), inside the pass that reads it: a file made before the end would be there.
    const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
    await new Promise((r) => setTimeout(r, 1500));
    child.kill('SIGINT');
    const { code, signal } = await ended;
    expect({ code, signal }).toEqual({ code: null, signal: 'SIGINT' });
    expect(readdirSync(out)).toEqual([]);
  }, 60_000);

  it('a write that fails leaves nothing behind', () => {
    const out = path.join(dir, 'failed');
    mkdirSync(path.join(out, 'taken'), { recursive: true });
    expect(() => writeWholeFile(path.join(out, 'taken'), 'text')).toThrow(/EISDIR|ENOTEMPTY|EEXIST/);
    expect(readdirSync(out)).toEqual(['taken']);
    expect(readdirSync(path.join(out, 'taken'))).toEqual([]);
  });
});
