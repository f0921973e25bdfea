// The progress line of long reports: only on a terminal, only once the work
// has taken a moment, at most ten updates a second, and erased when done.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { progressLine, type CliIo } from '../../cli/io.js';

function io(tty: boolean): CliIo & { text: () => string } {
  let err = '';
  return { out: () => {}, err: (s) => void (err += s), errIsTTY: tty, flush: async () => {}, text: () => err };
}

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllEnvs();
});

describe('progressLine', () => {
  it('stays silent for quick work and off a terminal', () => {
    vi.useFakeTimers();
    const quiet = io(true);
    const p = progressLine(quiet, 'big.mwtrace');
    p.update(0.5, 'decoding');
    p.done();
    expect(quiet.text()).toBe('');
    const piped = io(false);
    const q = progressLine(piped, 'big.mwtrace');
    vi.advanceTimersByTime(5000);
    q.update(0.5, 'decoding');
    q.done();
    expect(piped.text()).toBe('');
  });

  it('shows the phase and percentage on a terminal once work takes a while, then erases it', () => {
    vi.useFakeTimers();
    const tty = io(true);
    const p = progressLine(tty, 'big.mwtrace');
    vi.advanceTimersByTime(400);
    p.update(0.25, 'decoding');
    p.update(0.3, 'decoding'); // within 100 ms: not redrawn
    vi.advanceTimersByTime(150);
    p.update(0.75, 'merging threads');
    p.done();
    expect(tty.text()).toBe(
      '\r\x1b[Kbig.mwtrace: decoding 25%, about 1.2 s left\r\x1b[Kbig.mwtrace: merging threads 75%, about 0.2 s left\r\x1b[K',
    );
  });

  it('with the file size, the rate through the file; the time left at that pace', () => {
    vi.useFakeTimers();
    const tty = io(true);
    const p = progressLine(tty, 'big.mwtrace', 80 * 1048576);
    vi.advanceTimersByTime(400);
    p.update(0.25, 'reading records'); // 20 MiB in 0.4 s; 0.75 of the work left at 0.25 per 0.4 s
    vi.advanceTimersByTime(59_600);
    p.update(0.5, 'reading records'); // 40 MiB in 60 s; as long again to go
    p.done();
    expect(tty.text()).toBe(
      '\r\x1b[Kbig.mwtrace: reading records 25%, 50 MiB/s, about 1.2 s left' +
        '\r\x1b[Kbig.mwtrace: reading records 50%, 1 MiB/s, about 1 min 0 s left\r\x1b[K',
    );
  });

  it('a fraction that goes back is another pass over the file: named, with its own rate and time left', () => {
    vi.useFakeTimers();
    const tty = io(true);
    const p = progressLine(tty, 'big.mwtrace', 80 * 1048576);
    vi.advanceTimersByTime(400);
    p.update(0.5, 'reading the events'); // 40 MiB in 0.4 s
    vi.advanceTimersByTime(200);
    p.update(0, 'reading the events'); // a second pass starts
    vi.advanceTimersByTime(1000);
    p.update(0.25, 'reading the events'); // 20 MiB in the second pass's 1 s; three times that to go
    p.done();
    expect(tty.text()).toBe(
      '\r\x1b[Kbig.mwtrace: reading the events 50%, 100 MiB/s, about 0.4 s left' +
        '\r\x1b[Kbig.mwtrace: pass 2, reading the events 0%' +
        '\r\x1b[Kbig.mwtrace: pass 2, reading the events 25%, 20 MiB/s, about 3.0 s left\r\x1b[K',
    );
  });

  it('MEMWRAP_PROGRESS_AFTER_MS sets the moment before the first line; a new phase is drawn without waiting', () => {
    vi.useFakeTimers();
    vi.stubEnv('MEMWRAP_PROGRESS_AFTER_MS', '0');
    const tty = io(true);
    const p = progressLine(tty, 'big.mwtrace');
    p.update(0.25, 'checking the records');
    p.update(0.3, 'checking the records'); // within 100 ms, the same phase: not redrawn
    p.update(0.5, 'writing the records'); // within 100 ms, but a new phase
    p.done();
    expect(tty.text()).toBe('\r\x1b[Kbig.mwtrace: checking the records 25%, about 0.0 s left\r\x1b[Kbig.mwtrace: writing the records 50%, about 0.0 s left\r\x1b[K');
  });
});
