// Problems found while reading a trace: what, where (byte offset, thread), how bad; capped per kind so hostile input stays small.

export type Severity = 'error' | 'warning';

/** One thing wrong with a trace. `message` is complete on its own and names the offset and thread when known. */
export interface Problem {
  severity: Severity;
  /** Byte offset in the file of the record or chunk concerned, or null. */
  offset: number | null;
  /** The trace's thread index (as in chunk headers), or null. */
  thread: number | null;
  message: string;
}

/** How many problems of one code are kept before the rest are only counted. */
export const PROBLEMS_PER_CODE = 20;

/** `0x1a2 (418)`: how problems and dumps name a byte offset. */
export function formatOffset(offset: number): string {
  return `0x${offset.toString(16)} (${offset})`;
}

/** "at offset 0x1a2 (418) (thread 1)" or the parts that are known. */
export function formatWhere(offset: number | null, thread: number | null): string {
  const parts: string[] = [];
  if (offset !== null) parts.push(`at offset ${formatOffset(offset)}`);
  if (thread !== null) parts.push(`(thread ${thread})`);
  return parts.join(' ');
}

/** Collects problems; keeps the first PROBLEMS_PER_CODE of each code and counts the rest. */
export class ProblemLog {
  private readonly kept: Problem[] = [];
  private readonly counts = new Map<string, { severity: Severity; n: number }>();

  /** `message` should not repeat the location; it is prefixed with it. */
  add(code: string, severity: Severity, offset: number | null, thread: number | null, message: string): void {
    const c = this.counts.get(code);
    const n = (c?.n ?? 0) + 1;
    this.counts.set(code, { severity, n });
    if (n > PROBLEMS_PER_CODE) return;
    const where = formatWhere(offset, thread);
    this.kept.push({ severity, offset, thread, message: where === '' ? message : `${where}: ${message}` });
  }

  /** A log that starts with this one's problems and counts, and goes on apart from it. */
  copy(): ProblemLog {
    const log = new ProblemLog();
    log.kept.push(...this.kept);
    for (const [code, c] of this.counts) log.counts.set(code, { ...c });
    return log;
  }

  /** The codes of every problem added, kept or not. */
  codes(): string[] {
    return [...this.counts.keys()];
  }

  get size(): number {
    return this.kept.length;
  }

  /** The kept problems by file offset (those without one last), then one line per code that had more than were kept. */
  list(): Problem[] {
    const out = this.kept.slice().sort((a, b) => (a.offset ?? Infinity) - (b.offset ?? Infinity));
    for (const [code, { severity, n }] of this.counts) {
      if (n > PROBLEMS_PER_CODE) {
        out.push({
          severity,
          offset: null,
          thread: null,
          message: `${n - PROBLEMS_PER_CODE} more problems like the above (${code}) not shown`,
        });
      }
    }
    return out;
  }
}
