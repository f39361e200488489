/**
 * How many segments each level of an FTS5 index holds, read from the index's structure record (the row with id 10
 * of its `_data` table). FTS5 merges a level in one go, inside whichever write flushed a new segment, once level 0
 * holds `crisismerge` (16) segments, and carries on up the levels while the next one holds as many: indexing a
 * backlog with nothing merged in between made that one transaction rewrite most of the index (130 MB at a million
 * messages, seconds on the event loop). The indexer reads the levels to leave that merging to the background worker
 * in bounded steps (sqlite-search-index.ts).
 *
 * The record (fts5_index.c, fts5StructureDecode): a 4-byte cookie; in version 2 (contentless_delete and later) the
 * marker FF 00 00 01; varints: levels, segments, write counter; then per level its merge count and segment count
 * followed by each segment's fields (3 varints, 8 in version 2). Varints are SQLite's.
 */

/** Segments per level, level 0 first; null when the record is missing or not in a form this code knows. */
export function segmentsPerLevel(record: Uint8Array | null | undefined): number[] | null {
  if (!record || record.length < 4) return null;
  const reader = { bytes: record, at: 4 };
  const isVersion2 = record.length >= 8 && record[4] === 0xff && record[5] === 0 && record[6] === 0 && record[7] === 1;
  if (isVersion2) reader.at = 8;
  const levels = readVarint(reader);
  const total = readVarint(reader);
  readVarint(reader); // write counter
  if (levels === null || total === null || levels > 64) return null;
  const counts: number[] = [];
  let seen = 0;
  for (let level = 0; level < levels; level++) {
    readVarint(reader); // segments taking part in an incremental merge
    const segments = readVarint(reader);
    if (segments === null) return null;
    for (let segment = 0; segment < segments * (isVersion2 ? 8 : 3); segment++) {
      if (readVarint(reader) === null) return null;
    }
    counts.push(segments);
    seen += segments;
  }
  return seen === total ? counts : null;
}

/** One SQLite varint (1-9 bytes, big-endian 7-bit groups, the 9th byte whole); null past the end. */
function readVarint(reader: { bytes: Uint8Array; at: number }): number | null {
  let value = 0;
  for (let index = 0; index < 9; index++) {
    const byte = reader.bytes[reader.at++];
    if (byte === undefined) return null;
    if (index === 8) return value * 256 + byte;
    value = value * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) return value;
  }
  return value;
}
