// How the driver reads compiler command lines: inputs, modes, and which
// options reach which stage.
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  compileOptions,
  dependencyOptions,
  linkArguments,
  parseCommand,
  preprocessOptions,
} from '../../instrumenter/args.js';
import { abiFlags } from '../../instrumenter/runtime-build.js';
import { expandResponseFiles, splitResponseText } from '../../instrumenter/response-files.js';

describe('parseCommand', () => {
  it('finds inputs and their kinds, skipping option values', () => {
    const c = parseCommand('gcc', ['-I', 'inc', '-o', 'prog', 'a.c', 'b.cpp', 'lib.a', 'x.o', '-lm', '-include', 'cfg.h', 'k.s']);
    expect(c.mode).toBe('link');
    expect(c.output).toEqual({ path: 'prog', index: 3 });
    expect(c.inputs.map((i) => [i.path, i.kind])).toEqual([
      ['a.c', 'c'],
      ['b.cpp', 'other-source'],
      ['lib.a', 'linker-input'],
      ['x.o', 'linker-input'],
      ['k.s', 'other-source'],
    ]);
  });

  it('honours -x for the inputs after it, until -x none', () => {
    const c = parseCommand('gcc', ['-x', 'c', 'prog.txt', '-x', 'none', 'other.txt', '-xc++', 'z.c']);
    expect(c.inputs.map((i) => i.kind)).toEqual(['c', 'linker-input', 'other-source']);
  });

  it('tells the modes apart', () => {
    expect(parseCommand('gcc', ['-c', 'a.c']).mode).toBe('compile');
    expect(parseCommand('gcc', ['-S', 'a.c']).mode).toBe('assemble');
    expect(parseCommand('gcc', ['-E', 'a.c']).mode).toBe('preprocess');
    expect(parseCommand('gcc', ['-M', 'a.c']).mode).toBe('preprocess');
    expect(parseCommand('gcc', ['-MM', 'a.c']).mode).toBe('preprocess');
    expect(parseCommand('gcc', ['-MD', '-c', 'a.c']).mode).toBe('compile');
    expect(parseCommand('gcc', ['-fsyntax-only', 'a.c']).mode).toBe('syntax-only');
    expect(parseCommand('gcc', ['-v']).mode).toBe('no-input');
    expect(parseCommand('gcc', ['--version']).mode).toBe('no-input');
    expect(parseCommand('gcc', ['-x', 'c', '-']).inputs[0]!.kind).toBe('stdin');
    expect(parseCommand('gcc', ['-shared', 'a.o', '-o', 'l.so']).links).toBe('shared');
  });
});

describe('stage options', () => {
  const c = parseCommand('clang', [
    '-O2', '-g', '-Wall', '-std=c89', '-DX=1', '-I', 'inc', '-Iinc2', '-include', 'cfg.h',
    '-MD', '-MP', '-MT', 'tgt', '-c', 'a.c', '-o', 'out/a.o', '-Wl,--as-needed', '-lm', '-P',
  ]);

  it('preprocessing keeps what shapes the text, never -P, dependency or link options', () => {
    expect(preprocessOptions(c)).toEqual(['-O2', '-g', '-Wall', '-std=c89', '-DX=1', '-I', 'inc', '-Iinc2', '-include', 'cfg.h']);
  });

  it('compiling the .i drops preprocessor-only options', () => {
    expect(compileOptions(c)).toEqual(['-O2', '-g', '-Wall', '-std=c89']);
  });

  it('dependency files get the name and target GCC would give them', () => {
    expect(dependencyOptions(c, 'a.c', 'out/a.o')).toEqual(['-MD', '-MP', '-MT', 'tgt', '-MF', 'out/a.d']);
    const plain = parseCommand('gcc', ['-MMD', '-c', 'src/b.c']);
    expect(dependencyOptions(plain, 'src/b.c', 'b.o')).toEqual(['-MMD', '-MF', 'b.d', '-MQ', 'b.o']);
    expect(dependencyOptions(parseCommand('gcc', ['-c', 'b.c']), 'b.c', 'b.o')).toEqual([]);
  });

  it('the link replaces C sources in place and keeps -x only where needed', () => {
    const link = parseCommand('gcc', ['-x', 'c', 'a.txt', '-x', 'none', 'm.cpp', 'z.o', '-o', 'p', '-lm']);
    expect(linkArguments(link, new Map([[2, '/tmp/a.o']]))).toEqual(['/tmp/a.o', 'm.cpp', 'z.o', '-o', 'p', '-lm']);
    const cxx = parseCommand('gcc', ['-x', 'c++', 'a.txt', 'b.c']);
    expect(linkArguments(cxx, new Map())).toEqual(['-x', 'c++', 'a.txt', '-x', 'none', '-x', 'c++', 'b.c', '-x', 'none']);
  });

  it('the runtime is built with the flags that change the ABI', () => {
    expect(abiFlags(['-m32', '-O2', '-fPIC', '-Wall', '--sysroot', '/s', '-march=armv7-a', '-DX'])).toEqual([
      '-m32', '-fPIC', '--sysroot', '/s', '-march=armv7-a',
    ]);
  });
});

describe('response files', () => {
  it('splits like GCC: quotes group, backslash escapes', () => {
    expect(splitResponseText(`-DA="x y" 'b c' d\\ e\n\t-O2`)).toEqual(['-DA=x y', 'b c', 'd e', '-O2']);
  });

  it('expands nested @files and leaves unreadable ones literal', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'mw-rsp-'));
    writeFileSync(path.join(dir, 'inner.rsp'), '-O2 main.c');
    writeFileSync(path.join(dir, 'outer.rsp'), `-Wall @${path.join(dir, 'inner.rsp')} -o prog`);
    expect(expandResponseFiles(['-g', `@${path.join(dir, 'outer.rsp')}`, '@/no/such/file'])).toEqual([
      '-g', '-Wall', '-O2', 'main.c', '-o', 'prog', '@/no/such/file',
    ]);
  });

  it('refuses a response file that includes itself', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'mw-rsp-'));
    const self = path.join(dir, 'self.rsp');
    writeFileSync(self, `@${self}`);
    expect(() => expandResponseFiles([`@${self}`])).toThrow(/nest/);
  });
});
