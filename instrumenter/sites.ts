// The unit's site table: every function entry, fall-off, return, allocation
// call and static object the rewrite records, numbered by local index, and
// the C text that defines it (`__mw_sites`, `__mw_u`, `__mw_unit_ref`) and
// registers static objects (`__mw_s<k>`), as runtime/memwrap.h declares them.

import { SiteKind } from '../analysis/trace/format.js';

/** Site kinds (the MW_SITE_* values of runtime/memwrap.h), defined once with
 * the rest of the format's numbers; the rewritten text is already
 * preprocessed, so the numbers are written, not the macros. */
export { SiteKind };

/** The heap functions whose calls are redirected to `__mw_<name>`, and their site kind. */
export const ALLOCATOR_KINDS: ReadonlyMap<string, number> = new Map([
  ['malloc', SiteKind.MALLOC],
  ['calloc', SiteKind.CALLOC],
  ['realloc', SiteKind.REALLOC],
  ['reallocarray', SiteKind.REALLOCARRAY],
  ['free', SiteKind.FREE],
  ['aligned_alloc', SiteKind.ALIGNED_ALLOC],
  ['posix_memalign', SiteKind.POSIX_MEMALIGN],
  ['memalign', SiteKind.MEMALIGN],
  ['valloc', SiteKind.VALLOC],
  ['pvalloc', SiteKind.PVALLOC],
  ['strdup', SiteKind.STRDUP],
  ['strndup', SiteKind.STRNDUP],
]);

/** The setjmp family: calls are wrapped as `__mw_resume(&__mw_f, <call>)`. */
export const SETJMP_NAMES: ReadonlySet<string> = new Set(['setjmp', '_setjmp', 'sigsetjmp', '__sigsetjmp']);

export interface Site {
  readonly kind: number;
  readonly line: number;
  /** C string literals, quotes included. */
  readonly file: string;
  readonly func: string;
  readonly name: string;
}

/** The section holding a unit's stack bounds, which the driver writes after compiling (call-bounds.ts). */
export const BOUND_SECTION = 'mw_bounds';
/** Bytes per bound: decimal digits, NUL-padded. */
export const BOUND_SLOT_BYTES = 12;
/** What a bound reads until the driver writes it: no number, so a reader takes it as unknown. */
const BOUND_PLACEHOLDER = 'unknown';

export class SiteTable {
  private readonly sites: Site[] = [];
  private bounds = 0;

  get size(): number {
    return this.sites.length;
  }

  /** Adds a site and returns its local index. */
  add(site: Site): number {
    this.sites.push(site);
    return this.sites.length - 1;
  }

  get(index: number): Site {
    const site = this.sites[index];
    if (site === undefined) throw new RangeError(`no site ${index} (table has ${this.sites.length})`);
    return site;
  }

  all(): readonly Site[] {
    return this.sites;
  }

  /** A new slot of `__mw_bounds` (numbered from 0): the C expression that names its text, a site's name. */
  addBound(): string {
    return `__mw_bounds[${this.bounds++}]`;
  }

  /** Slots handed out by `addBound`. */
  get boundCount(): number {
    return this.bounds;
  }

  /**
   * One line of C (no newline) defining the table, the unit and the unit's
   * entry in section `mw_units`; empty when there are no sites.
   */
  renderUnit(): string {
    const n = this.sites.length;
    if (n === 0) return '';
    const rows = this.sites.map((s) => `{${s.kind}u, ${s.line}u, ${s.file}, ${s.func}, ${s.name}}`);
    // The bounds are the only contents of their section, with no relocations: the driver replaces its bytes.
    const bounds =
      this.bounds === 0
        ? ''
        : `static const char __mw_bounds[${this.bounds}][${BOUND_SLOT_BYTES}] __attribute__((used, section("${BOUND_SECTION}"))) = { ` +
          Array(this.bounds).fill(`"${BOUND_PLACEHOLDER}"`).join(', ') +
          ' }; ';
    return (
      bounds +
      `static const struct __mw_site __mw_sites[${n}] = { ${rows.join(', ')} }; ` +
      `static struct __mw_unit __mw_u = { 0u, ${n}u, __mw_sites }; ` +
      `static struct __mw_unit *const __mw_unit_ref __attribute__((used, section("mw_units"))) = &__mw_u; `
    );
  }
}

/** The registration of one static object (`ref` numbers the declarations). */
export function renderStaticRef(ref: number, site: number, name: string): string {
  return (
    `static const struct __mw_static_ref __mw_s${ref} __attribute__((used, section("mw_statics"))) = ` +
    `{ &__mw_u, ${site}u, &${name}, sizeof(${name}) };`
  );
}

/**
 * A C string literal (quotes included) holding exactly `bytes`, written in
 * printable ASCII only: `"`, `\` and `?` (trigraphs under -std=c89) are
 * escaped, every other byte outside 0x20..0x7e becomes a 3-digit octal escape.
 */
export function cStringLiteral(bytes: Uint8Array): string {
  let out = '"';
  for (const b of bytes) {
    if (b === 0x22) out += '\\"';
    else if (b === 0x5c) out += '\\\\';
    else if (b === 0x3f) out += '\\?';
    else if (b >= 0x20 && b <= 0x7e) out += String.fromCharCode(b);
    else out += '\\' + b.toString(8).padStart(3, '0');
  }
  return out + '"';
}
