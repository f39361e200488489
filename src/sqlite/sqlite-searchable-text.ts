/**
 * How the SQLite backend reads a message's searchable text (messages/searchable-text.ts): `content` with the
 * spans of its tool-call arguments, which live in `message_parts`. Messages without a tool call (most of them)
 * skip the parts lookup: the codec labels every call `[tool call NAME]` in `content`, so a content without that
 * label has none. EXPLAIN QUERY PLAN of the lookup: SEARCH p USING PRIMARY KEY (message_id=?).
 */
import { searchableText } from "../messages/searchable-text.js";

/** SQL for the tool-call argument spans of message `alias` (a JSON array of [start, end], or NULL). */
export function argumentSpansSql(alias: string): string {
  return `CASE WHEN instr(${alias}.content, '[tool call ') > 0 THEN (
    SELECT json_group_array(json_array(p.text_start, p.text_end)) FROM message_parts p
    WHERE p.message_id = ${alias}.message_id AND p.kind = 'toolCall') END`;
}

/** The searchable text from `content` and the spans `argumentSpansSql` read. */
export function toSearchableText(content: string, spans: string | null): string {
  return spans === null ? content : searchableText(content, JSON.parse(spans) as [number, number][]);
}
