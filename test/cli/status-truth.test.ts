/**
 * `lcm status` says what happened: how many stored messages retention archived (stub rows, text in its archives)
 * next to those that keep their text; that the spend guard's count lives in the gateway (the CLI shows no count of
 * its own); what is true of fallback summaries (what redoes them); growth by when rows were stored, so an
 * import of old history is growth; one conversation is "1 conversation".
 */
import { describe, expect, it } from "vitest";
import type { StatusOutput } from "../../src/cli/commands/status-command.js";
import { StatusOutputSchema } from "../../src/cli/output-schemas.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";
import { insertLeafSummary } from "../helpers/summaries.js";
import { tempDatabasePath } from "../helpers/temp-dir.js";
import { retentionSetup, storeExchanges, summarize } from "../retention/retention-helpers.js";
import { buildDatabase, exchanges, runJson, runLcm } from "./cli-harness.js";

describe("lcm status says what happened", () => {
  it("counts what retention archived apart from the messages that keep their text", async () => {
    const setup = retentionSetup();
    const conversationId = await storeExchanges(setup, "s1", 20); // 40 messages stamped 2026-11-01
    summarize(setup, conversationId, 1, 30); // 30 covered by leaf summaries, 10 raw in the context
    const db = setup.config.databasePath;
    const env = { LCM_RETENTION_MAX_AGE_DAYS: "1" };
    const run = await runLcm(["retention", "--apply", "--db", db], env);
    expect(run.code, run.stderr).toBe(0);

    const data = await runJson<StatusOutput>(["status", String(conversationId), "--db", db], StatusOutputSchema, { env });
    expect(data.status.conversation).toMatchObject({ messages: 40, archivedMessages: 30 });
    expect(data.status.totals).toMatchObject({ messages: 40, archivedMessages: 30 });
    const text = (await runLcm(["status", String(conversationId), "--db", db], env)).stdout;
    expect(text).toMatch(/\nStored: 40 messages · [\d,]+ tokens · 10 with their text here, 30 archived by retention \(a stub row here, the text in its gzip archive; summaries cover them\)\n/);
    expect(text).toMatch(/\nDatabase: 1 conversation · 40 messages \(30 archived by retention\) · /);
  });

  it("shows the spend guard's limits and where its count is, not a count of its own", async () => {
    const db = tempDatabasePath();
    await buildDatabase({ databasePath: db, sessions: [{ sessionKey: "agent:main:main", sessionId: "s1", messages: exchanges(3) }] });
    const data = await runJson<StatusOutput>(["status", "1", "--db", db], StatusOutputSchema);
    expect(data.status.conversation!.spendGuard).toEqual({
      visible: false, maxCalls: 100, windowMs: 3_600_000, where: expect.stringMatching(/counts summarizer calls in its own memory/),
    });
    expect(data.status.spendGuard).toMatchObject({ visible: false, maxCallsPerWindow: 100 });
    const text = (await runLcm(["status", "1", "--db", db])).stdout;
    expect(text).toMatch(
      /\nSpend guard: at most 100 summarizer model calls per 60 min; the count is not visible here: the gateway counts summarizer calls in its own memory; `openclaw gateway call lcm\.status` shows its count\n/,
    );
    expect(text).not.toMatch(/0 of 100/);
  });

  it("says what is true of fallback summaries", async () => {
    const setup = retentionSetup();
    const conversationId = await storeExchanges(setup, "s1", 10);
    insertLeafSummary(setup.db, conversationId, 1, 10, "a truncation", { level: "fallback" });
    const text = (await runLcm(["status", String(conversationId), "--db", setup.config.databasePath])).stdout;
    expect(text).toMatch(/fallback summaries: 1 \(truncations written when the model failed; maintain redoes 2 a turn once a model answers, `lcm repair fallbacks --apply` all of them, and the messages they cover stay stored for recall\)/);
    expect(text).not.toMatch(/repair can redo/);
  });

  it("counts growth by when rows were stored: old history imported today is today's growth", async () => {
    const source = tempDatabasePath();
    const old = Date.UTC(2020, 0, 1);
    const messages = Array.from({ length: 30 }, (_, index) =>
      index % 2 === 0 ? userMessage(`question ${index}`, { timestamp: old + index * 1_000 }) : assistantMessage(`answer ${index}`, { timestamp: old + index * 1_000 }));
    await buildDatabase({ databasePath: source, sessions: [{ sessionKey: "agent:main:old", sessionId: "old", messages }] });
    const exported = `${source}.jsonl`;
    expect((await runLcm(["export", "1", "--format", "jsonl", "--out", exported, "--db", source])).code).toBe(0);
    const target = tempDatabasePath();
    const imported = await runLcm(["import", "jsonl", exported, "--apply", "--db", target]);
    expect(imported.code, imported.stderr).toBe(0);

    const data = await runJson<StatusOutput>(["status", "--db", target], StatusOutputSchema);
    expect(data.status.totals.messages).toBe(30);
    expect(data.status.storage!.growth).toMatchObject({ days: 7, messages: 30 });
    expect((await runLcm(["status", "--db", target])).stdout).toMatch(/ · growth: 30 messages stored in the last 7 days /);
  });
});
