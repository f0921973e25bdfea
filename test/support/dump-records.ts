// What two traces of one run may hold in other places without holding other events: the records `dump` prints that
// say where the chunks and the encoder's ring stand.

/** A record (as `dump` prints it after its thread) that is no event: a chunk's seal, which falls where the chunk fills
 *  (so at other records in a trace of other sizes), or an encoder's RAW_MARK, where the encoder thread had got to. */
export function chunkStructure(record: string): boolean {
  return record.startsWith('EXT RAW_MARK') || record.startsWith('EXT SEAL');
}
