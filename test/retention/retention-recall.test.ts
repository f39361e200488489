import { describe, expect, it } from "vitest";
import { isLcmError } from "../../src/errors.js";
import { createRecallServices } from "../../src/retrieval/recall-services.js";
import type { SummaryDescription } from "../../src/retrieval/describe.js";
import { RecallService } from "../../src/services/recall-service.js";
import { SqliteGrantStore } from "../../src/sqlite/sqlite-grant-store.js";
import { SqliteRetrievalStore } from "../../src/sqlite/sqlite-retrieval-store.js";
import { SqliteSearchIndex } from "../../src/sqlite/sqlite-search-index.js";
import { DAY, NOW, retentionSetup, storeExchanges, summarize } from "./retention-helpers.js";

function recallOf(setup: ReturnType<typeof retentionSetup>) {
  const retrievalStore = new SqliteRetrievalStore(setup.db);
  const recall = createRecallServices({
    store: setup.store, retrievalStore, grants: new SqliteGrantStore(setup.db), config: setup.config, tokens: setup.tokens,
    clock: setup.clock, logger: setup.logger,
  });
  return new RecallService({ recall, conversations: { listRecallConversationIds: (agentId) => retrievalStore.listRecallConversationIds(agentId), getConversation: (id) => setup.store.getConversation(id) }, clock: setup.clock });
}

const OPERATOR = { kind: "operator" } as const;

describe("recall over archived sources", () => {
  it("describe of a summary whose sources were pruned names the archive and the message ids", async () => {
    const setup = retentionSetup({ retentionMaxAgeDays: 30 });
    const conversationId = await storeExchanges(setup, "s1", 10);
    const [summaryId] = summarize(setup, conversationId, 1, 10);
    const report = await setup.service.run({ apply: true });
    const description = (await recallOf(setup).describe(OPERATOR, summaryId!, {})) as SummaryDescription;
    expect(description.content).toBe("summary of 1-10");
    expect(description.archivedSources).toEqual([{
      archivePath: report.messages.archivePaths[0], archivedAt: new Date(NOW).toISOString(), conversationId,
      messageIds: description.sourceMessageIds,
    }]);
  });

  it("expand of a pruned source says where the message is instead of returning empty text", async () => {
    const setup = retentionSetup({ retentionMaxAgeDays: 30 });
    const conversationId = await storeExchanges(setup, "s1", 5);
    const [summaryId] = summarize(setup, conversationId, 1, 10);
    const report = await setup.service.run({ apply: true });
    const expanded = await recallOf(setup).walk(OPERATOR, { summaryId: summaryId!, depth: 1, includeMessages: true });
    const messages = expanded.items.filter((item) => item.type === "message");
    expect(messages).toHaveLength(10);
    for (const item of messages) {
      expect(item.content).toContain(report.messages.archivePaths[0]!);
      expect(item.content).toContain(`message ${item.messageId}`);
      expect(item.content).toContain(`conversation ${conversationId}`);
    }
  });

  it("grep no longer finds pruned text and its note says which archive holds it", async () => {
    const setup = retentionSetup({ retentionMaxAgeDays: 30 });
    const conversationId = await storeExchanges(setup, "s1", 10);
    summarize(setup, conversationId, 1, 10);
    await new SqliteSearchIndex(setup.db).indexPending();
    const before = await recallOf(setup).grep(OPERATOR, { pattern: "needle2", mode: "full_text", scope: "messages", since: null, before: null, limit: 10, sort: "recency" });
    expect(before.result.matches.length).toBeGreaterThan(0);
    const report = await setup.service.run({ apply: true });
    for (const mode of ["full_text", "regex"] as const) {
      const after = await recallOf(setup).grep(OPERATOR, { pattern: "needle2", mode, scope: "messages", since: null, before: null, limit: 10, sort: "recency" });
      expect(after.result.matches.filter((match) => match.type === "message" && match.seq <= 10)).toEqual([]);
      expect(after.note).toContain(report.messages.archivePaths[0]!);
    }
  });

  it("describe and expand of a summary whose conversation was archived whole say where it went", async () => {
    const setup = retentionSetup({ retentionPruneEndedSessions: true });
    const gone = await storeExchanges(setup, "gone", 5);
    await storeExchanges(setup, "kept", 2);
    const [summaryId] = summarize(setup, gone, 1, 10);
    setup.db.run("UPDATE conversations SET ended_at = ? WHERE conversation_id = ?", NOW - DAY, gone);
    const report = await setup.service.run({ apply: true });
    const archivePath = report.conversations[0]!.archivePath!;
    for (const call of [
      () => recallOf(setup).describe(OPERATOR, summaryId!, {}),
      () => recallOf(setup).walk(OPERATOR, { summaryId: summaryId!, depth: 1, includeMessages: true }),
      () => recallOf(setup).expandQuery(OPERATOR, { prompt: "what?", query: null, summaryIds: [summaryId!], maxTokens: 100 }),
    ]) {
      const error = await call().then(() => null, (caught: unknown) => caught);
      expect(isLcmError(error, "not_found")).toBe(true);
      expect((error as Error).message).toContain(archivePath);
      expect((error as Error).message).toContain(`conversation ${gone}`);
    }
    const grep = await recallOf(setup).grep(OPERATOR, { pattern: "needle", mode: "regex", scope: "both", since: null, before: null, limit: 5, sort: "recency" });
    expect(grep.note).toContain(archivePath);
  });
});
