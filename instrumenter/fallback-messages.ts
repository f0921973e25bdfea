// The driver's two messages for a C source it built uninstrumented (the
// rewriter failed on it, or the rewritten text did not compile while the
// original did), and their reading back from a build's output: a build that
// falls back still links, runs and prints the same, so a test that wants the
// code instrumented has to read these lines to know.

const PREFIX = 'cc-memwrap';

/** Why a unit was built uninstrumented. */
export type FallbackReason = 'not-instrumented' | 'does-not-compile';

export interface Fallback {
  /** The source as the compiler command named it. */
  unit: string;
  reason: FallbackReason;
}

/** The rewriter could not handle the unit (e.g. tree-sitter could not parse it). */
export function notInstrumentedMessage(unit: string, error: string): string {
  return `${PREFIX}: could not instrument ${unit}: ${error}`;
}

/** The rewritten unit failed to compile although the original compiles. */
export function doesNotCompileMessage(unit: string): string {
  return `${PREFIX}: warning: the instrumented ${unit} does not compile, although the original does; built it uninstrumented (--mw-keep keeps the rewritten text; --mw-strict makes this an error)`;
}

// Anchored at a line's start, so a compiler diagnostic that quotes the words
// elsewhere on a line does not count. A unit's path may hold spaces; the
// first message's path ends at the first ": " (the error text follows).
const NOT_INSTRUMENTED = /^cc-memwrap: could not instrument (.+?): /;
const DOES_NOT_COMPILE = /^cc-memwrap: warning: the instrumented (.+) does not compile, although the original does; built it uninstrumented/;

/**
 * The units a build's output says were built uninstrumented, each once (a
 * source compiled twice, as for a static and a shared library, counts once
 * per reason), in order of first mention.
 */
export function uninstrumentedUnits(buildOutput: string): Fallback[] {
  const seen = new Set<string>();
  const found: Fallback[] = [];
  for (const line of buildOutput.split(/\r?\n/)) {
    const parse = NOT_INSTRUMENTED.exec(line);
    const compile = parse ? null : DOES_NOT_COMPILE.exec(line);
    const match = parse ?? compile;
    if (!match) continue;
    const fallback: Fallback = { unit: match[1]!, reason: parse ? 'not-instrumented' : 'does-not-compile' };
    const key = `${fallback.reason}\0${fallback.unit}`;
    if (seen.has(key)) continue;
    seen.add(key);
    found.push(fallback);
  }
  return found;
}
