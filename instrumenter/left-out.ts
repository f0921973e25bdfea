// `--mw-no-calls=PATTERN,…`: functions whose calls are not recorded, for
// programs whose tiny functions are called too often to record every call.
// Such a function keeps its heap calls and static objects recorded; it gets
// no frame of its own (its stack counts in its caller's) and one UNCALLED
// site, so that a report can say what was left out.
import path from 'node:path';

export const NO_CALLS_FLAG = '--mw-no-calls=';

/** Function names or source files (a pattern with `/` or `.`), `*` and `?` as in the shell. */
export class CallFilter {
  private readonly names: RegExp[] = [];
  private readonly files: RegExp[] = [];

  constructor(readonly patterns: readonly string[]) {
    for (const p of patterns) (/[/.]/.test(p) ? this.files : this.names).push(globRegExp(p));
  }

  /** Whether the calls of function `name`, defined in `file` (as its linemarker names it), are left out. */
  leavesOut(name: string, file: string, compileDir: string): boolean {
    if (this.names.some((r) => r.test(name))) return true;
    if (this.files.length === 0) return false;
    const full = path.resolve(compileDir, file);
    // A pattern matches the whole path or any tail of it that starts after a `/`: `lzw.c`, `vendor/*.c`.
    const tails = [full, ...[...full.matchAll(/\//g)].map((m) => full.slice(m.index! + 1))];
    return this.files.some((r) => tails.some((t) => r.test(t)));
  }
}

/** The patterns of a `--mw-no-calls=` value; throws a message naming the flag on an empty list or entry. */
export function parseNoCalls(value: string): string[] {
  const patterns = value.split(',').map((p) => p.trim());
  if (patterns.some((p) => p === '')) {
    throw new Error(`${NO_CALLS_FLAG}${value}: give a comma-separated list of function names or files, e.g. ${NO_CALLS_FLAG}peek,is_*,vendor/*.c`);
  }
  return patterns;
}

/** `*` any run of characters but `/`, `?` one such character, the rest literal. */
function globRegExp(glob: string): RegExp {
  const body = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]');
  return new RegExp(`^${body}$`);
}
