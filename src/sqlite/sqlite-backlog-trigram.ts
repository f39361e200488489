/**
 * The backlog's trigram index (schema 18, spec 030 Design 2b): while the backlog worker indexes a large backlog, a
 * search reads the messages the full-text index has not reached through this index instead of reading their text.
 * The worker fills it first, a slice per transaction (FTS5's trigram tokenizer, in C: a small share of the full
 * indexing's cost), then indexes the messages fully; a row leaves the gap when the full-text watermark passes it
 * (reads never look at or below that watermark), and the index is emptied, its pages given back to the file, when
 * the worker caught up.
 *
 * What a row is indexed as: its searchable text (tool-call arguments decoded), folded (case and diacritics, as the
 * matcher folds a text that is not ASCII) when it holds anything but ASCII. A trigram query for a substring of a
 * folded query word then finds every row the matcher can find through that substring (FTS5 folds ASCII case on both
 * sides): a superset, which the caller's matcher checks as it checks the rows it reads directly. detail=none keeps
 * only row ids per trigram, so a substring is queried as the AND of some of its trigrams (another superset).
 *
 * `search_index_state` 'backlog_trigram': the highest message id indexed here (0: empty). Rows in (full-text
 * watermark, that id] are covered; newer rows are read directly. A deletion of the newest messages lowers it with
 * the full-text watermark (sqlite-retention-store.ts lowerIndexedThrough), so a row id used again is never taken
 * as covered by what an earlier row with that id held.
 */
import type { Database } from "./database.js";
import { argumentSpansSql, toSearchableText } from "./sqlite-searchable-text.js";
import { trigramText } from "../text/backlog-blocks.js";
import { segmentsPerLevel } from "./fts5-structure.js";
import { windowIds } from "./fts-window.js";

/** Shortest substring a trigram query can look for. */
export const MIN_TRIGRAM_LITERAL = 3;
/** Free pages given back to the file per step once the index was emptied (8 KiB pages: 16 MiB). */
const VACUUM_STEP_PAGES = 2_048;

export const BACKLOG_TRIGRAM = "backlog_trigram";

/** How a fill goes on the worker: rows per slice at most, when to stop, whether this indexer may go on. */
export interface TrigramPace {
  rows: number;
  budgetMs: number;
  shouldStop?: () => boolean;
  holds?: () => boolean;
  /** Segments after which the fill stops (default MAX_SEGMENTS; tests set fewer). */
  maxSegments?: number;
}

/**
 * Segments the fill leaves at most (one per slice, never merged). FTS5 merges a level in one transaction once it
 * holds 2,000 segments whatever `crisismerge` says (its FTS5_MAX_SEGMENT): at 10M messages the fill reached it, and
 * that one merge of the whole index (2.6 GB) ran 120 s in a single transaction and grew the log to 5.2 GB. The fill
 * stops short of it; the rows it did not reach are covered by the backlog's blocks (sqlite-backlog-blocks.ts),
 * which a search reads instead.
 */
const MAX_SEGMENTS = 1_900;
/** The id of FTS5's structure record in a table's `_data`. */
const STRUCTURE_ROW_ID = 10;

/**
 * The MATCH expression that finds every row holding one of `anyOf` (folded substrings): per substring the AND of
 * its first, middle and last trigrams, OR between them. Null when one is shorter than a trigram (the index cannot narrow it).
 */
export function trigramExpression(anyOf: readonly string[]): string | null {
  if (anyOf.length === 0) return null;
  const alternatives: string[] = [];
  for (const literal of anyOf) {
    const characters = [...literal.toLowerCase()];
    if (characters.length < MIN_TRIGRAM_LITERAL) return null;
    // The first, middle and last trigram: a query's cost grows with its trigrams times the index's segments (one
    // per slice, never merged), and three of a word's trigrams already leave few rows that lack the word.
    const last = characters.length - MIN_TRIGRAM_LITERAL;
    const trigrams = new Set([0, Math.floor(last / 2), last].map((start) => characters.slice(start, start + MIN_TRIGRAM_LITERAL).join("")));
    alternatives.push(`(${[...trigrams].map((trigram) => `"${trigram.replaceAll('"', '""')}"`).join(" AND ")})`);
  }
  return alternatives.join(" OR ");
}

/** Another structure over the backlog emptied with this index (the backlog's blocks): its watermark, and its emptying (in a transaction). */
export interface CoveredAlongside {
  through(): number;
  empty(): void;
}

export class BacklogTrigram {
  private lastWriteMs = 0;

  constructor(private readonly db: Database) {}

  /** The highest message id indexed here (0: empty). */
  through(): number {
    return this.db.get<{ through: number }>("SELECT through FROM search_index_state WHERE name = ?", BACKLOG_TRIGRAM)?.through ?? 0;
  }

  /**
   * Indexes the messages above both watermarks (this one's and the full-text index's), oldest first, in slices whose
   * write lock is held about `pace.budgetMs`, until none wait or the pace says stop; -1 when `holds` said another
   * indexer took over. The rows of a slice are read and their text computed before its transaction.
   */
  async fill(pace: TrigramPace): Promise<number> {
    let filled = 0;
    let rows = Math.min(pace.rows, 1_000);
    while (!pace.shouldStop?.() && this.segments() < (pace.maxSegments ?? MAX_SEGMENTS)) {
      const from = Math.max(this.through(), this.messagesThrough());
      const read = this.db.tuples<[number, string, string | null]>(
        `SELECT m.message_id, m.content, ${argumentSpansSql("m")} FROM messages m WHERE m.message_id > ? ORDER BY m.message_id LIMIT ?`,
        from, rows,
      );
      if (read.length === 0) break;
      const texts = read.map(([, content, spans]) => trigramText(toSearchableText(content, spans)));
      let writing = 0;
      const count = await this.db.write(() => {
        writing = performance.now();
        if (pace.holds?.() === false) return -1;
        if (Math.max(this.through(), this.messagesThrough()) !== from) return 0;
        for (const [index, [id]] of read.entries()) this.db.run(`INSERT INTO ${BACKLOG_TRIGRAM} (rowid, text) VALUES (?, ?)`, id, texts[index]!);
        this.db.run("UPDATE search_index_state SET through = ? WHERE name = ?", read.at(-1)![0], BACKLOG_TRIGRAM);
        return read.length;
      });
      this.lastWriteMs = performance.now() - writing;
      if (count < 0) return -1;
      filled += count;
      const perRowMs = Math.max(this.lastWriteMs, 1) / Math.max(count, 1);
      rows = Math.max(100, Math.min(pace.rows, Math.round(pace.budgetMs / perRowMs)));
      await new Promise((resolve) => setImmediate(resolve));
    }
    return filled;
  }

  /**
   * Empties the index once the full-text index caught up with what it held, with `alongside` (the backlog's blocks,
   * in the same transaction), and gives their pages back to the file in steps (incremental vacuum, on files that have
   * it). Nothing when both are empty, one still covers waiting rows, or `holds` (called in the transaction) says this
   * indexer may not go on.
   */
  async emptyWhenCaughtUp(holds?: () => boolean, alongside?: CoveredAlongside): Promise<boolean> {
    const emptied = await this.db.write(() => {
      if (holds?.() === false) return false;
      const through = Math.max(this.through(), alongside?.through() ?? 0);
      if (through === 0 || through > this.messagesThrough()) return false;
      this.db.run(`INSERT INTO ${BACKLOG_TRIGRAM} (${BACKLOG_TRIGRAM}) VALUES ('delete-all')`);
      this.db.run("UPDATE search_index_state SET through = 0 WHERE name = ?", BACKLOG_TRIGRAM);
      alongside?.empty();
      return true;
    });
    if (!emptied) return false;
    for (;;) {
      const freed = await this.db.write(() => {
        const before = this.freePages();
        this.db.raw.exec(`PRAGMA incremental_vacuum(${VACUUM_STEP_PAGES})`);
        return before - this.freePages();
      });
      if (freed <= 0) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    return true;
  }

  /**
   * Ids of rows in [from, to] that may hold one of the substrings of `expression` (trigramExpression), newest first,
   * at most `limit`. The caller keeps `from` above the full-text watermark and `to` at most `through()`.
   */
  candidates(expression: string, window: { from: number; to: number }, limit: number): number[] {
    // Without a lower bound given to FTS5 (fts-window.ts): past one, this index pays each trigram's whole doclist too
    // (400,000 rows: 30 ms against 0.5 for the newest 1,000 matches).
    const ids: number[] = [];
    for (const chunk of windowIds(this.db, BACKLOG_TRIGRAM, expression, window, limit)) {
      ids.push(...chunk);
      if (ids.length >= limit) break;
    }
    return ids.slice(0, limit);
  }

  /** Segments in the index, all levels. */
  private segments(): number {
    const row = this.db.get<{ block: Uint8Array }>(`SELECT block FROM ${BACKLOG_TRIGRAM}_data WHERE id = ?`, STRUCTURE_ROW_ID);
    return (segmentsPerLevel(row?.block) ?? []).reduce((sum, count) => sum + count, 0);
  }

  private messagesThrough(): number {
    return this.db.get<{ through: number }>("SELECT through FROM search_index_state WHERE name = 'messages_fts'")!.through;
  }

  private freePages(): number {
    return Number(Object.values(this.db.get<Record<string, number>>("PRAGMA freelist_count")!)[0]);
  }
}
