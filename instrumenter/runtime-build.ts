// Builds the C runtime (runtime/core/*.c and runtime/*.c) with the user's own compiler, once per
// compiler and ABI, and caches the result: the runtime is never committed as a
// binary, and a 32-bit or PIC build gets a runtime of the same kind.
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isFirmwareBuild } from './firmware.js';
import { toolFor, weakPragmas, type Lto } from './lto.js';
import { packageRoot } from '../package-root.js';

export const runtimeDir = path.join(packageRoot, 'runtime');
export const headerPath = path.join(runtimeDir, 'memwrap.h');

/** Flags of the user's command that change the ABI or code model of objects
 *  linked with theirs; the runtime must be built with the same. */
const ABI_FLAG = /^(-m32|-m64|-mx32|-march=|-mcpu=|-mtune=|-mabi=|-mfloat-abi=|-mfpu=|-mthumb|-marm|-mlittle-endian|-mbig-endian|-fPIC|-fpic|-fPIE|-fpie|-fno-pic|-fno-PIC|-fno-pie|-fno-PIE|--sysroot=|--target=|-target=|-specs=|--specs=)/;
const ABI_FLAG_WITH_VALUE = new Set(['--sysroot', '-target', '-isysroot', '-B', '-specs', '--specs']);

export function abiFlags(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (ABI_FLAG_WITH_VALUE.has(arg) && i + 1 < args.length) {
      out.push(arg, args[++i]!);
    } else if (ABI_FLAG.test(arg)) {
      out.push(arg);
    }
  }
  return out;
}

/** Sanitizers that bring their own malloc: an interposer in the program would take the heap away from them. */
const ALLOCATOR_OWNING_SANITIZERS = new Set(['address', 'hwaddress', 'thread', 'memory', 'leak']);

/** The -fsanitize= checks in force at the end of the command line (later -fno-sanitize= lists switch them off). */
export function sanitizers(args: readonly string[]): Set<string> {
  const on = new Set<string>();
  for (const arg of args) {
    const m = /^-f(no-)?sanitize=(.*)$/.exec(arg);
    if (!m) continue;
    for (const name of m[2]!.split(',')) {
      if (m[1]) on.delete(name);
      else on.add(name);
    }
  }
  return on;
}

/** Whether a sanitizer of this command owns malloc; the runtime is then built without its interposer (MW_INTERPOSE=0). */
export function sanitizerOwnsAllocator(args: readonly string[]): boolean {
  return [...sanitizers(args)].some((name) => ALLOCATOR_OWNING_SANITIZERS.has(name));
}

/** Flags for building the runtime: the command's ABI, and no interposer where a sanitizer owns malloc. Frame
 *  pointers then too: the sanitizer's fast unwinder walks them from its malloc, through ours, to the user's line.
 *  Firmware gets the target's runtime, each function in a section of its own so the link keeps only what is used. */
function runtimeFlags(compiler: string, args: readonly string[]): string[] {
  if (isFirmwareBuild(compiler, args)) return [...abiFlags(args), ...TARGET_FLAGS];
  return [...abiFlags(args), ...(sanitizerOwnsAllocator(args) ? ['-DMW_INTERPOSE=0', '-fno-omit-frame-pointer'] : [])];
}

/** What builds the target's runtime (and the object of each firmware link) instead of the host's. */
export const TARGET_FLAGS = ['-DMW_TARGET=1', '-ffunction-sections', '-fdata-sections'];

/** The flags of a relocatable link (`-r`) of objects into one, from the compiler flags `flags`. A bare-metal C
 *  library's specs file shapes every link it takes part in (picolibc's lays it out by its linker script and drops
 *  unused sections), which would make the objects a program: a relocatable link goes without it. */
export function relocatableLink(flags: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < flags.length; i++) {
    if (flags[i] === '-specs' || flags[i] === '--specs') i++;
    else if (!/^--?specs=/.test(flags[i]!)) out.push(flags[i]!);
  }
  return [...out, '-r', '-nostdlib'];
}

export interface RuntimeObjects {
  /** All runtime objects in one relocatable object, linked into programs. */
  strong: string;
  /** The same with every global symbol weak, embedded into `-c` objects so a
   *  link by the plain compiler (CMake's launcher only wraps compiles) still
   *  finds the runtime, and several copies resolve to one. */
  weak: string;
}

export function cacheRoot(): string {
  const fromEnv = process.env.MEMWRAP_CACHE_DIR;
  if (fromEnv) return fromEnv;
  const xdg = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(xdg, 'cc-memwrap');
}

/** The C files of one folder of the runtime, in name order. */
function sourcesIn(dir: string): string[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.c'))
    .sort()
    .map((name) => path.join(dir, name));
}

/** The runtime's sources: what every platform records with (core/), then the host's own files, or for firmware
 *  the target's (target/: no threads, files or mappings). */
function runtimeSources(firmware = false): string[] {
  return [...sourcesIn(path.join(runtimeDir, 'core')), ...sourcesIn(firmware ? path.join(runtimeDir, 'target') : runtimeDir)];
}

/** Every source and header under runtime/, so any change to one builds the runtime anew. */
function runtimeFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) return runtimeFiles(file);
      return /\.[ch]$/.test(entry.name) ? [file] : [];
    });
}

function resolveCompiler(compiler: string): string {
  if (compiler.includes('/')) return path.resolve(compiler);
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, compiler);
    if (dir && existsSync(candidate)) return candidate;
  }
  return compiler;
}

function cacheKey(compiler: string, flags: string[], firmware = false): string {
  const hash = createHash('sha256');
  const resolved = resolveCompiler(compiler);
  hash.update(resolved);
  try {
    const st = statSync(resolved);
    hash.update(`${st.size}:${st.mtimeMs}`);
  } catch {
    // Not a file we can stat (a shell function, say): the name alone keys it.
  }
  hash.update(JSON.stringify(flags));
  // Which files a build compiles is part of the recipe: a runtime cached by a version that compiled others is not it.
  hash.update(JSON.stringify(runtimeSources(firmware).map((file) => path.relative(runtimeDir, file))));
  for (const file of runtimeFiles(runtimeDir)) {
    hash.update(file);
    hash.update(readFileSync(file));
  }
  return hash.digest('hex').slice(0, 20);
}

function run(command: string, args: string[], what: string): string {
  const result = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 1 << 26 });
  if (result.error) throw new Error(`${what}: cannot run ${command}: ${result.error.message}`);
  if (result.status !== 0) {
    throw new Error(`${what} failed (${command} ${args.join(' ')}):\n${result.stderr}`);
  }
  return result.stdout;
}

export function objcopyFor(compiler: string): string {
  return toolFor(compiler, 'objcopy');
}

/** Builds into a private folder and renames it to `dir`, unless `dir` already holds every file of `made`.
 *  Concurrent builds (make -j) each build privately and the first rename wins, so nobody ever sees a
 *  half-written runtime. */
function cached<T extends Record<string, string>>(dir: string, made: T, build: (work: string) => void): T {
  const whole = (): boolean => Object.values(made).every((file) => existsSync(file));
  if (whole()) return made;
  const work = `${dir}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
  try {
    mkdirSync(work, { recursive: true });
  } catch (error) {
    const why = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new Error(`cannot write the runtime's cache in ${path.dirname(dir)} (${why}): set MEMWRAP_CACHE_DIR to a folder you can write`);
  }
  try {
    build(work);
    try {
      renameSync(work, dir);
    } catch (error) {
      // Another build got there first; theirs is complete, use it.
      if (!whole()) throw new Error(`cannot put the runtime into its cache (${(error as Error).message}): remove ${dir}, or set MEMWRAP_CACHE_DIR to another folder`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return made;
}

/** Compiles each runtime source into `work`; returns the objects. */
function compileRuntime(compiler: string, flags: string[], work: string, extra: string[] = [], firmware = false): string[] {
  return runtimeSources(firmware).map((source) => {
    const object = path.join(work, path.basename(source, '.c') + '.o');
    run(compiler, [...flags, '-O2', '-g', ...extra, '-c', `-I${runtimeDir}`, source, '-o', object], 'building the runtime');
    return object;
  });
}

/** Returns the cached runtime for this compiler and ABI, building it first if needed. */
export function ensureRuntime(compiler: string, userArgs: readonly string[], log?: (line: string) => void): RuntimeObjects {
  const flags = runtimeFlags(compiler, userArgs);
  const firmware = isFirmwareBuild(compiler, userArgs);
  // the combining link's flags are in the key too: how the objects are joined is part of what is cached
  const dir = path.join(cacheRoot(), cacheKey(compiler, [...flags, ...relocatableLink(flags)], firmware));
  const objects = { strong: path.join(dir, 'memwrap.o'), weak: path.join(dir, 'memwrap-weak.o') };
  return cached(dir, objects, (work) => {
    log?.(`building the runtime for ${compiler} ${flags.join(' ')} in ${dir}`);
    const parts = compileRuntime(compiler, flags, work, [], firmware);
    run(compiler, [...relocatableLink(flags), ...parts, '-o', path.join(work, 'memwrap.o')], 'combining the runtime');
    run(objcopyFor(compiler), ['--weaken', path.join(work, 'memwrap.o'), path.join(work, 'memwrap-weak.o')], 'weakening the runtime');
  });
}

/** The weak runtime as LTO IR, for `-c` objects compiled with -flto (see lto.ts): gcc's IR in one LTO object,
 *  or, when the compiler writes LLVM bitcode, one bitcode module (ThinLTO or full, as the user's objects).
 *  Built on first need from the same sources and flags as the native runtime, whose symbol list names what
 *  to make weak. */
export function ensureLtoWeakRuntime(compiler: string, userArgs: readonly string[], lto: Lto, bitcode: boolean, log?: (line: string) => void): string {
  const native = ensureRuntime(compiler, userArgs, log);
  const flags = runtimeFlags(compiler, userArgs);
  const ltoFlag = bitcode && lto.thin ? '-flto=thin' : '-flto';
  const kind = bitcode ? (lto.thin ? 'thin' : 'full') : 'gcc';
  const dir = path.join(cacheRoot(), `${cacheKey(compiler, [...flags, ltoFlag, kind])}-lto`);
  const made = { weak: path.join(dir, `memwrap-weak-lto-${kind}.o`) };
  cached(dir, made, (work) => {
    log?.(`building the ${kind} LTO runtime for ${compiler} ${flags.join(' ')} in ${dir}`);
    const listed = run(toolFor(compiler, 'nm'), ['-g', '--defined-only', '-P', native.strong], 'listing the runtime\'s symbols');
    const names = [...new Set(listed.split('\n').map((line) => line.split(' ')[0]!).filter((name) => name !== ''))];
    const pragmas = path.join(work, 'memwrap-weak.h');
    writeFileSync(pragmas, weakPragmas(names));
    const parts = compileRuntime(compiler, flags, work, [ltoFlag, '-include', pragmas]);
    if (bitcode) run(toolFor(compiler, 'llvm-link'), [...parts, '-o', path.join(work, path.basename(made.weak))], 'combining the LTO runtime');
    else run(compiler, [...flags, '-flto', '-r', '-nostdlib', '-flinker-output=rel', ...parts, '-o', path.join(work, path.basename(made.weak))], 'combining the LTO runtime');
  });
  return made.weak;
}

export interface SharedRuntime {
  /** The runtime as a shared library (soname libmemwrap.so), which instrumented shared objects depend on. */
  library: string;
  /** Its folder, for the objects' RUNPATH. */
  dir: string;
  /** Linked into each such object: hands the object's units and statics to the process's runtime. */
  module: string;
}

/** The runtime for shared objects linked through cc-memwrap, built on first need (most builds never link one).
 *  Position-independent, and without the interposer: a host that is not instrumented has loaded libc's malloc
 *  before it, so an interposer there would never be called. */
export function ensureSharedRuntime(compiler: string, userArgs: readonly string[], log?: (line: string) => void): SharedRuntime {
  const flags = [...runtimeFlags(compiler, userArgs).filter((f) => !/^(-DMW_INTERPOSE=0|-f(no-)?(pic|PIC|pie|PIE))$/.test(f)), '-fPIC', '-DMW_INTERPOSE=0'];
  const dir = path.join(cacheRoot(), `${cacheKey(compiler, flags)}-shared`);
  const made = { library: path.join(dir, 'libmemwrap.so'), module: path.join(dir, 'memwrap-module.o') };
  cached(dir, made, (work) => {
    log?.(`building the shared runtime for ${compiler} ${flags.join(' ')} in ${dir}`);
    const parts = compileRuntime(compiler, flags, work);
    run(compiler, [...flags, '-shared', '-Wl,-soname,libmemwrap.so', ...parts, '-pthread', '-o', path.join(work, 'libmemwrap.so')], 'linking the shared runtime');
    const module = path.join(runtimeDir, 'module', 'mw-module.c');
    run(compiler, [...flags, '-O2', '-g', '-c', `-I${runtimeDir}`, module, '-o', path.join(work, 'memwrap-module.o')], 'building the runtime');
  });
  return { ...made, dir };
}

/** The dynamic-symbol list a program linked through cc-memwrap exports: the runtime's symbols, so an
 *  instrumented shared object loaded later (dlopen) binds to the program's runtime rather than start its own. */
export const runtimeExportsList = path.join(runtimeDir, 'exports.list');
