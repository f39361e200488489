/**
 * The core store contract (LcmStore: conversations, messages, the context, stored large files) on every backend the
 * run tests (test/helpers/backends.ts): the same assertions on SQLite (npm test) and PostgreSQL (npm run test:postgres).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { decodeMessage, encodeMessage, type EncodedMessage } from "../../src/messages/message-codec.js";
import type { ConversationRecord, LargeFileRecord } from "../../src/records.js";
import type { LcmStore } from "../../src/store/store.js";
import { DefaultTokenEstimator } from "../../src/tokens/default-token-estimator.js";
import { backendKinds, openTestBackend, type TestBackend } from "../helpers/backends.js";
import { assistantMessage, toolCallMessage, toolResultMessage, userMessage, withIdempotencyKey } from "../helpers/messages.js";

const tokens = new DefaultTokenEstimator();
const NOW = Date.UTC(2026, 10, 2, 9, 0, 0);
/** NUL, the PostgreSQL escape character itself, a line separator and an astral character. */
const HOSTILE = "a\u0000b \uFDD0 \uFDD00 c\u2028d 😀𝄞 \u0000";

function encode(...messages: Parameters<typeof encodeMessage>[0][]): EncodedMessage[] {
  return messages.map((message) => encodeMessage(message, tokens, NOW));
}

async function allMessages(store: LcmStore, conversation: ConversationRecord) {
  return store.getMessagesBySeq(conversation.conversationId, 1, Number.MAX_SAFE_INTEGER, 10_000);
}

describe.each(backendKinds())("the core store on %s", (kind) => {
  let opened: TestBackend;
  let store: LcmStore;
  beforeEach(async () => {
    opened = await openTestBackend(kind);
    store = opened.backend.store;
  });
  afterEach(async () => {
    await opened.close();
  });

  const conversationOf = (sessionId = "s1") => store.getOrCreateConversation({ agentId: "main", sessionId, sessionKey: `agent:main:${sessionId}` }, NOW);

  it("creates one conversation per agent and session, and finds it by both", async () => {
    const first = await conversationOf("s1");
    expect(await conversationOf("s1")).toEqual(first);
    const other = await store.getOrCreateConversation({ agentId: "other", sessionId: "s1" }, NOW);
    expect(other.conversationId).not.toBe(first.conversationId);
    expect(await store.findConversation({ agentId: "main", sessionId: "s1" })).toEqual(first);
    expect(await store.findConversation({ agentId: "main", sessionId: "nope" })).toBeNull();
    expect(await store.getConversation(first.conversationId)).toEqual(first);
    expect(await store.getConversation(987_654)).toBeNull();
    expect(first).toMatchObject({ agentId: "main", sessionId: "s1", sessionKey: "agent:main:s1", messageCount: 0, contextItemCount: 0 });
    expect((await store.listConversations({ agentId: "other" })).map((row) => row.conversationId)).toEqual([other.conversationId]);
    expect(await store.listConversations()).toHaveLength(2);
  });

  it("commits a turn once: a replay of its advancement key is a duplicate and changes nothing", async () => {
    const conversation = await conversationOf();
    const turn = encode(userMessage("what is the plan"), toolCallMessage([{ id: "c1", name: "read", arguments: { path: "/x" } }]),
      toolResultMessage("c1", "read", "file text"), assistantMessage("here is the plan"));
    const committed = await store.commitTurn(conversation.conversationId, { advancementKey: "k1" }, turn, NOW);
    expect(committed).toEqual({ status: "committed", inserted: 4, duplicates: 0 });
    expect(await store.hasCommittedTurns(conversation.conversationId)).toBe(true);
    const before = await store.getConversation(conversation.conversationId);
    const stored = await allMessages(store, conversation);

    const replay = await store.commitTurn(conversation.conversationId, { advancementKey: "k1" }, turn, NOW + 5_000);
    expect(replay).toEqual({ status: "duplicate", inserted: 0, duplicates: 4 });
    expect(await store.getConversation(conversation.conversationId)).toEqual(before);
    expect(await allMessages(store, conversation)).toEqual(stored);
    expect(stored.map((message) => message.seq)).toEqual([1, 2, 3, 4]);
    expect(before).toMatchObject({
      messageCount: 4, contextItemCount: 4, lastIngestAt: NOW,
      messageTokens: turn.reduce((total, message) => total + message.tokenCount, 0),
      contextTokens: turn.reduce((total, message) => total + message.tokenCount, 0),
    });
    const items = await store.listContextOldestFirst(conversation.conversationId, null, 100);
    expect(items.map((item) => [item.ordinal, item.messageId])).toEqual(stored.map((message, index) => [index + 1, message.messageId]));
    expect(items.map((item) => item.flags)).toEqual(turn.map((message) => message.itemFlags));
  });

  it("commits an empty turn once and says so", async () => {
    const conversation = await conversationOf();
    expect(await store.hasCommittedTurns(conversation.conversationId)).toBe(false);
    expect(await store.commitTurn(conversation.conversationId, { advancementKey: "empty" }, [], NOW)).toEqual({ status: "committed", inserted: 0, duplicates: 0 });
    expect(await store.commitTurn(conversation.conversationId, { advancementKey: "empty" }, [], NOW)).toEqual({ status: "duplicate", inserted: 0, duplicates: 0 });
    expect(await store.hasCommittedTurns(conversation.conversationId)).toBe(true);
  });

  it("appends skipping stored identities, with dense seqs and ordinals, and leaves excluded messages out of context", async () => {
    const conversation = await conversationOf();
    const [a, b, c] = encode(userMessage("alpha"), assistantMessage("beta"), userMessage("gamma"));
    expect(await store.appendMessages(conversation.conversationId, [a!, b!], NOW)).toEqual({ inserted: 2, duplicates: 0 });
    expect(await store.appendMessages(conversation.conversationId, [b!, c!, c!], NOW)).toEqual({ inserted: 1, duplicates: 2 });
    const excluded = { ...encode(assistantMessage("hidden"))[0]!, flags: 8 };
    expect(await store.appendMessages(conversation.conversationId, [excluded], NOW)).toEqual({ inserted: 1, duplicates: 0 });
    const stored = await allMessages(store, conversation);
    expect(stored.map((message) => [message.seq, message.content])).toEqual([[1, "alpha"], [2, "beta"], [3, "gamma"], [4, "hidden"]]);
    const items = await store.listContextOldestFirst(conversation.conversationId, null, 100);
    expect(items.map((item) => item.ordinal)).toEqual([1, 2, 3]);
    expect(items.map((item) => item.messageId)).toEqual(stored.slice(0, 3).map((message) => message.messageId));
    expect(await store.getConversation(conversation.conversationId)).toMatchObject({ messageCount: 4, contextItemCount: 3 });
    const found = await store.findExistingIdentities(conversation.conversationId, [a!.identityKey, "fp:never", c!.identityKey]);
    expect(found).toEqual(new Set([a!.identityKey, c!.identityKey]));
    expect(await store.findExistingIdentities(conversation.conversationId, [])).toEqual(new Set());
  });

  it("treats a message stored under its legacy identity as stored", async () => {
    const conversation = await conversationOf();
    const [message] = encode(withIdempotencyKey(userMessage("legacy"), "idem-1"));
    expect(message!.legacyIdentityKey).toBeDefined();
    await store.appendMessages(conversation.conversationId, [{ ...message!, identityKey: message!.legacyIdentityKey!, legacyIdentityKey: undefined }], NOW);
    expect(await store.appendMessages(conversation.conversationId, [message!], NOW)).toEqual({ inserted: 0, duplicates: 1 });
  });

  it("stores a colliding fingerprint of a new turn under an identity scoped to the turn", async () => {
    const conversation = await conversationOf();
    const [same] = encode(userMessage("ok"));
    await store.commitTurn(conversation.conversationId, { advancementKey: "t1", admissionEntryId: "entry-1" }, [same!], NOW);
    const second = await store.commitTurn(conversation.conversationId, { advancementKey: "t2", admissionEntryId: "entry-2" }, [same!], NOW);
    expect(second).toEqual({ status: "committed", inserted: 1, duplicates: 0 });
    const stored = await allMessages(store, conversation);
    expect(stored.map((message) => message.seq)).toEqual([1, 2]);
    expect(stored[1]!.identityKey).toMatch(new RegExp(`^${same!.identityKey}@.+:0$`));
    // The same entry again (another advancement key for the turn it opened) is a replay, not a new message.
    expect(await store.commitTurn(conversation.conversationId, { advancementKey: "t3", admissionEntryId: "entry-2" }, [same!], NOW))
      .toEqual({ status: "committed", inserted: 0, duplicates: 1 });
  });

  it("round-trips NUL, U+2028, astral characters and the escape character through every text it stores", async () => {
    const key = { agentId: `agent${HOSTILE}`, sessionId: `session${HOSTILE}`, sessionKey: `key${HOSTILE}` };
    const conversation = await store.getOrCreateConversation(key, NOW);
    expect(conversation).toMatchObject(key);
    expect((await store.findConversation(key))?.conversationId).toBe(conversation.conversationId);
    const host = [
      withIdempotencyKey(userMessage(`question ${HOSTILE}`), `idem${HOSTILE}`),
      toolCallMessage([{ id: "c1", name: "write", arguments: { text: HOSTILE } }], `calling ${HOSTILE}`),
      assistantMessage(`answer ${HOSTILE}`, { model: `model${HOSTILE}` }),
    ];
    const encoded = encode(...host);
    await store.commitTurn(conversation.conversationId, { advancementKey: `adv${HOSTILE}`, admissionEntryId: `entry${HOSTILE}` }, encoded, NOW);
    const stored = await allMessages(store, conversation);
    expect(stored.map((message) => message.identityKey)).toEqual(encoded.map((message) => message.identityKey));
    expect(stored.map((message) => decodeMessage(message))).toEqual(host);
    expect(await store.findExistingIdentities(conversation.conversationId, [encoded[0]!.identityKey])).toEqual(new Set([encoded[0]!.identityKey]));
    expect(await store.commitTurn(conversation.conversationId, { advancementKey: `adv${HOSTILE}` }, encoded, NOW)).toMatchObject({ status: "duplicate" });
    expect((await store.listConversations({ agentId: key.agentId }))[0]).toMatchObject(key);
  });

  it("reads messages by id in the order asked, skipping unknown ids, and by seq range", async () => {
    const conversation = await conversationOf();
    await store.appendMessages(conversation.conversationId, encode(userMessage("one"), assistantMessage("two"), userMessage("three")), NOW);
    const [one, two, three] = await allMessages(store, conversation);
    const read = await store.getMessages([three!.messageId, 999_999, one!.messageId, two!.messageId]);
    expect(read.map((message) => message.content)).toEqual(["three", "one", "two"]);
    expect(read[1]).toEqual(one);
    expect(await store.getMessages([])).toEqual([]);
    expect((await store.getMessagesBySeq(conversation.conversationId, 2, 3, 10)).map((message) => message.content)).toEqual(["two", "three"]);
    expect((await store.getMessagesBySeq(conversation.conversationId, 1, 3, 1)).map((message) => message.content)).toEqual(["one"]);
  });

  it("pages the context newest first and oldest first around an ordinal", async () => {
    const conversation = await conversationOf();
    await store.appendMessages(conversation.conversationId, encode(...["a", "b", "c", "d", "e"].map((text) => userMessage(text))), NOW);
    const id = conversation.conversationId;
    expect((await store.listContextNewestFirst(id, null, 2)).map((item) => item.ordinal)).toEqual([5, 4]);
    expect((await store.listContextNewestFirst(id, 4, 10)).map((item) => item.ordinal)).toEqual([3, 2, 1]);
    expect((await store.listContextOldestFirst(id, null, 2)).map((item) => item.ordinal)).toEqual([1, 2]);
    expect((await store.listContextOldestFirst(id, 3, 10)).map((item) => item.ordinal)).toEqual([4, 5]);
    expect(await store.listContextOldestFirst(987_654, null, 10)).toEqual([]);
  });

  it("stores large files with their message, finds them by id and by hash, and lists them oldest first", async () => {
    const conversation = await conversationOf();
    const file = (name: string, hash: string, at: number): LargeFileRecord => ({
      fileId: `file_${hash}`, conversationId: conversation.conversationId, contentHash: hash, fileName: `${name}${HOSTILE}`, mimeType: "text/plain",
      byteSize: 123_456, tokenCount: 30_000, storagePath: `/tmp/lcm-files/${hash}.txt`, explorationSummary: `summary of ${name} ${HOSTILE}`,
      explorer: "text:fallback", origin: "file-block", toolName: null, createdAt: at,
    });
    const first = file("b.txt", "h2", NOW + 1);
    const second = file("a.txt", "h1", NOW + 2);
    const [message] = encode(userMessage("see [LCM File: file_h2]"));
    await store.commitTurn(conversation.conversationId, { advancementKey: "f" }, [{ ...message!, largeFiles: [first, second] }], NOW);
    expect(await store.getLargeFile("file_h2")).toEqual(first);
    expect(await store.findLargeFileByHash(conversation.conversationId, "h1")).toEqual(second);
    expect(await store.findLargeFileByHash(conversation.conversationId, "h3")).toBeNull();
    expect(await store.getLargeFile("file_none")).toBeNull();
    expect(await store.listLargeFiles(conversation.conversationId)).toEqual([first, second]);
    expect(await store.listLargeFiles(conversation.conversationId, 1)).toEqual([first]);
    // A replayed message changes nothing, its files included.
    const [again] = encode(userMessage("again"));
    await store.appendMessages(conversation.conversationId, [{ ...again!, largeFiles: [{ ...first, explorationSummary: "other" }] }], NOW);
    expect(await store.getLargeFile("file_h2")).toEqual(first);
  });

  it("records budgets: undefined fields keep their value, and the assembly record round-trips", async () => {
    const conversation = await conversationOf();
    const id = conversation.conversationId;
    await store.recordBudget(id, { tokenBudget: 1_000, windowTokens: 8_000, reserveTokens: 500 });
    await store.recordBudget(id, { tokenBudget: 2_000 });
    const assembly = { hostBudgetTokens: 2_000, toolCount: 3, promptTokens: 100, budgetTokens: 1_900, assembledTokens: 1_500, floor: "none" };
    await store.recordBudget(id, { assembly: assembly as never });
    await store.recordBudget(id, { windowTokens: Number.NaN, reserveTokens: -1 });
    expect(await store.getConversation(id)).toMatchObject({ lastTokenBudget: 2_000, lastWindowTokens: 8_000, lastReserveTokens: 500, lastAssembly: assembly });
    await store.setBootstrapState(id, { source: "host", cursor: "c1", importedAt: NOW });
    await store.setLastCompaction(id, { at: NOW, trigger: "budget", compacted: true, tokensBefore: 10, tokensAfter: 5, passes: 1 });
    expect(await store.getConversation(id)).toMatchObject({
      bootstrapState: { source: "host", cursor: "c1", importedAt: NOW }, lastCompaction: { at: NOW, trigger: "budget", passes: 1 },
    });
  });
});
