// `--mw-calls=all|leaves|heap`: whether every call is recorded, or leaf call
// trees are summarised (leaf-calls.ts), or that and a recorded function's call
// written only when heap work happens inside it or it reaches a new depth
// (the runtime's pending entries, runtime/core/mw-calls.c). By default the
// optimisation level decides: at -O0 and -Og (the classroom, the debugger)
// every call is recorded, at -O1 and above `heap`, as the compiler inlines and
// merges calls too.
import { spawnSync } from 'node:child_process';

export const CALLS_FLAG = '--mw-calls=';

export type CallsMode = 'all' | 'leaves' | 'heap';

/** The mode a `--mw-calls=` value names; throws a message naming the flag otherwise. */
export function parseCallsMode(value: string): CallsMode {
  if (value === 'all' || value === 'leaves' || value === 'heap') return value;
  throw new Error(
    `${CALLS_FLAG}${value}: give ${CALLS_FLAG}all (record every call), ${CALLS_FLAG}leaves (summarise leaf call trees) or ` +
      `${CALLS_FLAG}heap (that, and write a call only with heap work inside or at a new depth)`,
  );
}

/** The mode in effect: as asked, or by the last -O option (none, -O0 or -Og: every call; else `heap`). */
export function callsModeOf(mode: CallsMode | null, args: readonly string[]): CallsMode {
  if (mode !== null) return mode;
  return optimised(args) ? 'heap' : 'all';
}

/** Whether the last -O option asks for optimisation (not none, -O0 or -Og). */
function optimised(args: readonly string[]): boolean {
  let level = '0';
  for (const arg of args) {
    const m = /^-O(.*)$/.exec(arg);
    if (m !== null) level = m[1] === '' ? '1' : m[1]!;
  }
  return level !== '0' && level !== 'g';
}

/** Whether the compiler targets x86-64 Linux, where the library calls of known-calls.ts were measured (glibc). */
export function probeLibraryMeasured(compiler: string, abi: readonly string[]): boolean {
  const result = spawnSync(compiler, [...abi, '-dM', '-E', '-x', 'c', '/dev/null'], { encoding: 'utf8' });
  if (result.status !== 0) return false;
  const defined = (name: string) => new RegExp(`^#define ${name} `, 'm').test(result.stdout);
  return defined('__x86_64__') && defined('__linux__') && !defined('__ILP32__');
}
