import { existsSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { IntegrityChecker } from "../../src/integrity/integrity-checker.js";
import { SqliteIntegrityStore } from "../../src/sqlite/sqlite-integrity-store.js";
import { createTestEngine } from "../helpers/engine.js";
import { conversation, toolCallMessage, toolResultMessage, userMessage } from "../helpers/messages.js";

async function seeded() {
  const setup = createTestEngine();
  await setup.newEngine().ingestBatch({
    sessionId: "s1",
    messages: [
      ...conversation(5),
      toolCallMessage([{ id: "call_1", name: "grep", arguments: { q: "x" } }]),
      toolResultMessage("call_1", "grep", "found x"),
      userMessage("thanks"),
    ],
  });
  const checker = new IntegrityChecker({
    store: new SqliteIntegrityStore(setup.db),
    clock: setup.clock,
    fileExists: async (path) => existsSync(path),
  });
  return { ...setup, checker };
}

describe("IntegrityChecker", () => {
  it("finds nothing wrong in a healthy database and says how much it checked", async () => {
    const { checker } = await seeded();
    const report = await checker.check();
    expect(report.findings).toEqual([]);
    expect(report.conversationsChecked).toBe(1);
    expect(report.checksRun).toBe(15); // 12 per conversation + 3 indexes (messages, summaries, stored content)
    expect(report.complete).toBe(true);
  });

  it("detects a deleted message and counters that disagree, and recounts without touching rows", async () => {
    const { checker, db } = await seeded();
    db.raw.exec("PRAGMA foreign_keys = OFF");
    db.run("DELETE FROM context_items WHERE message_id = 3");
    db.run("DELETE FROM message_parts WHERE message_id = 3");
    db.run("DELETE FROM messages WHERE message_id = 3");
    db.raw.exec("PRAGMA foreign_keys = ON");
    const report = await checker.check({ includeIndexes: false });
    expect(report.findings.map((finding) => finding.kind).sort()).toEqual(["counter_mismatch", "message_seq_gap"]);
    const plan = checker.planRepairs(report);
    expect(plan.nonDestructive).toEqual([{ kind: "recount_conversation", conversationId: 1 }]);
    expect(plan.destructive).toHaveLength(1);
    expect(plan.destructive[0]).toMatchObject({ kind: "manual", finding: { kind: "message_seq_gap" } });
    await checker.applyRepairs(plan);
    const after = await checker.check({ includeIndexes: false });
    expect(after.findings.map((finding) => finding.kind)).toEqual(["message_seq_gap"]); // never "repaired" by deleting
  });

  it("detects a message dropped from the context with no summary over it (docs/mutations.md, M11)", async () => {
    const { checker, db } = await seeded();
    // The row stays, but nothing the model can see leads to it any more: lost in all but storage.
    db.run("DELETE FROM context_items WHERE message_id = 3");
    const report = await checker.check({ includeIndexes: false });
    expect(report.findings.map((finding) => finding.kind).sort()).toEqual(["counter_mismatch", "message_not_covered"]);
    expect(report.findings.find((finding) => finding.kind === "message_not_covered")).toMatchObject({
      conversationId: 1, detail: "13 visible messages, 12 in context, 0 under leaf summaries",
    });
  });

  it("waits for another writer instead of reporting a locked index as damaged", async () => {
    const { checker, config } = await seeded();
    expect((await checker.check()).findings).toEqual([]); // the index is up to date: the next check only reads it
    const other = new DatabaseSync(config.databasePath);
    other.exec("BEGIN IMMEDIATE"); // another gateway (or the checkpoint worker) holds the write lock
    const released = setTimeout(() => other.exec("COMMIT"), 300);
    try {
      const report = await checker.check();
      expect(report.findings).toEqual([]);
    } finally {
      clearTimeout(released);
      if (other.isTransaction) other.exec("COMMIT");
      other.close();
    }
  });

  it("detects a full-text index out of step with its table and rebuilds it", async () => {
    const { checker, db } = await seeded();
    expect((await checker.check()).findings).toEqual([]); // brings the batched index up to date first
    const row = db.get<{ message_id: number }>("SELECT message_id FROM messages WHERE seq = 2")!;
    db.run("DELETE FROM messages_fts WHERE rowid = ?", row.message_id); // the index is contentless (schema 7)
    const report = await checker.check();
    expect(report.findings).toMatchObject([{ kind: "fts_out_of_sync", subject: "messages" }]);
    await checker.applyRepairs(checker.planRepairs(report));
    expect((await checker.check()).findings).toEqual([]);
  });

  it("detects an orphan tool result and an unanswered tool call in context", async () => {
    const { checker, newEngine } = await seeded();
    await newEngine().ingestBatch({
      sessionId: "s1",
      messages: [toolResultMessage("ghost", "grep", "no call"), toolCallMessage([{ id: "c9", name: "grep", arguments: {} }]), userMessage("moved on")],
    });
    const report = await checker.check({ includeIndexes: false });
    expect(report.findings.map((finding) => finding.kind)).toEqual(["orphan_tool_result", "unanswered_tool_call"]);
    const recent = await checker.checkRecent(1, 3);
    expect(recent.findings.map((finding) => finding.kind)).toEqual(["unanswered_tool_call"]);
  });

  it("detects dangling context items, out-of-order context and summaries without sources", async () => {
    const { checker, db } = await seeded();
    db.raw.exec("PRAGMA foreign_keys = OFF");
    db.run("INSERT INTO context_items (conversation_id, ordinal, message_id, token_count, flags) VALUES (1, 100, 999, 1, 0)");
    db.run("UPDATE context_items SET ordinal = 50 WHERE ordinal = 1");
    db.run(
      `INSERT INTO summaries (summary_id, conversation_id, kind, depth, content, token_count, source_token_count, earliest_at,
         latest_at, descendant_count, source_message_count, seq_start, seq_end, level, created_at)
       VALUES ('sum_00000000000000aa', 1, 'leaf', 0, 'x', 1, 1, 0, 0, 0, 1, 1, 1, 'normal', 0)`,
    );
    db.raw.exec("PRAGMA foreign_keys = ON");
    const kinds = (await checker.check({ includeIndexes: false })).findings.map((finding) => finding.kind);
    expect(kinds).toEqual(expect.arrayContaining(["dangling_context_item", "context_out_of_order", "summary_without_source"]));
  });

  it("reports a stored large file that has gone missing", async () => {
    const { checker, db } = await seeded();
    db.run(
      `INSERT INTO large_files (file_id, conversation_id, content_hash, byte_size, token_count, storage_path, exploration_summary, explorer, origin, created_at)
       VALUES ('file_00000000000000aa', 1, 'h', 1, 1, '/nonexistent/lcm/file.txt', 's', 'text', 'file-block', 0)`,
    );
    const report = await checker.check({ includeIndexes: false });
    expect(report.findings).toMatchObject([{ kind: "large_file_missing", subject: "file_00000000000000aa" }]);
  });
});

describe("maintain", () => {
  it("checks the newest context after each turn and logs problems, without failing the hook", async () => {
    const { FakePluginApi } = await import("../fakes/fake-plugin-api.js");
    const { default: plugin } = await import("../../index.js");
    const { tempDatabasePath } = await import("../helpers/temp-dir.js");
    const api = new FakePluginApi({ databasePath: tempDatabasePath() });
    plugin.register(api);
    await api.engine().ingestBatch({ sessionId: "s1", messages: [userMessage("hello"), toolResultMessage("ghost", "grep", "orphan")] });
    const result = await api.engine().maintain({ sessionId: "s1" });
    expect(result.changed).toBe(false);
    const warning = api.logs.find((line) => line.level === "warn" && /integrity:/.test(line.message));
    expect(warning?.message).toMatch(/integrity: 1 problem\(s\) in the newest context of conversation 1: orphan_tool_result/);
  });
});
