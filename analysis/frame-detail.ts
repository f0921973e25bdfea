// What explains each frame of a call stack: the line where its caller called it (CALL sites of the site table), the
// stack bytes it took (the trace's entry depths) and the automatic objects its body declares (LOCAL sites), with the
// compiler's frame size (the program's .mw_stack section) where the host could read it.
import type { StackEntry } from './event-detail.js';
import type { Model } from './model.js';
import { siteLocation } from './sites.js';
import { SiteKind } from './trace/format.js';
import type { StackUnit } from './worst-stack.js';

export interface FrameLocal {
  /** The declaration as written, without its initializer: `char scratch[128]`. */
  text: string;
  line: number;
}

export interface ExplainedFrame extends StackEntry {
  /**
   * Where the next frame out (the caller) calls this function: the caller's file and the lines of its calls of it,
   * several when it calls it on several lines. null for the outermost frame, when the trace's site tables name no
   * call lines (a program built before they were recorded) or no call of this function by name (a call through a
   * pointer).
   */
  call: { file: string | null; lines: number[]; label: string } | null;
  /**
   * Stack bytes the frame took (the trace's depths: stack in use at its entry, which the runtime measures inside
   * the function, less that of its caller's entry): its locals, saved registers and return address. null for the
   * outermost frame, whose depth counts from the stack base.
   */
  bytes: number | null;
  /** The compiler's frame size for the function (`.mw_stack`), when known. */
  compilerBytes: number | null;
  locals: FrameLocal[];
}

interface FunctionSites {
  /** Callee name → lines where this function calls it, ascending. */
  calls: Map<string, number[]>;
  /** Its calls of functions declared outside the user's files (LIBCALL sites: libc's printf …), by line. */
  libCalls: Array<{ callee: string; line: number }>;
  locals: FrameLocal[];
}

interface FrameIndex {
  /** `file \0 function` → its CALL and LOCAL sites. */
  byFunction: Map<string, FunctionSites>;
  /** The site tables hold at least one CALL site. */
  hasCalls: boolean;
}

const indexes = new WeakMap<Pick<Model, 'sites'>, FrameIndex>();

/** The CALL, LIBCALL and LOCAL sites by function, made once per model (its size follows the site table, not the events). */
function frameIndex(model: Pick<Model, 'sites'>): FrameIndex {
  let index = indexes.get(model);
  if (index !== undefined) return index;
  index = { byFunction: new Map(), hasCalls: false };
  const s = model.sites;
  const str = (i: number): string => s.strings[i] ?? '';
  for (let id = 1; id < s.count; id++) {
    const kind = s.kind[id]!;
    if (kind !== SiteKind.CALL && kind !== SiteKind.LOCAL && kind !== SiteKind.LIBCALL) continue;
    const key = `${str(s.file[id]!)}\0${str(s.func[id]!)}`;
    let sites = index.byFunction.get(key);
    if (sites === undefined) index.byFunction.set(key, (sites = { calls: new Map(), libCalls: [], locals: [] }));
    const line = s.line[id]!;
    if (kind === SiteKind.LOCAL) {
      sites.locals.push({ text: str(s.name[id]!), line });
      continue;
    }
    if (kind === SiteKind.LIBCALL) {
      sites.libCalls.push({ callee: str(s.name[id]!), line });
      continue;
    }
    index.hasCalls = true;
    const lines = sites.calls.get(str(s.name[id]!)) ?? [];
    if (!lines.includes(line)) lines.push(line);
    sites.calls.set(str(s.name[id]!), lines.sort((a, b) => a - b));
  }
  for (const sites of index.byFunction.values()) {
    sites.locals.sort((a, b) => a.line - b.line);
    sites.libCalls.sort((a, b) => a.line - b.line);
  }
  indexes.set(model, index);
  return index;
}

/** The calls `fn` (defined in `file`) makes of functions declared outside the user's files, by line (LIBCALL sites). */
export function libraryCallsOf(run: Pick<Model, 'sites'>, file: string | null, fn: string): ReadonlyArray<{ callee: string; line: number }> {
  return frameIndex(run).byFunction.get(`${file ?? ''}\0${fn}`)?.libCalls ?? [];
}

/** True when the trace's site tables name call lines (programs built since CALL sites were recorded). */
export function traceNamesCallLines(model: Model): boolean {
  return frameIndex(model).hasCalls;
}

/** The compiler's frame size of `fn` defined in `file`, from the program's `.mw_stack` units; by name alone when the files differ. */
function compilerFrame(units: readonly StackUnit[] | null, fn: string, file: string | null): number | null {
  if (units === null) return null;
  let byName: number | null = null;
  for (const unit of units) {
    for (const f of unit.functions) {
      if (f.name !== fn) continue;
      if (file !== null && (f.file === file || file.endsWith(`/${f.file}`) || f.file.endsWith(`/${file}`))) return f.bytes;
      byName ??= f.bytes;
    }
  }
  return byName;
}

/** `stack` (innermost first, as `callStackAt` gives it) with what explains each frame. */
export function explainStack(model: Model, stack: readonly StackEntry[], units: readonly StackUnit[] | null = null): ExplainedFrame[] {
  const index = frameIndex(model);
  const cwd = model.program?.cwd ?? null;
  return stack.map((f, i) => {
    const caller = stack[i + 1] ?? null;
    const own = index.byFunction.get(`${f.file ?? ''}\0${f.function}`);
    const lines = caller === null ? undefined : index.byFunction.get(`${caller.file ?? ''}\0${caller.function}`)?.calls.get(f.function);
    return {
      ...f,
      call:
        caller !== null && lines !== undefined
          ? { file: caller.file, lines, label: siteLocation({ kind: SiteKind.CALL, file: caller.file, line: lines[0]!, func: caller.function, name: f.function }, cwd).replace(/:\d+$/, `:${lines.join(' or ')}`) }
          : null,
      bytes: caller === null ? null : f.depth - caller.depth,
      compilerBytes: compilerFrame(units, f.function, f.file),
      locals: own?.locals ?? [],
    };
  });
}
