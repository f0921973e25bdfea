// What the trace subcommands need from the terminal: buffered stdout, stderr, a progress line on TTYs, and one clear line for file errors.
import { TraceRefusedError } from '../analysis/trace/header.js';

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** Progress lines are drawn only when stderr is a terminal. */
  errIsTTY: boolean;
  /** Resolves when everything written to stdout has been handed to the OS. */
  flush(): Promise<void>;
}

/**
 * The process's own streams. Output is gathered in large pieces and written with backpressure by `flush` (queuing
 * a big dump in the stream instead makes the garbage collector crawl). A closed stdout pipe (EPIPE, e.g. `| head`)
 * ends the output quietly.
 */
export function processIo(): CliIo {
  const pieces: Buffer[] = [];
  let pending = '';
  let broken = false;
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') broken = true;
    else throw e;
  });
  return {
    out(text) {
      pending += text;
      if (pending.length >= 1 << 20) {
        pieces.push(Buffer.from(pending)); // flat bytes: a rope of small strings would burden the GC
        pending = '';
      }
    },
    err(text) {
      process.stderr.write(text);
    },
    errIsTTY: process.stderr.isTTY === true,
    async flush() {
      if (pending !== '') pieces.push(Buffer.from(pending));
      pending = '';
      for (let i = 0; i < pieces.length && !broken; i++) {
        const ok = process.stdout.write(pieces[i]!);
        if (!ok && !broken) {
          await new Promise<void>((resolve) => {
            const done = (): void => {
              process.stdout.off('drain', done).off('error', done);
              resolve();
            };
            process.stdout.once('drain', done).once('error', done);
          });
        }
      }
      pieces.length = 0;
    },
  };
}

/** A decode progress callback that redraws one stderr line, at most every 100 ms and only after the first 300 ms. */
export function progressLine(io: CliIo, label: string): { update: (fraction: number, phase: string) => void; done: () => void } {
  if (!io.errIsTTY) return { update: () => {}, done: () => {} };
  const start = Date.now();
  let last = 0;
  let drawn = false;
  return {
    update(fraction, phase) {
      const now = Date.now();
      if (now - start < 300 || now - last < 100) return;
      last = now;
      drawn = true;
      io.err(`\r\x1b[K${label}: ${phase} ${Math.floor(fraction * 100)}%`);
    },
    done() {
      if (drawn) io.err('\r\x1b[K');
    },
  };
}

/** One line for a file that cannot be read or is not a trace; everything else is rethrown. */
export function describeReadError(file: string, e: unknown): string {
  if (e instanceof TraceRefusedError) return `${file}: ${e.message}`;
  const code = (e as NodeJS.ErrnoException | null)?.code;
  if (code === 'ENOENT') return `${file}: no such file`;
  if (code === 'EISDIR') return `${file}: is a directory, not a trace file`;
  if (code === 'EACCES' || code === 'EPERM') return `${file}: permission denied`;
  if (code !== undefined) return `${file}: cannot read (${code}: ${(e as Error).message})`;
  throw e;
}
