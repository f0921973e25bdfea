// Frame sizes through the driver: nothing lands in the user's tree, the code is the same with and without the
// frame-size flag, separate compile and link keep the data, clang gives sizes without a call graph, and report
// --stack says why when it finds none.
import { copyFileSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { must, run, runTraced, samplesDir, scratch, traceOf, wrapper } from '../support/programs.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function stackOf(exe: string, dir: string): { json: Json; text: string } {
  const ran = runTraced(exe, [], path.join(dir, 'traces'));
  const trace = traceOf(path.join(dir, 'traces'), ran.pid);
  return {
    json: JSON.parse(must(process.execPath, [wrapper, 'report', trace, '--stack', '--json']).stdout).stack as Json,
    text: must(process.execPath, [wrapper, 'report', trace, '--stack']).stdout,
  };
}

describe('frame sizes from the compiler', () => {
  it('-c then a plain link: no .su or .ci file in the tree, and the program carries the worst case', () => {
    const dir = scratch('stack-separate');
    copyFileSync(path.join(samplesDir, 'recursion-iterative.c'), path.join(dir, 'it.c'));
    must(wrapper, ['gcc', '-O0', '-c', 'it.c', '-o', 'it.o'], { cwd: dir });
    must('gcc', ['it.o', '-o', 'it'], { cwd: dir }); // the embedded (weak) runtime; our section rides along
    expect(readdirSync(dir).sort()).toEqual(['it', 'it.c', 'it.o']);
    const { json, text } = stackOf(path.join(dir, 'it'), dir);
    expect(json.worstCase.status).toBe('bounded');
    expect(json.worstCase.path.map((s: Json) => s.function)).toEqual(['main', 'depth', 'level']);
    expect(json.observed.fromMainBytes).toBe(json.worstCase.bytes);
    expect(text).toContain('Stack: worst case vs observed');
    expect(text).toMatch(/not counted \(no frame size: libc or uninstrumented code\): memset, printf/);
  });

  it('-fcallgraph-info=su does not change the code gcc generates', () => {
    const dir = scratch('stack-same-code');
    const kept = /kept temporary files in (\S+)/.exec(
      must(wrapper, ['--mw-keep', 'gcc', '-O2', '-c', path.join(samplesDir, 'linked-list.c'), '-o', path.join(dir, 'll.o')]).stderr,
    )![1]!;
    const rewritten = path.join(kept, readdirSync(kept).find((f) => f.endsWith('.mw.i'))!);
    const text = (flags: string[], out: string) => {
      must('gcc', ['-O2', ...flags, '-c', '-x', 'cpp-output', rewritten, '-o', path.join(dir, out)]);
      must('objcopy', ['-O', 'binary', '-j', '.text', path.join(dir, out), path.join(dir, `${out}.text`)]);
      return readFileSync(path.join(dir, `${out}.text`));
    };
    expect(text(['-fcallgraph-info=su'], 'with.o').equals(text([], 'without.o'))).toBe(true);
    rmSync(kept, { recursive: true, force: true });
  });

  it('clang: frame sizes without a call graph, so the worst case is unknown and says why', () => {
    const dir = scratch('stack-clang');
    must(wrapper, ['clang', '-O0', path.join(samplesDir, 'recursion-iterative.c'), '-o', path.join(dir, 'it')]);
    const { json, text } = stackOf(path.join(dir, 'it'), dir);
    expect(json.worstCase).toMatchObject({ status: 'unknown', noCallGraph: true });
    expect(json.worstCase.path.map((s: Json) => s.function)).toEqual(['main']);
    expect(json.worstCase.bytes).toBeGreaterThan(0);
    expect(text).toContain('no call graph (clang)');
  });

  it('report --stack without frame sizes says why: a plain build, a removed program', () => {
    const dir = scratch('stack-missing');
    const exe = path.join(dir, 'prog');
    must(wrapper, ['gcc', '-O0', path.join(samplesDir, 'recursion.c'), '-o', exe]);
    // strip the section, as a later objcopy or a linker script might
    must('objcopy', ['--remove-section', '.mw_stack', exe]);
    const stripped = stackOf(exe, dir);
    expect(stripped.json.worstCase).toBeNull();
    expect(stripped.json.missing).toBe(`${exe} has no .mw_stack section (not linked by cc-memwrap, or the compiler gave no frame sizes)`);
    expect(stripped.json.observed.path.length).toBe(52); // main and 51 depth() frames are still observed
    expect(stripped.text).toContain('no frame sizes: ');

    const ran = runTraced(exe, [], path.join(dir, 'traces2'));
    rmSync(exe);
    const r = run(process.execPath, [wrapper, 'report', traceOf(path.join(dir, 'traces2'), ran.pid), '--stack', '--json']);
    expect(r.status).toBe(0);
    expect((JSON.parse(r.stdout) as Json).stack.missing).toBe(`cannot read ${exe} (ENOENT)`);
  });
});
