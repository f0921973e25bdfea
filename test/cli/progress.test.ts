// The progress line of long reports: only on a terminal, only once the work
// has taken a moment, at most ten updates a second, and erased when done.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { progressLine, type CliIo } from '../../cli/io.js';

function io(tty: boolean): CliIo & { text: () => string } {
  let err = '';
  return { out: () => {}, err: (s) => void (err += s), errIsTTY: tty, flush: async () => {}, text: () => err };
}

afterEach(() => vi.useRealTimers());

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
    expect(tty.text()).toBe('\r\x1b[Kbig.mwtrace: decoding 25%\r\x1b[Kbig.mwtrace: merging threads 75%\r\x1b[K');
  });
});
