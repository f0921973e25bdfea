// `cc-memwrap report --html` reads each file once: the trace, the memwrap.json beside the traced program and the
// program itself (its frame sizes), although both the text report and the HTML report's session need all three.
// Every read through node:fs and node:fs/promises is counted by path.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, test, vi } from 'vitest';
import { runReport } from '../../cli/report.js';
import { REPORT_TEMPLATE_DIR } from '../../host/html-report.js';
import { capture } from '../fixtures/cli-capture.js';
import { haveCommand, skipAllWhen } from '../support/machine.js';
import { buildInstrumented, runTraced, samplesDir, scratch, traceOf } from '../support/programs.js';

/** Every path opened for reading, absolute, in order. */
const reads = vi.hoisted(() => [] as string[]);

/** Wraps the reading functions of a fs module so that each call notes its path (a file descriptor is not a path: skipped). */
function counted<T extends object>(fs: T, names: string[], resolve: (p: string) => string): T {
  const wrapped: Record<string, unknown> = {};
  for (const name of names) {
    const real = (fs as Record<string, unknown>)[name];
    if (typeof real !== 'function') continue;
    wrapped[name] = (...args: unknown[]) => {
      const p = args[0];
      if (typeof p === 'string' || p instanceof URL) reads.push(resolve(p instanceof URL ? p.pathname : p));
      return (real as (...a: unknown[]) => unknown).apply(fs, args);
    };
  }
  return { ...fs, ...wrapped, default: { ...((fs as { default?: object }).default ?? fs), ...wrapped } } as T;
}

vi.mock('node:fs/promises', async (importOriginal) => {
  const fsp = await importOriginal<typeof import('node:fs/promises')>();
  const { resolve } = await import('node:path');
  return counted(fsp, ['readFile', 'open'], resolve);
});

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const { resolve } = await import('node:path');
  return counted(fs, ['readFileSync', 'openSync', 'createReadStream', 'readFile', 'open'], resolve);
});

const times = (file: string): number => reads.filter((p) => p === file).length;

describe('report --html', () => {
  skipAllWhen(haveCommand('gcc') ? null : 'gcc is missing (the test builds samples/linked-list.c through cc-memwrap)');
  let dir: string;
  let exe: string;
  let trace: string;
  let config: string;

  beforeAll(() => {
    if (!haveCommand('gcc')) return;
    dir = scratch('report-html-reads');
    exe = path.join(dir, 'bin', 'linked-list');
    mkdirSync(path.dirname(exe), { recursive: true });
    buildInstrumented('gcc', ['-O0', '-g'], [path.join(samplesDir, 'linked-list.c')], exe);
    config = path.join(dir, 'bin', 'memwrap.json');
    writeFileSync(config, JSON.stringify({ budgets: { heap: '64K' } }));
    const ran = runTraced(exe, [], path.join(dir, 'traces'), { cwd: samplesDir });
    trace = traceOf(path.join(dir, 'traces'), ran.pid);
  });

  test('reads the trace, the memwrap.json and the program once each, with --stack too', async () => {
    expect(existsSync(path.join(REPORT_TEMPLATE_DIR, 'index.html')), `${REPORT_TEMPLATE_DIR} is missing: run npm run build`).toBe(true);
    const out = path.join(dir, 'report.html');
    reads.length = 0;
    const r = await capture(runReport, [trace, '--stack', '--html', out]);
    expect(r.err).toContain(`wrote ${out}`);
    expect(r.code).toBe(0);
    // What the report says shows that all three were read and used: the budget from the memwrap.json, the frame sizes.
    expect(r.out).toMatch(/^Budgets \(.*memwrap\.json\)$/m);
    expect(r.out).toMatch(/^  main \d+ B  linked-list.c:\d+/m);
    const html = readFileSync(out, 'utf8');
    expect(html).toContain(JSON.stringify(config).slice(1, -1));
    expect({ trace: times(trace), config: times(config), program: times(exe) }).toEqual({ trace: 1, config: 1, program: 1 });
  });

  test('without --html reads them once too (the counting sees the text report alone)', async () => {
    reads.length = 0;
    const r = await capture(runReport, [trace, '--stack']);
    expect(r.code).toBe(0);
    expect({ trace: times(trace), config: times(config), program: times(exe) }).toEqual({ trace: 1, config: 1, program: 1 });
  });
});
