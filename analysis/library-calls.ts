// `report --by entry` and `--by library-function`: heap calls made inside shared libraries, charged to the library
// function the instrumented code called (MPI_Init, MPI_Finalize, printf: the "first function called from instrumented
// code") or to the innermost named function inside the libraries before the allocator. Both come from the EXT/CALL_PATH
// records (format 1.3), whose return addresses the model's `symbols` namer resolves from the objects' symbol tables.
import type { GroupMaker, GroupTable, Grouper } from './attribution-groups.js';
import type { TraceStart } from './event-fold.js';
import { NONE, type CallPath } from './model.js';
import { CallPathFlag, Flag } from './trace/format.js';
import { baseName } from './text-view.js';

/** Rows of heap calls that are not inside a library function, by why. */
export const LIBRARY_CALL_ROWS = {
  /** At an instrumented allocation site. */
  instrumented: '(instrumented code)',
  /** Through the interposed allocator, called from the executable itself (a function pointer, uninstrumented code in it). */
  direct: '(allocator called from the program)',
  /** Interposed, without a call path: an older trace, MEMWRAP_CALL_PATHS=0, a caller in no loaded object. */
  noPath: '(no call path recorded)',
  /** The path never reached the executable: a library's own thread, or unwinding stopped (or was cut at its limit). */
  notFromProgram: '(not called from the program)',
} as const;


/** "MPI_Init (libmpich.so.12)", or "libmpich.so.12+0x1a2b3" when no symbol covers the address. */
function frameLabel(model: TraceStart, path: CallPath, i: number): { label: string; named: boolean } {
  const file = model.libraries[path.libraries[i]!] ?? `(library ${path.libraries[i]})`;
  const name = model.symbols?.name(file, path.offsets[i]!) ?? null;
  return name === null ? { label: `${baseName(file)}+0x${path.offsets[i]!.toString(16)}`, named: false } : { label: `${name} (${baseName(file)})`, named: true };
}

/** The group of the library function the program called, for path `p`. */
function entryOf(model: TraceStart, p: CallPath): string {
  const n = p.libraries.length;
  if ((p.flags & CallPathFlag.REACHED) === 0 || n < 2) return n < 2 && (p.flags & CallPathFlag.REACHED) !== 0 ? LIBRARY_CALL_ROWS.direct : LIBRARY_CALL_ROWS.notFromProgram;
  return frameLabel(model, p, n - 2).label;
}

/** The group of the innermost named function inside the libraries (the first address if none is named). */
function innermostOf(model: TraceStart, p: CallPath): string {
  const last = (p.flags & CallPathFlag.REACHED) !== 0 ? p.libraries.length - 1 : p.libraries.length;
  if (last <= 0) return LIBRARY_CALL_ROWS.direct;
  for (let i = 0; i < last; i++) {
    const f = frameLabel(model, p, i);
    if (f.named) return f.label;
  }
  return frameLabel(model, p, 0).label;
}

/** A call path's group: remembered per path (a reader hands the same object to every event of one path). */
function byCallPath(start: TraceStart, table: GroupTable, of: (start: TraceStart, p: CallPath) => string): GroupMaker {
  const cache = new Map<CallPath, number>();
  const row = (label: string): number => table.group(`${label}`, label);
  const charge: Grouper = (e, _tables, out) => {
    if ((e.flags & Flag.INTERPOSED) === 0) return out.add(row(LIBRARY_CALL_ROWS.instrumented));
    const p = e.callPath;
    if (p === null) {
      const lib = e.library;
      const exe = lib !== NONE && start.program !== null && start.libraries[lib] === start.program.path;
      return out.add(row(exe ? LIBRARY_CALL_ROWS.direct : LIBRARY_CALL_ROWS.noPath));
    }
    let g = cache.get(p);
    if (g === undefined) cache.set(p, (g = row(of(start, p))));
    out.add(g);
  };
  return { charge, enter: null, finish: null };
}

/** 'entry': the library function the instrumented code called. */
export const byEntry = (start: TraceStart, table: GroupTable): GroupMaker => byCallPath(start, table, entryOf);
/** 'library-function': the innermost named function inside the libraries before the allocator. */
export const byLibraryFunction = (start: TraceStart, table: GroupTable): GroupMaker => byCallPath(start, table, innermostOf);
