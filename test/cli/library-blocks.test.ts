// libc's blocks in `report --budget`, on test/programs/mq.c built with -DFIX: the stdout buffer the first printf makes
// (line 47, in drain) is named, its line quoted, why it exists and how setvbuf avoids it said under it; with
// library=no (or "libraryBlocks": false in memwrap.json) the heap budget leaves it out, says so, and is kept. A
// trace whose functions call no libc function the rewriter saw names nothing.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { runReport } from '../../cli/report.js';
import { libraryCause } from '../../analysis/library-blocks.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { capture } from '../fixtures/cli-capture.js';
import { basicTrace } from '../fixtures/scenarios.js';
import { buildInstrumented, programsDir, runTraced, scratch, traceOf } from '../support/programs.js';

let dir = '';
let trace = '';

beforeAll(() => {
  dir = scratch('library-blocks');
  buildInstrumented('gcc', ['-O0', '-DFIX'], [path.join(programsDir, 'mq.c')], path.join(dir, 'mq'));
  const ran = runTraced(path.join(dir, 'mq'), [], path.join(dir, 'traces'), { cwd: programsDir });
  trace = traceOf(path.join(dir, 'traces'), ran.pid);
}, 120_000);

describe("libc's blocks in the report's budgets", () => {
  test('the stdout buffer is named under the budget it breaks, with its line and what setvbuf does', async () => {
    const r = await capture(runReport, [trace, '--budget', 'heap=1K']);
    expect(r.code, r.err).toBe(0);
    const budgets = r.out.slice(r.out.indexOf('Budgets (--budget)'));
    expect(budgets).toContain('  heap ≤ 1.0 KiB: max 4.2 KiB at event ');
    expect(budgets).toMatch(/ {4}drain \(via libc\/uninstrumented\)\n {10}stdout buffer — printf at mq\.c:47\n {10}\| printf\("message %d: %s\\n", m->id, m->text\);\n {10}libc makes stdout's buffer at its first output/);
    expect(budgets.replace(/\n {10}/g, ' ')).toContain('setvbuf(stdout, NULL, _IONBF, 0) before it (no buffer), or setvbuf with a static buffer of your own, avoids it');
  });

  test('library=no leaves it out: the budget is kept, and says what it left out', async () => {
    const r = await capture(runReport, [trace, '--budget', 'heap=1K,library=no', '--fail-on', 'budget']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('  heap ≤ 1.0 KiB (blocks libraries made left out): max 192 B at event ');
    expect(r.out).toMatch(/max 192 B at event \d+, ok\n/);
    const counted = await capture(runReport, [trace, '--budget', 'heap=1K', '--fail-on', 'budget']);
    expect(counted.code).toBe(1);
  });

  test('"libraryBlocks": false in memwrap.json does the same; a bad value is one line, exit 2', async () => {
    writeFileSync(path.join(dir, 'memwrap.json'), '{ "budgets": { "heap": "1K", "libraryBlocks": false } }\n');
    const r = await capture(runReport, [trace, '--fail-on', 'budget']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain(`Budgets (${path.join(dir, 'memwrap.json')})\n  heap ≤ 1.0 KiB (blocks libraries made left out): max 192 B`);
    writeFileSync(path.join(dir, 'memwrap.json'), '{ "budgets": { "heap": "1K", "libraryBlocks": "no" } }\n');
    const bad = await capture(runReport, [trace]);
    expect(bad.code).toBe(2);
    expect(bad.err).toBe(`cc-memwrap report: ${path.join(dir, 'memwrap.json')}: "libraryBlocks" must be true or false (false: the heap and total budgets leave out the blocks libraries made)\n`);
    const flag = await capture(runReport, [trace, '--budget', 'heap=1K,library=perhaps']);
    expect(flag.err).toBe("cc-memwrap report: --budget: 'library=perhaps': library= wants yes or no (no: the heap and total budgets leave out the blocks libraries made)\n");
  });

  test('a function with no libc call the rewriter saw gives no name: nothing is guessed', () => {
    const model = decodeTrace(basicTrace().build());
    for (let s = 1; s < model.sites.count; s++) expect(libraryCause(model, s, '/lib/x86_64-linux-gnu/libc.so.6')).toBeNull();
  });
});
