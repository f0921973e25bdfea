// The compiler driver: `cc-memwrap <compiler> <args…>` behaves like
// `<compiler> <args…>`, except that every C source goes through
// preprocess → rewrite → compile, and links get the runtime.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  compileOptions,
  defaultOutputFor,
  dependencyOptions,
  linkArguments,
  originalCompileOptions,
  parseCommand,
  plainSingleInputOptions,
  preprocessOptions,
  type Command,
  type Input,
} from './args.js';
import { doesNotCompileMessage, notInstrumentedMessage } from './fallback-messages.js';
import { expandResponseFiles } from './response-files.js';
import { isBitcode, ltoOf, toolFor, type Lto } from './lto.js';
import { abiFlags, ensureLtoWeakRuntime, ensureRuntime, ensureSharedRuntime, headerPath, objcopyFor, relocatableLink, runtimeDir, runtimeExportsList, TARGET_FLAGS } from './runtime-build.js';
import { rewriteTranslationUnit, type RewriteResult } from './rewrite.js';
import { fileDigest } from './source-digest.js';
import { CallFilter, NO_CALLS_FLAG, parseNoCalls } from './left-out.js';
import { embedStackUnit, probeStackFlags, readStackUnit, sideFileFor, type StackFlags } from './stack-usage.js';
import { applyFirmwareFlag, BEFORE_RAM_FUNCTIONS, firmwareLibc, firmwareSizes, firmwareWraps, isFirmwareBuild, linkObjectSource, type FirmwareFlags } from './firmware.js';
import { boundLeafTrees, boundSectionBytes } from './call-bounds.js';
import { knownCalls, type KnownCalls } from './known-calls.js';
import { BOUND_SECTION } from './sites.js';
import { CALLS_FLAG, callsModeOf, parseCallsMode, probeLibraryMeasured, type CallsMode } from './calls-mode.js';

export interface DriverOptions {
  /** Fail instead of building the original when the instrumented unit does not compile. */
  strict: boolean;
  /** Print every command run. */
  verbose: boolean;
  /** Keep the temporary files (preprocessed and rewritten .i) and say where. */
  keepTemps: boolean;
  /** Record branch outcomes (for leak causes). */
  branches: boolean;
  /** Also compile each untouched source and show its diagnostics and status instead of the instrumented unit's. */
  originalDiagnostics: boolean;
  /** Functions whose calls are not recorded (`--mw-no-calls=`), or null. */
  noCalls: CallFilter | null;
  /** Firmware: the runtime's buffer, shadow stack and block table as `--mw-buffer=` & co. asked (else defaults). */
  firmware: FirmwareFlags;
  /** `--mw-calls=`: every call, leaf call trees summarised, or that and calls written only with heap work inside or at a
   *  new depth; null: by the optimisation level. */
  calls: CallsMode | null;
}

const PREFIX = 'cc-memwrap';

function say(message: string): void {
  process.stderr.write(`${PREFIX}: ${message}\n`);
}

/** A finished child, as spawnSync would report it; stderr holds its diagnostics only when they were captured. */
interface Finished {
  status: number | null;
  signal: NodeJS.Signals | null;
  stderr: Buffer;
  error?: Error;
}

/** Signals the wrapper passes on to the compiler it runs, and then stops for (cleaning up its temporary files). */
const FORWARDED: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** Thrown out of a build that a signal stopped: the wrapper removes its temporaries and exits as the compiler would. */
class Interrupted extends Error {
  constructor(readonly signal: NodeJS.Signals) {
    super(`stopped by ${signal}`);
  }
}

/** 128 + the signal's number: the status a shell reports for a process that died of it. */
function signalStatus(signal: NodeJS.Signals): number {
  const signals = os.constants.signals as Record<string, number>;
  return 128 + (signals[signal] ?? 1);
}

/** Exit status of a finished child, the way a shell reports it. */
function statusOf(result: Finished): number {
  if (result.error) return 127;
  if (result.status !== null) return result.status;
  return result.signal ? signalStatus(result.signal) : 129;
}

/** An fs error on an output path in a few words, as a compiler says it ("no such directory"). */
function describeOutputError(e: NodeJS.ErrnoException): string {
  const words: Record<string, string> = {
    ENOENT: 'no such directory',
    ENOTDIR: 'a part of the path is not a directory',
    EISDIR: 'is a directory',
    EACCES: 'permission denied',
    EPERM: 'permission denied',
    EROFS: 'read-only file system',
    ENOSPC: 'no space left on device',
    EDQUOT: 'disk quota exceeded',
  };
  return words[e.code ?? ''] ?? e.code ?? e.message;
}

class Driver {
  private tempDir: string | null = null;
  /** Frame-size flags the compiler accepts; undefined until first needed. */
  private stackFlags: StackFlags | undefined;
  /** The compiler or tool running now, to pass a signal on to. */
  private child: ChildProcess | null = null;
  /** The first signal that stopped the build, or null. */
  private stopped: NodeJS.Signals | null = null;
  /** Content hashes of the source files read so far (a header shared by several units is read once). */
  private readonly digests = new Map<string, string | null>();
  /** The calls a summarised tree may make outside its unit, on this target; undefined until first needed. */
  private known: KnownCalls | undefined;

  constructor(
    private readonly command: Command,
    private readonly options: DriverOptions,
    /** The arguments as given, response files unexpanded, for pass-through. */
    private readonly givenArgs: readonly string[],
  ) {}

  private temp(name: string): string {
    this.tempDir ??= mkdtempSync(path.join(os.tmpdir(), 'cc-memwrap-'));
    return path.join(this.tempDir, name);
  }

  cleanup(): void {
    if (!this.tempDir) return;
    if (this.options.keepTemps) say(`kept temporary files in ${this.tempDir}`);
    else rmSync(this.tempDir, { recursive: true, force: true });
  }

  /** A signal came: pass it on to the running child; the build stops once the child is gone. */
  stop(signal: NodeJS.Signals): void {
    this.stopped ??= signal;
    this.child?.kill(signal);
  }

  /** Runs a child (stdin and stdout inherited, stderr too unless captured); rejects with Interrupted after a signal. */
  private async spawnChild(command: string, args: string[], capture: boolean): Promise<Finished> {
    if (this.stopped) throw new Interrupted(this.stopped);
    const finished = await new Promise<Finished>((resolve) => {
      const child = spawn(command, args, { stdio: ['inherit', 'inherit', capture ? 'pipe' : 'inherit'] });
      this.child = child;
      const err: Buffer[] = [];
      child.stderr?.on('data', (d: Buffer) => err.push(d));
      let failed: Error | undefined;
      child.on('error', (error) => {
        failed = error;
        // A child that never started emits no 'close' of its own on every Node version.
        if (child.pid === undefined) resolve({ status: null, signal: null, stderr: Buffer.concat(err), error });
      });
      child.on('close', (status, signal) => resolve({ status, signal, stderr: Buffer.concat(err), ...(failed ? { error: failed } : {}) }));
    });
    this.child = null;
    // A child killed by one of these was most likely stopped with us (Ctrl-C reaches the whole process group), and
    // the child's close can come before our own handler runs: stop here rather than go on to a fallback compile.
    if (finished.signal !== null && FORWARDED.includes(finished.signal)) this.stopped ??= finished.signal;
    if (this.stopped) throw new Interrupted(this.stopped);
    return finished;
  }

  /** Runs the compiler; diagnostics go straight to the user unless captured. */
  private async cc(args: string[], capture = false): Promise<Finished> {
    if (this.options.verbose) say(`running: ${this.command.compiler} ${args.join(' ')}`);
    const result = await this.spawnChild(this.command.compiler, args, capture);
    if (result.error) say(`cannot run ${this.command.compiler}: ${result.error.message}`);
    return result;
  }

  /** Runs another tool of the toolchain (llvm-link); its diagnostics go straight to the user. */
  private async tool(command: string, args: string[]): Promise<Finished> {
    if (this.options.verbose) say(`running: ${command} ${args.join(' ')}`);
    const result = await this.spawnChild(command, args, false);
    if (result.error) say(`cannot run ${command}: ${result.error.message}`);
    return result;
  }

  /** The whole command, unchanged. */
  async passThrough(): Promise<number> {
    return statusOf(await this.cc([...this.givenArgs]));
  }

  async run(): Promise<number> {
    const { mode, inputs } = this.command;
    const sized = Object.keys(this.options.firmware);
    if (sized.length > 0 && !this.firmware) {
      say(`--mw-${sized.map((k) => ({ bufferBytes: 'buffer', frames: 'frames', blocks: 'blocks' })[k]).join(', --mw-')} size the runtime of firmware (a bare-metal compiler such as arm-none-eabi-gcc); ${this.command.compiler} builds for this host, whose runtime writes straight to a file`);
      return 2;
    }
    const touchesC = inputs.some((input) => input.kind === 'c');
    if (inputs.some((input) => input.kind === 'stdin')) return this.passThrough();
    if (mode === 'preprocess' || mode === 'syntax-only' || mode === 'no-input') return this.passThrough();
    if (mode === 'compile' || mode === 'assemble') {
      if (this.command.output && inputs.length > 1) return this.passThrough(); // the compiler's own error
      for (const input of inputs) {
        const status = input.kind === 'c' ? await this.compileC(input, mode, true) : await this.compilePlain(input, mode);
        if (status !== 0) return status;
      }
      return 0;
    }
    // Link: instrument each C source to a private object, then link with the runtime.
    const objects = new Map<number, string>();
    if (touchesC) {
      let n = 0;
      for (const input of inputs.filter((i) => i.kind === 'c')) {
        const object = this.temp(`${n++}-${path.basename(input.path, path.extname(input.path))}.o`);
        const status = await this.compileC(input, 'compile', false, object);
        if (status !== 0) return status;
        objects.set(input.index, object);
      }
    }
    const extra = await this.runtimeLinkArguments();
    if (extra === null) return 1;
    return statusOf(await this.cc([...linkArguments(this.command, objects), ...extra]));
  }

  /** What a link adds: a program gets the runtime and exports its symbols (so an instrumented shared object it
   *  loads later uses this runtime); a shared object depends on libmemwrap.so instead, so that a host that is not
   *  instrumented can load it; a relocatable (-r) link gets nothing. Null when the runtime cannot be built. */
  private async runtimeLinkArguments(): Promise<string[] | null> {
    const args = this.command.args;
    if (this.command.links === 'relocatable') return [];
    if (this.firmware) return this.firmwareLinkArguments();
    if (this.command.links === 'shared') {
      const shared = this.built(() => ensureSharedRuntime(this.command.compiler, args, this.options.verbose ? say : undefined));
      return shared && [shared.module, shared.library, `-Wl,-rpath,${shared.dir}`, '-pthread'];
    }
    const runtime = this.runtime();
    if (!runtime) return null;
    const exported = args.some((a) => a === '-static' || a === '-static-pie') ? [] : [`-Wl,--dynamic-list=${runtimeExportsList}`];
    return [runtime.strong, '-pthread', ...exported];
  }

  /** A firmware link: the target's runtime, this link's object (the firmware's name and path, the runtime's memory
   *  at the sizes asked for) and the linker's --wrap of the C library's allocator and _exit (firmware.ts). */
  private async firmwareLinkArguments(): Promise<string[] | null> {
    const runtime = this.runtime();
    if (!runtime) return null;
    const output = this.command.output?.path ?? 'a.out';
    const source = this.temp('mw-link.c');
    writeFileSync(source, linkObjectSource(output, process.cwd(), firmwareSizes(this.options.firmware)));
    const object = this.temp('mw-link.o');
    const built = await this.cc([...abiFlags(this.command.args), ...TARGET_FLAGS, `-I${runtimeDir}`, '-O2', '-c', source, '-o', object]);
    if (statusOf(built) !== 0) return null;
    return [runtime.strong, object, ...firmwareWraps(firmwareLibc(this.command.args))];
  }

  /** The functions whose calls are left out: `--mw-no-calls`, and in firmware its start-up before RAM is set up. */
  private callFilter(): CallFilter | null {
    if (!this.firmware) return this.options.noCalls;
    return new CallFilter([...(this.options.noCalls?.patterns ?? []), ...BEFORE_RAM_FUNCTIONS]);
  }

  /** Whether this command builds firmware (a bare-metal compiler or C library, firmware.ts). */
  private get firmware(): boolean {
    return isFirmwareBuild(this.command.compiler, this.command.args);
  }

  private runtime(): ReturnType<typeof ensureRuntime> | null {
    return this.built(() => ensureRuntime(this.command.compiler, this.command.args, this.options.verbose ? say : undefined));
  }

  /** Runs a runtime build; its failure is said, and gives null. */
  private built<T>(build: () => T): T | null {
    try {
      return build();
    } catch (error) {
      say((error as Error).message);
      return null;
    }
  }

  /** A non-C input of a -c/-S command, compiled exactly as asked. */
  private async compilePlain(input: Input, mode: 'compile' | 'assemble'): Promise<number> {
    const lang = input.explicitLanguage && input.explicitLanguage !== 'none' ? ['-x', input.explicitLanguage] : [];
    const out = this.command.output ? ['-o', this.command.output.path] : [];
    return statusOf(await this.cc([...plainSingleInputOptions(this.command), ...lang, input.path, ...out]));
  }

  /** One C source: preprocess with our header, rewrite, compile; if only the
   *  rewritten text fails to compile, build the original (or fail in strict). */
  private async compileC(input: Input, mode: 'compile' | 'assemble', standalone: boolean, objectOverride?: string): Promise<number> {
    const output = objectOverride ?? this.command.output?.path ?? defaultOutputFor(input.path, mode);
    const stageFlag = mode === 'compile' ? '-c' : '-S';
    const stem = path.basename(input.path, path.extname(input.path));
    const preprocessed = this.temp(`${stem}.i`);
    const rewritten = this.temp(`${stem}.mw.i`);
    const depTarget = this.command.output?.path ?? (mode === 'compile' ? defaultOutputFor(input.path, 'compile') : output);

    const pre = await this.cc([
      ...preprocessOptions(this.command),
      ...dependencyOptions(this.command, input.path, depTarget),
      // -C keeps comments: GCC reads `/* FALLTHROUGH */` and friends when it
      // compiles the .i, so the rewritten unit warns exactly as the original.
      '-E', '-C', '-include', headerPath, '-x', 'c', input.path, '-o', preprocessed,
    ]);
    if (statusOf(pre) !== 0) return statusOf(pre);

    let rewriteOk = true;
    // Leaf call trees are summarised only where the compiler's frame sizes bound them (an object, not -flto).
    const stack = mode === 'compile' && ltoOf(this.command.args) === null ? this.frameSizeFlags() : null;
    const calls = callsModeOf(this.options.calls, this.command.args);
    const known = stack !== null && calls !== 'all' ? this.knownCalls() : null;
    const rewrite = (exclude: ReadonlySet<string> | null): RewriteResult => {
      const result = rewriteTranslationUnit(readFileSync(preprocessed), {
        headerPath,
        branches: this.options.branches,
        compileDir: process.cwd(),
        noCalls: this.callFilter() ?? undefined,
        hashSource: (file) => this.digestOf(file),
        summarise: known === null || exclude === null ? undefined : { known, exclude, pending: calls === 'heap' },
      });
      writeFileSync(rewritten, result.output);
      return result;
    };
    let leafTrees: RewriteResult['leafTrees'] = null;
    try {
      const result = rewrite(new Set());
      for (const warning of result.warnings) {
        process.stderr.write(`${warning.file}:${warning.line}: warning: ${warning.message} [${PREFIX}]\n`);
      }
      leafTrees = result.leafTrees;
    } catch (error) {
      rewriteOk = false;
      process.stderr.write(`${notInstrumentedMessage(input.path, (error as Error).message)}\n`);
      if (this.options.strict) return 1;
    }

    const flags = compileOptions(this.command);
    // A standalone object is compiled beside the temporaries and joined
    // with the runtime there; only the finished object reaches `output`.
    const embed = standalone && mode === 'compile';
    if (rewriteOk) {
      const target = embed ? this.temp(`${stem}.mw.o`) : output;
      // Only an object compiled among our temporaries gets frame sizes: the
      // compiler writes its side file beside the object.
      // (Not with -flto: gcc then has no frame sizes to give and says so.)
      const compileRewritten = (extra: string[]) => this.cc([...flags, ...extra, ...(stack?.flags ?? []), stageFlag, '-x', 'cpp-output', rewritten, '-o', target], true);
      const finish = async (diagnostics: Buffer | string, extra: string[] = []): Promise<number> => {
        process.stderr.write(diagnostics);
        if (stack) {
          const bounds = await this.boundLeafTrees(leafTrees, target, stack, input.path, rewrite, () => compileRewritten(extra));
          if (bounds === null) return 1;
          this.embedFrameSizes(target, stack, input.path, bounds);
        }
        return embed ? this.embedRuntime(target, output) : 0;
      };
      const compiled = await compileRewritten([]);
      if (statusOf(compiled) === 0) {
        if (!this.options.originalDiagnostics) return finish(compiled.stderr);
        // The optimiser sees the rewritten code, so its flow-dependent warnings (-Wclobbered, frame sizes) and
        // the columns on edited lines can differ: the user asked for the original's word, and its status
        // (with -Werror, a warning only the original has fails the build, as without cc-memwrap).
        const original = await this.compileOriginal(input, stageFlag, this.temp(`${stem}.diagnostics${mode === 'compile' ? '.o' : '.s'}`));
        if (statusOf(original) !== 0) {
          process.stderr.write(original.stderr);
          return statusOf(original);
        }
        return finish(original.stderr);
      }
      // Is it the user's code or ours? Compile the original to find out.
      // An uninstrumented object gets the weak runtime too: otherwise its
      // calls to malloc, linked before an archive of instrumented objects,
      // pull in whichever member carries a copy of the runtime's malloc, and
      // with it that member's other symbols (cJSON's tests #include cJSON.c
      // and link libcjson.a: "multiple definition of cJSON_…").
      const fallbackTarget = embed ? this.temp(`${stem}.original.o`) : output;
      const original = await this.compileOriginal(input, stageFlag, fallbackTarget);
      if (statusOf(original) !== 0) {
        process.stderr.write(original.stderr);
        return statusOf(original);
      }
      if (this.options.strict) {
        process.stderr.write(compiled.stderr);
        say(`error: the instrumented ${input.path} does not compile, although the original does (--mw-strict)`);
        return 1;
      }
      // The rewritten unit is preprocessed text: GCC then also warns where it
      // stays quiet inside macro expansions (-Waddress on cJSON's
      // cJSON_SetNumberValue), and -Werror turns that into a failure. If
      // only warnings failed it, keep the instrumented object and show the
      // user the original's diagnostics, which are the ones their build has.
      const lenient = await compileRewritten(['-Wno-error']);
      if (statusOf(lenient) === 0) return finish(original.stderr, ['-Wno-error']);
      process.stderr.write(`${doesNotCompileMessage(input.path)}\n`);
      process.stderr.write(original.stderr);
      return embed ? this.embedRuntime(fallbackTarget, output) : 0;
    }
    const original = await this.compileOriginal(input, stageFlag, output);
    process.stderr.write(original.stderr);
    return statusOf(original);
  }

  /** The content hash the site table records for a source file (read once per run), or null when it cannot be read. */
  private digestOf(file: Buffer): string | null {
    const key = file.toString('latin1');
    if (!this.digests.has(key)) this.digests.set(key, fileDigest(file));
    return this.digests.get(key)!;
  }

  private frameSizeFlags(): StackFlags {
    if (this.stackFlags === undefined) {
      this.stackFlags = probeStackFlags(this.command.compiler, abiFlags(this.command.args), this.temp('stack-probe.o'));
    }
    return this.stackFlags;
  }

  private knownCalls(): KnownCalls {
    this.known ??= knownCalls(probeLibraryMeasured(this.command.compiler, abiFlags(this.command.args)));
    return this.known;
  }

  /**
   * The stack bounds of the unit's summarised call trees, from the frame sizes just compiled; a tree that cannot be
   * bounded is recorded instead (the unit rewritten and compiled again, rarely more than once), and if that fails the
   * unit records every call. Returns the bounds' section bytes (null: none to write), or null on a failed build.
   */
  private async boundLeafTrees(
    first: RewriteResult['leafTrees'],
    object: string,
    stack: NonNullable<StackFlags>,
    source: string,
    rewrite: (exclude: ReadonlySet<string> | null) => RewriteResult,
    compile: () => Promise<Finished>,
  ): Promise<Buffer | undefined | null> {
    const exclude = new Set<string>();
    for (let leaves = first, round = 0; leaves !== null && leaves.slots.length > 0; round++) {
      const unit = readStackUnit(sideFileFor(object, stack.ext), stack, source);
      const bounds = unit === null ? null : boundLeafTrees(unit, leaves, this.knownCalls());
      if (bounds !== null && bounds.unbounded.size === 0) return boundSectionBytes(bounds.bytes);
      // Unbounded trees are recorded; without frame sizes at all (or after a few rounds), every call.
      if (bounds === null || round === 3) {
        rewrite(null);
        leaves = null;
      } else {
        for (const name of bounds.unbounded) exclude.add(name);
        leaves = rewrite(exclude).leafTrees;
      }
      if (this.options.verbose) say(`${source}: ${bounds === null ? 'no frame sizes' : `unbounded: ${[...bounds.unbounded].join(', ')}`}; compiling again`);
      const again = await compile();
      if (statusOf(again) !== 0) {
        process.stderr.write(again.stderr);
        return null;
      }
    }
    return undefined;
  }

  /** Carries the compiler's frame sizes inside the object (section
   *  .mw_stack, see stack-usage.ts), and writes the stack bounds of its
   *  summarised call trees; a failure costs only the worst-case stack
   *  report (and the bounds, which then read as unknown), never the build. */
  private embedFrameSizes(object: string, stack: NonNullable<StackFlags>, source: string, bounds: Buffer | undefined): void {
    const unit = readStackUnit(sideFileFor(object, stack.ext), stack, source);
    if (unit === null) return;
    const update = bounds === undefined ? [] : [{ section: BOUND_SECTION, file: this.temp(`${path.basename(object)}.bounds`), bytes: bounds }];
    const problem = embedStackUnit(objcopyFor(this.command.compiler), object, unit, this.temp(`${path.basename(object)}.stack.json`), update);
    if (problem !== null) say(`warning: ${problem}; report --stack will not know ${source}${update.length > 0 ? ', nor the stack its summarised calls take' : ''}`);
  }

  private compileOriginal(input: Input, stageFlag: string, output: string): Promise<Finished> {
    return this.cc([...originalCompileOptions(this.command), stageFlag, '-x', 'c', input.path, '-o', output], true);
  }

  /** Makes a -c object self-contained: a link by the plain compiler (CMake's
   *  launcher, libtool) still finds the runtime; copies are weak, so many
   *  objects, or the strong runtime added at a cc-memwrap link, agree on one. */
  private async embedRuntime(object: string, output: string): Promise<number> {
    const combined = this.temp(`${path.basename(object)}.combined.o`);
    const lto = ltoOf(this.command.args);
    const status = lto ? await this.joinLto(object, lto, combined, output) : await this.joinNative(object, combined);
    if (status !== 0) return status;
    try {
      moveFile(combined, output);
    } catch (error) {
      // The compiler's own words for the same mistake (-o nodir/x.o): one line, status 1.
      say(`error: cannot write ${output}: ${describeOutputError(error as NodeJS.ErrnoException)}`);
      return 1;
    }
    return 0;
  }

  private async joinNative(object: string, combined: string): Promise<number> {
    const runtime = this.runtime();
    if (!runtime) return 1;
    return statusOf(await this.cc([...relocatableLink(abiFlags(this.command.args)), object, runtime.weak, '-o', combined]));
  }

  /** Under -flto the object is IR, and so is the weak runtime joined to it, so that the object stays IR and
   *  the final link optimises the whole program (see lto.ts). */
  private async joinLto(object: string, lto: Lto, combined: string, output: string): Promise<number> {
    const bitcode = isBitcode(object);
    const weak = this.built(() => ensureLtoWeakRuntime(this.command.compiler, this.command.args, lto, bitcode, this.options.verbose ? say : undefined));
    if (!weak) return 1;
    const abi = abiFlags(this.command.args);
    if (!bitcode) {
      // -flinker-output=rel: the output is IR again (merged), not machine code; the user's -flto=… and
      // -ffat-lto-objects carry over, so a fat object stays fat.
      const ltoFlags = this.command.args.filter((a) => /^-f(no-)?(fat-)?lto/.test(a));
      return statusOf(await this.cc([...abi, ...ltoFlags, '-r', '-nostdlib', '-flinker-output=rel', object, weak, '-o', combined]));
    }
    const linked = lto.thin ? this.temp(`${path.basename(object)}.linked.bc`) : combined;
    const link = await this.tool(toolFor(this.command.compiler, 'llvm-link'), [object, weak, '-o', linked]);
    if (statusOf(link) !== 0) {
      say(`error: could not join the runtime to ${output} with llvm-link, which must come from the same LLVM as ${this.command.compiler}`);
      return statusOf(link) || 1;
    }
    if (!lto.thin) return 0;
    // llvm-link writes no ThinLTO summary; clang adds it back (at -O0 on IR: no pass changes the code).
    return statusOf(await this.cc([...abi, '-flto=thin', '-O0', '-c', '-x', 'ir', linked, '-o', combined]));
  }
}

/** Moves a finished file into place.  The temporary directory may sit on
 *  another file system than the output (or the output is /dev/null), where a
 *  rename fails with EXDEV: then the bytes are copied instead. */
function moveFile(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    // Not copyFileSync: on failure it unlinks the destination, which for an
    // output of /dev/null would remove the device.
    writeFileSync(to, readFileSync(from));
    rmSync(from, { force: true });
  }
}

export const DRIVER_HELP = `Options of cc-memwrap itself (before or after the compiler name, e.g. in make's
CFLAGS; they are never passed to the compiler):
  --mw-strict     fail when the instrumented file does not compile while the
                  original does (default: warn and build the original)
  --mw-keep       keep the preprocessed and rewritten .i files, say where
  --mw-verbose    print every command cc-memwrap runs
  --mw-branches   also record the outcome of every if, switch case, ?:, &&
                  and || (for report --leak-causes); costs run time, see
                  docs/benchmarks.md
  --mw-no-calls=PATTERN[,PATTERN…]
                  do not record the calls of these functions (names, or
                  files when a pattern has a / or a ., * and ? as in the
                  shell): for tiny functions called too often to record
                  every call; their heap calls are still recorded, their
                  stack counts in their callers', and report says which
                  functions were left out
  --mw-buffer=SIZE, --mw-frames=N, --mw-blocks=N
                  firmware (arm-none-eabi-gcc …): the bytes of records the
                  runtime holds before it writes them out (default 2K), the
                  open frames its shadow stack holds (128) and the live
                  blocks its table holds (64); all three are the runtime's
                  own RAM, which the report shows (docs/target.md)
  --mw-calls=all|leaves|heap
                  all: record every call; leaves: do not record the calls
                  of functions whose whole call tree does no heap work and
                  calls nothing recorded (report and the viewer name them),
                  and bound the stack they take from the compiler's frame
                  sizes; such functions no caller can bound (recursive,
                  called through a pointer or from other files) record a
                  call only when it is deeper than any since the last
                  heap record; heap: that, and any other call is written
                  only when heap work happens inside it or it reaches
                  deeper than any since the last heap record, so heap,
                  leaks and stack stay as with every call and call counts
                  do not (default: heap at -O1 and above, all at -O0/-Og)
  --mw-original-diagnostics
                  also compile each untouched source and show its warnings
                  and exit status instead of the instrumented file's (which
                  can differ in flow-dependent warnings such as -Wclobbered,
                  frame-size warnings, and columns); compiles each file twice
Environment:
  MEMWRAP_STRICT=1       same as --mw-strict
  MEMWRAP_CACHE_DIR=dir  where the built runtime is cached
                         (default: $XDG_CACHE_HOME/cc-memwrap or ~/.cache/cc-memwrap)`;

/** Sets the option a `--mw-…` flag names; false for a flag cc-memwrap does not know. */
function applyOwnFlag(flag: string, options: DriverOptions): boolean {
  if (flag === '--mw-strict') options.strict = true;
  else if (flag === '--mw-verbose') options.verbose = true;
  else if (flag === '--mw-keep') options.keepTemps = true;
  else if (flag === '--mw-branches') options.branches = true;
  else if (flag === '--mw-original-diagnostics') options.originalDiagnostics = true;
  else if (flag.startsWith(CALLS_FLAG)) options.calls = parseCallsMode(flag.slice(CALLS_FLAG.length));
  else if (applyFirmwareFlag(flag, options.firmware)) return true;
  else if (flag.startsWith(NO_CALLS_FLAG)) {
    // Given twice (CFLAGS and the command line), the lists add up.
    const patterns = parseNoCalls(flag.slice(NO_CALLS_FLAG.length));
    options.noCalls = new CallFilter([...(options.noCalls?.patterns ?? []), ...patterns]);
  } else return false;
  return true;
}

/**
 * Takes cc-memwrap's own `--mw-…` flags out of a compiler command line, wherever they stand: make and CMake put
 * them in CFLAGS, after the compiler's name. Returns the rest, or the first unknown `--mw-` flag.
 */
function takeOwnFlags(args: readonly string[], options: DriverOptions): { rest: string[] } | { unknown: string } {
  const rest: string[] = [];
  for (const arg of args) {
    if (!arg.startsWith('--mw-')) rest.push(arg);
    else if (!applyOwnFlag(arg, options)) return { unknown: arg };
  }
  return { rest };
}

function unknownFlag(flag: string, compiler: string): number {
  say(`unknown option ${flag} (see cc-memwrap --help); it is not passed to ${compiler}`);
  return 2;
}

/** Runs `cc-memwrap [--mw-…] <compiler> <args…>` (our flags may also stand among the args); returns the exit status. */
export async function runDriver(argv: readonly string[]): Promise<number> {
  const options: DriverOptions = {
    strict: process.env.MEMWRAP_STRICT === '1',
    verbose: false,
    keepTemps: false,
    branches: false,
    originalDiagnostics: false,
    noCalls: null,
    firmware: {},
    calls: null,
  };
  let i = 0;
  try {
    for (; i < argv.length && argv[i]!.startsWith('--mw-'); i++) {
      if (!applyOwnFlag(argv[i]!, options)) {
        say(`unknown option ${argv[i]!} (see cc-memwrap --help)`);
        return 2;
      }
    }
  } catch (error) {
    say((error as Error).message);
    return 2;
  }
  const compiler = argv[i];
  if (!compiler) {
    say('no compiler given: use cc-memwrap <compiler> <args…>, e.g. cc-memwrap gcc prog.c -o prog');
    return 2;
  }
  let args: string[];
  let given: string[];
  try {
    const inline = takeOwnFlags(argv.slice(i + 1), options);
    if ('unknown' in inline) return unknownFlag(inline.unknown, compiler);
    const expanded = expandResponseFiles(inline.rest);
    const fromFiles = takeOwnFlags(expanded, options);
    if ('unknown' in fromFiles) return unknownFlag(fromFiles.unknown, compiler);
    args = fromFiles.rest;
    // Pass-through hands the compiler the arguments as given, response files unexpanded, unless one of those
    // files held our flags: then it gets the expanded arguments without them.
    given = fromFiles.rest.length === expanded.length ? inline.rest : args;
  } catch (error) {
    say((error as Error).message);
    return 2;
  }
  const driver = new Driver(parseCommand(compiler, args), options, given);
  // Ctrl-C, a make killing its jobs: the compiler gets the signal too, the temporaries go, the status is the signal's.
  const onSignal = (signal: NodeJS.Signals): void => driver.stop(signal);
  for (const s of FORWARDED) process.on(s, onSignal);
  try {
    return await driver.run();
  } catch (error) {
    if (error instanceof Interrupted) return signalStatus(error.signal);
    throw error;
  } finally {
    driver.cleanup();
    for (const s of FORWARDED) process.off(s, onSignal);
  }
}
