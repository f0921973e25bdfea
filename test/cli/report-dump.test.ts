// The report and dump commands as a user meets them: arguments, --help, --json, --top, exit codes and one-line errors.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { runDump } from '../../cli/dump.js';
import { runReport } from '../../cli/report.js';
import { SUMMARY_SCHEMA } from '../../analysis/summary.js';
import { capture } from '../fixtures/cli-capture.js';
import { basicTrace, killedTrace } from '../fixtures/scenarios.js';

const dir = mkdtempSync(path.join(tmpdir(), 'mw-cli-'));
const basic = path.join(dir, 'basic.mwtrace');
writeFileSync(basic, basicTrace().build());
const killed = path.join(dir, 'killed.mwtrace');
writeFileSync(killed, killedTrace().build());
const notTrace = path.join(dir, 'notes.txt');
writeFileSync(notTrace, 'hello, this is text\n');

describe('report', () => {
  test('text report, exit 0, nothing on stderr', async () => {
    const r = await capture(runReport, [basic]);
    expect(r.code).toBe(0);
    expect(r.err).toBe('');
    expect(r.out).toContain('total heap usage: 6 allocs, 3 frees, 1,422 bytes allocated');
    for (const line of r.out.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
  });

  test('--json prints one object with the schema tag', async () => {
    const r = await capture(runReport, [basic, '--json', '--top', '1']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.schema).toBe(SUMMARY_SCHEMA);
    expect(j.file).toBe(basic);
    expect(j.valgrind).toEqual({ allocs: 6, frees: 3, bytesAllocated: 1422, inUseAtExit: { bytes: 1248, blocks: 3 } });
    expect(j.topSites).toHaveLength(1);
    expect(j.siteGroups).toBe(4);
    expect(j.end.how).toBe('exit');
  });

  test('--top N limits the site table', async () => {
    const r = await capture(runReport, ['--top', '2', basic]);
    expect(r.out).toContain('Top allocation sites by bytes requested (2 of 4)');
  });

  test('problems are warnings on stderr; the report is still printed', async () => {
    const r = await capture(runReport, [killed]);
    expect(r.code).toBe(0);
    expect(r.out).toContain('ended without a trailer');
    expect(r.err).toBe(`cc-memwrap report: ${killed}: warning: no END record: the program was killed (e.g. SIGKILL) or crashed before the runtime could record its end\n`);
  });

  test('errors: one line on stderr, exit 2', async () => {
    const missing = await capture(runReport, [path.join(dir, 'nope.mwtrace')]);
    expect(missing).toEqual({ code: 2, out: '', err: `cc-memwrap report: ${path.join(dir, 'nope.mwtrace')}: no such file\n` });
    const text = await capture(runReport, [notTrace]);
    expect(text.code).toBe(2);
    expect(text.err).toMatch(/^cc-memwrap report: .*notes\.txt: not a cc-memwrap trace: it starts with 68 65 6c 6c 6f 2c 20 74/);
    expect(text.err.trim().split('\n')).toHaveLength(1);
    // A folder or several traces make the report over several processes (report-many.test.ts); without a trace in
    // it, or with an option that reads one trace, it is refused.
    const empty = mkdtempSync(path.join(dir, 'empty-'));
    expect(await capture(runReport, [empty])).toEqual({ code: 2, out: '', err: `cc-memwrap report: ${empty}: a folder with no .mwtrace files\n` });
    expect((await capture(runReport, [])).code).toBe(2);
    expect((await capture(runReport, [basic, basic, '--peak'])).code).toBe(2);
    expect((await capture(runReport, [basic, '--top', 'ten'])).err).toBe("cc-memwrap report: --top wants a whole number, got 'ten'\n");
    const unknown = await capture(runReport, [basic, '--frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toMatch(/Unknown option '--frobnicate'/);
  });

  test('--help', async () => {
    const r = await capture(runReport, ['--help']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^Usage: cc-memwrap report <trace> \[--top N\] \[--json\]/);
  });
});

describe('dump', () => {
  test('lines per record, exit 0', async () => {
    const r = await capture(runDump, [basic]);
    expect(r.code).toBe(0);
    expect(r.out.split('\n')[0]).toMatch(/^MWTRACE 1\.0 little-endian pointer=8 complete=yes/);
    expect(r.out).toContain('  0x00011b t0 ALLOC seq=0x2 site=4 size=24 addr=0x5000 usable=24\n');
    expect(r.out).toMatch(/problems: none\n$/);
  });

  test('errors and --help', async () => {
    expect(await capture(runDump, [path.join(dir, 'nope')])).toEqual({
      code: 2,
      out: '',
      err: `cc-memwrap dump: ${path.join(dir, 'nope')}: no such file\n`,
    });
    expect((await capture(runDump, [notTrace])).code).toBe(2);
    expect((await capture(runDump, [])).code).toBe(2);
    const help = await capture(runDump, ['-h']);
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/^Usage: cc-memwrap dump <trace>/);
  });
});
