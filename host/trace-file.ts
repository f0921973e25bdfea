// One trace file as the Node side holds it, and what is read beside it on first need, each once: the traced program's
// path (tracedProgram()), the memwrap.json beside the program, the program's frame sizes. `cc-memwrap report` streams
// it, a window at a time; the bytes are read whole only for what decodes the whole model (the viewer's session,
// trace-session.ts, made from the same object, so that `report --html` reads nothing twice).
import path from 'node:path';
import type { Model } from '../analysis/model.js';
import type { FoldSource } from '../analysis/event-fold.js';
import { decodeTrace, type DecodeOptions } from '../analysis/trace/decode.js';
import { readHeader, type TraceHeader } from '../analysis/trace/header.js';
import { FileSource } from '../analysis/trace/file-source.js';
import { programRecord } from '../analysis/trace/event-stream.js';
import { streamSource, type StreamFoldOptions } from '../analysis/trace/resolve-stream.js';
import { namedSources, type NamedSources } from '../analysis/trace/source-files.js';
import { loadBudgetConfig, type BudgetConfig } from './budget-config.js';
import { fileSymbolNamer } from './library-symbols.js';
import type { StackInfo } from './session-types.js';
import { readStackInfo } from './stack-info.js';
import { readFirmwareInfo, type FirmwareInfo } from './firmware-info.js';
import { readProgramFile, type ProgramFile } from './program-file.js';
import { tracedProgram } from './traced-program.js';

export class TraceFile {
  private model: Model | null = null;
  private named: NamedSources | null = null;
  private budgets: BudgetConfig | null = null;
  private stack: StackInfo | null = null;
  private programFile: ProgramFile | null | undefined = undefined;
  private firmwareInfo: FirmwareInfo | null = null;
  private whole: Uint8Array | null = null;
  private run: { path: string; cwd: string; rank: number | null } | null | undefined = undefined;

  private constructor(
    /** Absolute. */
    readonly path: string,
    /** The file, opened once and kept open: every reading goes through it (a clone each). */
    private readonly file: FileSource,
    /** Its header: the process (pid, parent) and when it started; pid 0 says a firmware wrote it (runtime/TRACE-FORMAT.md). */
    readonly header: TraceHeader,
  ) {}

  /**
   * Opens `file` and checks its header (damage later in the file is the reader's to report). Rejects with the fs
   * error (ENOENT …) or TraceRefusedError, which describeReadError() words.
   */
  static async read(file: string): Promise<TraceFile> {
    const abs = path.resolve(file);
    const source = FileSource.open(abs);
    let header: TraceHeader;
    try {
      header = readHeader(source);
    } catch (e) {
      source.close();
      throw e;
    }
    return new TraceFile(abs, source, header);
  }

  /** The file's size when it was opened. */
  get size(): number {
    return this.file.size;
  }

  /** The whole file, read on first use: for the decoded model and the viewer, which hold every byte anyway. */
  get bytes(): Uint8Array {
    if (this.whole === null) this.whole = this.file.clone().read(0, this.file.size);
    return this.whole;
  }

  /**
   * The trace as a streaming fold source (resolve-stream.ts) over the file, read a window at a time, with the namer
   * of the loaded objects' symbols.
   */
  stream(options: StreamFoldOptions = {}): FoldSource {
    return streamSource(this.file.clone(), { ...options, symbols: fileSymbolNamer });
  }

  /** Closes the file (a TraceFile lives as long as its command or viewer session; this is for those that end early). */
  close(): void {
    this.file.close();
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
    return (this.named ??= namedSources(this.file.clone()));
  }

  /**
   * The run's working directory as the trace's first records give it (its program record, before the events), without
   * reading further; null when they do not (sources() then finds it, if anywhere, in a walk of every record).
   */
  earlyCwd(): string | null {
    if (this.model !== null) return this.model.program?.cwd ?? null;
    if (this.run === undefined) this.run = programRecord(this.file.clone());
    return this.run?.cwd ?? null;
  }

  /** The MPI rank the process had (its EXT/RANK), or null: from the trace's first records. */
  rank(): number | null {
    if (this.run === undefined) this.run = programRecord(this.file.clone());
    return this.run?.rank ?? null;
  }

  /** The traced program's absolute path, or null: from the model once decoded, else from the trace's first records. */
  program(): string | null {
    if (this.model !== null) return tracedProgram(this.model.program?.path, this.model.program?.cwd);
    if (this.run === undefined) this.run = programRecord(this.file.clone());
    return tracedProgram(this.run?.path, this.run?.cwd);
  }

  /** The budgets: a memwrap.json beside the traced program, a firmware's linker script's (read on the first call). */
  budgetConfig(): BudgetConfig {
    return (this.budgets ??= loadBudgetConfig(this.program(), this.firmware().image));
  }

  /** The traced program's frame sizes (read on the first call). */
  stackInfo(): StackInfo {
    return (this.stack ??= readStackInfo(this.program(), this.readProgram()));
  }

  /** Whether a firmware wrote the trace (its header's pid is 0: no operating system). */
  get isFirmware(): boolean {
    return this.header.pid === 0;
  }

  /** A firmware's memory regions and static data from its ELF file; for a host's trace none, and nothing is read. */
  firmware(): FirmwareInfo {
    if (!this.isFirmware) return { program: this.program(), image: null, missing: 'not a firmware\'s trace' };
    return (this.firmwareInfo ??= readFirmwareInfo(this.program(), this.readProgram()));
  }

  /** The traced program's file, read once for both of the above; null when the trace names no program. */
  private readProgram(): ProgramFile | null {
    if (this.programFile === undefined) {
      const program = this.program();
      this.programFile = program === null ? null : readProgramFile(program);
    }
    return this.programFile;
  }
}
