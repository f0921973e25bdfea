// The records that describe the run rather than its events — UNIT (sites), PROGRAM, EXT/LIBRARY and EXT/CALLER's
// library indices, EXT/RANK, END, EXT/LEAKS — collected in file order, and what the reader makes of them: the site table, the
// library names, how the run ended, the leak classes. Shared by the decoder (decode.ts) and the streaming reader
// (resolve-stream.ts), which must agree on every one of these facts and on the problems they raise.
import { ExtKind, LeakClass, SiteKind } from './format.js';
import type { TraceRecord, UnitTable } from './records.js';
import type { TraceHeader } from './header.js';
import { NONE, type RunEnd, type SiteTable } from '../model.js';
import type { ProblemLog } from '../problems.js';

/** Site ids above this are refused (a UNIT claiming them is skipped): the site table is a dense array. */
export const MAX_SITE_ID = 1 << 24;
/** Library indices at or above this are refused (EXT/LIBRARY and EXT/CALLER naming them are ignored). */
export const MAX_LIBRARY = 1 << 16;

/** A block id as the problems name it. */
export const hex = (v: number): string => `0x${v.toString(16)}`;

export class RunFacts {
  units: { unit: UnitTable; offset: number; thread: number }[] = [];
  program: { path: string; cwd: string } | null = null;
  /** EXT/LIBRARY: path by library index (the first definition counts). */
  libraries = new Map<number, string>();
  /** Library indices CALLER records name. */
  called = new Set<number>();
  maxLibrary = -1;
  /** The first END record, and where it is. */
  end: { how: number; status: number; offset: number; thread: number } | null = null;
  /** EXT/RANK: the first one. */
  rank: { rank: number; variable: string } | null = null;
  /** EXT/LEAKS records: ids, classes, partial flag, where. */
  leaks: { ids: number[]; classes: number[]; partial: boolean; offset: number; thread: number }[] = [];

  constructor(private readonly problems: ProblemLog) {}

  unit(r: TraceRecord): void {
    if (r.unit !== null) this.units.push({ unit: r.unit, offset: r.offset, thread: r.thread });
  }

  programRecord(r: TraceRecord): void {
    if (this.program === null) this.program = { path: r.path, cwd: r.cwd };
    else this.problems.add('program-twice', 'warning', r.offset, r.thread, 'second PROGRAM record; the first one counts');
  }

  endRecord(r: TraceRecord): void {
    if (this.end === null) this.end = { how: r.how, status: r.status, offset: r.offset, thread: r.thread };
    else this.problems.add('end-twice', 'warning', r.offset, r.thread, 'second END record; the first one counts');
  }

  rankRecord(r: TraceRecord): void {
    if (this.rank === null) this.rank = { rank: r.rank, variable: r.path };
    else this.problems.add('rank-twice', 'warning', r.offset, r.thread, 'second RANK record; the first one counts');
  }

  leaksRecord(r: TraceRecord): void {
    this.leaks.push({ ids: r.ids, classes: r.classes, partial: r.partial, offset: r.offset, thread: r.thread });
  }

  /**
   * EXT/LIBRARY (define an index) or EXT/CALLER. Returns true for a CALLER whose index is in range: the caller then
   * checks that it follows a heap record of its thread and, if so, calls `called`.
   */
  library(r: TraceRecord): boolean {
    const name = r.subkind === ExtKind.LIBRARY ? 'LIBRARY' : 'CALLER';
    if (r.library >= MAX_LIBRARY) {
      this.problems.add('library-range', 'warning', r.offset, r.thread, `${name} names library ${r.library}, above the limit ${MAX_LIBRARY}; ignored`);
      return false;
    }
    if (r.library > this.maxLibrary) this.maxLibrary = r.library;
    if (r.subkind === ExtKind.LIBRARY) {
      if (this.libraries.has(r.library)) {
        this.problems.add('library-redefined', 'warning', r.offset, r.thread, `LIBRARY redefines library ${r.library}; the first definition counts`);
      } else {
        this.libraries.set(r.library, r.path);
      }
      return false;
    }
    return true;
  }

  /** A CALLER record that applies: its library counts as named. */
  calledLibrary(r: TraceRecord): void {
    this.called.add(r.library);
  }

  /** An EXT/CALL_PATH record that follows no heap record with its CALLER, or one that has a path already. */
  strayCallPath(r: TraceRecord): void {
    this.problems.add('call-path-without-caller', 'warning', r.offset, r.thread, 'CALL_PATH record does not follow a heap record and its CALLER; ignored');
  }

  /** The libraries an EXT/CALL_PATH names: false (and a problem) if one is out of range, else they count as named. */
  callPathLibraries(r: TraceRecord): boolean {
    for (const lib of r.pathLibs) {
      if (lib >= MAX_LIBRARY) {
        this.problems.add('library-range', 'warning', r.offset, r.thread, `CALL_PATH names library ${lib}, above the limit ${MAX_LIBRARY}; ignored`);
        return false;
      }
      if (lib > this.maxLibrary) this.maxLibrary = lib;
      this.called.add(lib);
    }
    return true;
  }

  /** A CALLER record that follows no heap record of its thread. */
  strayCaller(r: TraceRecord): void {
    this.problems.add('caller-without-heap', 'warning', r.offset, r.thread, 'CALLER record does not follow a heap record of its thread; ignored');
  }
}

/** The site table of every accepted UNIT record. */
export function buildSites(facts: RunFacts, problems: ProblemLog): SiteTable {
  let count = 1;
  const accepted: RunFacts['units'] = [];
  for (const u of facts.units) {
    const n = u.unit.kind.length;
    if (u.unit.base + n > MAX_SITE_ID) {
      problems.add('site-range', 'warning', u.offset, u.thread, `UNIT claims site ids ${u.unit.base}…${u.unit.base + n - 1}, above the limit ${MAX_SITE_ID}; its sites are ignored`);
      continue;
    }
    accepted.push(u);
    count = Math.max(count, u.unit.base + n);
  }
  const sites: SiteTable = {
    count,
    kind: new Uint8Array(count),
    file: new Int32Array(count).fill(NONE),
    func: new Int32Array(count).fill(NONE),
    name: new Int32Array(count).fill(NONE),
    line: new Uint32Array(count),
    strings: [],
  };
  const stringIds = new Map<string, number>();
  const intern = (s: string): number => {
    let id = stringIds.get(s);
    if (id === undefined) {
      id = sites.strings.length;
      sites.strings.push(s);
      stringIds.set(s, id);
    }
    return id;
  };
  for (const { unit, offset, thread } of accepted) {
    const local = unit.strings.map(intern);
    const str = (i: number): number => {
      const id = local[i];
      if (id === undefined) {
        problems.add('bad-string-index', 'warning', offset, thread, `UNIT site names string ${i}, but the unit has ${local.length} strings`);
        return NONE;
      }
      return id;
    };
    for (let i = 0; i < unit.kind.length; i++) {
      const id = unit.base + i;
      if (id === 0 || sites.kind[id] !== 0) {
        problems.add('site-redefined', 'warning', offset, thread, id === 0 ? 'UNIT defines site 0, which means "no site"; ignored' : `UNIT redefines site ${id}; the first definition counts`);
        continue;
      }
      const kind = unit.kind[i]!;
      sites.kind[id] = kind > 255 || kind === 0 ? 255 : kind;
      sites.file[id] = str(unit.file[i]!);
      sites.func[id] = str(unit.func[i]!);
      sites.name[id] = str(unit.name[i]!);
      sites.line[id] = Math.min(unit.line[i]!, 0xffffffff);
    }
    stackBounds(sites, unit, offset, thread, problems);
  }
  return sites;
}

/**
 * A unit's CALLS_BOUND sites (the most stack a function's summarised calls add) given to its ENTRY sites of the same
 * function in `sites.stackBound`. A bound that is not a number leaves the frame's depth as recorded, with a warning:
 * the peak stack may then be low.
 */
function stackBounds(sites: SiteTable, unit: UnitTable, offset: number, thread: number, problems: ProblemLog): void {
  const bounds = new Map<string, number>();
  for (let i = 0; i < unit.kind.length; i++) {
    if (unit.kind[i] !== SiteKind.CALLS_BOUND) continue;
    const text = unit.strings[unit.name[i]!] ?? '';
    const func = unit.strings[unit.func[i]!] ?? '';
    if (/^\d{1,10}$/.test(text)) bounds.set(func, Number(text));
    else problems.add('stack-bound-unknown', 'warning', offset, thread, `the stack the summarised calls of ${func} take is not known ("${text}"); its frames count without it`);
  }
  if (bounds.size === 0) return;
  sites.stackBound ??= new Float64Array(sites.count);
  for (let i = 0; i < unit.kind.length; i++) {
    const bound = unit.kind[i] === SiteKind.ENTRY ? bounds.get(unit.strings[unit.func[i]!] ?? '') : undefined;
    if (bound !== undefined && unit.base + i < sites.count) sites.stackBound[unit.base + i] = bound;
  }
}

/**
 * LEAKS: the classes of the blocks live at the end, written right before END (after every heap record of its thread):
 * `setClass` is told each live block's class; returns what the scan was (present, cut short).
 */
export function applyLeakClasses(
  facts: RunFacts,
  live: (id: number) => number,
  setClass: (block: number, cls: number) => void,
  problems: ProblemLog,
): { present: boolean; partial: boolean } {
  const leakScan = { present: facts.leaks.length > 0, partial: false };
  if (facts.leaks.length > 1) {
    const l = facts.leaks[1]!;
    problems.add('leaks-twice', 'warning', l.offset, l.thread, 'second EXT/LEAKS record; the first one counts');
  }
  const leaks = facts.leaks[0];
  if (leaks !== undefined) {
    leakScan.partial = leaks.partial;
    let unknown = 0;
    let firstUnknown = 0;
    for (let i = 0; i < leaks.ids.length; i++) {
      const id = leaks.ids[i]!;
      const b = live(id);
      if (b === NONE) {
        if (unknown++ === 0) firstUnknown = id;
        continue;
      }
      const cls = leaks.classes[i]!;
      if (cls > LeakClass.REACHABLE) {
        problems.add('leaks-class', 'warning', leaks.offset, leaks.thread, `LEAKS gives block ${hex(id)} the unknown class ${cls}; left unclassified`);
        continue;
      }
      setClass(b, cls);
    }
    if (unknown > 0) {
      problems.add('leaks-unknown-block', 'warning', leaks.offset, leaks.thread, `LEAKS names ${unknown} block(s) that are not live at the end of the trace (first: ${hex(firstUnknown)})`);
    }
  }
  return leakScan;
}

/** Errno values (Linux's) a runtime that stopped recording writes into the header, in words. */
const STOP_REASONS: Record<number, string> = { 28: 'disk full, ENOSPC', 122: 'disk quota exceeded, EDQUOT', 27: 'file too large, EFBIG', 5: 'I/O error, EIO' };

/** Why the runtime stopped recording (the header's errno), in a few words: "disk full, ENOSPC". */
export function describeStop(errno: number): string {
  return STOP_REASONS[errno] ?? `the trace file could not grow, errno ${errno}`;
}

/** How the run ended, from its END record (global row `endEvent`) or the lack of one. */
export function runEnd(facts: RunFacts, header: TraceHeader, endEvent: number, problems: ProblemLog): RunEnd {
  let end: RunEnd = { how: 'unknown', code: null, complete: header.complete, event: NONE };
  const e = facts.end;
  if (e !== null) {
    if (e.how === 0 || e.how === 1) {
      end = { how: e.how === 0 ? 'exit' : 'signal', code: e.status, complete: header.complete, event: endEvent };
    } else {
      problems.add('end-how', 'warning', e.offset, e.thread, `END record has an unknown "how" value ${e.how}`);
      end = { how: 'unknown', code: null, complete: header.complete, event: endEvent };
    }
  } else {
    problems.add('no-end', 'warning', null, null, header.complete
      ? 'the header is marked complete but there is no END record'
      : header.stoppedErrno !== null
        ? `no END record: recording stopped (${describeStop(header.stoppedErrno)}) before the program ended`
        : header.pid === 0
          ? 'no END record: the firmware stopped (a fault, a lockup, a reset or a debugger) before the runtime could record its end; records made after its last write-out are not in the trace'
        : 'no END record: the program was killed (e.g. SIGKILL) or crashed before the runtime could record its end');
  }
  return end;
}

/** Library paths dense by index; an index used by CALLER but never defined gets a placeholder name. */
export function libraryNames(facts: RunFacts): string[] {
  const libraries: string[] = [];
  for (let k = 0; k <= facts.maxLibrary; k++) libraries.push(facts.libraries.get(k) ?? `(library ${k})`);
  return libraries;
}

/** One problem per library index a CALLER record names but no LIBRARY record defines. */
export function undefinedLibraries(facts: RunFacts, problems: ProblemLog): void {
  for (let k = 0; k <= facts.maxLibrary; k++) {
    if (!facts.libraries.has(k) && facts.called.has(k)) {
      problems.add('library-undefined', 'warning', null, null, `library ${k} is named by a CALLER record but no LIBRARY record defines it`);
    }
  }
}
