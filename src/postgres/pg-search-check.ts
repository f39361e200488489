/**
 * The PostgreSQL equivalent of SQLite's full-text integrity check, for `lcm doctor` (PgIntegrityStore ftsIntegrity /
 * rebuildFts). On PostgreSQL an index row cannot outlive its row (foreign keys, ON DELETE CASCADE), so what can go
 * wrong is the other way round and in the statistics ranking reads: a row neither indexed nor waiting in its queue
 * (the search would never find it), a stored file with no entry in file_index, and document and word counts in
 * search_index_stats that differ from the index rows. Each check is one statement (one snapshot); the rebuild queues
 * what is missing for the indexer (pg-search-index.ts) and recounts the statistics under the statistics row's lock.
 */
import type { SearchIndexName } from "../store/integrity-store.js";
import type { PgDatabase } from "./pg-database.js";
import type { PgSearchIndexCheck } from "./pg-integrity-store.js";

/** Each index's rows, queue and index tables (the names are fixed here, never from input). */
const TABLES = {
  messages: { rows: "messages", id: "message_id", index: "message_search", pending: "message_search_pending", key: "message_id" },
  summaries: { rows: "summaries", id: "id", index: "summary_search", pending: "summary_search_pending", key: "summary_id" },
} as const;

export class PgSearchCheck implements PgSearchIndexCheck {
  constructor(private readonly database: PgDatabase) {}

  async verify(index: SearchIndexName): Promise<string | null> {
    if (index === "files") return this.verifyFiles();
    const { rows, id, index: table, pending, key } = TABLES[index];
    const row = await this.database.row<{ missing: number; documents: number; words: number; stated_documents: number; stated_words: number }>(
      `SELECT (SELECT count(*) FROM ${rows} r WHERE NOT EXISTS (SELECT 1 FROM ${table} i WHERE i.${key} = r.${id})
                 AND NOT EXISTS (SELECT 1 FROM ${pending} p WHERE p.${key} = r.${id})) AS missing,
              (SELECT count(*) FROM ${table}) AS documents,
              (SELECT coalesce(sum(word_count), 0)::bigint FROM ${table}) AS words,
              s.documents AS stated_documents, s.total_words AS stated_words
       FROM search_index_stats s WHERE s.name = $1`,
      [index],
    );
    if (!row) return `the statistics row of the ${index} index is missing`;
    return describe(index, row.missing, row);
  }

  async rebuild(index: SearchIndexName): Promise<void> {
    await this.database.transaction(async (tx) => {
      // The statistics row first: indexers update it from their triggers, so they wait until the recount commits.
      await tx.run("SELECT 1 FROM search_index_stats WHERE name = $1 FOR UPDATE", [index]);
      if (index === "files") {
        await tx.run(
          `INSERT INTO file_index (file_id, conversation_id, created_at)
           SELECT f.file_id, f.conversation_id, f.created_at FROM large_files f ORDER BY f.created_at, f.file_id
           ON CONFLICT (file_id) DO NOTHING`,
        );
        await tx.run(
          `UPDATE search_index_stats SET documents = (SELECT count(*) FROM file_chunks),
             total_words = (SELECT coalesce(sum(word_count), 0) FROM file_chunks) WHERE name = 'files'`,
        );
        return;
      }
      const { rows, id, index: table, pending, key } = TABLES[index];
      // Every row is indexed again from its text (an indexed one keeps its entry meanwhile: `reindex`).
      await tx.run(
        `INSERT INTO ${pending} (${key}, reindex)
         SELECT r.${id}, EXISTS (SELECT 1 FROM ${table} i WHERE i.${key} = r.${id}) FROM ${rows} r ORDER BY r.${id}
         ON CONFLICT (${key}) DO NOTHING`,
      );
      await tx.run(
        `UPDATE search_index_stats SET documents = (SELECT count(*) FROM ${table}),
           total_words = (SELECT coalesce(sum(word_count), 0) FROM ${table}) WHERE name = $1`,
        [index],
      );
    });
  }

  private async verifyFiles(): Promise<string | null> {
    const row = await this.database.row<{ missing: number; documents: number; words: number; stated_documents: number; stated_words: number }>(
      `SELECT (SELECT count(*) FROM large_files f WHERE NOT EXISTS (SELECT 1 FROM file_index x WHERE x.file_id = f.file_id)) AS missing,
              (SELECT count(*) FROM file_chunks) AS documents,
              (SELECT coalesce(sum(word_count), 0)::bigint FROM file_chunks) AS words,
              s.documents AS stated_documents, s.total_words AS stated_words
       FROM search_index_stats s WHERE s.name = 'files'`,
    );
    if (!row) return "the statistics row of the files index is missing";
    return describe("files", row.missing, row);
  }
}

function describe(
  index: SearchIndexName, missing: number, counts: { documents: number; words: number; stated_documents: number; stated_words: number },
): string | null {
  const problems: string[] = [];
  if (missing > 0) problems.push(`${missing} ${index === "files" ? "stored files have" : "rows are"} neither indexed nor waiting for the index`);
  if (counts.documents !== counts.stated_documents || counts.words !== counts.stated_words) {
    problems.push(`its statistics say ${counts.stated_documents} documents and ${counts.stated_words} words, the index holds ` +
      `${counts.documents} and ${counts.words}`);
  }
  return problems.length === 0 ? null : `the ${index} index: ${problems.join("; ")}`;
}
