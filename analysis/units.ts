// Number formatting for text reports: byte sizes in B/KiB/MiB/GiB and counts with thousands separators; the words for the counts of blocks.

/** "512 B", "1.5 KiB", "12.0 MiB" (binary units, one decimal above bytes). */
export function formatBytes(n: number): string {
  const sign = n < 0 ? '-' : '';
  const a = Math.abs(n);
  if (a < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let v = a / 1024;
  let u = 0;
  while (Number(v.toFixed(1)) >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${sign}${v.toFixed(1)} ${units[u]}`;
}

/**
 * Bytes as the viewer shows them: exact below 10 KiB ("4,192 B", where a student counts 24-byte nodes), else as
 * formatBytes.
 */
export function formatBytesFine(n: number): string {
  return Math.abs(n) < 10 * 1024 ? `${formatCount(n)} B` : formatBytes(n);
}

/** "1,234,567". */
export function formatCount(n: number): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: 0 });
}

/** "1 block", "3 blocks", "1,024 frees": a count and its noun, plural unless the count is 1. */
export function plural(n: number, noun: string, nouns = noun + 's'): string {
  return `${formatCount(n)} ${n === 1 ? noun : nouns}`;
}

/**
 * The words for the counts of blocks, one vocabulary for the report's tables and the viewer's: allocations are blocks
 * made (malloc, calloc, strdup, realloc…), frees blocks ended (free, realloc), and realloc calls count the calls.
 */
export const COUNT_WORDS = {
  allocations: 'allocations',
  frees: 'frees',
  reallocs: 'realloc calls',
} as const;
