// Reads a gcc/clang command line: which arguments are inputs (and in which
// language), what the command produces (link, object, assembly, preprocessed
// text), and which options belong to which stage, so the driver can run the
// stages itself and hand every option to the stage that understands it.
import path from 'node:path';

/** Options whose value is the next argument (GCC and clang spellings). */
const SEPARATE_VALUE = new Set([
  '-o', '-I', '-D', '-U', '-include', '-imacros', '-isystem', '-idirafter', '-iprefix',
  '-iwithprefix', '-iwithprefixbefore', '-iquote', '-isysroot', '-imultilib', '-x', '-MF',
  '-MT', '-MQ', '-L', '-l', '-Xlinker', '-Xassembler', '-Xpreprocessor', '-Xclang', '-u',
  '-T', '-aux-info', '--param', '-z', '-target', '-arch', '-B', '-mllvm', '-include-pch',
  '-dumpbase', '-dumpdir', '-dumpbase-ext', '-G', '-e', '--sysroot', '-specs', '--specs',
]);

/** Options that only the preprocessor uses (dropped when compiling the .i). */
const PREPROCESSOR_ONLY_SEPARATE = new Set([
  '-I', '-D', '-U', '-include', '-imacros', '-isystem', '-idirafter', '-iprefix',
  '-iwithprefix', '-iwithprefixbefore', '-iquote', '-Xpreprocessor', '-include-pch',
]);
const PREPROCESSOR_ONLY_JOINED = /^(-I|-D|-U|-isystem|-idirafter|-iquote|-iprefix|-Wp,)./;
const PREPROCESSOR_ONLY_FLAGS = new Set(['-nostdinc', '-undef', '-C', '-CC', '-P', '-H', '-trigraphs']);

/** Options that only the linker uses (dropped from preprocess and compile). */
const LINKER_ONLY_SEPARATE = new Set(['-l', '-L', '-Xlinker', '-u', '-T', '-z', '-e']);
const LINKER_ONLY_JOINED = /^(-l.|-L.|-Wl,|-T.)/;
const LINKER_ONLY_FLAGS = new Set([
  '-shared', '-static', '-static-libgcc', '-static-pie', '-rdynamic', '-s', '-nostdlib',
  '-nostartfiles', '-nodefaultlibs', '-nolibc', '-pie', '-no-pie', '-r',
]);

/** Dependency-file options (we hand them to the preprocessing step). */
const DEP_SEPARATE = new Set(['-MF', '-MT', '-MQ']);
const DEP_FLAGS = new Set(['-MD', '-MMD', '-MP', '-MG']);

export type Mode = 'link' | 'compile' | 'assemble' | 'preprocess' | 'syntax-only' | 'no-input';

export interface Input {
  /** Index of the argument in `args`. */
  index: number;
  path: string;
  /** Language from -x, or null when it comes from the file name. */
  explicitLanguage: string | null;
  /** Effective kind: what the compiler will do with it. */
  kind: 'c' | 'preprocessed-c' | 'other-source' | 'linker-input' | 'stdin';
}

export interface Command {
  compiler: string;
  args: string[];
  inputs: Input[];
  mode: Mode;
  /** Argument of -o, with its index, or null. */
  output: { path: string; index: number } | null;
  /** What a link makes: a program, a shared object (-shared) or a relocatable object (-r). */
  links: 'program' | 'shared' | 'relocatable';
  dependencies: { md: boolean; mmd: boolean; mf: string | null; targets: string[] };
}

const C_EXTENSIONS = new Set(['.c']);
const PREPROCESSED_C = new Set(['.i']);
const OTHER_SOURCES = new Set([
  '.cc', '.cp', '.cxx', '.cpp', '.CPP', '.c++', '.C', '.ii', '.h', '.hh', '.hpp', '.H',
  '.s', '.S', '.sx', '.m', '.mi', '.M', '.mm', '.f', '.for', '.f90', '.F', '.go', '.d',
  '.ads', '.adb', '.cu', '.cl', '.m2', '.rs',
]);

function kindFor(file: string, explicitLanguage: string | null): Input['kind'] {
  if (file === '-') return 'stdin';
  if (explicitLanguage && explicitLanguage !== 'none') {
    if (explicitLanguage === 'c') return 'c';
    if (explicitLanguage === 'cpp-output') return 'preprocessed-c';
    return 'other-source';
  }
  const ext = path.extname(file);
  if (C_EXTENSIONS.has(ext)) return 'c';
  if (PREPROCESSED_C.has(ext)) return 'preprocessed-c';
  if (OTHER_SOURCES.has(ext)) return 'other-source';
  return 'linker-input';
}

/** Classifies a compiler command line (response files already expanded). */
export function parseCommand(compiler: string, args: readonly string[]): Command {
  const inputs: Input[] = [];
  let language: string | null = null;
  let output: Command['output'] = null;
  const flags = new Set<string>();
  const deps: Command['dependencies'] = { md: false, mmd: false, mf: null, targets: [] };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '-' ) {
      inputs.push({ index: i, path: arg, explicitLanguage: language, kind: 'stdin' });
      continue;
    }
    if (!arg.startsWith('-')) {
      inputs.push({ index: i, path: arg, explicitLanguage: language, kind: kindFor(arg, language) });
      continue;
    }
    if (SEPARATE_VALUE.has(arg)) {
      const value = args[i + 1] ?? '';
      if (arg === '-o') output = { path: value, index: i + 1 };
      if (arg === '-x') language = value;
      if (arg === '-MF') deps.mf = value;
      if (arg === '-MT' || arg === '-MQ') deps.targets.push(value);
      i++;
      continue;
    }
    if (arg.startsWith('-x') && arg.length > 2) language = arg.slice(2);
    else if (arg.startsWith('-o') && arg.length > 2) output = { path: arg.slice(2), index: i };
    else if (arg.startsWith('-MF') && arg.length > 3) deps.mf = arg.slice(3);
    flags.add(arg);
  }
  deps.md = flags.has('-MD');
  deps.mmd = flags.has('-MMD');
  let mode: Mode;
  if (flags.has('-E') || ((flags.has('-M') || flags.has('-MM')) && !deps.md && !deps.mmd)) mode = 'preprocess';
  else if (flags.has('-fsyntax-only')) mode = 'syntax-only';
  else if (inputs.length === 0) mode = 'no-input';
  else if (flags.has('-S')) mode = 'assemble';
  else if (flags.has('-c')) mode = 'compile';
  else mode = 'link';
  const links = flags.has('-r') ? 'relocatable' : flags.has('-shared') ? 'shared' : 'program';
  return { compiler, args: [...args], inputs, mode, output, links, dependencies: deps };
}

/** Arguments that are neither inputs nor -o/-x (and their values). */
function optionArgs(command: Command): Array<{ arg: string; value?: string }> {
  const inputIndexes = new Set(command.inputs.map((input) => input.index));
  const out: Array<{ arg: string; value?: string }> = [];
  for (let i = 0; i < command.args.length; i++) {
    if (inputIndexes.has(i)) continue;
    const arg = command.args[i]!;
    if (SEPARATE_VALUE.has(arg)) {
      const value = command.args[i + 1] ?? '';
      i++;
      if (arg === '-o' || arg === '-x') continue;
      out.push({ arg, value });
      continue;
    }
    if ((arg.startsWith('-o') || arg.startsWith('-x')) && arg.length > 2) continue;
    out.push({ arg });
  }
  return out;
}

function flatten(options: Array<{ arg: string; value?: string }>): string[] {
  return options.flatMap((o) => (o.value === undefined ? [o.arg] : [o.arg, o.value]));
}

const STAGE_FLAGS = new Set(['-c', '-S', '-E', '-M', '-MM', '-fsyntax-only']);

function isLinkerOnly(o: { arg: string; value?: string }): boolean {
  if (o.value !== undefined) return LINKER_ONLY_SEPARATE.has(o.arg);
  return LINKER_ONLY_FLAGS.has(o.arg) || LINKER_ONLY_JOINED.test(o.arg);
}

function isDependencyOption(o: { arg: string; value?: string }): boolean {
  if (o.value !== undefined) return DEP_SEPARATE.has(o.arg);
  return DEP_FLAGS.has(o.arg) || /^-M[FTQ]./.test(o.arg);
}

function isPreprocessorOnly(o: { arg: string; value?: string }): boolean {
  if (o.value !== undefined) return PREPROCESSOR_ONLY_SEPARATE.has(o.arg);
  return PREPROCESSOR_ONLY_FLAGS.has(o.arg) || PREPROCESSOR_ONLY_JOINED.test(o.arg);
}

/** Options for `cc -E` of one C source: everything that shapes preprocessing,
 *  without stage, output, dependency or linker options (the driver adds its
 *  own), without -P, which would drop the linemarkers we rely on, and without
 *  -C/-CC (the driver always keeps comments, and -CC would put them inside
 *  macro expansions). */
export function preprocessOptions(command: Command): string[] {
  return flatten(
    optionArgs(command).filter(
      (o) =>
        !STAGE_FLAGS.has(o.arg) &&
        !isLinkerOnly(o) &&
        !isDependencyOption(o) &&
        o.arg !== '-P' &&
        o.arg !== '-C' &&
        o.arg !== '-CC' &&
        !o.arg.startsWith('-save-temps'),
    ),
  );
}

/** Options for compiling the rewritten .i: no preprocessor, linker,
 *  dependency or stage options (clang warns about unused ones). */
export function compileOptions(command: Command): string[] {
  return flatten(
    optionArgs(command).filter(
      (o) => !STAGE_FLAGS.has(o.arg) && !isLinkerOnly(o) && !isDependencyOption(o) && !isPreprocessorOnly(o),
    ),
  );
}

/** Options for compiling one non-C input as the user asked (no other inputs). */
export function plainSingleInputOptions(command: Command): string[] {
  return flatten(optionArgs(command));
}

/** The same without dependency options: for compiling the original after the
 *  preprocessing step already wrote the dependency file. Left alone, -MT, -MQ
 *  or -MF without -MD is an error ("to generate dependencies you must specify
 *  either -M or -MM"). */
export function originalCompileOptions(command: Command): string[] {
  return flatten(optionArgs(command).filter((o) => !isDependencyOption(o)));
}

/** The link command: the user's arguments with every instrumented C source
 *  replaced, in place, by its object, and -x kept only around the inputs
 *  that need it. */
export function linkArguments(command: Command, objectFor: Map<number, string>): string[] {
  const byIndex = new Map(command.inputs.map((input) => [input.index, input]));
  const out: string[] = [];
  for (let i = 0; i < command.args.length; i++) {
    const arg = command.args[i]!;
    const input = byIndex.get(i);
    if (input) {
      const object = objectFor.get(i);
      if (object) out.push(object);
      else if (input.explicitLanguage && input.explicitLanguage !== 'none') out.push('-x', input.explicitLanguage, input.path, '-x', 'none');
      else out.push(input.path);
      continue;
    }
    if (arg === '-x') {
      i++;
      continue;
    }
    if (arg.startsWith('-x') && arg.length > 2) continue;
    if (SEPARATE_VALUE.has(arg)) {
      out.push(arg, command.args[i + 1] ?? '');
      i++;
      continue;
    }
    out.push(arg);
  }
  return out;
}

/** Dependency options for the preprocessing step of one source: the user's
 *  -MD/-MMD/-MP/-MG/-MT/-MQ, plus the file and target GCC itself would have
 *  used (run on a temporary .i, it would otherwise name those instead). */
export function dependencyOptions(command: Command, source: string, target: string): string[] {
  const { md, mmd, mf, targets } = command.dependencies;
  if (!md && !mmd) return [];
  const stem = (p: string) => p.slice(0, p.length - path.extname(p).length);
  const file = mf ?? (command.output ? stem(command.output.path) : path.basename(stem(source))) + '.d';
  const userOptions = flatten(optionArgs(command).filter((o) => isDependencyOption(o) && o.arg !== '-MF' && !o.arg.startsWith('-MF')));
  return [...userOptions, '-MF', file, ...(targets.length > 0 ? [] : ['-MQ', target])];
}

/** The object or assembly file GCC would write for `source` without -o. */
export function defaultOutputFor(source: string, mode: 'compile' | 'assemble'): string {
  const base = path.basename(source, path.extname(source));
  return base + (mode === 'compile' ? '.o' : '.s');
}
