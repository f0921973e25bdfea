// What recording costs a firmware: QEMU's count of the instructions a Cortex-M executes, plainly and recorded, on a
// few firmware (its console checked against the plain one's), with the events recorded and the trace's bytes, and
// what the runtime takes of the board: its RAM and flash in bytes (the ELF file's symbols, as the RAM map reads them),
// and the firmware's static RAM and flash used, plain and recorded. Instruction counts are exact and the same run
// to run (no timer interrupts), so one run of each is enough: `npm run bench -- --only firmware`.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { readFirmwareImage } from '../analysis/firmware-image.js';
import { countEvents } from '../analysis/trace/count.js';
import { packageRoot } from '../package-root.js';
import { CROSS, qemuArgs, target, type Target } from './firmware-targets.js';

const wrapper = path.join(packageRoot, 'bin', 'cc-memwrap');

interface FirmwareWorkload {
  name: string;
  target: Target;
  sources: string[];
  defines: string[];
}

function workloads(): FirmwareWorkload[] {
  const heapWork = path.join(packageRoot, 'test', 'programs', 'firmware', 'heap-work.c');
  const sensor = path.join(packageRoot, 'samples', 'sensor-log.c');
  const trees = path.join(packageRoot, 'bench', 'workloads', 'binary-trees.c');
  return [
    { name: 'heap-work', target: target('picolibc', 'mps2-an385'), sources: [heapWork], defines: [] },
    { name: 'heap-work', target: target('newlib', 'netduinoplus2'), sources: [heapWork], defines: [] },
    { name: 'sensor-log', target: target('newlib', 'netduinoplus2'), sources: [sensor], defines: [] },
    { name: 'binary-trees 4', target: target('picolibc', 'mps2-an385'), sources: [trees], defines: ['-DDEPTH=4'] },
    { name: 'binary-trees 6', target: target('picolibc', 'mps2-an385'), sources: [trees], defines: ['-DDEPTH=6'] },
  ];
}

/** Instructions QEMU executes for `elf` (one instruction per translation block, each logged), and the console. */
function instructions(t: Target, elf: string, cwd: string): { count: number; console: string } {
  const qemu = ['qemu-system-arm', ...qemuArgs(t, elf), '-singlestep', '-d', 'exec,nochain', '-D', '/dev/stdout'].map((a) => `'${a}'`).join(' ');
  // The log goes through awk, which counts its lines and passes the rest on: the console (semihosting) arrives on
  // stderr, or with newlib on stdout among the log's lines. The pipeline ends when awk has written the count.
  const r = spawnSync('sh', ['-c', `${qemu} | awk '/^Trace / { n++; next } { print } END { print n + 0 > "count.txt" }'`], { cwd, encoding: 'utf8', maxBuffer: 1 << 24 });
  if (r.error) throw r.error;
  return { count: Number(readFileSync(path.join(cwd, 'count.txt'), 'utf8')), console: r.stdout + r.stderr };
}

function build(w: FirmwareWorkload, out: string, recorded: boolean): void {
  const args = [...w.target.flags, '-O2', '-g', ...w.defines, ...w.target.sources, ...w.sources, '-o', out];
  const r = recorded ? spawnSync(wrapper, [CROSS, ...args], { encoding: 'utf8' }) : spawnSync(CROSS, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`building ${out} failed:\n${r.stderr}`);
}

const kib = (n: number): string => `${(n / 1024).toFixed(1)} KiB`;
const count = (n: number): string => n.toLocaleString('en-US');

/** The firmware table, in markdown, on stdout. */
export function firmwareTable(work: string): void {
  const have = spawnSync('sh', ['-c', `command -v ${CROSS} && command -v qemu-system-arm`]).status === 0;
  if (!have) {
    console.log(`\n(firmware: ${CROSS} or qemu-system-arm is missing; test/run-all.sh installs them)`);
    return;
  }
  console.log('\n| firmware (-O2) | C library, machine | instructions, plain | recorded | × | events | instructions per event | trace | runtime RAM | runtime flash | static RAM, plain → recorded | flash, plain → recorded |');
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  const measured: { name: string; plain: number; recorded: number; events: number }[] = [];
  for (const w of workloads()) {
    const dir = path.join(work, 'firmware', `${w.name.replace(/\W+/g, '-')}-${w.target.libc}`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    console.error(`[firmware ${w.name}, ${w.target.libc} on ${w.target.machine}] building and running`);
    const plainElf = path.join(dir, 'plain.elf');
    const recElf = path.join(dir, 'recorded.elf');
    build(w, plainElf, false);
    build(w, recElf, true);
    const plain = instructions(w.target, plainElf, dir);
    const recorded = instructions(w.target, recElf, dir);
    if (recorded.console !== plain.console) throw new Error(`${w.name}: the recorded firmware printed\n${recorded.console}\nthe plain one\n${plain.console}`);
    const trace = readdirSync(dir).find((f) => f.endsWith('.mwtrace'))!;
    const bytes = readFileSync(path.join(dir, trace));
    const events = countEvents(bytes).events;
    const a = readFirmwareImage(readFileSync(plainElf))!;
    const b = readFirmwareImage(readFileSync(recElf))!;
    measured.push({ name: w.name, plain: plain.count, recorded: recorded.count, events });
    console.log(
      `| ${w.name} | ${w.target.libc}, ${w.target.machine} | ${count(plain.count)} | ${count(recorded.count)} | ${(recorded.count / plain.count).toFixed(1)}× | ${count(events)} | ${((recorded.count - plain.count) / events).toFixed(0)} | ${count(statSync(path.join(dir, trace)).size)} B | ${count(b.runtime.ram)} B | ${count(b.runtime.flash)} B | ${kib(a.data + a.bss)} → ${kib(b.data + b.bss)} | ${kib(a.flash.used)} → ${kib(b.flash.used)} |`,
    );
  }
  // The start-up (site tables, the trace's header and name) weighs on a short run: what each further event costs is
  // the difference between two sizes of one workload.
  const small = measured.find((m) => m.name === 'binary-trees 4');
  const large = measured.find((m) => m.name === 'binary-trees 6');
  if (small && large) {
    const extra = large.recorded - large.plain - (small.recorded - small.plain);
    console.log(`
binary-trees 4 → 6: ${count(large.events - small.events)} more events cost ${count(extra)} more instructions than the plain runs' difference: ${(extra / (large.events - small.events)).toFixed(1)} per event.`);
  }
}
