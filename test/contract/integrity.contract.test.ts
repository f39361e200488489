/**
 * The integrity checker on both backends: a conversation whose rows agree has no findings; each corruption planted
 * with SQL gives the same finding (kind and subject) on SQLite and PostgreSQL; the non-destructive repairs (recount,
 * times out of range, an unreadable bootstrap cursor) leave a clean conversation behind.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Finding } from "../../src/integrity/findings.js";
import { IntegrityChecker } from "../../src/integrity/integrity-checker.js";
import { backendKinds, openTestBackend, type TestBackend } from "../helpers/backends.js";
import { type BackendSql, backendSql } from "../helpers/backend-sql.js";
import { type PlantedConversation, plantConversation } from "../helpers/planted-conversation.js";
import { SteppingClock } from "../fakes/clocks.js";
import { resetSharedCircuitBreakers } from "../../src/compaction/circuit-breaker.js";
import { exchanges } from "../cli/cli-harness.js";
import { createTestEngine } from "../helpers/engine.js";
import { FAILING_MODEL, SESSION, SMALL_DAG_CONFIG } from "../repair/repair-fixture.js";

interface Corruption {
  name: string;
  plant(sql: BackendSql, planted: PlantedConversation): Promise<void>;
  expected(planted: PlantedConversation): { kind: Finding["kind"]; subject: string }[];
}

const CORRUPTIONS: Corruption[] = [
  {
    name: "a counter that disagrees with the rows",
    plant: (sql, planted) => sql.run("UPDATE conversations SET message_count = 99 WHERE conversation_id = $1", [planted.conversationId]),
    expected: (planted) => [{ kind: "counter_mismatch", subject: String(planted.conversationId) }],
  },
  {
    name: "a summary linked to no source (and the messages it covered)",
    plant: (sql, planted) => sql.run("DELETE FROM summary_messages WHERE summary_id = $1", [planted.leafRowIds[0]]),
    expected: (planted) => [
      { kind: "summary_without_source", subject: planted.summaryIds.leaves[0] },
      { kind: "message_not_covered", subject: String(planted.conversationId) },
    ],
  },
  {
    name: "a context item pointing at another conversation's message",
    plant: async (sql, planted) => {
      const other = await plantConversation(sql, { sessionId: "other" });
      await sql.run("UPDATE context_items SET message_id = $1 WHERE conversation_id = $2 AND ordinal = 5", [other.messageIds[11]!, planted.conversationId]);
    },
    expected: () => [{ kind: "dangling_context_item", subject: "5" }],
  },
  {
    name: "context items out of order",
    plant: (sql, planted) => sql.run("UPDATE context_items SET ordinal = 100 WHERE conversation_id = $1 AND ordinal = 1", [planted.conversationId]),
    expected: () => [{ kind: "context_out_of_order", subject: "100" }],
  },
  {
    name: "a part whose span lies past the text",
    plant: (sql, planted) => sql.run("UPDATE message_parts SET text_end = 100000 WHERE message_id = $1", [planted.messageIds[2]!]),
    expected: (planted) => [{ kind: "part_span_out_of_range", subject: String(planted.messageIds[2]) }],
  },
  {
    name: "summary metadata that disagrees with its sources",
    plant: (sql, planted) => sql.run("UPDATE summaries SET source_message_count = 3 WHERE id = $1", [planted.leafRowIds[1]]),
    expected: (planted) => [
      { kind: "summary_metadata_mismatch", subject: planted.summaryIds.leaves[1] },
      { kind: "summary_metadata_mismatch", subject: planted.summaryIds.condensed },
    ],
  },
  {
    name: "a nanosecond time no Date can hold",
    plant: (sql, planted) => sql.run("UPDATE messages SET created_at = 1767225600123456789 WHERE message_id = $1", [planted.messageIds[3]!]),
    expected: (planted) => [{ kind: "timestamp_out_of_range", subject: `message ${planted.messageIds[3]}` }],
  },
  {
    name: "meta that is not JSON, and an unreadable bootstrap cursor",
    plant: async (sql, planted) => {
      await sql.run("UPDATE messages SET meta = 'not json {' WHERE message_id = $1", [planted.messageIds[4]!]);
      await sql.run("UPDATE conversations SET bootstrap_state = '[1, 2]' WHERE conversation_id = $1", [planted.conversationId]);
    },
    expected: (planted) => [
      { kind: "unreadable_value", subject: `conversation ${planted.conversationId}` },
      { kind: "unreadable_value", subject: `message ${planted.messageIds[4]}` },
    ],
  },
  {
    name: "a tool result in the context that answers no call",
    plant: async (sql, planted) => {
      await sql.run("UPDATE messages SET meta = '{\"toolCallId\":\"call_1\"}' WHERE message_id = $1", [planted.messageIds[10]!]);
      await sql.run("UPDATE context_items SET flags = 2 WHERE conversation_id = $1 AND ordinal = 4", [planted.conversationId]);
    },
    expected: () => [{ kind: "orphan_tool_result", subject: "4" }],
  },
  {
    name: "a stored file missing on disk",
    plant: (sql, planted) => sql.run(
      `INSERT INTO large_files (file_id, conversation_id, content_hash, byte_size, token_count, storage_path, exploration_summary, explorer, origin, created_at)
       VALUES ('file_gone', $1, 'hash', 10, 3, '/nonexistent/lcm-test/file_gone.txt', 'a file', 'none', 'tool', 0)`, [planted.conversationId],
    ),
    expected: () => [{ kind: "large_file_missing", subject: "file_gone" }],
  },
];

describe.each(backendKinds())("integrity checks on %s", (kind) => {
  let opened: TestBackend;
  let sql: BackendSql;
  beforeEach(async () => {
    opened = await openTestBackend(kind);
    sql = backendSql(opened);
  });
  afterEach(async () => {
    await opened.close();
  });

  const checker = () => new IntegrityChecker({
    store: opened.backend.integrity, clock: new SteppingClock(), fileExists: async (path) => !path.includes("/nonexistent/"),
  });

  it("finds nothing in rows that agree, the indexes included", async () => {
    await plantConversation(sql);
    await plantConversation(sql, { sessionId: "s2", texts: (seq) => `second\u0000conversation \u2028 ${seq} 🦀` });
    const report = await checker().check();
    expect(report.findings).toEqual([]);
    expect(report.conversationsChecked).toBe(2);
    expect(report.complete).toBe(true);
  });

  it("finds nothing after turns and compaction by the engine on this backend", async () => {
    const harness = createTestEngine({ backend: opened.backend, pluginLlm: FAILING_MODEL, config: SMALL_DAG_CONFIG });
    await harness.newEngine().ingestBatch({ ...SESSION, messages: exchanges(60, 30) });
    await harness.newEngine().assemble({ ...SESSION, messages: [], tokenBudget: 4_000 });
    await harness.newEngine().compact({ ...SESSION, force: true, compactionTarget: "budget", tokenBudget: 1_500 });
    resetSharedCircuitBreakers();
    const [counts] = await sql.rows<{ summaries: number; condensed: number }>(
      "SELECT count(*) AS summaries, sum(CASE WHEN kind = 'condensed' THEN 1 ELSE 0 END) AS condensed FROM summaries",
    );
    expect(Number(counts!.condensed)).toBeGreaterThan(0);
    const report = await checker().check();
    expect(report.findings).toEqual([]);
    expect(report.conversationsChecked).toBe(1);
  });

  it.each(CORRUPTIONS)("finds $name", async (corruption) => {
    const planted = await plantConversation(sql);
    await corruption.plant(sql, planted);
    const report = await checker().check({ conversationId: planted.conversationId, includeIndexes: false });
    const found = report.findings.map((finding) => ({ kind: finding.kind, subject: finding.subject }));
    expect(sorted(found)).toEqual(sorted(corruption.expected(planted)));
  });

  it("finds a message the full-text index lost, and the rebuild brings it back", async () => {
    const planted = await plantConversation(sql);
    await opened.backend.searchIndex.indexPending();
    // Backend-specific: one row of SQLite's FTS5 table or of PostgreSQL's message_search (its queue is empty).
    await sql.run(kind === "postgres" ? "DELETE FROM message_search WHERE message_id = $1" : "DELETE FROM messages_fts WHERE rowid = $1", [
      planted.messageIds[5]!,
    ]);
    const integrity = checker();
    const report = await integrity.check();
    expect(report.findings.map((finding) => [finding.kind, finding.subject])).toEqual([["fts_out_of_sync", "messages"]]);
    expect(await integrity.applyRepairs(integrity.planRepairs(report))).toEqual([{ kind: "rebuild_fts", table: "messages" }]);
    expect((await integrity.check()).findings).toEqual([]);
    await opened.backend.searchIndex.indexPending();
    expect((await integrity.check()).findings).toEqual([]);
  });

  it("repairs counters, out-of-range times and an unreadable cursor without losing the host's timestamp", async () => {
    const planted = await plantConversation(sql);
    await sql.run("UPDATE conversations SET context_tokens = 5, bootstrap_state = 'nope' WHERE conversation_id = $1", [planted.conversationId]);
    // The host's nanosecond timestamp kept only in created_at (flag 16), and a summary time in nanoseconds.
    await sql.run("UPDATE messages SET created_at = 1767225600123456789, flags = 16 WHERE message_id = $1", [planted.messageIds[3]!]);
    await sql.run("UPDATE summaries SET latest_at = 1767225604000000000 WHERE id = $1", [planted.leafRowIds[0]]);
    const integrity = checker();
    const report = await integrity.check({ conversationId: planted.conversationId, includeIndexes: false });
    expect(new Set(report.findings.map((finding) => finding.kind))).toEqual(new Set(["counter_mismatch", "timestamp_out_of_range", "unreadable_value"]));
    const applied = await integrity.applyRepairs(integrity.planRepairs(report));
    expect(applied.map((action) => action.kind).sort()).toEqual(["clear_unreadable_columns", "normalize_timestamps", "recount_conversation"]);
    expect((await integrity.check({ conversationId: planted.conversationId, includeIndexes: false })).findings).toEqual([]);
    const [message] = await sql.rows<{ created_at: number; flags: number; meta: string }>(
      "SELECT created_at, flags, meta FROM messages WHERE message_id = $1", [planted.messageIds[3]!],
    );
    expect(Number(message!.created_at)).toBe(1767225600123);
    expect(Number(message!.flags)).toBe(0);
    expect(JSON.parse(message!.meta)).toEqual({ timestamp: 1767225600123456789 });
    const [leaf] = await sql.rows<{ latest_at: number }>("SELECT latest_at FROM summaries WHERE id = $1", [planted.leafRowIds[0]]);
    // Recomputed from its sources: the newest of its four messages once the fourth was scaled down to 1767225600123.
    expect(Number(leaf!.latest_at)).toBe(Date.UTC(2026, 0, 1) + 3_000);
  });
});

function sorted(findings: { kind: string; subject: string }[]): { kind: string; subject: string }[] {
  return [...findings].sort((a, b) => `${a.kind} ${a.subject}`.localeCompare(`${b.kind} ${b.subject}`));
}
