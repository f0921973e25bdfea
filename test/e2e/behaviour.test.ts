// Every sample and test program, built plainly and through cc-memwrap with
// gcc and clang at -O0 and -O2, prints the same and exits the same; and the
// trace's heap totals equal Valgrind's "total heap usage" for the plain build.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildInstrumented, buildPlain, programsDir, reportJson, run, runTraced, samplesDir, scratch, traceOf, valgrindTotals } from '../support/programs.js';

interface Program {
  source: string;
  args: string[];
  /** Exit status the program is meant to end with. */
  status: number;
  /** Compare heap totals with Valgrind (slow programs do it in one configuration). */
  valgrind: 'all' | 'one' | 'none';
}

const programs: Program[] = [
  { source: path.join(samplesDir, 'linked-list.c'), args: [], status: 0, valgrind: 'all' },
  { source: path.join(samplesDir, 'recursion.c'), args: [], status: 0, valgrind: 'all' },
  { source: path.join(programsDir, 'heap-calls.c'), args: [], status: 0, valgrind: 'all' },
  { source: path.join(programsDir, 'jumps.c'), args: [], status: 0, valgrind: 'all' },
  { source: path.join(programsDir, 'endings.c'), args: [], status: 0, valgrind: 'all' },
  { source: path.join(programsDir, 'endings.c'), args: ['exit'], status: 3, valgrind: 'all' },
  { source: path.join(programsDir, 'threads.c'), args: [], status: 0, valgrind: 'one' },
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
    it.runIf(compare)("records Valgrind's heap totals for the same run", () => {
      const ours = runTraced(inst, program.args, `${traces}-valgrind`);
      const reference = valgrindTotals(plain, program.args, { freeres: true });
      const withoutFreeres = valgrindTotals(plain, program.args, { freeres: false });
      expect(reference.run.stdout).toBe(ours.stdout);
      // One process, or a parent and the children it forked: match them by
      // their order of start (pids grow), each with its own trace.
      const vgPids = [...reference.totals.keys()].sort((x, y) => x - y);
      const vgNoFreeresPids = [...withoutFreeres.totals.keys()].sort((x, y) => x - y);
      const tracePids = ours.stdout.includes('child exited') ? 2 : 1;
      expect(vgPids.length).toBe(tracePids);
      const ourTraces = [traceOf(`${traces}-valgrind`, ours.pid), ...childTraces(`${traces}-valgrind`, ours.pid)];
      expect(ourTraces.length).toBe(tracePids);
      ourTraces.forEach((trace, i) => {
        const report = reportJson(trace) as { valgrind: { allocs: number; frees: number; bytesAllocated: number } };
        const vg = reference.totals.get(vgPids[i]!)!;
        const vgNoFreeres = withoutFreeres.totals.get(vgNoFreeresPids[i]!)!;
        // Allocations and bytes: exactly Valgrind's, glibc's own included.
        expect({ allocs: report.valgrind.allocs, bytes: report.valgrind.bytesAllocated }).toEqual({ allocs: vg.allocs, bytes: vg.bytes });
        // Frees: Valgrind also makes glibc free its buffers at exit
        // (__libc_freeres), which a plain run never does. Without that, the
        // counts are equal; with it, they differ by exactly those frees.
        expect(report.valgrind.frees).toBe(vgNoFreeres.frees);
        expect(vg.frees - report.valgrind.frees).toBe(vg.frees - vgNoFreeres.frees);
        expect({ allocs: vgNoFreeres.allocs, bytes: vgNoFreeres.bytes }).toEqual({ allocs: vg.allocs, bytes: vg.bytes });
      });
    });
  });
});

/** Traces of processes other than `pid` in the folder (forked children), in pid order. */
function childTraces(dir: string, pid: number): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.mwtrace') && f !== `${pid}.mwtrace`)
    .map((f) => ({ f, p: Number(f.split('.')[0]) }))
    .sort((x, y) => x.p - y.p)
    .map((x) => path.join(dir, x.f));
}
