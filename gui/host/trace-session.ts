// One open trace as a viewer host holds it: its bytes, the source files it names and the root they are served from, and the budgets of a memwrap.json beside the traced program. Shared by the Electron main process and the local server.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Budgets } from '../../analysis/budgets.js';
import { loadBudgetConfig } from '../../cli/budget-config.js';
import { parseHeader } from '../../analysis/trace/header.js';
import { namedSources } from '../../analysis/trace/source-files.js';
import { describeReadError } from '../../cli/io.js';
import { readStackInfo } from '../../cli/stack-info.js';
import type { SessionInfo } from './session-types.js';
import { SourceAccess, type SourceResult } from './source-access.js';

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
    const abs = path.resolve(tracePath);
    let bytes: Uint8Array;
    try {
      const buf = await readFile(abs);
      bytes = new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
      parseHeader(bytes);
    } catch (e) {
      throw new TraceOpenError(describeReadError(tracePath, e));
    }
    const named = namedSources(bytes);
    const root = path.resolve(options.sourceRoot ?? named.cwd ?? path.dirname(abs));
    const fromConfig = options.budgets ? { budgets: options.budgets, source: '--budget', problem: null } : loadBudgetConfig(named.program, named.cwd);
    const info: SessionInfo = {
      trace: { name: path.basename(abs), path: abs, bytes: bytes.byteLength },
      sourceRoot: root,
      budgets: fromConfig.budgets,
      budgetSource: fromConfig.source,
      budgetProblem: fromConfig.problem,
      stack: readStackInfo(named.program === null || named.program === '' ? null : path.resolve(named.cwd || '/', named.program)),
    };
    return new TraceSession(abs, bytes, new SourceAccess(named.files, root), info);
  }

  source(file: string): SourceResult {
    return this.sources.read(file);
  }

  /** Every source file the trace names, each read or refused as source() would. */
  allSources(): Record<string, SourceResult> {
    return Object.fromEntries(this.sources.names().map((f) => [f, this.sources.read(f)]));
  }
}
