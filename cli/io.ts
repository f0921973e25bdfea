// What the trace subcommands need from the terminal: buffered stdout, stderr and a progress line on TTYs (file errors are worded by host/read-errors.ts).

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

/** "2.5 s", "1 min 5 s": a coarse duration for an estimate. */
function roughDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 10) return `${(ms / 1000).toFixed(1)} s`;
  if (s < 60) return `${s} s`;
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

/**
 * A decode progress callback that redraws one stderr line, at most every 100 ms and only after the first 300 ms: the
 * phase, how far, the rate through the file when its size (`bytes`) is given, and the time left at that pace.
 */
export function progressLine(io: CliIo, label: string, bytes?: number): { update: (fraction: number, phase: string) => void; done: () => void } {
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
      const elapsed = now - start;
      const rate = bytes !== undefined && fraction > 0 ? `, ${((fraction * bytes) / 1048576 / (elapsed / 1000)).toFixed(0)} MiB/s` : '';
      const left = fraction >= 0.02 && fraction < 1 ? `, about ${roughDuration((elapsed * (1 - fraction)) / fraction)} left` : '';
      io.err(`\r\x1b[K${label}: ${phase} ${Math.floor(fraction * 100)}%${rate}${left}`);
    },
    done() {
      if (drawn) io.err('\r\x1b[K');
    },
  };
}
