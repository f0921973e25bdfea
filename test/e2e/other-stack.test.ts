// Functions entered on a stack that is not the thread's own (runtime/README.md, Calls): a signal handler on an
// alternate signal stack and a coroutine on a stack of its own are recorded at the depth of the frame they were
// entered from, and close none of the thread's frames. The fast entry path tests both depth limits (shallower
// than the top frame: a longjmp; past the stack: another stack) in one comparison; this keeps the second honest.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildInstrumented, must, programsDir, runTraced, scratch, traceOf, wrapper } from '../support/programs.js';

interface Entered {
  func: string;
  depth: number;
  /** The frame open when it was entered. */
  parent: { func: string; depth: number } | undefined;
}

/** The trace's ENTERs with their function names and the frame each was entered from, from `cc-memwrap dump`. */
function entries(dump: string): { entered: Entered[]; exits: number; unwinds: number } {
  const names = new Map<number, string>();
  const entered: Entered[] = [];
  const open: { func: string; depth: number }[] = [];
  let exits = 0;
  let unwinds = 0;
  for (const line of dump.split('\n')) {
    const site = /^\s+site (\d+) entry .* func="([^"]*)"/.exec(line);
    if (site) names.set(Number(site[1]), site[2]!);
    const enter = / ENTER site=(\d+) depth=(\d+)/.exec(line);
    if (enter) {
      const e = { func: names.get(Number(enter[1])) ?? `site ${enter[1]}`, depth: Number(enter[2]) };
      entered.push({ ...e, parent: open[open.length - 1] });
      open.push(e);
    }
    if (/ EXIT /.test(line)) {
      exits++;
      open.pop();
    }
    if (/ UNWIND /.test(line)) unwinds++;
  }
  return { entered, exits, unwinds };
}

describe('functions on another stack', () => {
  for (const opt of ['-O0', '-O2']) {
    it(`gcc ${opt}: a handler on sigaltstack and a coroutine are recorded at their caller's depth, closing nothing`, () => {
      const dir = scratch(`other-stack${opt}`);
      const exe = path.join(dir, 'other-stack');
      // Every call recorded: the leaves' own entries on the other stack are what this checks.
      buildInstrumented('gcc', [opt, '--mw-calls=all', '-g', '-Wall', '-Wextra', '-Werror'], [path.join(programsDir, 'other-stack.c')], exe);
      const ran = runTraced(exe, [], path.join(dir, 'traces'));
      expect(ran.status).toBe(0);
      expect(ran.stdout).toBe('deep 41, handler 16, coroutine 14, after 4\n');
      const dump = must(process.execPath, [wrapper, 'dump', traceOf(path.join(dir, 'traces'), ran.pid)]).stdout;
      expect(dump).toMatch(/problems: none/);
      const { entered, exits, unwinds } = entries(dump);
      expect(unwinds).toBe(0);
      expect(exits).toBe(entered.length);
      const deepest = Math.max(...entered.filter((e) => e.func === 'deep').map((e) => e.depth));
      for (const func of ['on_signal', 'co_body']) {
        const e = entered.filter((x) => x.func === func);
        expect(e).toHaveLength(1);
        expect(e[0]!.parent).toEqual({ func: 'deep', depth: deepest });
        expect(e[0]!.depth).toBe(deepest);
      }
      // what they call is on the other stack too: no deeper than the frame the stack was entered from
      const inside = entered.filter((x) => x.parent && ['on_signal', 'co_body', 'nested'].includes(x.parent.func) && x.parent.depth === deepest);
      expect(inside.map((x) => x.func).sort()).toEqual(['leaf', 'leaf', 'leaf', 'nested', 'nested']);
      for (const x of inside) expect(x.depth).toBe(deepest);
    });
  }
});
