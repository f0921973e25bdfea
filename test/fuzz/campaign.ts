// The fuzz campaign on real traces: traces of real programs (several threads, many chunks, each sealed), damaged at
// random (bits flipped, bytes changed, the file cut), go through report, dump, export and report --html in this
// process; every outcome is counted by where the damage fell (inside a sealed chunk, which its CRC covers, or not)
// and by what the command said: a clean error (exit 2, one line naming the file), a warning with the output, the same
// output as the undamaged trace, or a different output with nothing said (a silent difference). Silent differences
// must be none for damage a seal covers. test/fuzz/campaign.test.ts runs a short seeded campaign in CI;
// test/fuzz/run-campaign.sh a long one.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runDump } from '../../cli/dump.js';
import { runExport } from '../../cli/export.js';
import { runReport } from '../../cli/report.js';
import { capture } from '../fixtures/cli-capture.js';
import { rng } from '../support/random.js';

export interface CommandSpec {
  name: string;
  /** Runs the command on `file` (written at `out` when it writes a file). */
  run: (file: string, out: string) => Promise<{ code: number; out: string; err: string }>;
  /** Its output can be compared with the undamaged trace's (report --html embeds the trace's bytes: it cannot). */
  comparable: boolean;
}

export const COMMANDS: CommandSpec[] = [
  { name: 'report', comparable: true, run: (f) => capture(runReport, [f, '--peak', '--leaks', '--linked', '--by', 'function']) },
  { name: 'dump', comparable: true, run: (f) => capture(runDump, [f]) },
  { name: 'export csv', comparable: true, run: (f) => capture(runExport, [f, '--format', 'csv']) },
  { name: 'report --html', comparable: false, run: (f, out) => capture(runReport, [f, '--html', out]) },
];

/** Where a damaged byte fell. */
export type Where = 'sealed chunk' | 'open chunk' | 'chunk header' | 'free space' | 'file header' | 'cut';

/** What a command said of a damaged trace. */
export type Outcome = 'clean error' | 'warning' | 'same output' | 'silent difference' | 'internal error';

export interface Mutant {
  bytes: Uint8Array;
  where: Where;
  /** First damaged offset (or the cut). */
  at: number;
  what: string;
}

/** The byte ranges of a trace: its file header, each chunk's header fields and payload, and whether a seal ends it. */
export function layout(bytes: Uint8Array): { sealedCovered: [number, number][]; open: [number, number][]; chunkHeaders: [number, number][] } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const sealedCovered: [number, number][] = [];
  const open: [number, number][] = [];
  const chunkHeaders: [number, number][] = [];
  for (let off = 64; off + 16 <= bytes.length; ) {
    if (view.getUint32(off, false) !== 0x4d57434b) break; // "MWCK"
    const capacity = view.getUint32(off + 8, true);
    const used = view.getUint32(off + 12, true);
    const payload = off + 16;
    const sealed = used >= 11 && bytes[payload + used - 11] === 0 && bytes[payload + used - 10] === 7 && bytes[payload + used - 9] === 8;
    // A seal's CRC covers the magic, thread index and capacity and the payload before it (and the seal itself is checked).
    if (sealed) sealedCovered.push([off, off + 12], [payload, payload + used]);
    else open.push([payload, payload + used]);
    chunkHeaders.push([sealed ? off + 12 : off, off + 16]);
    off = payload + capacity;
  }
  return { sealedCovered, open, chunkHeaders };
}

const inside = (ranges: [number, number][], at: number): boolean => ranges.some(([a, b]) => at >= a && at < b);

/** An offset to damage, `u` uniform in [0, 1): 3 % in the file header, 5 % anywhere, the rest in bytes a chunk holds. */
function placeDamage(size: number, map: ReturnType<typeof layout>, u: number): number {
  if (u < 0.03) return Math.floor((u / 0.03) * 64);
  if (u < 0.08) return 64 + Math.floor(((u - 0.03) / 0.05) * (size - 64));
  const ranges = [...map.sealedCovered, ...map.open, ...map.chunkHeaders].filter(([a, b]) => b > a);
  const total = ranges.reduce((n, [a, b]) => n + b - a, 0);
  let k = Math.floor(((u - 0.08) / 0.92) * total);
  for (const [a, b] of ranges) {
    if (k < b - a) return a + k;
    k -= b - a;
  }
  return 64;
}

/** A damaged copy of `original`: 1–4 bits flipped or bytes set at one place, or the file cut; and where it fell. */
export function mutate(original: Uint8Array, random: () => number, map = layout(original)): Mutant {
  const bytes = original.slice();
  const pick = random();
  if (pick < 0.1) {
    const cut = 64 + Math.floor(random() * (original.length - 64));
    return { bytes: bytes.slice(0, cut), where: 'cut', at: cut, what: `cut at ${cut}` };
  }
  // Most damage where the records are (the used bytes of chunks, their headers); some in the file header, some in
  // the chunks' free space (reserved, never written, or a punched hole).
  const at = placeDamage(original.length, map, random());
  let what: string;
  if (pick < 0.7) {
    const bits = 1 + Math.floor(random() * 4);
    for (let k = 0; k < bits; k++) bytes[at] ^= 1 << Math.floor(random() * 8);
    what = `bits flipped at ${at}`;
  } else {
    const span = 1 + Math.floor(random() * 4);
    for (let k = 0; k < span && at + k < bytes.length; k++) bytes[at + k] = Math.floor(random() * 256);
    what = `${span} byte(s) set at ${at}`;
  }
  const last = Math.min(bytes.length - 1, at + 3);
  const where: Where =
    at < 64
      ? 'file header'
      : inside(map.sealedCovered, at) && inside(map.sealedCovered, last)
        ? 'sealed chunk'
        : inside(map.open, at)
          ? 'open chunk'
          : inside(map.chunkHeaders, at)
            ? 'chunk header'
            : 'free space';
  if (bytes.every((b, i) => b === original[i])) return mutate(original, random, map); // a flip that changed nothing
  return { bytes, where, at, what };
}

/** The output with the file's own path masked, so that the damaged trace's output compares with the original's. */
function masked(text: string, file: string): string {
  return text.split(file).join('<trace>');
}

/** Whether the command said something of the damage: an error, a warning, or dump's list of problems. */
function said(r: { out: string; err: string }): boolean {
  return /: (warning|error): /.test(r.err) || /^problems: (?!none)/m.test(r.out);
}

export interface CampaignResult {
  /** count[where][outcome], summed over commands. */
  table: Map<Where, Map<Outcome, number>>;
  /** Per command: outcome counts. */
  byCommand: Map<string, Map<Outcome, number>>;
  /** The silent differences in sealed chunks, to replay (seed, mutant, command). */
  silentCovered: string[];
  internalErrors: string[];
  mutants: number;
}

export interface CampaignOptions {
  seed: number;
  mutants: number;
  /** Real traces (paths) to damage. */
  traces: string[];
  /** A scratch folder for the damaged files. */
  dir: string;
  /** report --html on one mutant in this many (it is slow); 0: never. */
  htmlEvery?: number;
  onProgress?: (done: number) => void;
}

function bump<K>(m: Map<K, number>, k: K): void {
  m.set(k, (m.get(k) ?? 0) + 1);
}

/** Damages the traces `mutants` times and runs every command on each damaged file. */
export async function runCampaign(o: CampaignOptions): Promise<CampaignResult> {
  const random = rng(o.seed);
  const originals = o.traces.map((t) => ({ file: t, bytes: new Uint8Array(readFileSync(t)) }));
  const baselines = new Map<string, string>();
  for (const { file } of originals) {
    for (const c of COMMANDS.filter((x) => x.comparable)) {
      const r = await c.run(file, '');
      if (r.code !== 0 || r.err.includes('warning') || r.err.includes('error')) throw new Error(`${c.name} on the undamaged ${file} is not clean: ${r.err}`);
      baselines.set(`${file} ${c.name}`, masked(r.out, file));
    }
  }
  const result: CampaignResult = { table: new Map(), byCommand: new Map(), silentCovered: [], internalErrors: [], mutants: 0 };
  const damaged = path.join(o.dir, 'damaged.mwtrace');
  for (let i = 0; i < o.mutants; i++) {
    const original = originals[i % originals.length]!;
    const m = mutate(original.bytes, random);
    writeFileSync(damaged, m.bytes);
    for (const c of COMMANDS) {
      if (!c.comparable && (!o.htmlEvery || i % o.htmlEvery !== 0)) continue;
      let outcome: Outcome;
      let r: { code: number; out: string; err: string };
      try {
        r = await c.run(damaged, path.join(o.dir, 'damaged.html'));
        if (r.code === 2 && new RegExp(`^cc-memwrap (report|dump|export): ${damaged}: [^\\n]+\\n$`).test(r.err)) outcome = 'clean error';
        else if (r.code !== 0) outcome = 'internal error';
        else if (said(r)) outcome = 'warning';
        else if (!c.comparable || masked(r.out, damaged) === baselines.get(`${original.file} ${c.name}`)) outcome = 'same output';
        else outcome = 'silent difference';
      } catch (e) {
        outcome = 'internal error';
        r = { code: 70, out: '', err: (e as Error).stack ?? String(e) };
      }
      const where = result.table.get(m.where) ?? new Map<Outcome, number>();
      result.table.set(m.where, where);
      bump(where, outcome);
      const byCommand = result.byCommand.get(c.name) ?? new Map<Outcome, number>();
      result.byCommand.set(c.name, byCommand);
      bump(byCommand, outcome);
      const replay = `seed ${o.seed} mutant ${i} (${path.basename(original.file)}: ${m.what}) ${c.name}`;
      if (outcome === 'silent difference' && m.where === 'sealed chunk') result.silentCovered.push(replay);
      if (outcome === 'internal error') result.internalErrors.push(`${replay}: exit ${r.code}: ${r.err.split('\n').slice(0, 3).join(' | ')}`);
    }
    result.mutants++;
    o.onProgress?.(i + 1);
  }
  return result;
}

const OUTCOMES: Outcome[] = ['clean error', 'warning', 'same output', 'silent difference', 'internal error'];
const WHERES: Where[] = ['sealed chunk', 'open chunk', 'chunk header', 'file header', 'cut'];

/** The campaign's table as text: one row per place the damage fell, one column per outcome (command runs). */
export function campaignTable(r: CampaignResult): string {
  const head = ['damage in', ...OUTCOMES, 'runs'];
  const rows = WHERES.filter((w) => r.table.has(w)).map((w) => {
    const m = r.table.get(w)!;
    const counts = OUTCOMES.map((o) => m.get(o) ?? 0);
    return [w, ...counts.map(String), String(counts.reduce((a, b) => a + b, 0))];
  });
  const all = OUTCOMES.map((o) => WHERES.reduce((s, w) => s + (r.table.get(w)?.get(o) ?? 0), 0));
  rows.push(['all', ...all.map(String), String(all.reduce((a, b) => a + b, 0))]);
  const widths = head.map((h, c) => Math.max(h.length, ...rows.map((row) => row[c]!.length)));
  const line = (cells: string[]): string => `| ${cells.map((x, c) => (c === 0 ? x.padEnd(widths[c]!) : x.padStart(widths[c]!))).join(' | ')} |`;
  return [line(head), `| ${widths.map((w, c) => (c === 0 ? '-'.repeat(w) : `${'-'.repeat(w - 1)}:`)).join(' | ')} |`, ...rows.map(line)].join('\n');
}
