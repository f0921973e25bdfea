// The `cc-memwrap` command: a compiler wrapper, plus subcommands that read
// the traces instrumented programs write.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { cacheRoot, runtimeDir } from '../instrumenter/runtime-build.js';
import { packageRoot } from '../package-root.js';

function version(): string {
  const pkg = JSON.parse(readFileSync(path.join(packageRoot, 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

/** The version, and where what it uses and makes lives: an installed package's folder may be read-only, so the
 *  runtime is compiled into a per-user cache instead. */
function versionText(): string {
  return [
    `cc-memwrap ${version()}`,
    `runtime   ${runtimeDir}  (C sources, compiled with your compiler on first use)`,
    `cache     ${cacheRoot()}  (the compiled runtime, per compiler and ABI; MEMWRAP_CACHE_DIR moves it)`,
    `samples   ${path.join(packageRoot, 'samples')}  (the lessons)`,
    `docs      ${path.join(packageRoot, 'docs')}`,
    '',
  ].join('\n');
}

/** The help text; the driver's part is loaded only here and for a compile, not for the trace subcommands. */
async function helpText(): Promise<string> {
  const { DRIVER_HELP } = await import('../instrumenter/driver.js');
  return `cc-memwrap — see where a C program's memory goes, line by line.

Usage:
  cc-memwrap [--mw-…] <compiler> <args…>   compile and link like <compiler>,
                                           with C sources instrumented
  cc-memwrap report <trace> [options]      what the run allocated, freed, leaked
  cc-memwrap export <trace> --format massif|csv   the timeline for ms_print or
                                           a spreadsheet
  cc-memwrap dump <trace>                  every record of a trace as text
  cc-memwrap view <trace>                  the viewer: a bar chart linked to
                                           the source (Electron or a browser)
  cc-memwrap --help | --version

Examples:
  cc-memwrap gcc -O2 prog.c -o prog && ./prog   # writes prog.<pid>.mwtrace
  make CC="cc-memwrap gcc"
  cmake -DCMAKE_C_COMPILER_LAUNCHER=cc-memwrap ..
  cc-memwrap report prog.1234.mwtrace

${DRIVER_HELP}
  MEMWRAP_TRACE=path     where an instrumented program writes its trace
                         (%p becomes the process id; default
                         <program>.<pid>.mwtrace in the working directory)
Every option and variable: docs/using.md, under ${packageRoot}`;
}

async function main(argv: string[]): Promise<number> {
  const first = argv[0];
  if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
    process.stdout.write((await helpText()) + '\n');
    return first === undefined ? 2 : 0;
  }
  if (first === '--version' || first === '-V') {
    process.stdout.write(versionText());
    return 0;
  }
  if (first === 'report') return (await import('../cli/report.js')).runReport(argv.slice(1));
  if (first === 'dump') return (await import('../cli/dump.js')).runDump(argv.slice(1));
  if (first === 'export') return (await import('../cli/export.js')).runExport(argv.slice(1));
  if (first === 'view') return (await import('../cli/view.js')).runView(argv.slice(1));
  return (await import('../instrumenter/driver.js')).runDriver(argv);
}

main(process.argv.slice(2)).then(
  (status) => {
    process.exitCode = status;
  },
  (error: unknown) => {
    process.stderr.write(`cc-memwrap: internal error: ${(error as Error).stack ?? String(error)}\n`);
    process.exitCode = 70;
  },
);
