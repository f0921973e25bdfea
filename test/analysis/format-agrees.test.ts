// The trace format's numbers are written down four times: the runtime's C headers (which write traces), the reader's
// table (analysis/trace/format.ts) and the test encoder (written from the spec alone). Nothing but this test makes
// them agree: it reads the C headers as text and compares every record kind, flag bit, EXT subkind, site kind, size
// and version with the TypeScript tables.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { packageRoot } from '../../package-root.js';
import {
  CallPrediction,
  CHUNK_HEADER_SIZE,
  CHUNK_SEALED_HEAD,
  HeaderFlag,
  SEAL_MAGIC,
  SEAL_PAYLOAD,
  STOP_ERRNO_OFFSET,
  ExtKind,
  Flag,
  HEADER_SIZE,
  Kind,
  KIND_NAMES,
  READER_MAJOR,
  READER_MINOR,
  SiteKind,
  siteKindName,
} from '../../analysis/trace/format.js';
import { K, S } from '../fixtures/trace-builder.js';

const header = (name: string): string => readFileSync(path.join(packageRoot, 'runtime', name), 'utf8');

/** Every `NAME = value` inside `enum { … }` blocks and every `#define NAME value` with a numeric value. */
function cNumbers(text: string): Map<string, number> {
  const out = new Map<string, number>();
  const code = text.replace(/\/\*[\s\S]*?\*\//g, ' ');
  for (const block of code.matchAll(/enum\s*\{([^}]*)\}/g)) {
    for (const m of block[1]!.matchAll(/(\w+)\s*=\s*(0x[0-9a-fA-F]+|\d+)/g)) out.set(m[1]!, Number(m[2]!));
  }
  for (const m of code.matchAll(/^#define\s+(\w+)\s+\(?(0x[0-9a-fA-F]+|\d+)u?\)?\s*$/gm)) out.set(m[1]!, Number(m[2]!));
  return out;
}

/** The C names with `prefix`, without it, and their values. */
function withPrefix(numbers: Map<string, number>, prefix: string): Record<string, number> {
  return Object.fromEntries([...numbers].filter(([name]) => name.startsWith(prefix)).map(([name, v]) => [name.slice(prefix.length), v]));
}

describe('the C runtime and the TypeScript reader agree on the format', () => {
  const internal = cNumbers(header('mw-internal.h'));
  const publicHeader = cNumbers(header('memwrap.h'));

  test('the headers are read (else every comparison below would compare nothing)', () => {
    expect(Object.keys(withPrefix(internal, 'MW_REC_')).length).toBe(16);
    expect(Object.keys(withPrefix(publicHeader, 'MW_SITE_')).length).toBeGreaterThanOrEqual(17);
  });

  test('record kinds: MW_REC_* = Kind = the encoder\'s K, and every kind has its name', () => {
    const c = withPrefix(internal, 'MW_REC_');
    expect(c).toEqual({ ...Kind });
    expect(c).toEqual({ ...K });
    for (const [name, v] of Object.entries(Kind)) expect(KIND_NAMES[v]).toBe(name);
  });

  test('flag bits: the C tag bits are the reader\'s flags shifted above the 4-bit kind', () => {
    const f = withPrefix(internal, 'MW_F_');
    expect(f).toEqual({
      SEQ_NEXT: Flag.SEQ_NEXT << 4,
      INTERPOSED: Flag.INTERPOSED << 4,
      UNTRACKED: Flag.FREE_UNTRACKED << 4,
      FAILED: Flag.REALLOC_FAILED << 4,
      PARTIAL: Flag.LINKED_PARTIAL << 4,
      ENTER_PREDICTED: Flag.ENTER_PREDICTED << 4,
      ENTER_SITE_DELTA: Flag.ENTER_SITE_DELTA << 4,
    });
    // One C bit means "untracked" for FREE and "no new block" for REALLOC.
    expect(Flag.REALLOC_NO_BLOCK).toBe(Flag.FREE_UNTRACKED);
  });

  test('EXT subkinds, sizes and the format version', () => {
    expect(withPrefix(internal, 'MW_EXT_')).toEqual({ ...ExtKind });
    expect(internal.get('MW_HEADER_SIZE')).toBe(HEADER_SIZE);
    expect(internal.get('MW_CHUNK_HEAD')).toBe(CHUNK_HEADER_SIZE);
    // The runtime writes 1.6 only in a trace with raw segments (the encoder thread's); any other trace stays 1.5.
    expect([internal.get('MW_FORMAT_MAJOR'), internal.get('MW_FORMAT_MINOR_RAW')]).toEqual([READER_MAJOR, READER_MINOR]);
    expect(internal.get('MW_FORMAT_MINOR')).toBe(READER_MINOR - 1);
    expect([internal.get('MW_PREDICT_BITS'), internal.get('MW_HISTORY_MASK')]).toEqual([CallPrediction.BITS, CallPrediction.HISTORY_MASK]);
  });

  test('header flags (raw segments: format 1.6), the stopped errno and chunk seals (format 1.5)', () => {
    expect(withPrefix(internal, 'MW_HDR_')).toEqual({ ...HeaderFlag, STOP_ERRNO: STOP_ERRNO_OFFSET });
    // A seal: EXT tag, subkind, length, then its payload (magic and CRC).
    expect(internal.get('MW_SEAL_SIZE')).toBe(3 + SEAL_PAYLOAD);
    expect(internal.get('MW_SEALED_HEAD')).toBe(CHUNK_SEALED_HEAD);
    expect(header('mw-seal.c')).toContain(`"${SEAL_MAGIC}"`);
  });

  test('site kinds: MW_SITE_* of memwrap.h = SiteKind = the encoder\'s S', () => {
    const sites = withPrefix(publicHeader, 'MW_SITE_');
    expect(sites).toEqual({ ...SiteKind });
    expect(sites).toEqual({ ...S });
  });

  test('site kinds: each number names one kind, and each kind\'s name is its own (names are listed by number)', () => {
    const numbers = Object.values(SiteKind);
    expect(new Set(numbers).size).toBe(numbers.length);
    for (const [name, kind] of Object.entries(SiteKind)) {
      expect(siteKindName(kind).replace(/[-_]/g, '').toLowerCase(), name).toBe(name.replace(/_/g, '').toLowerCase());
    }
  });
});
