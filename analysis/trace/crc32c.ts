// CRC-32C (Castagnoli, as iSCSI, ext4 and SSE 4.2's crc32 instruction compute it: reflected polynomial 0x82F63B78,
// initial and final value 0xFFFFFFFF), the checksum a sealed chunk carries (EXT/SEAL, runtime/TRACE-FORMAT.md).
// Slicing by eight: eight table lookups per eight bytes, about a gigabyte a second in V8, so checking every chunk of a
// trace costs a fraction of decoding it.

const TABLES = (() => {
  const t = new Uint32Array(8 * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  for (let n = 0; n < 256; n++) {
    let c = t[n]!;
    for (let s = 1; s < 8; s++) {
      c = t[c & 0xff]! ^ (c >>> 8);
      t[s * 256 + n] = c >>> 0;
    }
  }
  return t;
})();

/**
 * The CRC-32C of `bytes` continued from `crc` (the value a previous call returned; 0 to start), so that a long run of
 * bytes can be checked in pieces: crc32c(b, crc32c(a)) === crc32c(a ++ b).
 */
export function crc32c(bytes: Uint8Array, crc = 0): number {
  const t = TABLES;
  let c = ~crc >>> 0;
  let i = 0;
  const n = bytes.length;
  for (; i + 8 <= n; i += 8) {
    const lo = (c ^ (bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24))) >>> 0;
    c =
      t[7 * 256 + (lo & 0xff)]! ^
      t[6 * 256 + ((lo >>> 8) & 0xff)]! ^
      t[5 * 256 + ((lo >>> 16) & 0xff)]! ^
      t[4 * 256 + (lo >>> 24)]! ^
      t[3 * 256 + bytes[i + 4]!]! ^
      t[2 * 256 + bytes[i + 5]!]! ^
      t[256 + bytes[i + 6]!]! ^
      t[bytes[i + 7]!]!;
  }
  for (; i < n; i++) c = t[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}
