/**
 * Summary repairs on both backends, at the RepairStore contract (what `lcm repair`, the inspector and maintain write
 * through): a text repair and a dissolve change the summary, its context items and the counters together and leave
 * the conversation clean; undo puts back exactly the rows there were; a repair planned on rows that changed since
 * writes nothing; text PostgreSQL cannot hold as is (a NUL) round-trips. PostgreSQL only: while another gateway holds
 * the conversation's lock, a repair fails at once with "busy" and changes nothing.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isLcmError } from "../../src/errors.js";
import { IntegrityChecker } from "../../src/integrity/integrity-checker.js";
import { PgDatabase } from "../../src/postgres/pg-database.js";
import { LCM_LOCK_NAMESPACE } from "../../src/postgres/pg-queryable.js";
import type { RepairTarget } from "../../src/store/repair-store.js";
import { backendKinds, openTestBackend, type TestBackend } from "../helpers/backends.js";
import { type BackendSql, backendSql } from "../helpers/backend-sql.js";
import { type PlantedConversation, plantConversation } from "../helpers/planted-conversation.js";
import { SteppingClock } from "../fakes/clocks.js";

const ODD_TEXT = "Rewritten: NUL\u0000 inside, a line\u2028separator, a crab 🦀 and \uFDD0 the escape itself.";

describe.each(backendKinds())("summary repairs on %s", (kind) => {
  let opened: TestBackend;
  let sql: BackendSql;
  let planted: PlantedConversation;
  beforeEach(async () => {
    opened = await openTestBackend(kind);
    sql = backendSql(opened);
    planted = await plantConversation(sql);
  });
  afterEach(async () => {
    await opened.close();
  });

  const findings = async () => (await new IntegrityChecker({
    store: opened.backend.integrity, clock: new SteppingClock(), fileExists: async () => true,
  }).check({ conversationId: planted.conversationId, includeIndexes: false })).findings;

  /** Every row a repair may touch, in a stable order. */
  const snapshot = async () => ({
    summaries: await sql.rows("SELECT id, content, token_count, level, written_by FROM summaries ORDER BY id"),
    items: await sql.rows("SELECT conversation_id, ordinal, message_id, summary_id, token_count, flags FROM context_items ORDER BY conversation_id, ordinal"),
    conversations: await sql.rows("SELECT conversation_id, context_tokens, context_items, message_count FROM conversations ORDER BY conversation_id"),
  });

  const textPlan = (target: RepairTarget, content: string) => ({
    kind: "rewrite" as const, target, content, tokenCount: 9, contextTokenCount: 11, level: "normal" as const, writtenBy: "hand",
    detail: { reason: "test" }, now: 5_000,
  });

  it("rewrites a summary's text and cost, and undo restores the rows exactly", async () => {
    const before = await snapshot();
    const target = (await opened.backend.repairs.repairTarget(planted.summaryIds.condensed))!;
    expect(target).toMatchObject({ kind: "condensed", depth: 1, contextOrdinals: [1], contextTokenCount: 30, level: "normal", writtenBy: null });
    const written = await opened.backend.repairs.applyText(textPlan(target, ODD_TEXT));
    expect(written.kind).toBe("applied");
    const after = (await opened.backend.repairs.repairTarget(planted.summaryIds.condensed))!;
    expect(after).toMatchObject({ content: ODD_TEXT, tokenCount: 9, contextTokenCount: 11, writtenBy: "hand" });
    const [conversation] = await sql.rows<{ context_tokens: number }>("SELECT context_tokens FROM conversations WHERE conversation_id = $1", [planted.conversationId]);
    expect(Number(conversation!.context_tokens)).toBe(70 - 30 + 11);
    expect(await findings()).toEqual([]);
    const nodes = await opened.backend.operator.summaryNodes(planted.conversationId, 200);
    const preview = nodes.find((node) => node.summaryId === planted.summaryIds.condensed)?.preview ?? "";
    // SQLite's substr() stops at a NUL (the DAG view's preview is cut there); PostgreSQL's preview keeps it.
    expect(kind === "postgres" ? preview : ODD_TEXT.slice(0, preview.length)).toBe(kind === "postgres" ? ODD_TEXT : preview);
    expect(preview.length).toBeGreaterThan(kind === "postgres" ? ODD_TEXT.length - 1 : "Rewritten: NUL".length - 1);
    const repairId = (written as { repairId: number }).repairId;
    expect((await opened.backend.repairs.listRepairs({ limit: 5 })).map((repair) => [repair.repairId, repair.kind, repair.summaryId]))
      .toEqual([[repairId, "rewrite", planted.summaryIds.condensed]]);
    expect((await opened.backend.repairs.summaryWriters(planted.conversationId)).get(planted.summaryIds.condensed)).toBe("hand");

    const undone = await opened.backend.repairs.undo(repairId, 6_000);
    expect(undone).toMatchObject({ kind: "undone", repair: { repairId, undoneAt: 6_000 } });
    expect(await snapshot()).toEqual(before);
    expect(await opened.backend.repairs.undo(repairId, 7_000)).toEqual({ kind: "refused", reason: `repair ${repairId} was already undone` });
  });

  it("dissolves a condensed summary into its parents, moving later items, and undo puts it back", async () => {
    const before = await snapshot();
    const target = (await opened.backend.repairs.repairTarget(planted.summaryIds.condensed))!;
    const written = await opened.backend.repairs.applyDissolve({
      target, detail: { reason: "test" }, now: 5_000,
      parents: [
        { rowId: planted.leafRowIds[0], summaryId: planted.summaryIds.leaves[0], contextTokenCount: 12 },
        { rowId: planted.leafRowIds[1], summaryId: planted.summaryIds.leaves[1], contextTokenCount: 12 },
      ],
    });
    expect(written.kind).toBe("applied");
    const items = await sql.rows<{ ordinal: number; message_id: number | null; summary_id: number | null }>(
      "SELECT ordinal, message_id, summary_id FROM context_items WHERE conversation_id = $1 ORDER BY ordinal", [planted.conversationId],
    );
    expect(items.map((item) => [Number(item.ordinal), item.summary_id === null ? null : Number(item.summary_id), item.message_id === null ? null : Number(item.message_id)]))
      .toEqual([[1, planted.leafRowIds[0], null], [2, planted.leafRowIds[1], null], ...planted.messageIds.slice(8).map((id, index) => [index + 3, null, id])]);
    expect(await findings()).toEqual([]);
    expect(await opened.backend.repairs.undo((written as { repairId: number }).repairId, 6_000)).toMatchObject({ kind: "undone" });
    expect(await snapshot()).toEqual(before);
    expect(await findings()).toEqual([]);
  });

  it("writes nothing when the summary changed since the repair was planned", async () => {
    const target = (await opened.backend.repairs.repairTarget(planted.summaryIds.leaves[0]))!;
    await sql.run("UPDATE summaries SET content = 'changed meanwhile' WHERE id = $1", [planted.leafRowIds[0]]);
    const before = await snapshot();
    expect(await opened.backend.repairs.applyText(textPlan(target, "new text"))).toEqual({
      kind: "stale", reason: `summary ${planted.summaryIds.leaves[0]} changed since the repair was planned; preview it again`,
    });
    expect(await snapshot()).toEqual(before);
    expect(await opened.backend.repairs.listRepairs({ limit: 5 })).toEqual([]);
  });

  it("lists fallback summaries oldest first, of one conversation when asked", async () => {
    const other = await plantConversation(sql, { sessionId: "s2", level: "fallback" });
    const all = await opened.backend.repairs.fallbackSummaries({ limit: 10 });
    expect(all.map((summary) => summary.summaryId)).toEqual([...other.summaryIds.leaves, other.summaryIds.condensed]);
    expect(await opened.backend.repairs.fallbackSummaries({ conversationId: planted.conversationId, limit: 10 })).toEqual([]);
  });

  it.runIf(kind === "postgres")("fails at once with busy, changing nothing, while another gateway holds the conversation", async () => {
    const target = (await opened.backend.repairs.repairTarget(planted.summaryIds.condensed))!;
    const before = await snapshot();
    const other = new PgDatabase(opened.location, { poolSize: 1 });
    const client = await (await other.pool()).connect();
    try {
      await client.query("SELECT pg_advisory_lock($1, $2)", [LCM_LOCK_NAMESPACE, planted.conversationId]);
      const started = Date.now();
      const error = await opened.backend.repairs.applyText(textPlan(target, "new text")).then(() => null, (caught: unknown) => caught);
      expect(isLcmError(error, "busy")).toBe(true);
      expect((error as Error).message).toMatch(/another gateway is compacting or repairing it; nothing was changed\. Retry/);
      expect(Date.now() - started).toBeLessThan(10_000); // never waits for the lock (the statement timeout is 30 s)
      expect(await snapshot()).toEqual(before);
      await client.query("SELECT pg_advisory_unlock($1, $2)", [LCM_LOCK_NAMESPACE, planted.conversationId]);
      expect((await opened.backend.repairs.applyText(textPlan(target, "new text"))).kind).toBe("applied");
    } finally {
      client.release();
      await other.close();
    }
  });
});
