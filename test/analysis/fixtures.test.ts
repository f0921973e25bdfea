// Frozen trace files (test/fixtures/traces/<version>/ for every format version, and invalid/): dump and report output must match their golden text.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { runDump } from '../../cli/dump.js';
import { runReport } from '../../cli/report.js';
import { dumpTraceText } from '../../analysis/dump.js';
import { ExtKind, Kind, KIND_NAMES, READER_MAJOR, READER_MINOR } from '../../analysis/trace/format.js';
import { walkRecords } from '../../analysis/trace/records.js';
import { readHeader } from '../../analysis/trace/header.js';
import { memorySource } from '../../analysis/trace/byte-source.js';
import { ProblemLog } from '../../analysis/problems.js';
import { capture } from '../fixtures/cli-capture.js';
import { FIXTURES } from '../fixtures/scenarios.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const traces = path.join(here, '../fixtures/traces');

// A fixture is written once, from FIXTURES, the first time the tests run without it (never in CI), then left alone.
for (const [name, make] of Object.entries(FIXTURES)) {
  const file = path.join(traces, name);
  if (!existsSync(file) && !process.env.CI) {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, make());
  }
}

// Every format version's folder ("1.0", "1.2", …), oldest first, then invalid/: a reader change shows in all of them at once.
const versions = readdirSync(traces)
  .filter((d) => /^\d+\.\d+$/.test(d))
  .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
const files = [...versions, 'invalid'].flatMap((dir) =>
  readdirSync(path.join(traces, dir))
    .filter((f) => f.endsWith('.bin'))
    .sort()
    .map((f) => `${dir}/${f}`),
);

/** Fixtures with one more report golden, `<name>.report-<label>.txt`: the report options that show their records. */
const MORE_REPORTS: Record<string, { label: string; args: string[] }> = {
  '1.2/every-record.bin': { label: 'extensions', args: ['--leaks', '--linked', '--by', 'library', '--leak-causes'] },
};

describe('fixture files', () => {
  test('every fixture named in FIXTURES exists', () => {
    for (const name of Object.keys(FIXTURES)) expect(files).toContain(name);
  });

  const current = `${READER_MAJOR}.${READER_MINOR}`;
  test(`the reader's format version has its folder, whose fixtures hold every record kind and EXT subkind`, () => {
    expect(versions).toContain(current);
    const seen = new Set<string>();
    for (const name of files.filter((f) => f.startsWith(`${current}/`))) {
      for (const line of dumpTraceText(new Uint8Array(readFileSync(path.join(traces, name)))).split('\n')) {
        const m = /^ +0x[0-9a-f]+ t\d+ ([A-Z_]+)(?: ([A-Z_]+))?/.exec(line);
        if (m) seen.add(m[1] === 'EXT' ? `EXT/${m[2]}` : m[1]!);
      }
    }
    const every = [...KIND_NAMES.filter((k) => k !== 'EXT'), ...Object.keys(ExtKind).map((k) => `EXT/${k}`)];
    expect([...seen].sort()).toEqual(every.sort());
  });

  test(`the reader's format version's fixtures hold every form of ENTER and EXIT`, () => {
    const seen = new Set<string>();
    for (const name of files.filter((f) => f.startsWith(`${current}/`))) {
      const source = memorySource(new Uint8Array(readFileSync(path.join(traces, name))));
      walkRecords(source, readHeader(source), {
        record: (r) => {
          if (r.kind === Kind.ENTER) seen.add(`ENTER/${r.form}`);
          if (r.kind === Kind.EXIT) seen.add(r.form === 0 ? 'EXIT/delta' : 'EXIT/in-tag');
        },
      }, new ProblemLog());
    }
    // 1.4: 0 = site and depth delta, 1 = predicted, 2 = site delta and depth delta; the exit delta as a field or in the tag.
    expect([...seen].sort()).toEqual(['ENTER/0', 'ENTER/1', 'ENTER/2', 'EXIT/delta', 'EXIT/in-tag']);
  });

  for (const name of files) {
    const file = path.join(traces, name);
    const rel = path.relative(process.cwd(), file);
    test(`${name}: dump`, async () => {
      const r = await capture(runDump, [rel]);
      await expect(`exit ${r.code}\n${r.out}${r.err}`).toMatchFileSnapshot(file.replace(/\.bin$/, '.dump.txt'));
    });
    test(`${name}: report`, async () => {
      const r = await capture(runReport, [rel]);
      await expect(`exit ${r.code}\n${r.out}${r.err}`).toMatchFileSnapshot(file.replace(/\.bin$/, '.report.txt'));
      if (!name.startsWith('invalid/')) expect(r.code).toBe(0);
    });
    const more = MORE_REPORTS[name];
    if (more) {
      test(`${name}: report ${more.args.join(' ')}`, async () => {
        const r = await capture(runReport, [rel, ...more.args]);
        await expect(`exit ${r.code}\n${r.out}${r.err}`).toMatchFileSnapshot(file.replace(/\.bin$/, `.report-${more.label}.txt`));
        expect(r.code).toBe(0);
      });
    }
  }
});
