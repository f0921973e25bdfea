// Frame sizes and call graphs from the compiler, carried inside the object.
//
// While compiling a rewritten unit the driver asks the compiler for each
// function's frame size: gcc (10+) writes a call graph with sizes
// (`-fcallgraph-info=su` → `<object stem>.ci`), clang writes frame sizes only
// (`-fstack-usage` → `<object stem>.su`). Neither flag changes the code; the
// files land beside the driver's temporary object, never in the user's tree.
// The driver turns them into one JSON line and adds it to the object as the
// non-loaded section `.mw_stack`; the linker concatenates the sections of all
// objects, so the executable carries every unit's data and `cc-memwrap report
// --stack` finds it through the program path in the trace.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { FrameKind, StackUnit, UnitFunction as StackFunction } from '../analysis/worst-stack.js';

/** The section that holds one JSON line (`StackUnit`) per compiled unit. */
export const STACK_SECTION = '.mw_stack';
export const STACK_UNIT_VERSION = 1; // parseStackUnits (analysis/worst-stack.ts) reads this version

/** The unit line's layout is defined beside its reader. */
export type { FrameKind, StackUnit, UnitFunction as StackFunction } from '../analysis/worst-stack.js';

export type StackFlags = { flags: string[]; ext: '.ci' | '.su'; compiler: 'gcc-callgraph' | 'stack-usage' } | null;

/** Which flag the compiler understands, found by compiling an empty unit
 *  (once per driver run): gcc 10+ has -fcallgraph-info=su, gcc and clang
 *  have -fstack-usage, other compilers perhaps neither. */
export function probeStackFlags(compiler: string, abi: readonly string[], scratchObject: string): StackFlags {
  const accepts = (flag: string) =>
    spawnSync(compiler, [...abi, flag, '-Werror', '-x', 'c', '-c', '/dev/null', '-o', scratchObject], { stdio: 'ignore' }).status === 0;
  if (accepts('-fcallgraph-info=su')) return { flags: ['-fcallgraph-info=su'], ext: '.ci', compiler: 'gcc-callgraph' };
  if (accepts('-fstack-usage')) return { flags: ['-fstack-usage'], ext: '.su', compiler: 'stack-usage' };
  return null;
}

/** Where the compiler put its side file for `object`: the object's path without its extension. */
export function sideFileFor(object: string, ext: string): string {
  return object.slice(0, object.length - path.extname(object).length) + ext;
}

/** "leaf\nt.c:3:12\n144 bytes (static)" → size and kind; null for an external node (no size line). */
function frameOf(text: string): { bytes: number; kind: FrameKind } | null {
  const m = /(\d+) bytes \((static|dynamic|dynamic,bounded)\)/.exec(text);
  if (m === null) return null;
  return { bytes: Number(m[1]), kind: m[2] === 'static' ? 'static' : m[2] === 'dynamic' ? 'dynamic' : 'bounded' };
}

/** Unescapes a VCG string body (gcc writes `\n` between label lines and `\"` for quotes). */
function vcgString(body: string): string {
  return body.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
}

/** gcc's `.ci` file (VCG): nodes with a size line are functions of this unit, edges are calls. */
export function parseCallgraphInfo(text: string): { functions: StackFunction[]; calls: Array<[string, string]> } {
  const functions: StackFunction[] = [];
  const calls: Array<[string, string]> = [];
  const str = '"((?:[^"\\\\]|\\\\.)*)"';
  const node = new RegExp(`^node: \\{ title: ${str} label: ${str}`);
  const edge = new RegExp(`^edge: \\{ sourcename: ${str} targetname: ${str}`);
  for (const line of text.split('\n')) {
    const n = node.exec(line);
    if (n !== null) {
      const label = vcgString(n[2]!).split('\n');
      const frame = frameOf(label[2] ?? '');
      if (frame === null) continue; // declared only: defined in another unit or a library
      const loc = /^(.*):(\d+):\d+$/.exec(label[1] ?? '');
      functions.push({ id: vcgString(n[1]!), name: label[0]!, file: loc?.[1] ?? '', line: loc ? Number(loc[2]) : 0, ...frame });
      continue;
    }
    const e = edge.exec(line);
    if (e !== null) calls.push([vcgString(e[1]!), vcgString(e[2]!)]);
  }
  return { functions, calls };
}

/** A `.su` file: `file:line:column:name<TAB>bytes<TAB>kind` (gcc) or `file:line:name …` (clang). */
export function parseStackUsage(text: string): StackFunction[] {
  const out: StackFunction[] = [];
  for (const line of text.split('\n')) {
    const m = /^(.*?):(\d+):(?:\d+:)?([^:\t]+)\t(\d+)\t(static|dynamic|dynamic,bounded)\s*$/.exec(line);
    if (m === null) continue;
    const kind: FrameKind = m[5] === 'static' ? 'static' : m[5] === 'dynamic' ? 'dynamic' : 'bounded';
    out.push({ id: m[3]!, name: m[3]!, file: m[1]!, line: Number(m[2]), bytes: Number(m[4]), kind });
  }
  return out;
}

/** The unit's JSON line from the side file the compiler wrote, or null when it wrote none. */
export function readStackUnit(sideFile: string, flags: NonNullable<StackFlags>, source: string): StackUnit | null {
  if (!existsSync(sideFile)) return null;
  const text = readFileSync(sideFile, 'utf8');
  const base = { v: STACK_UNIT_VERSION, source: path.resolve(source), compiler: flags.compiler };
  // File names as the linemarkers gave them, made absolute like the trace's site table.
  const absolute = (fns: StackFunction[]) => fns.map((f) => ({ ...f, file: f.file === '' ? '' : path.resolve(f.file) }));
  if (flags.ext === '.ci') {
    const graph = parseCallgraphInfo(text);
    return { ...base, functions: absolute(graph.functions), calls: graph.calls };
  }
  return { ...base, functions: absolute(parseStackUsage(text)), calls: null };
}

/** Adds the unit's line to `object` as a non-loaded, read-only section, so
 *  it costs the running program nothing, and replaces the bytes of the
 *  sections in `updates` (same size, no relocations) in the same run.
 *  Returns an error message or null. */
export function embedStackUnit(
  objcopy: string,
  object: string,
  unit: StackUnit,
  scratchFile: string,
  updates: readonly { section: string; file: string; bytes: Buffer }[] = [],
): string | null {
  writeFileSync(scratchFile, JSON.stringify(unit) + '\n');
  for (const u of updates) writeFileSync(u.file, u.bytes);
  const result = spawnSync(
    objcopy,
    [
      '--add-section', `${STACK_SECTION}=${scratchFile}`, '--set-section-flags', `${STACK_SECTION}=contents,readonly`,
      ...updates.flatMap((u) => ['--update-section', `${u.section}=${u.file}`]),
      object,
    ],
    { encoding: 'utf8' },
  );
  if (result.error) return `cannot run ${objcopy}: ${result.error.message}`;
  return result.status === 0 ? null : `${objcopy} could not add the frame sizes: ${result.stderr.trim()}`;
}
