// A trace names its program, and the tools read what lies there (its frame sizes, the memwrap.json beside it) and
// the loaded objects its LIBRARY records name: only regular files, of a bounded size. PROGRAM = /dev/zero (which never
// ends) or a FIFO (whose open blocks until a writer comes), a FIFO memwrap.json, a FIFO or a device given as the trace
// itself: a clear message, no hang, no growth.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { TraceSession } from '../../host/trace-session.js';
import { librarySymbols } from '../../host/library-symbols.js';
import { S, TraceBuilder } from '../fixtures/trace-builder.js';
import { run, scratch, wrapper } from '../support/programs.js';

const dir = scratch('hostile-program');

/** A small complete trace whose PROGRAM record names `program` (run in `cwd`). */
function traceNaming(name: string, program: string, cwd: string): string {
  const b = new TraceBuilder({ complete: true });
  const t = b.thread(0);
  t.threadBegin(1);
  t.program(program, cwd);
  t.unit(1, [
    { kind: S.ENTRY, file: 'a.c', func: 'main', name: 'main', line: 1 },
    { kind: S.MALLOC, file: 'a.c', func: 'main', name: 'malloc', line: 2 },
    { kind: S.RETURN, file: 'a.c', func: 'main', name: 'main', line: 3 },
  ]);
  t.enter(1, 128);
  t.alloc({ site: 2, size: 64, addr: 0x1000 });
  t.exit(3);
  t.end(0, 0);
  const file = path.join(dir, name);
  writeFileSync(file, b.build());
  return file;
}

const fifoDir = path.join(dir, 'fifo');
mkdirSync(fifoDir);
execFileSync('mkfifo', [path.join(fifoDir, 'prog')]);
const jsonDir = path.join(dir, 'json');
mkdirSync(jsonDir);
writeFileSync(path.join(jsonDir, 'prog'), 'not an ELF file');
execFileSync('mkfifo', [path.join(jsonDir, 'memwrap.json')]);

const zero = traceNaming('zero.mwtrace', '/dev/zero', '/');
const fifo = traceNaming('fifo.mwtrace', 'prog', fifoDir);
const fifoJson = traceNaming('fifo-json.mwtrace', 'prog', jsonDir);

/** `cc-memwrap args…` in a child process: a hang ends it at the timeout (and fails the test), growth at 1 GB. */
function cli(args: string[]): ReturnType<typeof run> {
  return run('sh', ['-c', `ulimit -v 4000000 && exec "$@"`, 'sh', process.execPath, wrapper, ...args], { timeout: 60_000 });
}

describe('a hostile program path', () => {
  test('PROGRAM = /dev/zero: report --stack says it is not a regular file; report and report --html finish', () => {
    const r = cli(['report', zero, '--stack']);
    expect(r.signal).toBeNull();
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('cannot read /dev/zero (not a regular file)');
    const html = cli(['report', zero, '--html', path.join(dir, 'zero.html')]);
    expect(html.status, html.stderr).toBe(0);
  });

  test('PROGRAM = a FIFO: no hang; the frame sizes are missing, in words', () => {
    const r = cli(['report', fifo, '--stack']);
    expect(r.signal).toBeNull();
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(`cannot read ${path.join(fifoDir, 'prog')} (not a regular file)`);
    expect(cli(['report', fifo, '--html', path.join(dir, 'fifo.html')]).status).toBe(0);
  });

  test('a FIFO memwrap.json beside the program: one line, exit 2, no hang', () => {
    const r = cli(['report', fifoJson]);
    expect(r.signal).toBeNull();
    expect(r.stderr).toBe(`cc-memwrap report: ${path.join(jsonDir, 'memwrap.json')}: not a regular file, not read\n`);
    expect(r.status).toBe(2);
  });

  test("the viewer's session: the same words, nothing read", async () => {
    const z = await TraceSession.open(zero, { index: false });
    expect(z.info.stack.missing).toBe('cannot read /dev/zero (not a regular file)');
    const f = await TraceSession.open(fifoJson, { index: false });
    expect(f.info.budgetProblem).toBe(`${path.join(jsonDir, 'memwrap.json')}: not a regular file, not read`);
  });

  test('a FIFO or a device given as the trace: one line naming it, exit 2, no hang', () => {
    const named = path.join(fifoDir, 'prog');
    for (const [command, file] of [['report', named], ['dump', named], ['export', named], ['view', named], ['report', '/dev/zero'], ['dump', '/dev/null']] as const) {
      const r = cli([command, file, ...(command === 'export' ? ['--format', 'csv'] : [])]);
      expect(r.signal, command).toBeNull();
      expect(r.stderr, command).toBe(`cc-memwrap ${command}: ${file}: not a regular file (a FIFO or a device), not a trace file\n`);
      expect(r.status, command).toBe(2);
    }
  });

  test('a LIBRARY path that is a FIFO or a device is not read', () => {
    expect(librarySymbols(path.join(fifoDir, 'prog'))).toBeNull();
    expect(librarySymbols('/dev/zero')).toBeNull();
  });
});
