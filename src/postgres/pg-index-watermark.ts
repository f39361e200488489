/**
 * How far the PostgreSQL full-text index of messages or summaries reaches, in SQL: the id before the oldest new row
 * waiting in its queue (a row waiting to be indexed again, `reindex`, keeps its old entry and does not hold the mark
 * back), or the newest id stored when none waits. Read by the indexer, the searches' state and the backlog's blocks.
 */
export type IndexSource = "messages" | "summaries";

/** The newest id stored of `source`, as a scalar subquery's SELECT. */
export function newestIdSql(source: IndexSource): string {
  return source === "messages" ? "SELECT max(message_id) FROM messages" : "SELECT max(id) FROM summaries";
}

/** The watermark of `source`'s index, as an expression (0 when nothing is stored). */
export function watermarkSql(source: IndexSource): string {
  const [pending, id] = source === "messages" ? ["message_search_pending", "message_id"] : ["summary_search_pending", "summary_id"];
  return `coalesce((SELECT min(${id}) - 1 FROM ${pending} WHERE NOT reindex), (${newestIdSql(source)}), 0)`;
}
