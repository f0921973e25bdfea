// The records read by a second thread (analysis/trace/record-worker.ts, MEMWRAP_READ_WORKER=1) give the same report,
// problems, progress and exit code as one thread does: every fixture's report golden through the compiled command,
// more report options and the exports compared between the two readings, and traces cut at many points.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { packageRoot } from '../../package-root.js';
import { scratch } from '../support/programs.js';

const main = path.join(packageRoot, 'dist', 'bin', 'main.js');
const traces = path.join(packageRoot, 'test', 'fixtures', 'traces');

/** The command's exit code, stdout and stderr as the fixture goldens hold them, with the records read by a worker or not. */
function run(args: string[], worker: boolean): string {
  const r = spawnSync(process.execPath, [main, ...args], {
    cwd: packageRoot,
    encoding: 'utf8',
    env: { ...process.env, MEMWRAP_READ_WORKER: worker ? '1' : '0' },
  });
  return `exit ${r.status}\n${r.stdout}${r.stderr}`;
}

const fixtures = readdirSync(traces)
  .filter((d) => /^\d+\.\d+$/.test(d) || d === 'invalid')
  .flatMap((dir) =>
    readdirSync(path.join(traces, dir))
      .filter((f) => f.endsWith('.bin'))
      .map((f) => `${dir}/${f}`),
  )
  .sort();

describe('records read by a worker thread', () => {
  test('there are fixtures, of every version folder and invalid ones', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(15);
    expect(fixtures.some((f) => f.startsWith('invalid/'))).toBe(true);
  });

  for (const name of fixtures) {
    const rel = path.join('test', 'fixtures', 'traces', name);
    test(`${name}: report as its golden`, () => {
      const golden = readFileSync(path.join(traces, name.replace(/\.bin$/, '.report.txt')), 'utf8');
      expect(run(['report', rel], true)).toBe(golden);
    });
    test(`${name}: every report section, and the exports, as one thread reads them`, () => {
      for (const args of [
        ['report', rel, '--json', '--peak', '--leaks', '--linked', '--by', 'function', '--leak-causes', '--interval', '3'],
        ['export', rel, '--format', 'massif'],
      ]) {
        expect(run(args, true), args.join(' ')).toBe(run(args, false));
      }
    });
  }

  test('a trace cut anywhere: the same records, problems and exit code', () => {
    const bytes = readFileSync(path.join(traces, '1.4', 'every-record.bin'));
    const dir = scratch('report-worker');
    const cuts = [70, 100, 300, 1000, 3000, bytes.length - 7, bytes.length - 1];
    for (const cut of cuts.filter((c) => c > 0 && c < bytes.length)) {
      const file = path.join(dir, `cut-${cut}.mwtrace`);
      writeFileSync(file, bytes.subarray(0, cut));
      const args = ['report', file, '--peak', '--leaks', '--linked'];
      expect(run(args, true), `cut at ${cut}`).toBe(run(args, false));
    }
  });

  test('thread indices too large to go in a batch: every record goes as a message, with the same report', () => {
    const dir = scratch('report-worker-threads');
    for (const name of ['1.0/two-threads.bin', '1.4/every-record.bin']) {
      const bytes = Buffer.from(readFileSync(path.join(traces, name)));
      // Each chunk header's thread index (at +4, little-endian) moved above 2^23, each thread kept apart.
      let chunks = 0;
      for (let off = 64; off + 16 <= bytes.length && bytes.toString('latin1', off, off + 4) === 'MWCK'; chunks++) {
        const thread = bytes.readUInt32LE(off + 4);
        bytes.writeUInt32LE(0x1000000 + thread * 0x10000, off + 4);
        off += 16 + bytes.readUInt32LE(off + 8);
      }
      expect(chunks).toBeGreaterThan(1);
      const file = path.join(dir, name.replace('/', '-'));
      writeFileSync(file, bytes);
      const args = ['report', file, '--json', '--peak', '--leaks', '--linked'];
      const one = run(args, false);
      expect(one).toMatch(/^exit 0\n/);
      expect(run(args, true), name).toBe(one);
    }
  });

  test('a trace with damaged bytes: the same problems, in the same order', () => {
    const bytes = readFileSync(path.join(traces, '1.4', 'every-record.bin'));
    const dir = scratch('report-worker-damaged');
    for (const at of [1200, 2000, 5200]) {
      if (at >= bytes.length) continue;
      const damaged = Buffer.from(bytes);
      for (let i = at; i < Math.min(at + 8, damaged.length); i++) damaged[i] = 0xff - damaged[i]!;
      const file = path.join(dir, `damaged-${at}.mwtrace`);
      writeFileSync(file, damaged);
      const args = ['report', file, '--json', '--peak', '--leaks'];
      expect(run(args, true), `damaged at ${at}`).toBe(run(args, false));
    }
  });
});
