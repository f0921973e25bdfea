// Frozen trace files (test/fixtures/traces/<version>/ and invalid/): dump and report output must match their golden text.
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { runDump } from '../../cli/dump.js';
import { runReport } from '../../cli/report.js';
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

const files = ['1.0', 'invalid'].flatMap((dir) =>
  readdirSync(path.join(traces, dir))
    .filter((f) => f.endsWith('.bin'))
    .sort()
    .map((f) => `${dir}/${f}`),
);

describe('fixture files', () => {
  test('every fixture named in FIXTURES exists', () => {
    for (const name of Object.keys(FIXTURES)) expect(files).toContain(name);
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
      if (name.startsWith('1.0/')) expect(r.code).toBe(0);
    });
  }
});
