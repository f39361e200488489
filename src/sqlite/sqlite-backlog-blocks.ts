/**
 * The backlog's blocks (schema 19, spec 030 Design 2c): a coarse filter over a large backlog, built by the worker in
 * a first pass of a few seconds at 1M, before the trigram index (sqlite-backlog-trigram.ts), whose fill takes tens
 * of seconds. Until the trigram index covers a row, a search read it directly; now it first asks these blocks which
 * of them may hold what it looks for, and reads only their rows.
 *
 * A block is BACKLOG_BLOCK_ROWS consecutive messages (by id) and two bits set per trigram of their text (a Bloom
 * filter of BLOCK_BITS bits): the text a row is indexed as in the trigram index (trigramText), ASCII letters lowered,
 * as UTF-16 code units. A substring every match holds (a folded core, an ASCII regex literal) has all its trigrams in
 * the text of the row holding it, so a block missing one of a substring's bits holds no row with it: never a miss.
 * Few blocks pass without holding it: at 1M, 7,554 distinct trigrams per block (p50) set 37% of the bits, so a
 * trigram a block lacks passes 14% of the time, a substring of three trigrams 0.3%.
 *
 * `search_index_state` 'backlog_blocks': the highest message id the blocks cover (0: none); the blocks cover every id
 * from their first block's first id to it, without gaps. Lowered with the other watermarks when the newest messages
 * are deleted (sqlite-retention-store.ts lowerIndexedThrough), so a row id used again is never taken as covered.
 * Emptied with the trigram index when the worker caught up, and by a rebuild of the message index.
 */
import type { Database } from "./database.js";
import { argumentSpansSql, toSearchableText } from "./sqlite-searchable-text.js";
import { trigramText } from "./sqlite-backlog-trigram.js";

export const BACKLOG_BLOCKS = "backlog_blocks";
/** Rows per block: a block that may hold a match is read directly (about 256 × 320 characters at 1M). */
export const BACKLOG_BLOCK_ROWS = 256;
/** Characters after which a block ends before BACKLOG_BLOCK_ROWS rows, so that long rows do not fill its bits. */
const BLOCK_CHARACTERS = 256 * 1_024;
/** Bits per block (4 KiB): 7,500 distinct trigrams, two bits each, set 37% of them. */
const BLOCK_BITS = 32_768;
/** Blocks written per transaction (the rows read and their bits computed before it). */
const BLOCKS_PER_SLICE = 32;
/** Ids examined per call of `rangesThatMayHold` (about 512 blocks, 2 MiB of bits: a few ms). */
const IDS_PER_CALL = 131_072;
/** Shortest substring the blocks can rule out (one trigram). */
const MIN_LITERAL = 3;

/** How a pass goes on the worker: when to stop, whether this indexer may go on (called in each transaction). */
export interface BlocksPace {
  shouldStop?: () => boolean;
  holds?: () => boolean;
}

/** The hash of a trigram of code units (ASCII letters lowered before): its two bits are its low and high halves. */
function trigramHash(first: number, second: number, third: number): number {
  let hash = Math.imul(first, 0x9e3779b1) ^ Math.imul(second, 0x85ebca77) ^ Math.imul(third, 0xc2b2ae3d);
  hash ^= hash >>> 15;
  hash = Math.imul(hash, 0x2c1b3c6d);
  hash ^= hash >>> 12;
  return hash;
}

function lowerAscii(code: number): number {
  return code >= 65 && code <= 90 ? code + 32 : code;
}

/** Sets the bits of every trigram of `text` in `bits`. */
function addTrigrams(bits: Uint8Array, text: string): void {
  if (text.length < MIN_LITERAL) return;
  let first = lowerAscii(text.charCodeAt(0));
  let second = lowerAscii(text.charCodeAt(1));
  for (let index = 2; index < text.length; index++) {
    const third = lowerAscii(text.charCodeAt(index));
    // bitsOf, inlined: this loop runs once per character of the backlog.
    const hash = trigramHash(first, second, third);
    const low = hash & (BLOCK_BITS - 1);
    const high = (hash >>> 16) & (BLOCK_BITS - 1);
    bits[low >>> 3]! |= 1 << (low & 7);
    bits[high >>> 3]! |= 1 << (high & 7);
    first = second;
    second = third;
  }
}

/** Per substring, the hashes of its trigrams; null when one is shorter than a trigram (nothing can be ruled out). */
function substringHashes(anyOf: readonly string[]): number[][] | null {
  if (anyOf.length === 0 || anyOf.some((literal) => literal.length < MIN_LITERAL)) return null;
  return anyOf.map((literal) => {
    const hashes = new Set<number>();
    for (let index = 2; index < literal.length; index++) {
      hashes.add(trigramHash(lowerAscii(literal.charCodeAt(index - 2)), lowerAscii(literal.charCodeAt(index - 1)), lowerAscii(literal.charCodeAt(index))));
    }
    return [...hashes];
  });
}

/** The two bits a trigram's hash sets: its low and high halves. */
function bitsOf(hash: number): [number, number] {
  return [hash & (BLOCK_BITS - 1), (hash >>> 16) & (BLOCK_BITS - 1)];
}

/**
 * SQL that is 1 when a block's `bloom` has every bit of some substring's trigrams, and its parameters. Tested in SQL
 * so that only ids reach JavaScript (reading the 4 KiB blobs into it cost 3-4× more): a bit is a hex digit of its
 * byte (`hex(substr(bloom, byte, 1))`) that is one of the eight digits with that bit set.
 */
function mayHoldSql(substrings: readonly number[][]): [string, (string | number)[]] {
  const params: (string | number)[] = [];
  const alternatives = substrings.map((hashes) => {
    const bits = [...new Set(hashes.flatMap(bitsOf))];
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

interface Block {
  firstId: number;
  lastId: number;
  bloom: Uint8Array;
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
      const blocks = blocksOf(from, read);
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
    const substrings = substringHashes(anyOf);
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

/** Rows read oldest first above `from`, cut into blocks: BACKLOG_BLOCK_ROWS rows or BLOCK_CHARACTERS characters each. */
function blocksOf(from: number, rows: readonly [number, string, string | null][]): Block[] {
  const blocks: Block[] = [];
  let block: Block | null = null;
  let rowsIn = 0;
  let characters = 0;
  for (const [id, content, spans] of rows) {
    if (!block) {
      block = { firstId: (blocks.at(-1)?.lastId ?? from) + 1, lastId: id, bloom: new Uint8Array(BLOCK_BITS / 8) };
      rowsIn = 0;
      characters = 0;
    }
    const text = trigramText(toSearchableText(content, spans));
    addTrigrams(block.bloom, text);
    block.lastId = id;
    characters += text.length;
    if (++rowsIn >= BACKLOG_BLOCK_ROWS || characters >= BLOCK_CHARACTERS) {
      blocks.push(block);
      block = null;
    }
  }
  if (block) blocks.push(block);
  return blocks;
}
