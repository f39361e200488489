/**
 * One conversation planted with plain SQL, the same rows on either backend: `messages` messages, two leaf summaries
 * over the first eight, a condensed summary over both leaves in the context, then the last messages raw; every
 * counter agrees with the rows, so the integrity checker finds nothing until a test breaks something.
 */
import { createHash } from "node:crypto";
import type { BackendSql } from "./backend-sql.js";

export const PLANTED_BASE_TIME = Date.UTC(2026, 0, 1);

export interface PlantedConversation {
  conversationId: number;
  messageIds: number[];
  leafRowIds: [number, number];
  condensedRowId: number;
  summaryIds: { leaves: [string, string]; condensed: string };
}

/** Texts can hold what PostgreSQL cannot store as is (a NUL) or what JSON must escape: the stores round-trip them. */
export async function plantConversation(
  sql: BackendSql,
  options: { sessionId?: string; messages?: number; texts?: (seq: number) => string; level?: "normal" | "fallback"; endedAt?: number | null } = {},
): Promise<PlantedConversation> {
  const count = options.messages ?? 12;
  if (count < 9) throw new Error("plantConversation needs at least 9 messages (8 summarized, one raw)");
  const sessionId = options.sessionId ?? "s1";
  const text = options.texts ?? ((seq: number) => `message ${seq}: quartz question ${seq}`);
  const raw = count - 8;
  const [conversation] = await sql.rows<{ conversation_id: number }>(
    `INSERT INTO conversations (agent_id, session_id, session_key, created_at, updated_at, next_seq, next_ordinal, message_count, message_tokens,
       context_tokens, context_raw_tokens, context_items, ended_at)
     VALUES ('main', $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING conversation_id`,
    [sql.text(sessionId), sql.text(`agent:main:${sessionId}`), PLANTED_BASE_TIME, PLANTED_BASE_TIME + count * 1_000, count + 1, raw + 2, count, count * 10,
      30 + raw * 10, raw * 10, raw + 1, options.endedAt ?? null],
  );
  const conversationId = Number(conversation!.conversation_id);
  const messageIds: number[] = [];
  for (let seq = 1; seq <= count; seq++) {
    const [row] = await sql.rows<{ message_id: number }>(
      `INSERT INTO messages (conversation_id, seq, role, content, token_count, created_at, identity_key, flags, meta)
       VALUES ($1, $2, $3, $4, 10, $5, $6, 0, '{}') RETURNING message_id`,
      [conversationId, seq, seq % 2 === 1 ? "user" : "assistant", sql.text(text(seq)), PLANTED_BASE_TIME + seq * 1_000, sql.text(`identity-${sessionId}-${seq}`)],
    );
    messageIds.push(Number(row!.message_id));
    await sql.run("INSERT INTO message_parts (message_id, ordinal, kind, text_start, text_end) VALUES ($1, 0, 'text', 0, $2)", [
      messageIds.at(-1)!, text(seq).length,
    ]);
  }
  const level = options.level ?? "normal";
  const leafIds: string[] = [summaryIdOf(sessionId, "leaf1"), summaryIdOf(sessionId, "leaf2")];
  const leafRows: number[] = [];
  for (const [index, summaryId] of leafIds.entries()) {
    const first = index * 4 + 1;
    const [row] = await sql.rows<{ id: number }>(
      `INSERT INTO summaries (summary_id, conversation_id, kind, depth, content, token_count, source_token_count, earliest_at, latest_at,
         descendant_count, source_message_count, seq_start, seq_end, file_ids, level, created_at)
       VALUES ($1, $2, 'leaf', 0, $3, 12, 40, $4, $5, 0, 4, $6, $7, '[]', $8, $9) RETURNING id`,
      [sql.text(summaryId), conversationId, `Leaf ${index + 1}: messages ${first} to ${first + 3} asked about quartz.`, PLANTED_BASE_TIME + first * 1_000,
        PLANTED_BASE_TIME + (first + 3) * 1_000, first, first + 3, level, PLANTED_BASE_TIME + 100_000],
    );
    leafRows.push(Number(row!.id));
    for (let offset = 0; offset < 4; offset++) {
      await sql.run("INSERT INTO summary_messages (summary_id, message_id, ordinal) VALUES ($1, $2, $3)", [leafRows.at(-1)!, messageIds[first - 1 + offset]!, offset]);
    }
  }
  const condensedId = summaryIdOf(sessionId, "condensed");
  const [condensed] = await sql.rows<{ id: number }>(
    `INSERT INTO summaries (summary_id, conversation_id, kind, depth, content, token_count, source_token_count, earliest_at, latest_at,
       descendant_count, source_message_count, seq_start, seq_end, file_ids, level, created_at)
     VALUES ($1, $2, 'condensed', 1, 'Condensed: eight messages about quartz.', 30, 24, $3, $4, 2, 8, 1, 8, '[]', $5, $6) RETURNING id`,
    [sql.text(condensedId), conversationId, PLANTED_BASE_TIME + 1_000, PLANTED_BASE_TIME + 8_000, level, PLANTED_BASE_TIME + 200_000],
  );
  const condensedRowId = Number(condensed!.id);
  for (const [ordinal, parent] of leafRows.entries()) {
    await sql.run("INSERT INTO summary_parents (summary_id, parent_summary_id, ordinal) VALUES ($1, $2, $3)", [condensedRowId, parent, ordinal]);
  }
  await sql.run("INSERT INTO context_items (conversation_id, ordinal, summary_id, token_count, flags) VALUES ($1, 1, $2, 30, 0)", [conversationId, condensedRowId]);
  for (let index = 0; index < raw; index++) {
    await sql.run("INSERT INTO context_items (conversation_id, ordinal, message_id, token_count, flags) VALUES ($1, $2, $3, 10, 0)", [
      conversationId, index + 2, messageIds[8 + index]!,
    ]);
  }
  return {
    conversationId, messageIds, leafRowIds: [leafRows[0]!, leafRows[1]!], condensedRowId,
    summaryIds: { leaves: [leafIds[0]!, leafIds[1]!], condensed: condensedId },
  };
}

/** A summary id of the form the tools accept (sum_ and 16 hex digits), the same for the same session and name. */
function summaryIdOf(sessionId: string, name: string): string {
  return `sum_${createHash("sha256").update(`${sessionId}:${name}`).digest("hex").slice(0, 16)}`;
}
