// What the trace subcommands need from the terminal: buffered stdout, stderr and a progress line on TTYs (file errors are worded by host/read-errors.ts).
import { writeSync } from 'node:fs';

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** Progress lines are drawn only when stderr is a terminal. */
  errIsTTY: boolean;
  /** stdout is a terminal (a command whose output streams there draws no progress line over it); absent: no. */
  outIsTTY?: boolean;
  /** Resolves when everything written to stdout has been handed to the OS. */
  flush(): Promise<void>;
}

/** Lets a synchronous writer wait a millisecond for a full pipe. */
const pause = new Int32Array(new SharedArrayBuffer(4));

/** Writes all of `bytes` to file descriptor `fd`, waiting out a full non-blocking pipe; false once the reader is gone. */
function writeAll(fd: number, bytes: Buffer): boolean {
  let done = 0;
  while (done < bytes.length) {
    try {
      done += writeSync(fd, bytes, done, bytes.length - done);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') Atomics.wait(pause, 0, 0, 1);
      else if (code === 'EPIPE') return false;
      else throw e;
    }
  }
  return true;
}

/**
 * The process's own streams. Output is gathered in pieces of a mebibyte and each is written as soon as it is full, so
 * that a dump many times larger than memory streams out while it is made (queuing it in the stream instead makes the
 * garbage collector crawl). A closed stdout pipe (EPIPE, e.g. `| head`) ends the output quietly.
 */
export function processIo(): CliIo {
  let pending = '';
  let broken = false;
  const write = (): void => {
    // Flat bytes: a rope of small strings would burden the GC.
    if (!broken && pending !== '') broken = !writeAll(1, Buffer.from(pending));
    pending = '';
  };
  return {
    out(text) {
      pending += text;
      if (pending.length >= 1 << 20) write();
    },
    err(text) {
      process.stderr.write(text);
    },
    errIsTTY: process.stderr.isTTY === true,
    outIsTTY: process.stdout.isTTY === true,
    flush() {
      write();
      return Promise.resolve();
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

/** How long work runs before its progress line first shows: 300 ms, or `MEMWRAP_PROGRESS_AFTER_MS` (0: at once). */
function progressDelay(): number {
  const ms = Number(process.env.MEMWRAP_PROGRESS_AFTER_MS);
  return process.env.MEMWRAP_PROGRESS_AFTER_MS !== undefined && Number.isFinite(ms) && ms >= 0 ? ms : 300;
}

/**
 * A progress callback that redraws one stderr line, at most every 100 ms (and at each new phase) and only once the
 * work has taken a moment (`progressDelay`): the phase, how far, the rate through the file when its size (`bytes`)
 * is given, and the time left at that pace. A fraction that goes back is a new pass over the file
 * (`report --leak-causes` reads a trace twice): the line says which, and the rate and the time left are those of
 * that pass.
 */
export function progressLine(io: CliIo, label: string, bytes?: number): { update: (fraction: number, phase: string) => void; done: () => void } {
  if (!io.errIsTTY) return { update: () => {}, done: () => {} };
  const start = Date.now();
  const delay = progressDelay();
  let passStart = start;
  let pass = 1;
  let lastFraction = 0;
  let lastPhase = '';
  let last = 0;
  let drawn = false;
  return {
    update(fraction, phase) {
      const now = Date.now();
      if (fraction < lastFraction) {
        pass++;
        passStart = now;
      }
      lastFraction = fraction;
      const newPhase = phase !== lastPhase;
      lastPhase = phase;
      if (now - start < delay || (now - last < 100 && !newPhase)) return;
      last = now;
      drawn = true;
      const elapsed = Math.max(1, now - passStart);
      const rate = bytes !== undefined && fraction > 0 ? `, ${((fraction * bytes) / 1048576 / (elapsed / 1000)).toFixed(0)} MiB/s` : '';
      const left = fraction >= 0.02 && fraction < 1 ? `, about ${roughDuration((elapsed * (1 - fraction)) / fraction)} left` : '';
      const which = pass > 1 ? `pass ${pass}, ` : '';
      io.err(`\r\x1b[K${label}: ${which}${phase} ${Math.floor(fraction * 100)}%${rate}${left}`);
    },
    done() {
      if (drawn) io.err('\r\x1b[K');
    },
  };
}
