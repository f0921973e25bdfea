// `cc-memwrap view <trace>`: opens the viewer on a trace: the Electron app where it is installed, else the same renderer served on 127.0.0.1 with its URL printed.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { BudgetError, parseBudgets, type Budgets } from '../analysis/budgets.js';
import { packageRoot } from '../package-root.js';
import { defaultRecentFile, RecentList } from '../host/recent.js';
import { startServer, type RunningServer, type ServerOptions } from '../host/server.js';
import { describeReadError } from '../host/read-errors.js';
import { TraceFile } from '../host/trace-file.js';
import { TraceOpenError, TraceSession, type SessionOptions } from '../host/trace-session.js';
import { useIndex } from '../host/index-cache.js';
import { INDEX_WORKERS, workersDoNotFit } from '../host/address-space.js';
import { processIo, progressLine, type CliIo } from './io.js';
import { namesSeveral, traceFiles } from './report-many.js';

/** The most traces `view` opens as lanes. */
export const MAX_LANES = 64;

export const VIEW_HELP = `Usage: cc-memwrap view <trace> [options]
       cc-memwrap view <trace> <trace>… | <folder> [options]

Opens the viewer on a trace (.mwtrace): memory over time as a bar chart,
every bar linked to its source line, every free to its allocation.
With Electron installed (npm's optional dependency) it opens the desktop
app; otherwise, or with --browser, it serves the same viewer on 127.0.0.1
and prints the address to open in a browser (Ctrl-C stops it).

Options:
  --browser           serve on 127.0.0.1 even when Electron is installed
  --port N            port for --browser (default: a free one)
  --source-root DIR   read source files from DIR instead of the run's
                      recorded working directory (for a moved tree). Without
                      it a file is shown only when its content is what the
                      build recorded, so a trace someone sends you cannot
                      show you your own files; with it, files under DIR are
                      shown also when the trace records no content hash (an
                      older cc-memwrap's trace) or when they changed since
                      the build (the source pane says so)
  --budget SPEC       budgets drawn on the chart, e.g. heap=8K,stack=2K
                      (default: the memwrap.json beside the program)
  --compare B         compare the trace with B (before and after a fix):
                      both charts one above the other on the same axes
                      (events in order from 0 to the longer run's end, one
                      byte scale for stack and static, one for heap), and
                      the differences of \`report A --compare B\` listed
                      under them; always served to a browser
  -h, --help          this text

Several traces, or a folder of them (the processes of one run: a parent and
the children it forked, MPI ranks), open as lanes: one chart per process,
stacked, all on one x axis of wall time (each trace's start time plus its
events' times), so a child forked later starts further right; zooming or
panning one lane moves them all, and a click on a lane opens that trace in
the viewer. At most ${MAX_LANES} traces; always served to a browser.

A trace over 4 MiB (or any, with MEMWRAP_VIEW_INDEX=1; =0: never) opens
through its index, kept with what goes with it in one folder,
<trace>.mwcache, beside it (or in ~/.cache/cc-memwrap/index when its
folder cannot be written), built once with progress on stderr and used
again while the trace is unchanged and every file in it verifies (else
built again, saying why; delete the folder to have it all built anew):
the page reads the events in view from it, never the whole trace. The lanes and compare pages
draw such a trace from its index too (with --compare, the differences are
computed on the host as both traces stream).

Only the trace, its index and the source files it names under the source
root are ever read (and the index written). Bad arguments, a missing file
or a non-trace: exit 2.`;

/** The installed Electron binary, or null (not installed, or its download failed). */
export function findElectron(): string | null {
  try {
    const bin = createRequire(import.meta.url)('electron') as unknown;
    return typeof bin === 'string' && existsSync(bin) ? bin : null;
  } catch {
    return null;
  }
}

/** The built renderer (by `npm run build`). */
export const RENDERER_DIR = path.join(packageRoot, 'dist', 'gui', 'renderer');
const ELECTRON_MAIN = path.join(packageRoot, 'dist', 'gui', 'main', 'main.js');

function usage(io: CliIo, message: string): number {
  io.err(`cc-memwrap view: ${message}\nTry 'cc-memwrap view --help'.\n`);
  return 2;
}

export interface ViewHooks {
  /** Called with the running server (tests stop it); by default the server runs until SIGINT or SIGTERM. */
  onServer?: (server: RunningServer) => void;
  rendererDir?: string;
  electron?: string | null;
  /** Where the recent list is kept (default: defaultRecentFile()). */
  recentFile?: string;
}

export async function runView(args: string[], io: CliIo = processIo(), hooks: ViewHooks = {}): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        help: { type: 'boolean', short: 'h' },
        browser: { type: 'boolean' },
        port: { type: 'string' },
        'source-root': { type: 'string' },
        budget: { type: 'string' },
        compare: { type: 'string' },
      },
    });
  } catch (e) {
    return usage(io, (e as Error).message);
  }
  const v = parsed.values;
  if (v.help) {
    io.out(VIEW_HELP + '\n');
    await io.flush();
    return 0;
  }
  if (parsed.positionals.length === 0) return usage(io, 'expected a trace file (or several, or a folder of them)');
  const several = namesSeveral(parsed.positionals);
  if (several && v.compare !== undefined) return usage(io, '--compare compares two traces: give one trace before it, not several');
  let port = 0;
  if (v.port !== undefined) {
    if (!/^\d+$/.test(v.port) || Number(v.port) > 65535) return usage(io, `--port must be a number from 0 to 65535, got '${v.port}'`);
    port = Number(v.port);
  }
  let budgets: Budgets | undefined;
  if (v.budget !== undefined) {
    try {
      budgets = parseBudgets(v.budget);
    } catch (e) {
      if (e instanceof BudgetError) return usage(io, e.message);
      throw e;
    }
  }
  let sourceRoot: string | undefined;
  if (v['source-root'] !== undefined) {
    sourceRoot = path.resolve(v['source-root']);
    if (!existsSync(sourceRoot)) return usage(io, `--source-root ${v['source-root']}: no such directory`);
  }
  const file = parsed.positionals[0]!;
  const sessionOptions = { ...(sourceRoot ? { sourceRoot } : {}), ...(budgets ? { budgets } : {}) };
  if (several) return runLanes(parsed.positionals, sessionOptions, port, io, hooks);
  let session: TraceSession;
  let compare: TraceSession | undefined;
  try {
    // The compare page draws charts only: the viewer's panel report waits until a viewer page asks for it.
    const options = v.compare !== undefined ? { ...sessionOptions, deferReport: true } : sessionOptions;
    session = await TraceSession.open(file, options);
    if (v.compare !== undefined) compare = await TraceSession.open(v.compare, options);
  } catch (e) {
    if (e instanceof TraceOpenError) {
      io.err(`cc-memwrap view: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
  const recent = new RecentList(hooks.recentFile ?? defaultRecentFile());
  recent.add(session.path);

  const electron = hooks.electron === undefined ? findElectron() : hooks.electron;
  if (electron !== null && !v.browser && compare === undefined) return runElectron(electron, session.path, args);

  const rendererDir = builtRenderer(io, hooks);
  if (rendererDir === null) return 2;
  const tooTight = session.info.mode === 'index' || compare?.info.mode === 'index' ? workersDoNotFit(INDEX_WORKERS, `view ${session.info.trace.name} (through its index)`) : null;
  if (tooTight !== null) {
    io.err(`cc-memwrap view: ${tooTight}\n`);
    return 2;
  }
  const server = await listen({ rendererDir, session, recent, sessionOptions, port, ...(compare ? { compare } : {}) }, io);
  if (server === null) return 1;
  if (session.info.mode === 'index' && compare === undefined) indexWithProgress(session, io);
  const what = compare ? `${session.info.trace.name} compared with ${compare.info.trace.name}` : session.info.trace.name;
  return serveUntilStopped(`${what} at ${server.pageUrl(compare ? 'compare.html' : '')}`, server, io, hooks);
}

/**
 * Index mode: opens or builds the trace's index now, summaries first (the page draws its chart from them while the
 * events are indexed), with progress on stderr: a redrawn line on a terminal (rate, time left), else a line every
 * tenth of each stage; then how long each took.
 */
function indexWithProgress(session: TraceSession, io: CliIo): void {
  const label = `indexing ${session.info.trace.name}`;
  const line = progressLine(io, label, session.info.trace.bytes);
  let tenth = 0;
  let stage = 'summaries';
  session.noteListeners.add((note) => {
    line.done();
    io.err(`cc-memwrap view: ${session.info.trace.name}: ${note}\n`);
  });
  session.indexListeners.add((p) => {
    if (p.stage !== stage) [stage, tenth] = [p.stage, 0];
    const what = p.stage === 'summaries' ? "the chart's summaries" : 'the events';
    line.update(p.fraction, `${what}, ${p.phase}`);
    if (!io.errIsTTY && Math.floor(p.fraction * 10) > tenth && p.fraction < 1) {
      tenth = Math.floor(p.fraction * 10);
      io.err(`${label}: ${tenth * 10}% (${what})\n`);
    }
  });
  session.summaries().then(
    (ix) => {
      if (ix.events) return;
      line.done();
      const s = session.indexState;
      io.err(`cc-memwrap view: ${session.info.trace.name}: the chart's summaries ready${s.state === 'ready' ? ` (${s.seconds.toFixed(1)} s)` : ''}; indexing the events\n`);
    },
    () => {},
  );
  session.index().then(
    (ix) => {
      line.done();
      const s = session.eventsState;
      io.err(`cc-memwrap view: ${session.info.trace.name}: index of ${ix.meta.events.toLocaleString('en-US')} events ready${s.state === 'ready' ? ` (${s.seconds.toFixed(1)} s)` : ''}, ${ix.file}\n`);
    },
    (e: unknown) => {
      line.done();
      io.err(`cc-memwrap view: ${session.info.trace.name}: cannot index it: ${(e as Error).message}\n`);
    },
  );
}

/** The built renderer's folder, or null when it is not built (said on stderr). */
function builtRenderer(io: CliIo, hooks: ViewHooks): string | null {
  const rendererDir = hooks.rendererDir ?? RENDERER_DIR;
  if (existsSync(path.join(rendererDir, 'index.html'))) return rendererDir;
  io.err(`cc-memwrap view: the viewer is not built (${rendererDir} has no index.html); run \`npm run build\`\n`);
  return null;
}

/**
 * `view A B C…` or `view <folder>`: every trace checked (its header only; none is read whole here), at most
 * MAX_LANES of them, served as the lanes page; the first is the viewer's session until a lane is clicked.
 */
async function runLanes(named: string[], sessionOptions: SessionOptions, port: number, io: CliIo, hooks: ViewHooks): Promise<number> {
  let files: string[];
  try {
    files = traceFiles(named).map((f) => path.resolve(f));
  } catch (e) {
    io.err(`cc-memwrap view: ${(e as Error).message}\n`);
    return 2;
  }
  if (files.length > MAX_LANES) {
    io.err(`cc-memwrap view: ${files.length} traces: the lanes page shows at most ${MAX_LANES}, one lane per process; name fewer (or report them all: cc-memwrap report)\n`);
    return 2;
  }
  const checked: TraceFile[] = [];
  for (const f of files) {
    try {
      checked.push(await TraceFile.read(f));
    } catch (e) {
      for (const t of checked) t.close();
      io.err(`cc-memwrap view: ${describeReadError(f, e)}\n`);
      return 2;
    } finally {
      // Only the first stays open: it is the viewer's session until a lane is clicked.
      if (checked.length > 1) checked.pop()!.close();
    }
  }
  const rendererDir = builtRenderer(io, hooks);
  if (rendererDir === null) return 2;
  // Through its index when the viewer would open it so (the lanes page then draws its lane from the same session).
  const session = TraceSession.of(checked[0]!, { ...sessionOptions, index: useIndex(checked[0]!.size), deferReport: true, timedSummaries: true });
  const recent = new RecentList(hooks.recentFile ?? defaultRecentFile());
  const server = await listen({ rendererDir, session, recent, sessionOptions, port, lanes: files }, io);
  if (server === null) return 1;
  return serveUntilStopped(`${files.length} traces as lanes at ${server.pageUrl('lanes.html')}`, server, io, hooks);
}

/** Starts the server; a port that cannot be had (in use, or reserved) is said in one line, and gives null. */
async function listen(options: ServerOptions, io: CliIo): Promise<RunningServer | null> {
  try {
    return await startServer(options);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') io.err(`cc-memwrap view: port ${options.port} is in use; give another with --port, or leave --port out for a free one\n`);
    else if (code === 'EACCES') io.err(`cc-memwrap view: port ${options.port} is reserved for the system; give one above 1023 with --port, or leave --port out\n`);
    else throw e;
    return null;
  }
}

/** Prints where the page is served, then serves until SIGINT or SIGTERM (or hands the server to a test). */
async function serveUntilStopped(what: string, server: RunningServer, io: CliIo, hooks: ViewHooks): Promise<number> {
  io.out(`cc-memwrap view: ${what}\n(open it in a browser; the address carries this session's token, keep it to yourself; Ctrl-C stops the server)\n`);
  await io.flush();
  if (hooks.onServer) {
    hooks.onServer(server);
    return 0;
  }
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      void server.close().then(resolve);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  return 0;
}

/** Runs the Electron app on the trace; its exit status is ours. */
function runElectron(electron: string, trace: string, args: string[]): Promise<number> {
  const rest = args.filter((a) => a !== trace);
  const child = spawn(electron, [ELECTRON_MAIN, '--', trace, ...rest], { stdio: 'inherit' });
  return new Promise((resolve) => {
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
    child.on('error', () => resolve(70));
  });
}
