// The floor: how fast could any runtime behind the rewrite's calls be? Each
// workload's rewritten units (kept with --mw-keep) are linked against
// bench/floor/floor-runtime.c, which only stores fixed-size records in a ring
// in memory (see its header comment), in five shapes. Their ratios to the
// plain program, beside cc-memwrap's, measured alternately in one run, show
// how much of cc-memwrap's cost any recorder of every call and every linked
// free would pay, and how much is ours.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../package-root.js';
import { median, sh, timeRun } from './measure.js';
import type { Workload } from './workloads.js';

const wrapper = path.join(packageRoot, 'bin', 'cc-memwrap');
const floorDir = path.join(packageRoot, 'bench', 'floor');
const runtimeInclude = path.join(packageRoot, 'runtime');

export interface Variant {
  name: string;
  /** What the column measures, for the table's legend. */
  means: string;
  defines: string[];
  /** The header whose floor_enter/floor_leave replace the calls, if any. */
  inline?: string;
}

export const VARIANTS: Variant[] = [
  { name: 'empty calls', means: 'entry/exit calls that do nothing', defines: ['-DFLOOR_EMPTY'] },
  { name: 'stores', means: 'calls that store 8 bytes per entry, 4 per exit, 12 per heap call', defines: [] },
  { name: 'inline stores', means: 'the same stores inline in the instrumented function', defines: [], inline: 'floor-inline.h' },
  { name: 'inline bytes', means: 'one byte per entry and per exit stored inline: the least a record of each event can be', defines: [], inline: 'floor-byte.h' },
  { name: 'inline + index', means: 'inline stores, plus a live-block index (an open-addressing hash table) and a look-up of each word of a freed block', defines: ['-DFLOOR_EXACT'], inline: 'floor-inline.h' },
  { name: 'inline + bitmap', means: 'the same with the index as a start-of-block bitmap and sizes beside it (the runtime\'s shape)', defines: ['-DFLOOR_BITMAP'], inline: 'floor-inline.h' },
  {
    name: 'inline lazy + bitmap',
    means: 'inline + bitmap, but an entry only pushed on a shadow stack: stored (and its exit) for the frames live at a heap call and for a call deeper than any since the last heap call',
    defines: ['-DFLOOR_BITMAP', '-DFLOOR_LAZY'],
    inline: 'floor-lazy.h',
  },
  {
    name: 'inline ring + writer',
    means: 'inline + bitmap, with one 8-byte word per entry/exit (under a busy flag) into a ring that a second thread encodes as format 1.4 and writes to a file',
    defines: ['-DFLOOR_BITMAP', '-DFLOOR_RING'],
    inline: 'floor-ring.h',
  },
];

/** Builds the instrumented program `out` through `cc-memwrap --mw-keep`
 *  (keeping the temporaries changes nothing in it) and returns the
 *  rewritten .mw.i files that build left. Every call is recorded: the floor
 *  is that of a recorder of every call (issue 11's question), and a
 *  summarised unit's stack bounds are written into its object, not its text. */
export function instrumentedBuild(w: Workload, dir: string, out: string): string[] {
  const temp = path.join(dir, 'kept');
  rmSync(temp, { recursive: true, force: true });
  mkdirSync(temp, { recursive: true });
  w.build([wrapper, '--mw-keep', '--mw-calls=all', 'gcc'], out, { env: { ...process.env, TMPDIR: temp } });
  const units: string[] = [];
  for (const kept of readdirSync(temp)) {
    for (const f of readdirSync(path.join(temp, kept))) if (f.endsWith('.mw.i')) units.push(path.join(temp, kept, f));
  }
  if (units.length === 0) throw new Error(`--mw-keep left no rewritten units for ${w.name}`);
  return units;
}

/** Entry and exit become the inline stores of `header` (floor-inline.h on
 *  one line): it goes on the line of the unit's site table, which follows
 *  memwrap.h's types. */
function inlined(text: string, header: string): string {
  const anchor = 'static struct __mw_unit __mw_u';
  const at = text.indexOf(anchor);
  if (at < 0) return text;
  return (text.slice(0, at) + header + text.slice(at)).replaceAll('cleanup(__mw_leave)', 'cleanup(floor_leave)').replaceAll('= __mw_enter(', '= floor_enter(');
}

/** The units compiled once per shape (entry/exit as calls, or inline from
 *  one header): the variants of a shape differ only in the runtime they link. */
function compileUnits(units: string[], inline: string | undefined, dir: string): string[] {
  const shape = inline ? inline.replace(/\W+/g, '-') : 'calls';
  const header = inline ? readFileSync(path.join(floorDir, inline), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/\n/g, ' ') : '';
  return units.map((unit, i) => {
    let source = unit;
    if (inline) {
      source = path.join(dir, `${shape}-${i}.i`);
      writeFileSync(source, inlined(readFileSync(unit, 'utf8'), header));
    }
    const object = path.join(dir, `${shape}-${i}.o`);
    sh('gcc', ['-O2', '-w', '-x', 'cpp-output', '-c', source, '-o', object]);
    return object;
  });
}

/** One program per VARIANTS entry, in that order. */
export function floorPrograms(w: Workload, units: string[], dir: string): string[] {
  const objects = new Map<string | undefined, string[]>();
  return VARIANTS.map((v) => {
    if (!objects.has(v.inline)) objects.set(v.inline, compileUnits(units, v.inline, dir));
    const out = path.join(dir, `floor-${v.name.replaceAll(/\W+/g, '-')}`);
    const runtime = `${out}-runtime.o`;
    sh('gcc', ['-O2', ...v.defines, `-I${runtimeInclude}`, '-c', path.join(floorDir, 'floor-runtime.c'), '-o', runtime]);
    sh('gcc', [...objects.get(v.inline)!, runtime, '-o', out, ...w.libs, '-pthread']);
    return out;
  });
}

export function floorTable(list: Workload[], runs: number, work: string): void {
  const rows: string[] = [];
  for (const w of list) {
    const dir = path.join(work, 'floor', w.name);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    console.error(`[floor ${w.name}] building`);
    const plain = path.join(dir, 'plain');
    const inst = path.join(dir, 'instrumented');
    w.build(['gcc'], plain);
    const units = instrumentedBuild(w, dir, inst);
    const exes = [plain, ...floorPrograms(w, units, dir), inst];
    const times: number[][] = exes.map(() => []);
    const traces = path.join(dir, 'traces');
    for (let r = 0; r < runs; r++) {
      console.error(`[floor ${w.name}] round ${r + 1}/${runs}`);
      rmSync(traces, { recursive: true, force: true });
      mkdirSync(traces);
      const env = { ...process.env, MEMWRAP_TRACE: path.join(traces, '%p.mwtrace') };
      exes.forEach((exe, i) => times[i]!.push(timeRun([exe, ...w.args], { stdin: w.stdin, cwd: dir, env })));
    }
    const base = median(times[0]!);
    rows.push(`| ${w.name} | ${(base * 1000).toFixed(0)} ms | ${times.slice(1).map((t) => `${(median(t) / base).toFixed(2)}×`).join(' | ')} |`);
  }
  console.log('\n| floor: workload | plain | ' + VARIANTS.map((v) => v.name).join(' | ') + ' | cc-memwrap |');
  console.log('| --- | --- | ' + VARIANTS.map(() => '---').join(' | ') + ' | --- |');
  for (const row of rows) console.log(row);
  for (const v of VARIANTS) console.log(`- ${v.name}: ${v.means}`);
}
