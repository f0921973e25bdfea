// One open trace as a viewer host holds it: its bytes, the source files it names and the root they are served from, the budgets of a memwrap.json beside the traced program and the program's frame sizes (all read by trace-file.ts). Shared by the Electron main process, the local server and `report --html`.
import path from 'node:path';
import type { Budgets } from '../analysis/budgets.js';
import { describeReadError } from './read-errors.js';
import type { SessionInfo } from './session-types.js';
import { SourceAccess, type SourceResult } from './source-access.js';
import { TraceFile } from './trace-file.js';

export type { SessionInfo };

export interface SessionOptions {
  /** Serve sources from here instead of the run's recorded working directory. */
  sourceRoot?: string;
  /** Budgets given on the command line (they win over a memwrap.json). */
  budgets?: Budgets;
}

/** A trace that cannot be opened: the message is one line naming the file. */
export class TraceOpenError extends Error {
  override name = 'TraceOpenError';
}

export class TraceSession {
  private constructor(
    readonly path: string,
    readonly bytes: Uint8Array,
    readonly sources: SourceAccess,
    readonly info: SessionInfo,
  ) {}

  /** Reads and checks a trace (header only; damage later in the file is the decoder's to report). */
  static async open(tracePath: string, options: SessionOptions = {}): Promise<TraceSession> {
    let trace: TraceFile;
    try {
      trace = await TraceFile.read(tracePath);
    } catch (e) {
      throw new TraceOpenError(describeReadError(tracePath, e));
    }
    return TraceSession.of(trace, options);
  }

  /** The session of a trace already read: what `trace` has read beside it (budgets, frame sizes) is not read again. */
  static of(trace: TraceFile, options: SessionOptions = {}): TraceSession {
    const named = trace.sources();
    const root = path.resolve(options.sourceRoot ?? named.cwd ?? path.dirname(trace.path));
    const fromConfig = options.budgets ? { budgets: options.budgets, source: '--budget', problem: null } : trace.budgetConfig();
    const info: SessionInfo = {
      trace: { name: path.basename(trace.path), path: trace.path, bytes: trace.bytes.byteLength },
      sourceRoot: root,
      budgets: fromConfig.budgets,
      budgetSource: fromConfig.source,
      budgetProblem: fromConfig.problem,
      stack: trace.stackInfo(),
    };
    return new TraceSession(trace.path, trace.bytes, new SourceAccess(named.files, root), info);
  }

  source(file: string): SourceResult {
    return this.sources.read(file);
  }

  /** Every source file the trace names, each read or refused as source() would. */
  allSources(): Record<string, SourceResult> {
    return Object.fromEntries(this.sources.names().map((f) => [f, this.sources.read(f)]));
  }
}
