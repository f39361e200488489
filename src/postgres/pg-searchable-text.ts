/**
 * A message's searchable text on PostgreSQL (messages/searchable-text.ts: tool-call arguments decoded): the SQL that
 * reads its tool-call spans with it, and the text made from the two. Shared by the indexer, the scans and the backlog's
 * blocks.
 */
import { searchableText } from "../messages/searchable-text.js";
import { fromPgText } from "./pg-database.js";

/** SQL for the tool-call argument spans of message `alias` (JSON [[start, end], …], or NULL when it has no call). */
export function argumentSpansSql(alias: string): string {
  return `CASE WHEN strpos(${alias}.content, '[tool call ') > 0 THEN (
    SELECT json_agg(json_build_array(p.text_start, p.text_end) ORDER BY p.ordinal)::text FROM message_parts p
    WHERE p.message_id = ${alias}.message_id AND p.kind = 'toolCall') END`;
}

/** The searchable text of a row read with `argumentSpansSql` (stored text is NUL-escaped: pg-database.ts). */
export function toSearchableText(content: string, spans: string | null): string {
  const text = fromPgText(content);
  return spans === null ? text : searchableText(text, JSON.parse(spans) as [number, number][]);
}
