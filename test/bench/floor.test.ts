// The benchmark's floor programs must be the same programs: each floor
// variant of a sample, linked against bench/floor/floor-runtime.c, prints
// what the plain build prints (a floor that broke the program would time
// something else).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { floorPrograms, instrumentedBuild, VARIANTS } from '../../bench/floor.js';
import { sh } from '../../bench/measure.js';
import type { Workload } from '../../bench/workloads.js';
import { packageRoot } from '../../package-root.js';
import { scratch } from '../support/programs.js';

const sample = path.join(packageRoot, 'samples', 'linked-list.c');
const workload: Workload = {
  name: 'linked-list',
  kind: 'sample',
  build: (cc, out, options) => sh(cc[0]!, [...cc.slice(1), '-O2', sample, '-o', out], options),
  args: [],
  libs: [],
};

describe('benchmark floor', () => {
  it('every floor variant runs the program unchanged', () => {
    const dir = scratch('floor');
    const plain = path.join(dir, 'plain');
    workload.build(['gcc'], plain);
    const expected = spawnSync(plain, [], { encoding: 'utf8' });
    const units = instrumentedBuild(workload, dir, path.join(dir, 'instrumented'));
    expect(units.map((u) => path.basename(u))).toEqual(['linked-list.mw.i']);
    const programs = floorPrograms(workload, units, dir);
    for (const [i, variant] of VARIANTS.entries()) {
      const ran = spawnSync(programs[i]!, [], { encoding: 'utf8' });
      expect({ variant: variant.name, stdout: ran.stdout, status: ran.status }).toEqual({ variant: variant.name, stdout: expected.stdout, status: expected.status });
    }
  });
});
