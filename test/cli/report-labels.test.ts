// The report's site and group labels are never cut short while they fit a line: lesson 3 built in a folder with
// samples/ names its allocation site "samples/error-path-leak.c:20 load_record → malloc", too long to sit beside the
// numbers in 80 columns, so it goes on a line of its own above them (as --compare prints its rows), whole, in the
// top sites and in --by site; labels that fit stay beside their numbers.
import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { runReport } from '../../cli/report.js';
import { capture } from '../fixtures/cli-capture.js';
import { buildInstrumented, runTraced, samplesDir, scratch, traceOf } from '../support/programs.js';

const SITE = 'samples/error-path-leak.c:20 load_record → malloc';
let trace = '';

beforeAll(() => {
  const dir = scratch('report-labels');
  mkdirSync(path.join(dir, 'samples'));
  copyFileSync(path.join(samplesDir, 'error-path-leak.c'), path.join(dir, 'samples', 'error-path-leak.c'));
  buildInstrumented('gcc', ['-O0'], [path.join('samples', 'error-path-leak.c')], path.join(dir, 'leak'), dir);
  const ran = runTraced(path.join(dir, 'leak'), [], path.join(dir, 'traces'), { cwd: dir });
  trace = traceOf(path.join(dir, 'traces'), ran.pid);
}, 120_000);

/** The lines of the report's section that starts with `heading`, up to the blank line after it. */
function section(text: string, heading: string): string[] {
  const lines = text.split('\n');
  const at = lines.findIndex((l) => l.startsWith(heading));
  expect(at, `no section ${heading}`).toBeGreaterThanOrEqual(0);
  const end = lines.indexOf('', at);
  return lines.slice(at, end < 0 ? undefined : end);
}

describe('labels in the report', () => {
  test('the top sites: a site too long to sit beside its numbers stands whole on its own line above them', async () => {
    const r = await capture(runReport, [trace]);
    expect(r.code, r.err).toBe(0);
    const top = section(r.out, 'Top allocation sites');
    expect(top).toEqual(['Top allocation sites by bytes requested (1 of 1)', '  requested  allocs  live at exit', `  ${SITE}`, '      192 B       3          64 B']);
  });

  test('--by site: the same, its numbers under the words the viewer uses', async () => {
    const r = await capture(runReport, [trace, '--by', 'site']);
    const by = section(r.out, 'Heap by allocation site');
    expect(by[1]).toBe('     net     min    max  allocations  frees');
    expect(by).toContain(`  ${SITE}`);
    expect(by.join('\n')).not.toContain('…');
  });
});
