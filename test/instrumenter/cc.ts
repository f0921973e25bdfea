// Helpers for the rewriter's tests: run gcc or clang on the fixtures of
// test/fixtures/rewrite/ (preprocess with the runtime header, compile the
// original and the rewritten text, link with the stub runtime) without
// throwing on failure, so a test can assert on the diagnostics.
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const header = path.join(root, 'runtime', 'memwrap.h');
export const fixtures = path.join(root, 'test', 'fixtures', 'rewrite');

export type Compiler = 'gcc' | 'clang';

/** The warnings real projects turn into errors; the rewritten code must add none. */
export const STRICT = [
  '-std=c89',
  '-pedantic',
  '-Wall',
  '-Wextra',
  '-Wmissing-prototypes',
  '-Wconversion',
  '-Wshadow',
  '-Wredundant-decls',
  '-Wcast-qual',
  '-Wc++-compat',
  '-Werror',
];
/** The same for GNU C fixtures (no -pedantic, whose point is to reject GNU C). */
export const GNU = ['-std=gnu11', '-Wall', '-Wextra', '-Wmissing-prototypes', '-Wconversion', '-Wshadow', '-Wredundant-decls', '-Wcast-qual', '-Werror'];
/** Only clang has it. */
export const CLANG_ONLY = ['-Wmissing-variable-declarations'];

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

export function run(command: string, args: readonly string[], cwd = fixtures): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, maxBuffer: 1 << 28, encoding: 'buffer' }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolve({ code, stdout: stdout.toString('latin1'), stderr: stderr.toString('utf8') });
    });
  });
}

/** `cc -E -include memwrap.h` of a fixture, run in the fixtures folder so markers name it plainly. */
export async function preprocess(cc: Compiler, file: string, flags: readonly string[]): Promise<Buffer> {
  const out = await new Promise<Buffer>((resolve, reject) => {
    execFile(cc, ['-E', ...flags, '-include', header, file], { cwd: fixtures, maxBuffer: 1 << 28, encoding: 'buffer' }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`${cc} -E ${file} failed: ${stderr.toString()}`));
      else resolve(stdout);
    });
  });
  return out;
}

const scratchDir = mkdtempSync(path.join(os.tmpdir(), 'mw-rewrite-'));

/** Writes text to a scratch file and returns its path. */
export function scratch(name: string, contents: Buffer | string): string {
  const file = path.join(scratchDir, name);
  writeFileSync(file, contents);
  return file;
}

export function scratchPath(name: string): string {
  return path.join(scratchDir, name);
}

/** Compiles preprocessed text (`-x cpp-output`, as the driver does) to an object. */
export function compilePreprocessed(cc: Compiler, file: string, flags: readonly string[], object = '/dev/null'): Promise<Ran> {
  return run(cc, ['-x', 'cpp-output', '-c', ...flags, file, '-o', object]);
}

/** The lines of a text that are directives (`#...`), with their line index. */
export function directiveLines(text: string): string[] {
  return text.split('\n').flatMap((line, index) => (/^\s*#/.test(line) ? [`${index}: ${line}`] : []));
}
