// A full disk does not fail silently: on a 2 MB tmpfs a program of 200,001 allocations runs to its end as it would,
// the runtime says once on stderr that recording stopped and why (ENOSPC), the trace's header says so, and report
// says "recording stopped: disk full, ENOSPC, at event N"; with 0 bytes free the runtime says the disk is full, not
// that it cannot map the file. Needs root to mount a tmpfs: skipped with the reason when mount is refused.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildInstrumented, run, scratch, wrapper } from '../support/programs.js';

const dir = scratch('full-disk');
const mnt = path.join(dir, 'mnt');
mkdirSync(mnt);
const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mnt]).status === 0;

describe.skipIf(!mounted)('a full disk (a 2 MB tmpfs; needs mount, so root)', () => {
  const exe = path.join(dir, 'many');
  beforeAll(() => {
    const source = path.join(dir, 'many.c');
    writeFileSync(source, '#include <stdio.h>\n#include <stdlib.h>\nint main(void) {\n  for (int i = 0; i < 200001; i++) {\n    void *p = malloc(16 + i % 64);\n    free(p);\n  }\n  puts("done");\n  return 0;\n}\n');
    buildInstrumented('gcc', ['-O0'], [source], exe);
  });
  afterAll(() => {
    spawnSync('umount', [mnt]);
  });

  test('recording stops, said once on stderr; the program ends as it would; report says where and why', () => {
    const r = run(exe, [], { env: { ...process.env, MEMWRAP_TRACE: path.join(mnt, 'many.%p.mwtrace') } });
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('done\n');
    expect(r.stderr).toBe('cc-memwrap: recording stopped: the disk is full (ENOSPC); the trace ends here and says why (cc-memwrap report tells at which event), and the program runs on unrecorded\n');
    const trace = path.join(mnt, readdirSync(mnt).find((f) => f.endsWith('.mwtrace'))!);
    const header = readFileSync(trace).subarray(0, 64);
    expect(header[17]! & 4).toBe(4); // stopped
    expect(header[17]! & 1).toBe(0); // not complete
    expect(header.readUInt32LE(28)).toBe(28); // ENOSPC
    const report = run(process.execPath, [wrapper, 'report', trace]);
    expect(report.status).toBe(0);
    const events = /^Events +([\d,]+)$/m.exec(report.stdout)![1]!;
    expect(report.stdout).toContain(`Run          recording stopped: disk full, ENOSPC, at event ${events}; the program ran on unrecorded\n`);
    expect(report.stderr).toContain('no END record: recording stopped (disk full, ENOSPC) before the program ended');
    expect(report.stderr).not.toMatch(/checksum|seal|killed|crashed/);
    // What fitted is there: allocations up to where the file could not grow, far fewer than 200,001.
    const allocations = Number(/^Allocations +([\d,]+)/m.exec(report.stdout)![1]!.replace(/,/g, ''));
    expect(allocations).toBeGreaterThan(10_000);
    expect(allocations).toBeLessThan(200_001);
  });

  test('0 bytes free: the disk is full, said; the program runs unrecorded', () => {
    execFileSync('sh', ['-c', `rm -f '${mnt}'/*; dd if=/dev/zero of='${mnt}/fill' bs=4k 2>/dev/null; true`]);
    const r = run(exe, [], { env: { ...process.env, MEMWRAP_TRACE: path.join(mnt, 'zero.mwtrace') } });
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('done\n');
    expect(r.stderr).toBe(`cc-memwrap: cannot write the trace file ${path.join(mnt, 'zero.mwtrace')}: the disk is full (ENOSPC); the program runs unrecorded\n`);
    expect(readdirSync(mnt)).toEqual(['fill']);
  });
});
