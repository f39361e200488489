/**
 * The backlog's blocks on SQLite (schema 19, spec 030 Design 2c; what a block is: text/backlog-blocks.ts), built by
 * the worker in a first pass of a few seconds at 1M, before the trigram index (sqlite-backlog-trigram.ts), whose fill
 * takes tens of seconds. Until the trigram index covers a row, a search read it directly; now it first asks these
 * blocks which of them may hold what it looks for, and reads only their rows.
 *
 * `search_index_state` 'backlog_blocks': the highest message id the blocks cover (0: none); the blocks cover every id
 * from their first block's first id to it, without gaps. Lowered with the other watermarks when the newest messages
 * are deleted (sqlite-retention-store.ts lowerIndexedThrough), so a row id used again is never taken as covered.
 * Emptied with the trigram index when the worker caught up, and by a rebuild of the message index.
 */
import type { Database } from "./database.js";
import { argumentSpansSql, toSearchableText } from "./sqlite-searchable-text.js";
import { BACKLOG_BLOCK_ROWS, blocksOf, substringBits } from "../text/backlog-blocks.js";

export const BACKLOG_BLOCKS = "backlog_blocks";
/** Blocks written per transaction (the rows read and their bits computed before it). */
const BLOCKS_PER_SLICE = 32;
/** Ids examined per call of `rangesThatMayHold` (about 512 blocks, 2 MiB of bits: a few ms). */
const IDS_PER_CALL = 131_072;

/** How a pass goes on the worker: when to stop, whether this indexer may go on (called in each transaction). */
export interface BlocksPace {
  shouldStop?: () => boolean;
  holds?: () => boolean;
}

/**
 * SQL that is 1 when a block's `bloom` has every bit of some substring's trigrams, and its parameters. Tested in SQL
 * so that only ids reach JavaScript (reading the 4 KiB blobs into it cost 3-4× more): a bit is a hex digit of its
 * byte (`hex(substr(bloom, byte, 1))`) that is one of the eight digits with that bit set.
 */
function mayHoldSql(substrings: readonly number[][]): [string, (string | number)[]] {
  const params: (string | number)[] = [];
  const alternatives = substrings.map((bits) => {
    return `(${bits.map((bit) => {
      // The byte's high four bits are its first hex digit, the low four its second.
      const inByte = bit & 7;
      const inDigit = 1 << (inByte & 3);
      params.push([..."0123456789ABCDEF"].filter((_, value) => (value & inDigit) !== 0).join(""), (bit >>> 3) + 1, inByte >= 4 ? 1 : 2);
      return "instr(?, substr(hex(substr(bloom, ?, 1)), ?, 1)) > 0";
    }).join(" AND ")})`;
  });
  return [alternatives.join(" OR "), params];
}

export class BacklogBlocks {
  constructor(private readonly db: Database) {}

  /** The highest message id the blocks cover (0: none). */
  through(): number {
    return this.db.get<{ through: number }>("SELECT through FROM search_index_state WHERE name = ?", BACKLOG_BLOCKS)?.through ?? 0;
  }

  /**
   * Covers the messages above every watermark (the blocks', the trigram index's, the full-text index's) with blocks,
   * oldest first, BLOCKS_PER_SLICE per transaction, until none wait or the pace says stop; -1 when `holds` said
   * another indexer took over. The rows are read and their bits computed before the transaction.
   */
  async fill(pace: BlocksPace): Promise<number> {
    let covered = 0;
    while (!pace.shouldStop?.()) {
      const from = this.coveredThrough();
      const read = this.db.tuples<[number, string, string | null]>(
        `SELECT m.message_id, m.content, ${argumentSpansSql("m")} FROM messages m WHERE m.message_id > ? ORDER BY m.message_id LIMIT ?`,
        from, BACKLOG_BLOCK_ROWS * BLOCKS_PER_SLICE,
      );
      if (read.length === 0) break;
      const blocks = blocksOf(from, read.map(([id, content, spans]) => [id, toSearchableText(content, spans)] as const));
      const count = await this.db.write(() => {
        if (pace.holds?.() === false) return -1;
        if (this.coveredThrough() !== from) return 0;
        // Blocks below where this fill starts (other indexes passed them) go: the blocks stay contiguous.
        if (from > this.through()) this.empty();
        for (const block of blocks) {
          this.db.run(`INSERT INTO ${BACKLOG_BLOCKS} (last_id, first_id, bloom) VALUES (?, ?, ?)`, block.lastId, block.firstId, block.bloom);
        }
        this.db.run("UPDATE search_index_state SET through = ? WHERE name = ?", blocks.at(-1)!.lastId, BACKLOG_BLOCKS);
        return read.length;
      });
      if (count < 0) return -1;
      covered += count;
      await new Promise((resolve) => setImmediate(resolve));
    }
    return covered;
  }

  /**
   * The id ranges of the newest blocks in [window.from, window.to] (clipped to it) that may hold one of `anyOf`
   * (folded substrings), at most `maxBlocks`, newest first; no other row of the window above `next` holds one.
   * `next`: the id below which to ask again (null: none left in the window; below the first block, rows the blocks do
   * not cover, which the caller reads directly). Null when the blocks do not cover `window.to` or cannot narrow
   * `anyOf`. A call examines at most IDS_PER_CALL ids. The blocks are contiguous (`fill` keeps them so): the block
   * holding an id is the first one ending at or above it.
   */
  rangesThatMayHold(
    anyOf: readonly string[], window: { from: number; to: number }, maxBlocks: number,
  ): { ranges: { from: number; to: number }[]; next: number | null } | null {
    const substrings = substringBits(anyOf);
    if (substrings === null || window.to < window.from || window.to > this.through()) return null;
    const bounds = this.db.get<{ first: number | null; upper: number | null }>(
      `SELECT (SELECT first_id FROM ${BACKLOG_BLOCKS} ORDER BY last_id LIMIT 1) AS first,
              (SELECT min(last_id) FROM ${BACKLOG_BLOCKS} WHERE last_id >= ?) AS upper`,
      window.to,
    );
    const first = bounds?.first ?? null;
    const upper = bounds?.upper ?? null;
    if (first === null || upper === null || window.to < first) return null;
    const [passes, params] = mayHoldSql(substrings);
    // Blocks whose last id is in [lower, upper], each examined once in SQL: only those that may hold come back.
    const lower = Math.max(window.from, first, upper - IDS_PER_CALL);
    const found = this.db.tuples<[number, number]>(
      `SELECT last_id, first_id FROM ${BACKLOG_BLOCKS} WHERE last_id BETWEEN ? AND ? AND (${passes}) ORDER BY last_id DESC LIMIT ?`,
      lower, upper, ...params, maxBlocks,
    );
    const ranges = found.map(([lastId, firstId]) => ({ from: Math.max(window.from, firstId), to: Math.min(window.to, lastId) }));
    // Examined down to the lowest block found, or (fewer found) to the block holding `lower`.
    const examinedFrom = found.length === maxBlocks
      ? found.at(-1)![1]
      : this.db.get<{ first: number }>(`SELECT first_id AS first FROM ${BACKLOG_BLOCKS} WHERE last_id >= ? ORDER BY last_id LIMIT 1`, lower)!.first;
    return { ranges, next: examinedFrom - 1 < window.from ? null : examinedFrom - 1 };
  }

  /** Deletes every block and sets the watermark to 0 (inside the caller's transaction). */
  empty(): void {
    this.db.run(`DELETE FROM ${BACKLOG_BLOCKS}`);
    this.db.run("UPDATE search_index_state SET through = 0 WHERE name = ?", BACKLOG_BLOCKS);
  }

  /** The highest id any watermark covers (blocks, trigram index, full-text index): the next blocks start above it. */
  private coveredThrough(): number {
    return this.db.get<{ through: number }>(
      "SELECT max(through) AS through FROM search_index_state WHERE name IN (?, 'backlog_trigram', 'messages_fts')", BACKLOG_BLOCKS,
    )!.through;
  }
}
