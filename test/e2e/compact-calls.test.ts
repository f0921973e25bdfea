// Format 1.4's compact call records (a predicted ENTER in one byte, an exit delta in the EXIT's tag) are lossless: the
// same program recorded with them and with MEMWRAP_COMPACT_CALLS=0 gives the same report, event for event, from a
// smaller trace.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../package-root.js';
import { Kind } from '../../analysis/trace/format.js';
import { walkRecords } from '../../analysis/trace/records.js';
import { readHeader } from '../../analysis/trace/header.js';
import { memorySource } from '../../analysis/trace/byte-source.js';
import { ProblemLog } from '../../analysis/problems.js';
import { chunkStructure } from '../support/dump-records.js';
import { buildInstrumented, must, runTraced, scratch, traceOf } from '../support/programs.js';

const cli = path.join(packageRoot, 'bin', 'cc-memwrap');
const source = path.join(packageRoot, 'test', 'programs', 'call-mix.c');

/** `report --json` with what differs between two runs of one program (pid, file, clock) taken out. */
function reportOf(trace: string): unknown {
  const json = must(process.execPath, [cli, 'report', '--json', '--peak', '--leaks', '--linked', '--by', 'function', trace]).stdout;
  return JSON.parse(json, (key, value) => (['file', 'pid', 'osTid', 'startTimeNs', 'timeNs', 'ppid'].includes(key) ? '…' : value));
}

/** Every record `dump` prints but TIME and the chunks' own (chunkStructure), without its offset, addresses and thread
 *  ids: the events in their order. */
function eventsOf(trace: string): string[] {
  return must(process.execPath, [cli, 'dump', trace])
    .stdout.split('\n')
    .filter((l) => /^ +0x[0-9a-f]+ t\d+ [A-Z]/.test(l) && !/ TIME /.test(l))
    .map((l) => l.replace(/^ +0x[0-9a-f]+ /, ''))
    .filter((r) => !chunkStructure(r.replace(/^t\d+ /, '')))
    .map((r) => r.replace(/(addr|tid)=\w+/g, '$1=…'));
}

/** The bytes of records the trace holds (the chunks' `used`; the file is rounded up to whole chunks). */
function recordBytes(trace: string): number {
  let sum = 0;
  for (const m of must(process.execPath, [cli, 'dump', trace]).stdout.matchAll(/^chunk .* used=(\d+)$/gm)) sum += Number(m[1]);
  return sum;
}

/** How many ENTER and EXIT records of each form (the tag's flag bits) the trace holds. */
function formsOf(trace: string): Record<string, number> {
  const bytes = memorySource(new Uint8Array(readFileSync(trace)));
  const forms: Record<string, number> = {};
  walkRecords(bytes, readHeader(bytes), {
    record: (r) => {
      if (r.kind !== Kind.ENTER && r.kind !== Kind.EXIT) return;
      const key = `${r.kind === Kind.ENTER ? 'ENTER' : 'EXIT'}/${r.form === 0 ? 0 : r.kind === Kind.EXIT ? 'in-tag' : r.form}`;
      forms[key] = (forms[key] ?? 0) + 1;
    },
  }, new ProblemLog());
  return forms;
}

describe.each([
  ['gcc', '-O2'],
  ['clang', '-O0'],
])('compact call records, %s %s', (cc, opt) => {
  let compact = '';
  let plain = '';
  beforeAll(() => {
    const dir = scratch(`compact-calls-${cc}`);
    const exe = path.join(dir, 'call-mix');
    // Every call recorded: the call records are what this compares.
    buildInstrumented(cc, [opt, '--mw-calls=all', '-pthread'], [source], exe);
    const traces = path.join(dir, 'traces');
    compact = traceOf(traces, runTraced(exe, [], traces).pid);
    plain = traceOf(traces, runTraced(exe, [], traces, { env: { MEMWRAP_COMPACT_CALLS: '0' } }).pid);
  }, 120_000);

  it('writes the compact forms by default and none under MEMWRAP_COMPACT_CALLS=0', () => {
    const on = formsOf(compact);
    expect(on['ENTER/1']).toBeGreaterThan(on['ENTER/2']!);
    expect(on['EXIT/in-tag']).toBeGreaterThan(0);
    expect(on['ENTER/0']).toBeUndefined();
    expect(Object.keys(formsOf(plain)).sort()).toEqual(['ENTER/0', 'EXIT/0']);
  });

  it('gives the same report and the same events, in the same order, from a trace under 60 % of the size', () => {
    expect(reportOf(compact)).toEqual(reportOf(plain));
    const events = eventsOf(compact);
    expect(events.length).toBeGreaterThan(80_000);
    expect(events).toEqual(eventsOf(plain));
    expect(recordBytes(compact) / recordBytes(plain)).toBeLessThan(0.6);
  });
});
