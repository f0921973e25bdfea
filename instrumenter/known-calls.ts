// Functions outside the unit that a summarised call tree may still call: C
// library functions that never allocate, take no callback and use a small,
// bounded stack, the compiler's builtins that compile to a few instructions,
// and the helpers a compiler inserts by itself (struct copies, 128-bit
// division). Each has the most stack it can take, return address included.
//
// The library bounds are for glibc on x86-64 Linux, where they were measured
// (test/instrumenter/known-calls.test.ts paints the stack below a call and
// checks that no listed function reaches past its bound); on any other target
// no library call is known and a tree that makes one is recorded. Left out on
// purpose: the dynamic linker's first call of a function through its PLT
// entry (lazy binding, about 3 KiB of stack once per function), which no
// recorded call counts either.

/** String, memory and character functions: hand-written assembly, no frame (measured 0–16 bytes). */
const STRING_BYTES = 64;
/** Number parsing and the maths library's slow paths (measured up to 128 bytes; strtol 72). */
const MATHS_BYTES = 512;

const LIBRARY: ReadonlyMap<string, number> = new Map([
  ...[
    'memcpy', 'memmove', 'memset', 'memcmp', 'memchr', 'memrchr', 'mempcpy', 'bcmp', 'bzero',
    'strlen', 'strnlen', 'strcmp', 'strncmp', 'strchr', 'strrchr', 'strchrnul', 'strcpy', 'strncpy', 'stpcpy',
    'strcat', 'strncat', 'strspn', 'strcspn', 'strpbrk', 'strstr',
    '__ctype_b_loc', '__ctype_tolower_loc', '__ctype_toupper_loc', 'tolower', 'toupper', '__errno_location',
    'isalnum', 'isalpha', 'isblank', 'iscntrl', 'isdigit', 'isgraph', 'islower', 'isprint', 'ispunct', 'isspace',
    'isupper', 'isxdigit', 'abs', 'labs', 'llabs',
  ].map((name) => [name, STRING_BYTES] as const),
  ...[
    'strtol', 'strtoul', 'strtoll', 'strtoull', 'atoi', 'atol', 'atoll',
    'sqrt', 'sqrtf', 'fabs', 'fabsf', 'floor', 'floorf', 'ceil', 'ceilf', 'round', 'roundf', 'trunc', 'truncf',
    'fmod', 'fmin', 'fmax', 'sin', 'sinf', 'cos', 'cosf', 'tan', 'tanf', 'exp', 'expf', 'log', 'logf', 'log2',
    'log10', 'pow', 'powf', 'atan', 'atan2', 'hypot',
  ].map((name) => [name, MATHS_BYTES] as const),
]);

/** libgcc's helpers gcc calls for 128-bit integers and complex products, and the stack protector's failure (which aborts). */
const COMPILER_HELPER = /^(?:__(?:u?(?:div|mod)ti3|u?divmodti4|(?:pop|clz|ctz|parity)(?:count)?[ds]i2|mul[sdx]c3|div[sdx]c3|stack_chk_fail))$/;
const HELPER_BYTES = 256;

/** Room for a call the compiler adds by itself (memcpy for a struct copy), where it gives no call graph (clang). */
export const COMPILER_CALL_BYTES = HELPER_BYTES;

/** Builtins that are a few instructions (or a call of a listed function): `__builtin_expect`, `__builtin_clzl` … */
const CHEAP_BUILTIN =
  /^__builtin_(?:expect|expect_with_probability|unreachable|trap|assume_aligned|constant_p|object_size|dynamic_object_size|prefetch|va_start|va_end|va_copy|va_arg|classify_type|types_compatible_p|choose_expr|offsetof|(?:clz|ctz|clrsb|ffs|popcount|parity)(?:l|ll|g)?|bswap(?:16|32|64|128)|(?:add|sub|mul)_overflow(?:_p)?|[su](?:add|sub|mul)l{0,2}_overflow|isnan|isinf|isinf_sign|isfinite|isnormal|signbit|huge_val[fl]?|inf[fl]?|nan[fl]?|copysign[fl]?|fabs[fl]?|abs|labs|llabs)$/;

/** Where the library list holds: measured on x86-64 glibc only. */
export interface KnownCalls {
  /** The most stack a call of `name` takes, or null when such a call is unknown. */
  bytes(name: string): number | null;
}

/** The calls known on this target: the library only on x86-64 Linux; builtins and compiler helpers everywhere. */
export function knownCalls(libraryMeasured: boolean): KnownCalls {
  return {
    bytes(name: string): number | null {
      if (CHEAP_BUILTIN.test(name)) return 0;
      if (COMPILER_HELPER.test(name)) return HELPER_BYTES;
      if (!libraryMeasured) return null;
      return LIBRARY.get(libraryName(name)) ?? null;
    },
  };
}

/** `__builtin_memcpy`, `__builtin___memcpy_chk` and `__memcpy_chk` (fortified builds) all stand for `memcpy`. */
function libraryName(name: string): string {
  const m = /^(?:__builtin_)?(?:__(.+)_chk|(.+))$/.exec(name);
  return m?.[1] ?? m?.[2] ?? name;
}

/** The library list, for the test that measures it. */
export const KNOWN_LIBRARY: ReadonlyMap<string, number> = LIBRARY;
