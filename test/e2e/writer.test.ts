// The trace through the program's own write function (memwrap_write, runtime/memwrap.h): no trace file is created,
// and the bytes the function receives — here sent to standard error one at a time, as to a UART — are a trace the
// host reads, for a normal exit and for a crash.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildInstrumented, must, programsDir, scratch, wrapper } from '../support/programs.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Runs the program with MEMWRAP_TRACE pointing into an empty directory; returns its stderr bytes as a trace's report. */
function runThroughUart(cc: string, args: string[]): { files: string[]; status: number | null; report: Json } {
  const dir = scratch(`writer-${cc}`);
  const exe = path.join(dir, 'uart-writer');
  buildInstrumented(cc, ['-O0', '-Wall', '-Wextra', '-Wmissing-prototypes', '-Werror'], [path.join(programsDir, 'uart-writer.c')], exe);
  const traces = path.join(dir, 'traces');
  mkdirSync(traces);
  const ran = spawnSync(exe, args, { env: { ...process.env, MEMWRAP_TRACE: path.join(traces, '%p.mwtrace') } });
  const received = path.join(dir, 'received.mwtrace');
  writeFileSync(received, ran.stderr);
  const report = JSON.parse(must(process.execPath, [wrapper, 'report', received, '--json']).stdout) as Json;
  return { files: readdirSync(traces), status: ran.status, report };
}

describe('memwrap_write: the trace through a write function of the program', () => {
  for (const cc of ['gcc', 'clang']) {
    it(`${cc}: a normal exit hands over the whole trace, and no file is written`, () => {
      const { files, status, report } = runThroughUart(cc, []);
      expect(status).toBe(0);
      expect(files).toEqual([]);
      expect(report.end).toMatchObject({ how: 'exit', code: 0, complete: true });
      expect(report).toMatchObject({ allocations: 3, frees: 2, leaked: { blocks: 1, requestedBytes: 100 } });
      expect(report.problems.errors).toBe(0);
    });
  }

  it('a crash (abort) hands over everything up to the signal', () => {
    const { files, status, report } = runThroughUart('gcc', ['crash']);
    expect(status).toBe(null);
    expect(files).toEqual([]);
    expect(report.end).toMatchObject({ how: 'signal', signalName: 'SIGABRT' });
    expect(report).toMatchObject({ allocations: 3, frees: 2 });
  });
});
