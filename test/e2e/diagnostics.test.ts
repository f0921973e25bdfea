// The compiler's diagnostics through cc-memwrap (test/programs/clobbered.c). The optimiser sees the rewritten
// unit, so flow-dependent warnings can differ from a plain build's: gcc 12 -O2 -Wextra warns that `count` might
// be clobbered by longjmp, and does not in the instrumented unit. --mw-original-diagnostics also compiles the
// untouched source and shows exactly the plain build's diagnostics and exit status.
import { copyFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { haveCommand, skipAllWhen } from '../support/machine.js';
import { must, programsDir, run, runTraced, scratch, traceOf, reportJson, wrapper } from '../support/programs.js';

const flags = ['-O2', '-Wextra'];
/** gcc's warning about `count`, at its line and column in clobbered.c. */
const countWarning = /^clobbered\.c:17:7: warning: variable ‘count’ might be clobbered by ‘longjmp’ or ‘vfork’ \[-Wclobbered\]$/m;

/** A scratch folder holding clobbered.c, so that every build names it `clobbered.c` as the user would. */
function folder(name: string): string {
  const dir = scratch(name);
  copyFileSync(path.join(programsDir, 'clobbered.c'), path.join(dir, 'clobbered.c'));
  return dir;
}

/** Why this gcc does not show the warning the tests are about, or null. */
function whyNoClobberedWarning(): string | null {
  if (!haveCommand('gcc')) return 'gcc is not installed';
  const plain = run('gcc', [...flags, '-c', 'clobbered.c', '-o', 'plain.o'], { cwd: folder('clobbered-probe') });
  return countWarning.test(plain.stderr) ? null : `this gcc does not warn -Wclobbered about clobbered.c at -O2 -Wextra: ${plain.stderr.trim() || '(nothing)'}`;
}

describe('diagnostics of a unit the optimiser sees differently once instrumented', () => {
  skipAllWhen(whyNoClobberedWarning());

  it('without the option, the instrumented build loses the -Wclobbered warning about count (docs/using.md says which warnings can differ)', () => {
    const dir = folder('clobbered-default');
    const instrumented = must(wrapper, ['gcc', ...flags, '-c', 'clobbered.c', '-o', 'inst.o'], { cwd: dir });
    expect(instrumented.stderr).not.toMatch(countWarning);
    // and, -Werror or not, builds: the plain build fails on it.
    expect(run(wrapper, ['gcc', ...flags, '-Werror', '-c', 'clobbered.c', '-o', 'inst.o'], { cwd: dir }).status).toBe(0);
  });

  it('--mw-original-diagnostics (standing among the compiler options) prints exactly the plain build\'s diagnostics, and the object is instrumented', () => {
    const dir = folder('clobbered-option');
    const plain = run('gcc', [...flags, '-c', 'clobbered.c', '-o', 'plain.o'], { cwd: dir });
    const instrumented = run(wrapper, ['gcc', ...flags, '--mw-original-diagnostics', '-c', 'clobbered.c', '-o', 'inst.o'], { cwd: dir });
    expect(instrumented.status).toBe(0);
    expect(instrumented.stderr).toMatch(countWarning);
    expect(instrumented.stderr).toBe(plain.stderr);
    // The unit's site table: the object is the instrumented one, not the original built as a fallback.
    expect(must('nm', [path.join(dir, 'inst.o')]).stdout).toMatch(/ d __mw_u$/m);
  });

  it('--mw-original-diagnostics on a compile-and-link: the same diagnostics as plain gcc, and the program records its allocation', () => {
    const dir = folder('clobbered-link');
    const plain = run('gcc', [...flags, 'clobbered.c', '-o', 'plain'], { cwd: dir });
    const instrumented = must(wrapper, ['--mw-original-diagnostics', 'gcc', ...flags, 'clobbered.c', '-o', 'inst'], { cwd: dir });
    expect(instrumented.stderr).toBe(plain.stderr);
    const traces = path.join(dir, 'traces');
    const ran = runTraced(path.join(dir, 'inst'), [], traces);
    expect(ran).toMatchObject({ stdout: 'jumped at 3\n', status: 0 });
    expect((reportJson(traceOf(traces, ran.pid)) as { allocations: number }).allocations).toBeGreaterThanOrEqual(1);
  });

  it('with -Werror the option fails the build where the plain build fails, with its errors', () => {
    const dir = folder('clobbered-werror');
    const plain = run('gcc', [...flags, '-Werror', '-c', 'clobbered.c', '-o', 'plain.o'], { cwd: dir });
    expect(plain.status).toBe(1);
    const instrumented = run(wrapper, ['--mw-original-diagnostics', 'gcc', ...flags, '-Werror', '-c', 'clobbered.c', '-o', 'inst.o'], { cwd: dir });
    expect(instrumented.status).toBe(plain.status);
    expect(instrumented.stderr).toBe(plain.stderr);
  });
});
