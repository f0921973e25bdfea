// Every sample and test program, built plainly and through cc-memwrap with
// gcc and clang at -O0 and -O2, prints the same and exits the same; and the
// trace's heap totals equal Valgrind's "total heap usage" for the plain build.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { skipWhen } from '../support/machine.js';
import { buildInstrumented, buildPlain, programsDir, reportJson, run, runTraced, samplesDir, scratch, traceOf, valgrindTotals } from '../support/programs.js';

interface Program {
  source: string;
  args: string[];
  /** Exit status the program is meant to end with. */
  status: number;
  /** Compare heap totals with Valgrind (slow programs do it in one configuration). */
  valgrind: 'all' | 'one' | 'none';
  /** Threads the program creates (read from its source), each of which costs the instrumented run 16 bytes more. */
  threadsCreated?: number;
}

const programs: Program[] = [
  { source: path.join(samplesDir, 'linked-list.c'), args: [], status: 0, valgrind: 'all' },
  { source: path.join(samplesDir, 'recursion.c'), args: [], status: 0, valgrind: 'all' },
  { source: path.join(programsDir, 'heap-calls.c'), args: [], status: 0, valgrind: 'all' },
  { source: path.join(programsDir, 'jumps.c'), args: [], status: 0, valgrind: 'all' },
  { source: path.join(programsDir, 'endings.c'), args: [], status: 0, valgrind: 'all' },
  { source: path.join(programsDir, 'endings.c'), args: ['exit'], status: 3, valgrind: 'all' },
  { source: path.join(programsDir, 'vfork.c'), args: [], status: 0, valgrind: 'all' },
  { source: path.join(programsDir, 'threads.c'), args: [], status: 0, valgrind: 'one', threadsCreated: 8 },
  { source: path.join(programsDir, 'stress.c'), args: ['threads'], status: 0, valgrind: 'one', threadsCreated: 16 },
  { source: path.join(programsDir, 'stress.c'), args: ['signal'], status: 0, valgrind: 'all' },
  { source: path.join(programsDir, 'stress.c'), args: ['longjmp'], status: 0, valgrind: 'all' },
];

const configs = [
  { cc: 'gcc', opt: '-O0' },
  { cc: 'gcc', opt: '-O2' },
  { cc: 'clang', opt: '-O0' },
  { cc: 'clang', opt: '-O2' },
];

const warnings = ['-Wall', '-Wextra', '-Werror', '-g', '-pthread'];

describe.each(configs)('$cc $opt', ({ cc, opt }) => {
  const dir = scratch(`behaviour-${cc}${opt}`);
  describe.each(programs)('$source $args', (program) => {
    const name = path.basename(program.source, '.c');
    const plain = path.join(dir, `${name}.plain`);
    const inst = path.join(dir, `${name}.inst`);
    const traces = path.join(dir, `traces-${name}-${program.args.join('-') || 'none'}`);

    it('prints the same and exits the same, plain and instrumented', () => {
      buildPlain(cc, [...warnings, opt], [program.source], plain);
      buildInstrumented(cc, [...warnings, opt], [program.source], inst);
      const a = run(plain, program.args);
      const b = runTraced(inst, program.args, traces);
      expect(a.status).toBe(program.status);
      expect(b.stdout).toBe(a.stdout);
      expect(b.status).toBe(a.status);
      expect(b.stderr).toBe(a.stderr);
    });

    const compare = program.valgrind === 'all' || (program.valgrind === 'one' && cc === 'gcc' && opt === '-O0');
    it("records Valgrind's heap totals for the same run", (ctx) => {
      skipWhen(ctx, compare ? null : 'this slow program is compared with Valgrind in the gcc -O0 configuration only');
      // The reference is the plain program built at -O0: at -O2 gcc and clang
      // delete malloc/free pairs whose memory is never used, so the plain -O2
      // binary makes fewer allocations than its source says; the instrumented
      // one calls __mw_malloc, which they cannot delete, and records them all.
      const reference = path.join(dir, `${name}.plain-O0`);
      buildPlain(cc, [...warnings, '-O0'], [program.source], reference);
      const traceDir = `${traces}-valgrind`;
      const ours = runTraced(inst, program.args, traceDir);
      const vg = valgrindTotals(reference, program.args, { freeres: true });
      const vgNoFreeres = valgrindTotals(reference, program.args, { freeres: false });
      expect(vg.run.stdout).toBe(ours.stdout);
      const report = reportJson(traceOf(traceDir, ours.pid)) as ReportTotals;
      expect(report.end).toMatchObject({ how: 'exit', code: program.status, complete: true });
      const theirs = vg.totals.get(vg.run.pid)!;
      const theirsNoFreeres = vgNoFreeres.totals.get(vgNoFreeres.run.pid)!;
      // glibc gives every new thread a table with one 16-byte slot per module
      // that has thread-local storage (its DTV); the runtime's thread-local
      // state makes the program one more such module, so each thread the
      // program creates allocates exactly 16 bytes more than in the plain run.
      // The count comes from the program's source, not from the report under test.
      const dtvBytes = 16 * (program.threadsCreated ?? 0);
      expect(report.threads.length).toBe(1 + (program.threadsCreated ?? 0));
      // Allocations and bytes: exactly Valgrind's, glibc's own included.
      expect({ allocs: report.valgrind.allocs, bytes: report.valgrind.bytesAllocated - dtvBytes }).toEqual({ allocs: theirs.allocs, bytes: theirs.bytes });
      // Frees: Valgrind also makes glibc free its own buffers at exit
      // (__libc_freeres), which a plain run never does. Without that the
      // counts are equal (and the freeres run frees at least as many).
      expect(report.valgrind.frees).toBe(theirsNoFreeres.frees);
      expect(theirs.frees).toBeGreaterThanOrEqual(report.valgrind.frees);
      // A forked child writes a trace of its own, which starts empty at the
      // fork (Valgrind's child log would carry the parent's counts on).
      for (const child of childTraces(traceDir, ours.pid)) {
        const childReport = reportJson(child) as ReportTotals;
        expect(childReport.process.ppid).toBe(ours.pid);
        // The child leaves through _exit(0), which the runtime records too.
        expect(childReport.end).toMatchObject({ how: 'exit', code: 0, complete: true });
        expect(childReport.valgrind).toEqual({ allocs: 3, frees: 3, bytesAllocated: 66, inUseAtExit: { bytes: 0, blocks: 0 } });
      }
      expect(childTraces(traceDir, ours.pid)).toHaveLength(ours.stdout.includes('child exited') ? 1 : 0);
    });
  });
});

interface ReportTotals {
  valgrind: { allocs: number; frees: number; bytesAllocated: number };
  end: { how: string; code: number | null; complete: boolean };
  threads: unknown[];
  process: { ppid: number };
}

/** Traces of processes other than `pid` in the folder (forked children), in pid order. */
function childTraces(dir: string, pid: number): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.mwtrace') && f !== `${pid}.mwtrace`)
    .map((f) => ({ f, p: Number(f.split('.')[0]) }))
    .sort((x, y) => x.p - y.p)
    .map((x) => path.join(dir, x.f));
}
