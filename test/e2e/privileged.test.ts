// A setuid or setgid instrumented program records nowhere an unprivileged user chose: built setuid-root, run as
// nobody with MEMWRAP_TRACE=/etc/… (which a plain getenv obeyed, creating a root-owned file in /etc), it records
// nothing, says so in one line, and runs as it would; every MEMWRAP_* variable is read with secure_getenv. Needs root
// (to make the program setuid and to act as nobody): skipped with the reason otherwise.
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { buildInstrumented, run, scratch } from '../support/programs.js';

const asNobody = process.getuid?.() === 0 && spawnSync('runuser', ['-u', 'nobody', '--', 'true']).status === 0;

describe.skipIf(!asNobody)('a setuid-root instrumented program run by nobody (needs root and runuser)', () => {
  const dir = scratch('privileged');
  chmodSync(dir, 0o755);
  const source = path.join(dir, 'suid.c');
  writeFileSync(source, '#include <stdio.h>\n#include <stdlib.h>\n#include <unistd.h>\nint main(void) {\n  char *p = malloc(32);\n  printf("euid=%d\\n", (int)geteuid());\n  free(p);\n  return 0;\n}\n');
  const exe = path.join(dir, 'suid');
  buildInstrumented('gcc', ['-O0'], [source], exe);
  chownSync(exe, 0, 0);
  chmodSync(exe, 0o4755);
  const etcBefore = new Set(readdirSync('/etc'));

  test('MEMWRAP_TRACE=/etc/…: no file in /etc, one line saying it records nothing, the program runs as root', () => {
    const r = run('runuser', ['-u', 'nobody', '--', 'env', 'MEMWRAP_TRACE=/etc/mw-attack-%p.mwtrace', exe], { cwd: dir });
    const created = readdirSync('/etc').filter((f) => !etcBefore.has(f));
    for (const f of created) rmSync(path.join('/etc', f), { force: true }); // never leave one behind, even on failure
    expect(created).toEqual([]);
    expect(r.stdout).toBe('euid=0\n');
    expect(r.stderr).toBe('cc-memwrap: a setuid or setgid program is not recorded (its trace would be written with privileges its user lacks); the program runs unrecorded\n');
    expect(r.status).toBe(0);
  });

  test('nor in the working directory nobody chose (the default name)', () => {
    const r = run('runuser', ['-u', 'nobody', '--', exe], { cwd: '/etc' });
    const created = readdirSync('/etc').filter((f) => !etcBefore.has(f));
    for (const f of created) rmSync(path.join('/etc', f), { force: true });
    expect(r.status).toBe(0);
    expect(created).toEqual([]);
  });

  test('the same program without its setuid bit records as usual, where MEMWRAP_TRACE says', () => {
    chmodSync(exe, 0o755);
    const traces = scratch('privileged-plain');
    chmodSync(traces, 0o777);
    const r = run('runuser', ['-u', 'nobody', '--', 'env', `MEMWRAP_TRACE=${traces}/%p.mwtrace`, exe], { cwd: dir });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('euid=65534\n');
    expect(readdirSync(traces).filter((f) => f.endsWith('.mwtrace'))).toHaveLength(1);
    expect(existsSync(path.join(dir, 'suid'))).toBe(true);
  });
});
