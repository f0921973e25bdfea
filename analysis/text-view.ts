// What every text section of `cc-memwrap report` is rendered with, beside its own data (report-text.ts, stack-report.ts,
// leak-causes-text.ts): kept apart so the renderers and the report that strings them together do not import each other.

/** A source line for a file and line number (trimmed), or null when it cannot be read. */
export type SourceLines = (file: string, line: number) => string | null;

/**
 * What every section renderer takes beside its section: how many rows to list, where to find the source lines it
 * quotes (null: quote none), and the directory file names are shown relative to (the run's working directory).
 * Each returns its text from a blank line and its heading to a final newline, so sections concatenate.
 */
export interface TextView {
  top: number;
  source: SourceLines | null;
  relativeTo: string | null;
  /** False for a trace without a clock (a firmware's: pid 0), whose times are all 0 and are not shown. */
  clock?: boolean;
}

/** The last part of a path (the whole of it when it ends in a slash): `fw.elf` of `/build/fw.elf`. */
export function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1) || path;
}
