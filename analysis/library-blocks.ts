// What made a heap block the program did not allocate itself — the stdout buffer libc makes at a program's first
// printf, say — named from what the trace already holds, at no cost to the running program: the loaded object whose
// code called the allocator (EXT/CALLER) and the calls of libc's functions the rewriter saw in the function the block
// is charged to (LIBCALL sites, with their lines). Not from recorded call paths (MEMWRAP_CALL_PATHS, 1.5 µs a call).
import { libraryCallsOf } from './frame-detail.js';
import type { Model } from './model.js';
import { siteInfo, siteLocation } from './sites.js';

export interface LibraryCause {
  /** "stdout buffer — printf at mq.c:44"; "made inside libc.so.6 during qsort at sort.c:12"; "… during printf or puts (mq.c:44, 47)". */
  label: string;
  /** The one call that made it (its line is where the viewer points), or null when several could have. */
  call: { file: string; line: number; callee: string } | null;
  /** Why it exists and how a program does without it, when that is known (libc's stdio); else null. */
  advice: string | null;
}

/** libc's functions that write to stdout, read from stdin, or use a stream they are given: each makes the stream's buffer on its first use. */
const STDOUT = new Set(['printf', 'vprintf', 'puts', 'putchar', 'putchar_unlocked', '__printf_chk', '__vprintf_chk']);
const STDIN = new Set(['scanf', 'vscanf', 'getchar', 'getchar_unlocked', 'gets', '__isoc99_scanf', '__isoc99_vscanf']);
const STREAM = new Set([
  'fprintf', 'vfprintf', 'fputs', 'fputc', 'putc', 'fwrite', 'fscanf', 'vfscanf', 'fgets', 'fgetc', 'getc', 'fread',
  'getline', 'getdelim', 'ungetc', '__fprintf_chk', '__vfprintf_chk', '__isoc99_fscanf',
]);
const OPEN = new Set(['fopen', 'fdopen', 'freopen', 'fmemopen', 'open_memstream', 'popen', 'tmpfile', 'opendir', 'fdopendir']);

/** What libc's call `callee` made, and what to do about it; null for a function not listed. */
function stdioBlock(callee: string, at: string): { label: string; advice: string } | null {
  const buffer = (stream: string, how: string): string =>
    `libc makes ${stream}'s buffer at its first ${how} (4,096 B when it is a pipe or a file, 1,024 B on a terminal) and keeps it to the end; ` +
    `setvbuf(${stream}, NULL, _IONBF, 0) before it (no buffer), or setvbuf with a static buffer of your own, avoids it`;
  if (STDOUT.has(callee)) return { label: `stdout buffer — ${callee} at ${at}`, advice: buffer('stdout', 'output') };
  if (STDIN.has(callee)) return { label: `stdin buffer — ${callee} at ${at}`, advice: buffer('stdin', 'input') };
  if (STREAM.has(callee)) {
    return { label: `a stream's buffer — ${callee} at ${at}`, advice: "libc makes a stream's buffer at its first input or output; setvbuf on the stream right after opening it avoids it" };
  }
  if (OPEN.has(callee)) return { label: `the stream ${callee} opened — ${callee} at ${at}`, advice: `libc's ${callee} allocates the stream; closing it (fclose, closedir) frees it` };
  return null;
}

/**
 * What made a block the interposed allocator saw, charged to the instrumented function entered at site `entry`,
 * called from the loaded object `library` (its path, or null when the trace does not say). Null when the function
 * made no call of libc's function the rewriter saw (a trace from before LIBCALL sites, or code called through a
 * pointer): nothing better than "(via libc/uninstrumented)" is known then.
 */
export function libraryCause(run: Pick<Model, 'sites' | 'program'>, entry: number, library: string | null): LibraryCause | null {
  const fn = siteInfo(run, entry);
  if (fn === null || fn.func === null) return null;
  const calls = libraryCallsOf(run, fn.file, fn.func);
  if (calls.length === 0) return null;
  const cwd = run.program?.cwd ?? null;
  const at = (line: number): string => siteLocation({ ...fn, line }, cwd);
  const object = library === null ? 'a library' : library.split('/').pop()!;
  const libc = library === null || /(^|\/)libc[.-]/.test(library);
  // libc's stdio calls are the ones that make blocks behind the program's back: the only one, when there is one.
  const stdio = libc ? calls.filter((c) => stdioBlock(c.callee, '') !== null) : [];
  const pick = stdio.length === 1 ? stdio[0]! : calls.length === 1 ? calls[0]! : null;
  if (pick !== null) {
    const call = { file: fn.file ?? '', line: pick.line, callee: pick.callee };
    const known = libc ? stdioBlock(pick.callee, at(pick.line)) : null;
    return known === null ? { label: `made inside ${object} during ${pick.callee} at ${at(pick.line)}`, call, advice: null } : { ...known, call };
  }
  const among = stdio.length > 0 ? stdio : calls;
  const names = [...new Set(among.map((c) => c.callee))];
  const lines = [...new Set(among.map((c) => c.line))];
  const place = siteLocation({ ...fn, line: lines[0]! }, cwd).replace(/:\d+$/, `:${lines.join(', ')}`);
  return { label: `made inside ${object} during ${names.join(' or ')} (${place})`, call: null, advice: null };
}
