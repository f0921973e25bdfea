// The numbers of the .mwtrace format 1.2 (runtime/TRACE-FORMAT.md): magics, sizes, record kinds, flag bits, site kinds.
// The runtime's C headers hold the same numbers; test/analysis/format-agrees.test.ts keeps the two in step.

/** The trace format version this reader implements. */
export const READER_MAJOR = 1;
export const READER_MINOR = 6;

export const TRACE_MAGIC = 'MWTRACE\0';
export const CHUNK_MAGIC = 'MWCK';
/** A raw segment (header flag RAW_SEGMENTS): a thread's ring of words its records were left in for the runtime's encoder thread. */
export const RAW_MAGIC = 'MWRW';
/** A raw segment's thread field when the segment belongs to no thread. */
export const RAW_NO_THREAD = 0xffffffff;
export const HEADER_SIZE = 64;
export const CHUNK_HEADER_SIZE = 16;
export const BYTE_ORDER_MARK = 0x01020304;

/**
 * Header flag bits (byte 17): COMPLETE, set last by a normal exit; NOT_INTERPOSED, only instrumented calls recorded;
 * STOPPED, the runtime stopped recording because the file could not grow, with the errno at STOP_ERRNO_OFFSET.
 */
export const HeaderFlag = { COMPLETE: 1, NOT_INTERPOSED: 2, STOPPED: 4, RAW_SEGMENTS: 8 } as const;

/** Where a stopped trace's header holds the errno that stopped it (u32, the writer's byte order; 0 otherwise). */
export const STOP_ERRNO_OFFSET = 28;

/** Record kinds (`tag & 0x0f`); the model uses the same numbers for event kinds. */
export const Kind = {
  /** Extension record (format 1.1): `u` subkind, `u` payload length, payload. A 1.0 trace has none. */
  EXT: 0,
  THREAD_BEGIN: 1,
  UNIT: 2,
  STATIC: 3,
  ENTER: 4,
  EXIT: 5,
  UNWIND: 6,
  ALLOC: 7,
  FREE: 8,
  REALLOC: 9,
  LINKED: 10,
  TIME: 11,
  END: 12,
  THREAD_END: 13,
  PROGRAM: 14,
  LOST: 15,
} as const;
export type KindCode = (typeof Kind)[keyof typeof Kind];

export const KIND_NAMES: readonly string[] = [
  'EXT',
  'THREAD_BEGIN',
  'UNIT',
  'STATIC',
  'ENTER',
  'EXIT',
  'UNWIND',
  'ALLOC',
  'FREE',
  'REALLOC',
  'LINKED',
  'TIME',
  'END',
  'THREAD_END',
  'PROGRAM',
  'LOST',
];

/** Record kinds that are events (rows of `Model.events`, the chart's bars); UNIT, LINKED, TIME, PROGRAM and EXT are not. */
const EVENT_KIND = new Uint8Array(16);
for (const k of [Kind.THREAD_BEGIN, Kind.STATIC, Kind.ENTER, Kind.EXIT, Kind.UNWIND, Kind.ALLOC, Kind.FREE, Kind.REALLOC, Kind.END, Kind.THREAD_END, Kind.LOST]) {
  EVENT_KIND[k] = 1;
}

/** Whether records of `kind` are events, numbered in the trace's one global order. */
export function isEventKind(kind: number): boolean {
  return EVENT_KIND[kind] === 1;
}

export function kindName(kind: number): string {
  return KIND_NAMES[kind] ?? `KIND${kind}`;
}

/** Flag bits (`tag >> 4`); their meaning depends on the kind. */
export const Flag = {
  /** `[seq]`: the new seq is the previous one + 1, no delta follows. */
  SEQ_NEXT: 1,
  /** ALLOC / FREE / REALLOC: came through the interposed allocator; site 0, function follows. */
  INTERPOSED: 2,
  /** FREE: the pointer was not a live block; its address follows instead of a block id. */
  FREE_UNTRACKED: 4,
  /** REALLOC: no new block (the result was NULL). */
  REALLOC_NO_BLOCK: 4,
  /** REALLOC: the call failed and the old block is still live. */
  REALLOC_FAILED: 8,
  /** LINKED: the scan hit its limit; the list is partial. */
  LINKED_PARTIAL: 1,
  /** ENTER (format 1.4): no fields; site and depth delta are the thread's prediction (CallPrediction). */
  ENTER_PREDICTED: 1,
  /** ENTER (format 1.4): `s` site − the thread's previous ENTER site, `s` depth delta. */
  ENTER_SITE_DELTA: 2,
} as const;

/** EXT record subkinds (format 1.1). A reader skips unknown subkinds by their payload length. */
export const ExtKind = {
  /** Leak classes at a normal exit: `u` flags (bit 0 partial), `u` count, count × (`s` seq − block id, `u` class). */
  LEAKS: 1,
  /** A loaded object (executable or shared object): `u` library index, `str` path. */
  LIBRARY: 2,
  /** The loaded object that called the interposed allocator for the thread's latest heap record: `u` library index. */
  CALLER: 3,
  /** A branch outcome (format 1.2, `--mw-branches`): `u` (zig-zag(site − previous branch site) << 1) | outcome. */
  BRANCH: 4,
  /** The MPI rank the launcher's environment gave (format 1.3): `u` rank, `str` the variable's name. */
  RANK: 5,
  /**
   * Return addresses from an interposed allocator's caller out to the executable (format 1.3): `u` flags
   * (`CallPathFlag`), `u` count, count × (`u` library index, `u` address − the object's load base).
   */
  CALL_PATH: 6,
  /**
   * A chunk's seal (format 1.5): the last record of a chunk the runtime finished with; payload 8 bytes, SEAL_MAGIC then
   * the CRC-32C of the chunk header's first CHUNK_SEALED_HEAD bytes and of the payload before the seal (u32, the
   * writer's byte order).
   */
  SEAL: 7,
  /** The thread's raw words before (`u` segment, `u` word) are encoded before this record; those from it on are in its raw segments (header flag RAW). */
  RAW_MARK: 8,
} as const;

/** The first bytes of a seal's payload: they make a seal recognisable from the chunk's end, and a damaged one too. */
export const SEAL_MAGIC = 'MWSL';

/** A seal's payload length: the magic and one CRC-32C. */
export const SEAL_PAYLOAD = 8;

/** The chunk header bytes a seal's checksum covers: magic, thread index and capacity (not `used`, set after it). */
export const CHUNK_SEALED_HEAD = 12;

/** EXT/CALL_PATH flag bits. */
export const CallPathFlag = {
  /** The last address is in the executable: the path reached the instrumented code. */
  REACHED: 1,
  /** The path was cut at the runtime's limit (48 addresses). */
  CUT: 2,
} as const;

const EXT_KIND_NAMES: Record<number, string> = { 1: 'LEAKS', 2: 'LIBRARY', 3: 'CALLER', 4: 'BRANCH', 5: 'RANK', 6: 'CALL_PATH', 7: 'SEAL', 8: 'RAW_MARK' };

/**
 * Format 1.4's call prediction (runtime/core/mw-calls.c, mw_put_enter): per thread a table of 2^BITS slots of (site, depth
 * delta), at the slot the top BITS bits of history × 0x9e3779b1 (32-bit) pick; history = ((history << 2) ^ site) &
 * HISTORY_MASK after each ENTER, ^ the exit delta after each EXIT. Every ENTER, in any form, stores its values there.
 */
export const CallPrediction = { BITS: 10, HISTORY_MASK: 0xffff } as const;

export function extKindName(subkind: number): string {
  return EXT_KIND_NAMES[subkind] ?? `EXT${subkind}`;
}

/** LEAKS classes, as in the record; the model's `blocks.leakClass` uses 255 for "not classified". */
export const LeakClass = { DIRECT: 0, INDIRECT: 1, REACHABLE: 2, NONE: 255 } as const;

/** LEAKS flag bits. */
export const LeaksFlag = { PARTIAL: 1 } as const;

/** `END` how values. */
export const EndHow = { EXIT: 0, SIGNAL: 1 } as const;

/** Site kinds, the `MW_SITE_*` values of runtime/memwrap.h. */
export const SiteKind = {
  ENTRY: 1,
  FALLOFF: 2,
  RETURN: 3,
  MALLOC: 4,
  CALLOC: 5,
  REALLOC: 6,
  REALLOCARRAY: 7,
  FREE: 8,
  ALIGNED_ALLOC: 9,
  POSIX_MEMALIGN: 10,
  MEMALIGN: 11,
  VALLOC: 12,
  STRDUP: 13,
  STRNDUP: 14,
  PVALLOC: 15,
  STATIC: 16,
  /** An if, ?:, && / || left operand, or switch case label (`--mw-branches`); name = its source text. */
  BRANCH: 17,
  /** A call of a named function in an instrumented body (func = caller, name = callee): only in the site table, never recorded. */
  CALL: 18,
  /** An automatic object declared in an instrumented body (name = its declaration, `char scratch[128]`): only in the site table. */
  LOCAL: 19,
  /** A function whose calls are not recorded (`--mw-no-calls`; func = name = the function): only in the site table. */
  UNCALLED: 20,
  /** A function whose calls are not recorded because its whole call tree is known (`--mw-calls=leaves`; func = the
   *  function, name = the most stack that tree takes, in decimal bytes, or not a number when unknown): only in the site table. */
  SUMMARISED: 21,
  /** A recorded function that calls summarised ones (func = the function, name = the most stack those calls add to
   *  its entry depth, in decimal bytes, or not a number when unknown): only in the site table. */
  CALLS_BOUND: 22,
  /**
   * A source file the unit's sites name and its content when the unit was built (file = the file, name =
   * `sha256:<hex>`, func = "", line 0): only in the site table; a viewer shows the file only while its content matches.
   */
  SOURCE: 23,
  /** A call of a function declared outside the user's files (libc's printf …; func = caller, name = callee): only in the site table. */
  LIBCALL: 24,
  /**
   * A recorded function whose calls are written only when a record is made inside one or it reached deeper than any
   * call recorded since the thread's last record that is not a call's (`--mw-calls=heap`; func = name = the function):
   * only in the site table. Other calls of it are not in the trace.
   */
  PENDING_CALLS: 25,
} as const;

/** The name of a SUMMARISED site whose function is in recursion without heap work (`--mw-calls=leaves`): no bound
 *  exists before the run; the function's calls are recorded only when deeper than any call recorded since the thread's
 *  last record that is not a call's. */
export const MEASURED_TREE = 'measured';

const SITE_KIND_NAMES: readonly string[] = [
  'none',
  'entry',
  'falloff',
  'return',
  'malloc',
  'calloc',
  'realloc',
  'reallocarray',
  'free',
  'aligned_alloc',
  'posix_memalign',
  'memalign',
  'valloc',
  'strdup',
  'strndup',
  'pvalloc',
  'static',
  'branch',
  'call',
  'local',
  'uncalled',
  'summarised',
  'calls-bound',
  'source',
  'libcall',
  'pending_calls',
];

/** `malloc`, `entry`, … for a site kind; allocator kinds are the C function names. */
export function siteKindName(kind: number): string {
  return SITE_KIND_NAMES[kind] ?? `kind${kind}`;
}

/** The site kinds of the allocator functions (a block's `fn`). */
export const ALLOCATOR_KINDS = new Set<number>([
  SiteKind.MALLOC,
  SiteKind.CALLOC,
  SiteKind.REALLOC,
  SiteKind.REALLOCARRAY,
  SiteKind.ALIGNED_ALLOC,
  SiteKind.POSIX_MEMALIGN,
  SiteKind.MEMALIGN,
  SiteKind.VALLOC,
  SiteKind.STRDUP,
  SiteKind.STRNDUP,
  SiteKind.PVALLOC,
]);

/** ALLOCATOR_KINDS as a table by site kind (a site kind is a byte), for the per-block lookup of the readers. */
const ALLOCATOR_KIND = new Uint8Array(256);
for (const k of ALLOCATOR_KINDS) ALLOCATOR_KIND[k] = 1;

/** Whether `kind` (a site kind) is an allocator function's, one of ALLOCATOR_KINDS. */
export function isAllocatorKind(kind: number): boolean {
  return ALLOCATOR_KIND[kind] === 1;
}
