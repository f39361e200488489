/**
 * The backlog's blocks on PostgreSQL (migration 9; what a block is: text/backlog-blocks.ts). While the background
 * run indexes a large backlog (pg-search-index.ts, `indexBacklogInBackground`), a search had to read every row the
 * full-text index had not reached, in windows the server filtered by the query's substrings: at 1M waiting rows it ran
 * out of its budget and said it had not searched older history. The run now first cuts the rows above the index into
 * blocks (a pass of seconds: the rows' text read in slices, the bits computed here, 32 blocks written per
 * transaction), and a search asks the server which blocks may hold its substrings (each bit tested with get_bit on
 * the server, so only ids come back) and reads the rows of those only.
 *
 * `message_backlog_blocks`: one row per block (last_id, first_id, bloom). The blocks cover every id from the first
 * block's first id to the highest last_id, without gaps: a fill that finds the full-text index past the blocks starts
 * over above it. Message ids are never used again (an identity column) and a fill waits for the rows still in flight
 * below the ids it read (`slice`), so a block never vouches for a row it did not see; rows deleted since only make it
 * a looser filter. Emptied when the run has indexed every message. One fill at a
 * time across gateways: each slice's transaction takes an advisory lock and checks that nobody covered its rows first.
 */
import { BACKLOG_BLOCK_ROWS, blocksOf, substringBits } from "../text/backlog-blocks.js";
import type { ContainsFilter, MessageHitRow, TextFilter } from "../store/retrieval-store.js";
import type { PgDatabase } from "./pg-database.js";
import { LCM_LOCK_NAMESPACE } from "./pg-queryable.js";
import { containsClause, MAX_TIME, MESSAGE_HIT, type MessageHitSql, messageFilter, MIN_TIME, SqlParams, toMessageHit } from "./pg-retrieval-sql.js";
import { argumentSpansSql, toSearchableText } from "./pg-searchable-text.js";
import { watermarkSql } from "./pg-index-watermark.js";
import type { PgSearchReader } from "./pg-search-reader.js";

export const BACKLOG_BLOCKS_TABLE = "message_backlog_blocks";
/** Blocks written per transaction (their rows read and their bits computed before it). */
const BLOCKS_PER_SLICE = 32;
/**
 * Ids whose blocks one call examines (about 4,096 blocks): the server tests their bits and returns the few that
 * pass, a few ms; a rare word's search over a 1M backlog is one call.
 */
const IDS_PER_CALL = 1_048_576;
/** Longest a fill waits for the transactions in progress when it read a slice, polling every IN_FLIGHT_POLL_MS. */
const IN_FLIGHT_WAIT_MS = 5_000;
const IN_FLIGHT_POLL_MS = 10;
/** Advisory lock key (in LCM_LOCK_NAMESPACE; conversations use their positive ids) held by a fill's transaction. */
const FILL_LOCK = -2;

/** The highest id the blocks cover, in SQL (0: none). */
export const BLOCKS_THROUGH_SQL = `coalesce((SELECT max(last_id) FROM ${BACKLOG_BLOCKS_TABLE}), 0)`;

/** Where the next blocks start: above the blocks and above the full-text index (the oldest message waiting). */
const COVERED_SQL = `SELECT ${BLOCKS_THROUGH_SQL} AS blocks, ${watermarkSql("messages")} AS indexed`;

/**
 * SQL that is true when a block's bloom has every bit of some substring (`bits`: per substring, from substringBits).
 * The bits are integers computed here, written into the statement as numbers.
 */
function mayHoldSql(bits: readonly number[][]): string {
  return bits.map((substring) => `(${substring.map((bit) => `get_bit(b.bloom, ${Math.trunc(bit)}) = 1`).join(" AND ")})`).join(" OR ");
}

export class PgBacklogBlocks {
  constructor(private readonly db: PgDatabase) {}

  /**
   * Covers the messages above the blocks and the full-text index with blocks, oldest first, BLOCKS_PER_SLICE per
   * transaction, until none are left above them or `shouldStop` says so; returns the rows covered.
   */
  async fill(shouldStop: () => boolean): Promise<number> {
    let covered = 0;
    while (!shouldStop()) {
      const state = (await this.db.row<{ blocks: number; indexed: number }>(COVERED_SQL))!;
      const from = Math.max(Number(state.blocks), Number(state.indexed));
      const read = await this.slice(from);
      if (read === null || read.length === 0 || shouldStop()) break;
      const blocks = blocksOf(from, read.map((row) => [Number(row.message_id), toSearchableText(row.content, row.spans)] as const));
      const wrote = await this.db.transaction(async (tx) => {
        await tx.run("SELECT pg_advisory_xact_lock($1, $2)", [LCM_LOCK_NAMESPACE, FILL_LOCK]);
        const now = (await tx.row<{ blocks: number; indexed: number }>(COVERED_SQL))!;
        // Another gateway's fill (or the index) covered these rows meanwhile: read again from where things stand.
        if (Math.max(Number(now.blocks), Number(now.indexed)) !== from) return false;
        // Blocks below where this fill starts (the index passed them) go: the blocks stay contiguous.
        if (from > Number(now.blocks)) await tx.run(`DELETE FROM ${BACKLOG_BLOCKS_TABLE}`);
        await tx.run(
          `INSERT INTO ${BACKLOG_BLOCKS_TABLE} (last_id, first_id, bloom)
           SELECT l, f, decode(h, 'hex') FROM unnest($1::bigint[], $2::bigint[], $3::text[]) AS b (l, f, h)`,
          [blocks.map((block) => block.lastId), blocks.map((block) => block.firstId), blocks.map((block) => Buffer.from(block.bloom).toString("hex"))],
        );
        return true;
      });
      if (wrote) covered += read.length;
      await new Promise((resolve) => setImmediate(resolve));
    }
    return covered;
  }

  /**
   * The next rows above `from`, oldest first, every one of them: ids come from a sequence, so a row with a lower id
   * than one read may still be uncommitted (another gateway's turn, in flight), and a block that left it out would
   * hide it from searches. The read returns the transactions in progress at its snapshot; once they ended, the rows
   * they committed in the range are read too. Null when they do not end within IN_FLIGHT_WAIT_MS (a long transaction
   * writing messages, a bulk import): no blocks are written, and searches read those rows directly.
   */
  private async slice(from: number): Promise<{ message_id: number; content: string; spans: string | null }[] | null> {
    const read = await this.db.rows<{ message_id: number | null; content: string | null; spans: string | null; in_flight: string[] | null }>(
      `SELECT * FROM (
         (SELECT m.message_id, m.content, ${argumentSpansSql("m")} AS spans, NULL::text[] AS in_flight FROM messages m
          WHERE m.message_id > $1 ORDER BY m.message_id LIMIT $2)
         UNION ALL SELECT NULL, NULL, NULL, array(SELECT x::text FROM pg_snapshot_xip(pg_current_snapshot()) x)) u
       ORDER BY message_id NULLS LAST`,
      [from, BACKLOG_BLOCK_ROWS * BLOCKS_PER_SLICE],
    );
    const inFlight = read.pop()!.in_flight ?? [];
    const rows = read as { message_id: number; content: string; spans: string | null }[];
    if (rows.length === 0 || inFlight.length === 0) return rows;
    const deadline = performance.now() + IN_FLIGHT_WAIT_MS;
    while (!(await this.db.row<{ ended: boolean }>("SELECT bool_and(pg_xact_status(x::xid8) <> 'in progress') AS ended FROM unnest($1::text[]) x", [inFlight]))!.ended) {
      if (performance.now() > deadline) return null;
      await new Promise((resolve) => setTimeout(resolve, IN_FLIGHT_POLL_MS));
    }
    const last = Number(rows.at(-1)!.message_id);
    const late = await this.db.rows<{ message_id: number; content: string; spans: string | null }>(
      `SELECT m.message_id, m.content, ${argumentSpansSql("m")} AS spans FROM messages m
       WHERE m.message_id > $1 AND m.message_id <= $2 AND m.message_id <> ALL($3::bigint[])`,
      [from, last, rows.map((row) => Number(row.message_id))],
    );
    return late.length === 0 ? rows : [...rows, ...late].sort((left, right) => Number(left.message_id) - Number(right.message_id));
  }

  /** Deletes every block (the run indexed every message, or the index starts over). */
  async empty(): Promise<void> {
    await this.db.run(`DELETE FROM ${BACKLOG_BLOCKS_TABLE}`);
  }

  /**
   * Messages in [window.from, window.to] of the newest blocks that may hold one of `anyOf` (folded substrings), about
   * `maxRows` rows of blocks at most, passing `filter` and `contains`, newest first (RetrievalStore.backlogBlockRows).
   * `next`: the id below which to ask again (null: none left in the window; below the first block, rows the blocks do
   * not cover, which the caller reads directly). Null when the blocks do not cover `window.to` or cannot narrow
   * `anyOf`. Two statements: the blocks that pass (tested on the server), then their rows.
   */
  async rows(
    reader: PgSearchReader, filter: TextFilter, anyOf: readonly string[], contains: ContainsFilter | null,
    window: { from: number; to: number }, maxRows: number,
  ): Promise<{ rows: MessageHitRow[]; next: number | null } | null> {
    const bits = substringBits(anyOf);
    if (bits === null || window.to < window.from) return null;
    const maxBlocks = Math.max(1, Math.floor(maxRows / BACKLOG_BLOCK_ROWS));
    return reader.each("read of the backlog's blocks", async (reads) => {
      // The block holding window.to (`upper`), the first block, and the passing blocks in [lower, upper] newest first;
      // `kind` 'bounds' carries where the examined blocks start (the block holding `lower`).
      const found = await reads.rows<{ kind: "found" | "bounds"; last_id: number | null; first_id: number | null }>(
        `WITH upper AS (SELECT min(last_id) AS id FROM ${BACKLOG_BLOCKS_TABLE} WHERE last_id >= $1),
           first AS (SELECT first_id AS id FROM ${BACKLOG_BLOCKS_TABLE} ORDER BY last_id LIMIT 1),
           bounds AS (SELECT u.id AS upper, greatest($2, f.id, u.id - ${IDS_PER_CALL}) AS lower, f.id AS first FROM upper u, first f)
         (SELECT 'found' AS kind, b.last_id, b.first_id FROM ${BACKLOG_BLOCKS_TABLE} b, bounds
          WHERE $1 >= bounds.first AND b.last_id BETWEEN bounds.lower AND bounds.upper AND (${mayHoldSql(bits)})
          ORDER BY b.last_id DESC LIMIT $3)
         UNION ALL
         SELECT 'bounds', bounds.upper,
           (SELECT first_id FROM ${BACKLOG_BLOCKS_TABLE} WHERE last_id >= bounds.lower ORDER BY last_id LIMIT 1)
         FROM bounds WHERE $1 >= bounds.first`,
        [window.to, window.from, maxBlocks],
      );
      const bounds = found.find((row) => row.kind === "bounds");
      if (!bounds || bounds.last_id === null || bounds.first_id === null) return null;
      const blocks = found.filter((row) => row.kind === "found").map((row) => ({ lastId: Number(row.last_id), firstId: Number(row.first_id) }));
      const examinedFrom = blocks.length === maxBlocks ? blocks.at(-1)!.firstId : Number(bounds.first_id);
      const next = examinedFrom - 1 < window.from ? null : examinedFrom - 1;
      if (blocks.length === 0) return { rows: [], next };
      const params = new SqlParams();
      const lows = params.add(blocks.map((block) => Math.max(window.from, block.firstId)));
      const highs = params.add(blocks.map((block) => Math.min(window.to, block.lastId)));
      // Each range's rows read by the primary key alone (OFFSET 0 keeps the subquery from being pulled up into a join),
      // then filtered: joined, the planner read the conversations' index for every row they hold (1.4 s at 1M), and
      // with every conversation in scope it probed that index once per conversation for each range.
      const rows = await reads.rows<MessageHitSql & { content: string; spans: string | null }>(
        `SELECT ${MESSAGE_HIT}, m.content, ${argumentSpansSql("m")} AS spans
         FROM unnest(${lows}::bigint[], ${highs}::bigint[]) AS r (low, high)
         CROSS JOIN LATERAL (SELECT * FROM messages m WHERE m.message_id BETWEEN r.low AND r.high OFFSET 0) m
         WHERE ${messageFilter(params, filter)}
           AND m.seq BETWEEN ${params.add(filter.seqRange?.from ?? MIN_TIME)} AND ${params.add(filter.seqRange?.to ?? MAX_TIME)}
           ${containsClause(params, "m.content", contains)}
         ORDER BY m.message_id DESC`,
        params.values,
      );
      return { rows: rows.map((row) => toMessageHit(row, toSearchableText(row.content, row.spans))), next };
    });
  }
}
