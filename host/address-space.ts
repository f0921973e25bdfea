// Whether worker threads fit under the process's address-space limit (`ulimit -v`). V8 cannot report a failed
// reservation: a worker's isolate that cannot reserve its memory ends the whole process ("Fatal process OOM",
// SIGTRAP). So a command that is about to start workers first compares what they reserve with what the limit leaves,
// and when they do not fit says so in one sentence, with the limit that would do.
import { readFileSync } from 'node:fs';

/**
 * What one reader's worker thread adds to the address space: its isolate with WORKER_LIMITS' 32 MiB code range, its
 * heap, its stack and a share of malloc's arenas. Measured with `report --html` through the index of a 13 MB trace:
 * 1,025 MB in use before its three workers, done under `ulimit -v 1400000`, killed by V8 under 1300000.
 */
export const WORKER_ADDRESS_SPACE = 96 << 20;

/** The worker threads a report or viewer through a trace's index runs at once (index, panels, the panel's report). */
export const INDEX_WORKERS = 3;

/** Room kept for the main thread's own growth while the workers run. */
const MAIN_HEADROOM = 128 << 20;

/** The soft address-space limit in bytes (`ulimit -v` × 1024), or null when there is none (or /proc cannot tell). */
export function addressSpaceLimit(limits = readProc('/proc/self/limits')): number | null {
  const m = /^Max address space\s+(\S+)/m.exec(limits ?? '');
  return m === null || m[1] === 'unlimited' ? null : Number(m[1]);
}

/** The address space the process has reserved now (VmSize), in bytes. */
export function addressSpaceInUse(status = readProc('/proc/self/status')): number {
  const m = /^VmSize:\s+(\d+) kB/m.exec(status ?? '');
  return m === null ? 0 : Number(m[1]) * 1024;
}

/**
 * Null when `workers` more worker threads fit under the limit with room to spare; else one sentence saying what
 * `what` needs, what the limit allows and the `ulimit -v` that would do.
 */
export function workersDoNotFit(workers: number, what: string, limit = addressSpaceLimit(), inUse = addressSpaceInUse()): string | null {
  if (limit === null) return null;
  const need = inUse + workers * WORKER_ADDRESS_SPACE + MAIN_HEADROOM;
  if (need <= limit) return null;
  const mb = (n: number): string => `${Math.ceil(n / (1 << 20)).toLocaleString('en-US')} MB`;
  return (
    `${what} needs about ${mb(need)} of address space (${mb(inUse)} in use, and ${workers} worker thread${workers === 1 ? '' : 's'} of ${mb(WORKER_ADDRESS_SPACE)}), ` +
    `more than the limit of ${mb(limit)} (ulimit -v ${Math.floor(limit / 1024)}): raise it, e.g. ulimit -v ${Math.ceil(need / (1 << 20)) * 1024 + 262144}`
  );
}

function readProc(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}
