// The traces the fold tests run over: the built fixtures, the frozen fixture files (those the runtime wrote too), and
// with MW_FOLD_TRACES=<dir> every trace in that folder (a wider check by hand).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FIXTURES } from '../fixtures/scenarios.js';

const FIXTURE_TRACES = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/traces');

/** A frozen fixture file's bytes ('1.2/every-record.bin'). */
export function fixtureFile(name: string): Uint8Array {
  return new Uint8Array(readFileSync(path.join(FIXTURE_TRACES, name)));
}

/** Named traces: the fixtures, then `extra`, then the fixture files and MW_FOLD_TRACES's. */
export function foldTraces(extra: [string, Uint8Array][] = []): [string, Uint8Array][] {
  const out: [string, Uint8Array][] = Object.entries(FIXTURES).map(([name, make]) => [name, make()]);
  out.push(...extra);
  for (const dir of readdirSync(FIXTURE_TRACES, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name)) {
    for (const f of readdirSync(path.join(FIXTURE_TRACES, dir)).filter((n) => n.endsWith('.bin'))) out.push([`${dir}/${f}`, fixtureFile(`${dir}/${f}`)]);
  }
  const dir = process.env.MW_FOLD_TRACES;
  if (dir) for (const f of readdirSync(dir).sort()) out.push([f, new Uint8Array(readFileSync(path.join(dir, f)))]);
  return out;
}
