// One trace file as the Node side holds it: its bytes, read once, and what is read beside it on first need, each
// once: the traced program's path (tracedProgram()), the memwrap.json beside the program, the program's frame sizes.
// `cc-memwrap report` decodes it; the viewer's session (trace-session.ts) is made from the same object, so
// `report --html` reads nothing twice.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Model } from '../analysis/model.js';
import { decodeTrace, type DecodeOptions } from '../analysis/trace/decode.js';
import { parseHeader } from '../analysis/trace/header.js';
import { namedSources, type NamedSources } from '../analysis/trace/source-files.js';
import { loadBudgetConfig, type BudgetConfig } from './budget-config.js';
import { fileSymbolNamer } from './library-symbols.js';
import type { StackInfo } from './session-types.js';
import { readStackInfo } from './stack-info.js';
import { tracedProgram } from './traced-program.js';

export class TraceFile {
  private model: Model | null = null;
  private named: NamedSources | null = null;
  private budgets: BudgetConfig | null = null;
  private stack: StackInfo | null = null;

  private constructor(
    /** Absolute. */
    readonly path: string,
    readonly bytes: Uint8Array,
  ) {}

  /**
   * Reads `file` and checks its header (damage later in the file is the decoder's to report). Rejects with the fs
   * error (ENOENT …) or TraceRefusedError, which describeReadError() words.
   */
  static async read(file: string): Promise<TraceFile> {
    const abs = path.resolve(file);
    const buf = await readFile(abs);
    const bytes = new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
    parseHeader(bytes);
    return new TraceFile(abs, bytes);
  }

  /**
   * The model (decoded on the first call; later calls return it and ignore `options`), with a namer that reads the
   * loaded objects' symbol tables when an analysis asks (`--by entry`, `--by library-function`).
   */
  decode(options: DecodeOptions = {}): Model {
    if (this.model === null) {
      this.model = decodeTrace(this.bytes, options);
      this.model.symbols = fileSymbolNamer;
    }
    return this.model;
  }

  /** The source files the trace names and the run's working directory, in one walk without the model. */
  sources(): NamedSources {
    return (this.named ??= namedSources(this.bytes));
  }

  /** The traced program's absolute path, or null: from the model once decoded, else from the walk for sources(). */
  program(): string | null {
    if (this.model !== null) return tracedProgram(this.model.program?.path, this.model.program?.cwd);
    const named = this.sources();
    return tracedProgram(named.program, named.cwd);
  }

  /** The memwrap.json beside the traced program (read on the first call). */
  budgetConfig(): BudgetConfig {
    return (this.budgets ??= loadBudgetConfig(this.program()));
  }

  /** The traced program's frame sizes (read on the first call). */
  stackInfo(): StackInfo {
    return (this.stack ??= readStackInfo(this.program()));
  }
}
