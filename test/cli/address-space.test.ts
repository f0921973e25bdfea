// Under an address-space limit (`ulimit -v 2000000`), `report --html` of an 11 MB trace works: its worker threads
// start with a small code range (analysis/worker-limits.ts) instead of V8's 512 MiB each, which made it die with
// SIGTRAP ("Fatal process OOM … CodeRange"); under a limit too low for them it says so in one sentence and exits 2.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { addressSpaceLimit, addressSpaceInUse, workersDoNotFit } from '../../host/address-space.js';
import { bigTrace } from '../support/big-trace.js';
import { scratch, wrapper } from '../support/programs.js';

const dir = scratch('address-space');
const trace = path.join(dir, 'big.mwtrace');
writeFileSync(trace, bigTrace(450_000));

/** `cc-memwrap args…` under `ulimit -v kb`. */
function under(kb: number, args: string[]): { status: number | null; signal: NodeJS.Signals | null; stderr: string } {
  const r = spawnSync('sh', ['-c', `ulimit -v ${kb} && exec "$@"`, 'sh', process.execPath, wrapper, ...args], { encoding: 'utf8', cwd: dir });
  return { status: r.status, signal: r.signal, stderr: r.stderr };
}

describe('report --html under an address-space limit', () => {
  test('the trace is about 11 MB, so the report goes through its index (three worker threads)', () => {
    expect(statSync(trace).size).toBeGreaterThan(10 << 20);
    expect(statSync(trace).size).toBeLessThan(14 << 20);
  });

  test('ulimit -v 2000000: the report is written', () => {
    const out = path.join(dir, 'report.html');
    const r = under(2_000_000, ['report', trace, '--html', out]);
    expect(r.signal).toBeNull();
    expect(r.stderr).toMatch(/wrote .*report\.html/);
    expect(r.status).toBe(0);
    expect(existsSync(out)).toBe(true);
  });

  test('a limit too low for the workers: one sentence saying what it needs, exit 2, no SIGTRAP', () => {
    const r = under(1_100_000, ['report', trace, '--html', path.join(dir, 'low.html')]);
    expect(r.signal).toBeNull();
    expect(r.stderr).toMatch(/^cc-memwrap report: --html \S+low\.html \(through the trace's index\) needs about [\d,]+ MB of address space \([\d,]+ MB in use, and 3 worker threads of 96 MB\), more than the limit of 1,075 MB \(ulimit -v 1100000\): raise it, e\.g\. ulimit -v \d+\n$/);
    expect(r.status).toBe(2);
  });

  test('the limit and the use are read from /proc', () => {
    expect(addressSpaceLimit('Max address space         unlimited            unlimited            bytes\n')).toBeNull();
    expect(addressSpaceLimit('Max address space         2048000000           2048000000           bytes\n')).toBe(2048000000);
    expect(addressSpaceInUse('VmPeak:\t  728452 kB\nVmSize:\t  728236 kB\n')).toBe(728236 * 1024);
    expect(workersDoNotFit(3, 'x', null, 1 << 30)).toBeNull();
    expect(workersDoNotFit(3, 'x', 2 * 2 ** 30, 1 << 30)).toBeNull();
    expect(workersDoNotFit(3, 'x', 1200 << 20, 1 << 30)).toMatch(/^x needs about 1,440 MB/);
  });
});
