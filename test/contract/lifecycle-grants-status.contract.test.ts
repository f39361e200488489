/**
 * The session lifecycle, grant and status store contracts on every backend the run tests: a new session keeps only what
 * its plan keeps (or changes nothing: "stale", "already"), /reset archives and continues (the live row is the only one
 * getOrCreateConversation returns), grants charge up to their cap, and status sums the counters.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { encodeMessage } from "../../src/messages/message-codec.js";
import type { LcmBackend } from "../../src/store/backend.js";
import { DefaultTokenEstimator } from "../../src/tokens/default-token-estimator.js";
import { backendKinds, openTestBackend, type TestBackend } from "../helpers/backends.js";
import { assistantMessage, userMessage, withIdempotencyKey } from "../helpers/messages.js";

const NOW = Date.UTC(2026, 10, 3, 9, 0, 0);
const tokens = new DefaultTokenEstimator();
const KEY = { agentId: "main", sessionId: "s1", sessionKey: "agent:main:s1" };

async function withMessages(backend: LcmBackend, texts: string[], key = KEY) {
  const conversation = await backend.store.getOrCreateConversation(key, NOW);
  await backend.store.appendMessages(conversation.conversationId, texts.map((text, index) =>
    encodeMessage(index % 2 === 0 ? userMessage(text) : assistantMessage(text), tokens, NOW)), NOW);
  return (await backend.store.getConversation(conversation.conversationId))!;
}

describe.each(backendKinds())("session lifecycle, grants and status on %s", (kind) => {
  let opened: TestBackend;
  let backend: LcmBackend;
  beforeEach(async () => {
    opened = await openTestBackend(kind);
    backend = opened.backend;
  });
  afterEach(async () => {
    await opened.close();
  });

  it("applies a new session once: what is not kept leaves the context, flagged excluded, and the counters follow", async () => {
    const conversation = await withMessages(backend, ["one", "two", "three", "four"]);
    const id = conversation.conversationId;
    const items = await backend.sessions.contextForReset(id);
    expect(items.map((item) => [item.ordinal, item.depth])).toEqual([[1, null], [2, null], [3, null], [4, null]]);
    const plan = { startedAt: NOW + 1, plannedOrdinals: [1, 2, 3, 4], keepOrdinals: [4], record: { at: NOW + 2 } as never };
    expect(await backend.sessions.applyNewSession(id, { ...plan, plannedOrdinals: [1, 2, 3] })).toBe("stale");
    expect(await backend.store.getConversation(id)).toEqual(conversation);
    expect(await backend.sessions.applyNewSession(id, plan)).toBe("applied");
    expect((await backend.sessions.contextForReset(id)).map((item) => item.ordinal)).toEqual([4]);
    const after = (await backend.store.getConversation(id))!;
    expect(after).toMatchObject({ contextItemCount: 1, contextTokens: items[3]!.tokenCount, contextRawTokens: items[3]!.tokenCount, sessionStartedAt: NOW + 1, messageCount: 4 });
    const messages = await backend.store.getMessagesBySeq(id, 1, 10, 10);
    expect(messages.map((message) => (message.flags & 8) !== 0)).toEqual([true, true, true, false]);
    expect(await backend.sessions.applyNewSession(id, { ...plan, plannedOrdinals: [4] })).toBe("already");
    expect(await backend.store.getConversation(id)).toEqual(after);
  });

  it("archives a conversation on /reset and continues it; only the live one is found or created", async () => {
    const conversation = await withMessages(backend, ["before reset"]);
    await backend.store.setBootstrapState(conversation.conversationId, { source: "host", cursor: "c9", importedAt: NOW });
    await backend.store.recordBudget(conversation.conversationId, { tokenBudget: 4_000, windowTokens: 8_000 });
    const { outcome, successor } = await backend.sessions.archiveAndContinue(conversation.conversationId, { startedAt: NOW + 10, reason: "reset", now: NOW + 20 });
    expect(outcome).toBe("applied");
    expect(successor).toMatchObject({
      agentId: "main", sessionId: "s1", sessionKey: "agent:main:s1", previousConversationId: conversation.conversationId, messageCount: 0,
      bootstrapState: { source: "host", cursor: "c9", importedAt: NOW }, lastTokenBudget: 4_000, lastWindowTokens: 8_000, sessionStartedAt: NOW + 10,
    });
    expect(await backend.store.getConversation(conversation.conversationId)).toMatchObject({ archivedAt: NOW + 20, archiveReason: "reset" });
    expect(await backend.store.findConversation(KEY)).toEqual(successor);
    expect(await backend.store.getOrCreateConversation(KEY, NOW + 30)).toEqual(successor);
    expect(await backend.sessions.archiveAndContinue(conversation.conversationId, { startedAt: NOW + 40, reason: "reset", now: NOW + 40 }))
      .toEqual({ outcome: "stale", successor: null });
    expect(await backend.sessions.archiveAndContinue(successor!.conversationId, { startedAt: NOW + 10, reason: "reset", now: NOW + 40 }))
      .toEqual({ outcome: "already", successor: null });
    expect(await backend.store.listConversations()).toHaveLength(2);
  });

  it("notes a session start once, marks the live conversation ended, and lists open conversations", async () => {
    const first = await withMessages(backend, ["a"]);
    const second = await withMessages(backend, ["b"], { agentId: "main", sessionId: "s2", sessionKey: "agent:main:s2" });
    await backend.store.getOrCreateConversation({ agentId: "main", sessionId: "nokey" }, NOW);
    await backend.sessions.noteSessionStart(first.conversationId, NOW + 5);
    await backend.sessions.noteSessionStart(first.conversationId, NOW + 6);
    expect((await backend.store.getConversation(first.conversationId))?.sessionStartedAt).toBe(NOW + 5);
    expect((await backend.sessions.listOpenConversations(0, 10)).map((row) => row.conversationId)).toEqual([first.conversationId, second.conversationId]);
    expect(await backend.sessions.markEnded({ agentId: "main", sessionId: "s1" }, "deleted", NOW + 7)).toBe(true);
    expect(await backend.sessions.markEnded({ agentId: "main", sessionId: "s1" }, "deleted", NOW + 8)).toBe(false);
    expect(await backend.store.getConversation(first.conversationId)).toMatchObject({ endedAt: NOW + 7, endReason: "deleted" });
    expect((await backend.sessions.listOpenConversations(0, 10)).map((row) => row.conversationId)).toEqual([second.conversationId]);
    expect(await backend.sessions.listOpenConversations(second.conversationId, 10)).toEqual([]);
    // A new message revives an ended conversation.
    await backend.store.appendMessages(first.conversationId, [encodeMessage(userMessage("back"), tokens, NOW)], NOW + 9);
    expect(await backend.store.getConversation(first.conversationId)).toMatchObject({ endedAt: null, endReason: null });
  });

  it("takes a host command stored before its answer out of the context, once", async () => {
    const conversation = await backend.store.getOrCreateConversation(KEY, NOW);
    const id = conversation.conversationId;
    const command = encodeMessage(withIdempotencyKey(userMessage("/status"), "cmd-1"), tokens, NOW);
    await backend.store.appendMessages(id, [command, encodeMessage(assistantMessage("answer"), tokens, NOW)], NOW);
    expect(await backend.sessions.excludeHostCommand(id, "cmd-unknown")).toBe(false);
    expect(await backend.sessions.excludeHostCommand(id, "cmd-1")).toBe(true);
    expect(await backend.sessions.excludeHostCommand(id, "cmd-1")).toBe(false);
    const after = (await backend.store.getConversation(id))!;
    const answerTokens = (await backend.store.getMessagesBySeq(id, 2, 2, 1))[0]!.tokenCount;
    expect(after).toMatchObject({ contextItemCount: 1, contextTokens: answerTokens, contextRawTokens: answerTokens, messageCount: 2 });
    expect(((await backend.store.getMessagesBySeq(id, 1, 1, 1))[0]!.flags & 8) !== 0).toBe(true);
  });

  it("charges a grant up to its cap while it is active, and revokes and sweeps grants", async () => {
    const grant = { grantId: "g1", agentId: "main", childSessionKey: "agent:main:subagent:lcm-expand-1", conversationIds: [3, 1], tokenCap: 100, createdAt: NOW, expiresAt: NOW + 1_000 };
    expect(await backend.grants.createGrant(grant)).toMatchObject({ ...grant, tokensUsed: 0, summariesExpanded: 0, revokedAt: null, revokeReason: null });
    expect(await backend.grants.chargeGrant("g1", 60.2, NOW + 1)).toMatchObject({ tokensUsed: 61, summariesExpanded: 1 });
    expect(await backend.grants.chargeGrant("g1", 60, NOW + 2)).toMatchObject({ tokensUsed: 100, summariesExpanded: 2 });
    expect(await backend.grants.chargeGrant("g1", 1, NOW + 1_000)).toBeNull();
    expect(await backend.grants.chargeGrant("nope", 1, NOW)).toBeNull();
    expect((await backend.grants.findGrantForChild(grant.childSessionKey))?.grantId).toBe("g1");
    expect(await backend.grants.findGrantForChild("agent:main:other")).toBeNull();
    await backend.grants.createGrant({ ...grant, grantId: "g2", createdAt: NOW + 5 });
    expect((await backend.grants.findGrantForChild(grant.childSessionKey))?.grantId).toBe("g2");
    await backend.grants.revokeGrant("g2", "done", NOW + 6);
    expect(await backend.grants.getGrant("g2")).toMatchObject({ revokedAt: NOW + 6, revokeReason: "done" });
    expect(await backend.grants.chargeGrant("g2", 1, NOW + 7)).toBeNull();
    await backend.grants.createGrant({ ...grant, grantId: "g3", createdAt: NOW + 8 });
    expect(await backend.grants.revokeGrantsForChild(grant.childSessionKey, "run ended", NOW + 9)).toBe(2);
    expect(await backend.grants.sweepGrants(NOW + 2_000, NOW + 7)).toBe(1);
    expect(await backend.grants.getGrant("g2")).toBeNull();
    expect(await backend.grants.getGrant("g1")).toMatchObject({ revokedAt: NOW + 9, revokeReason: "run ended" });
  });

  it("states summaries by depth and database totals from the counters", async () => {
    const first = await withMessages(backend, ["alpha beta", "gamma"]);
    await withMessages(backend, ["delta"], { agentId: "main", sessionId: "s2", sessionKey: "agent:main:s2" });
    expect(await backend.status.summaryStats(first.conversationId)).toEqual([]);
    expect(await backend.status.archivedMessageCount(first.conversationId)).toBe(0);
    const conversations = await backend.store.listConversations();
    const totals = {
      conversations: 2, messages: 3, messageTokens: conversations.reduce((total, row) => total + row.messageTokens, 0),
      archivedConversations: 0, endedConversations: 0, archivedMessages: 0,
    };
    if (kind === "sqlite") expect(await backend.status.databaseTotals()).toMatchObject(totals);
    else expect(await statusTotalsWithoutIndex(backend)).toMatchObject(totals);
  });
});

/** databaseTotals asks the search index what waits for it; until PostgreSQL has one, the rest of the totals are checked. */
async function statusTotalsWithoutIndex(backend: LcmBackend) {
  try {
    return await backend.status.databaseTotals();
  } catch {
    const { PgStatusStore } = await import("../../src/postgres/pg-status-store.js");
    const database = (backend as unknown as { database: ConstructorParameters<typeof PgStatusStore>[0] }).database;
    return new PgStatusStore(database, { pendingMessages: async () => 0 }).databaseTotals();
  }
}
