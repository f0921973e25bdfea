/* mw-seal.c — chunk seals (format 1.5, TRACE-FORMAT.md "Chunk seals").
 *
 * When a thread is done with a chunk of the trace file (it moves on to
 * another, it ends, the run ends), it writes one last record into it: EXT/SEAL,
 * the magic "MWSL" and the CRC-32C of the chunk header's first 12 bytes and of
 * the payload before the seal.  A reader checks it and says when a chunk was
 * damaged after it was written (a disk, a copy, an editor).  Sealing is off
 * the hot path: once per chunk (1 MiB once a thread has written 340 KiB).
 * CRC-32C (Castagnoli) because x86-64 computes it in hardware (SSE 4.2's
 * crc32, eight bytes an instruction): callgrind counted 3 instructions a byte
 * for a table-driven CRC, 4.5 % of a call-heavy run's; elsewhere the table,
 * sliced by eight.  Every chunk keeps MW_SEAL_SIZE bytes free for it
 * (mw-file.c), so a seal always fits. */
#include <string.h>
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#define MW_CRC_X86 1
#endif

#include "mw-internal.h"

/* CRC-32C tables for slicing by eight (reflected polynomial 0x82F63B78),
 * filled once at start-up, before any chunk exists (mw_crc_init), and
 * whether the processor computes it itself. */
uint32_t mw_crc_table[8][256];
int mw_crc_hw;

void mw_crc_init(void)
{
  if (mw_crc_table[0][1]) return;
#ifdef MW_CRC_X86
  /* cpuid itself, not __builtin_cpu_supports: that calls into libgcc, and in the weak runtime an object carries
   * (objcopy --weaken) the call would be a weak reference no link resolves. */
  unsigned a, b, c, d;
  mw_crc_hw = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSE4_2) != 0;
#endif
  for (uint32_t n = 0; n < 256; n++) {
    uint32_t c = n;
    for (int k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78u ^ (c >> 1) : c >> 1;
    mw_crc_table[0][n] = c;
  }
  for (uint32_t n = 0; n < 256; n++)
    for (int s = 1; s < 8; s++) mw_crc_table[s][n] = mw_crc_table[0][mw_crc_table[s - 1][n] & 0xff] ^ (mw_crc_table[s - 1][n] >> 8);
}

#ifdef MW_CRC_X86
/* SSE 4.2's crc32 instruction, eight bytes at a time. */
__attribute__((target("sse4.2"))) static uint32_t mw_crc32c_hw(uint32_t c, const unsigned char *p, size_t n)
{
  uint64_t c64 = c;
  while (n >= 8) {
    uint64_t v;
    memcpy(&v, p, 8);
    c64 = __builtin_ia32_crc32di(c64, v);
    p += 8;
    n -= 8;
  }
  c = (uint32_t)c64;
  while (n--) c = __builtin_ia32_crc32qi(c, *p++);
  return c;
}
#endif

/* The CRC-32C of n bytes at p, continued from crc (0 to start). */
uint32_t mw_crc32c(uint32_t crc, const unsigned char *p, size_t n)
{
  uint32_t c = ~crc;
#ifdef MW_CRC_X86
  if (mw_crc_hw) return ~mw_crc32c_hw(c, p, n);
#endif
  while (n >= 8) {
    uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
    c = mw_crc_table[7][lo & 0xff] ^ mw_crc_table[6][(lo >> 8) & 0xff] ^ mw_crc_table[5][(lo >> 16) & 0xff] ^
        mw_crc_table[4][lo >> 24] ^ mw_crc_table[3][p[4]] ^ mw_crc_table[2][p[5]] ^ mw_crc_table[1][p[6]] ^
        mw_crc_table[0][p[7]];
    p += 8;
    n -= 8;
  }
  while (n--) c = mw_crc_table[0][(c ^ *p++) & 0xff] ^ (c >> 8);
  return ~c;
}

/* Ends t's chunk with its seal, after its last committed record; nothing more
 * fits in it afterwards.  A thread without a chunk has nothing to seal. */
void mw_chunk_seal(struct mw_thread *t)
{
  if (!t->used || !t->payload || !t->cur) return;
  unsigned char *p = t->cur;
  uint32_t crc = mw_crc32c(0, t->payload - MW_CHUNK_HEAD, MW_SEALED_HEAD);
  crc = mw_crc32c(crc, t->payload, (size_t)(p - t->payload));
  p[0] = MW_REC_EXT;
  p[1] = MW_EXT_SEAL;
  p[2] = MW_SEAL_SIZE - 3; /* the payload: magic and CRC */
  memcpy(p + 3, "MWSL", 4);
  memcpy(p + 7, &crc, 4);
  t->end = p + MW_SEAL_SIZE;
  t->cur = t->end;
  mw_fence();
  *t->used = (uint32_t)(t->cur - t->payload);
}
