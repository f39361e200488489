/**
 * Several gateways on one PostgreSQL database (issue 28): each `reopen()` is another pool, as another process would
 * have. Turns committed in parallel to one conversation and to several, replays of the same advancement keys from two
 * gateways at once, compactions racing each other and racing turns: no duplicate, no loss, seqs and ordinals dense,
 * exactly one of two competing compactions applied and the other stale, and the lineage whole.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { resetSharedCircuitBreakers } from "../../src/compaction/circuit-breaker.js";
import { leafDraft } from "../../src/compaction/summary-draft.js";
import { encodeMessage, type EncodedMessage } from "../../src/messages/message-codec.js";
import type { PostgresBackend } from "../../src/postgres/open-postgres-backend.js";
import type { LcmBackend } from "../../src/store/backend.js";
import { WordTokenEstimator } from "../fakes/word-token-estimator.js";
import { generateSession } from "../helpers/agent-session.js";
import { openTestBackend, type TestBackend } from "../helpers/backends.js";
import { createTestEngine } from "../helpers/engine.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";
import { checkStoreInvariants } from "../helpers/store-invariants.js";
import { playTurns } from "../helpers/turn-driver.js";

const tokens = new WordTokenEstimator();
const NOW = Date.UTC(2026, 10, 4, 9, 0, 0);
const KEY = { agentId: "main", sessionId: "shared", sessionKey: "agent:main:shared" };
const GATEWAYS = 4;

/** A turn of a user message and a reply, distinct per gateway and turn. */
function turnOf(gateway: number, turn: number): EncodedMessage[] {
  return [
    encodeMessage(userMessage(`gateway ${gateway} turn ${turn} asks about item${gateway}x${turn}`), tokens, NOW),
    encodeMessage(assistantMessage(`gateway ${gateway} turn ${turn} answers with detail${gateway}x${turn}`), tokens, NOW),
  ];
}

/** Every message of the conversation, the context, and the database-wide facts a loss or duplicate would change. */
async function storedFacts(backend: LcmBackend, conversationId: number) {
  const messages = await backend.store.getMessagesBySeq(conversationId, 1, Number.MAX_SAFE_INTEGER, 1_000_000);
  const items = await backend.store.listContextOldestFirst(conversationId, null, 1_000_000);
  return { messages, items, conversation: (await backend.store.getConversation(conversationId))! };
}

describe("several gateways on one PostgreSQL database", () => {
  let opened: TestBackend;
  let gateways: LcmBackend[];
  beforeEach(async () => {
    opened = await openTestBackend("postgres");
    gateways = Array.from({ length: GATEWAYS }, () => opened.reopen());
  });
  afterEach(async () => {
    resetSharedCircuitBreakers();
    await opened.close();
  });

  it("commit turns in parallel to one conversation and to their own: no duplicate, no loss, dense seqs and ordinals", async () => {
    const TURNS = 25;
    await Promise.all(gateways.map(async (gateway, index) => {
      for (let turn = 1; turn <= TURNS; turn++) {
        // Each gateway finds or creates the shared conversation itself, as a turn's engine does.
        const shared = await gateway.store.getOrCreateConversation(KEY, NOW);
        const own = await gateway.store.getOrCreateConversation({ agentId: "main", sessionId: `own-${index}` }, NOW);
        const [first, second] = await Promise.all([
          gateway.store.commitTurn(shared.conversationId, { advancementKey: `g${index}-t${turn}` }, turnOf(index, turn), NOW + turn),
          gateway.store.commitTurn(own.conversationId, { advancementKey: `own-t${turn}` }, turnOf(100 + index, turn), NOW + turn),
        ]);
        expect([first.status, second.status]).toEqual(["committed", "committed"]);
      }
    }));
    const conversations = await opened.backend.store.listConversations();
    expect(conversations).toHaveLength(GATEWAYS + 1);
    for (const conversation of conversations) {
      const { messages, items } = await storedFacts(opened.backend, conversation.conversationId);
      const expected = conversation.sessionId === "shared" ? GATEWAYS * TURNS * 2 : TURNS * 2;
      expect(messages.map((message) => message.seq)).toEqual(Array.from({ length: expected }, (_, index) => index + 1));
      expect(new Set(messages.map((message) => message.identityKey)).size).toBe(expected);
      expect(items.map((item) => item.ordinal)).toEqual(Array.from({ length: expected }, (_, index) => index + 1));
      expect(items.map((item) => item.messageId)).toEqual(messages.map((message) => message.messageId));
      expect(conversation).toMatchObject({ messageCount: expected, contextItemCount: expected });
      expect(await checkStoreInvariants(opened.backend, conversation.conversationId)).toEqual([]);
    }
    // Each gateway's turns keep their order within the shared conversation (a turn's messages stay together).
    const shared = conversations.find((conversation) => conversation.sessionId === "shared")!;
    const { messages } = await storedFacts(opened.backend, shared.conversationId);
    for (let index = 0; index < messages.length; index += 2) {
      expect(messages[index + 1]!.content.replace("answers with detail", "asks about item")).toBe(messages[index]!.content);
    }
  });

  it("store a turn replayed by two gateways at once exactly once: one commits, the other answers duplicate", async () => {
    const conversation = await opened.backend.store.getOrCreateConversation(KEY, NOW);
    const ROUNDS = 20;
    for (let round = 1; round <= ROUNDS; round++) {
      const messages = turnOf(0, round);
      // Four gateways, two pairs replaying the same two keys, all at once.
      const results = await Promise.all(gateways.map((gateway, index) =>
        gateway.store.commitTurn(conversation.conversationId, { advancementKey: `replayed-${round}-${index % 2}` }, index % 2 ? messages : turnOf(1, round), NOW)));
      for (const pair of [0, 1]) {
        const statuses = results.filter((_, index) => index % 2 === pair).map((result) => result.status).sort();
        expect(statuses).toEqual(["committed", "duplicate"]);
      }
      expect(results.reduce((total, result) => total + result.inserted, 0)).toBe(4);
    }
    const { messages, items, conversation: after } = await storedFacts(opened.backend, conversation.conversationId);
    expect(messages.map((message) => message.seq)).toEqual(Array.from({ length: ROUNDS * 4 }, (_, index) => index + 1));
    expect(new Set(messages.map((message) => message.identityKey)).size).toBe(ROUNDS * 4);
    expect(items.map((item) => item.ordinal)).toEqual(Array.from({ length: ROUNDS * 4 }, (_, index) => index + 1));
    expect(after.messageCount).toBe(ROUNDS * 4);
  });

  /**
   * Runs `write` (a gateway's) while another connection holds the conversation's row; once the write waits for the
   * row (its statement's snapshot taken before), `meanwhile` writes in the holder's transaction, which then commits.
   */
  async function whileRowHeld<T>(conversationId: number, write: () => Promise<T>, meanwhile: (run: (sql: string) => Promise<number>) => Promise<void>): Promise<T> {
    const holder = (opened.reopen() as PostgresBackend).database;
    const watcher = (opened.reopen() as PostgresBackend).database;
    let result!: Promise<T>;
    await holder.transaction(async (tx) => {
      await tx.run("SELECT 1 FROM conversations WHERE conversation_id = $1 FOR UPDATE", [conversationId]);
      result = write();
      for (let attempt = 0; attempt < 1_000; attempt++) {
        const waiting = await watcher.row("SELECT 1 AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
        if (waiting) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await meanwhile((sql) => tx.run(sql, [conversationId]));
    });
    return result;
  }

  it("read a turn's claim again when another gateway completed it while they waited for the conversation: duplicate, nothing stored", async () => {
    const [gateway] = gateways as [LcmBackend];
    const conversation = await gateway.store.getOrCreateConversation(KEY, NOW);
    const id = conversation.conversationId;
    // Claimed by the other gateway during the wait (the claim's conflict tells).
    const claimed = await whileRowHeld(id, () => gateway.store.commitTurn(id, { advancementKey: "claimed-meanwhile" }, turnOf(0, 1), NOW), async (run) => {
      await run(`INSERT INTO committed_turns (conversation_id, advancement_key, committed_at, message_count, stored_messages) VALUES ($1, 'claimed-meanwhile', 0, 2, NULL)`);
    });
    expect(claimed).toMatchObject({ status: "duplicate", inserted: 0 });
    // Half stored before, completed by the other gateway during the wait (the row's new version tells).
    await gateway.store.getOrCreateConversation(KEY, NOW);
    await (opened.reopen() as PostgresBackend).database.run(
      "INSERT INTO committed_turns (conversation_id, advancement_key, committed_at, message_count, stored_messages) VALUES ($1, 'resumed', 0, 2, 1)", [id],
    );
    const resumed = await whileRowHeld(id, () => gateway.store.commitTurn(id, { advancementKey: "resumed" }, turnOf(0, 2), NOW), async (run) => {
      await run("UPDATE committed_turns SET stored_messages = NULL WHERE conversation_id = $1 AND advancement_key = 'resumed'");
      await run("UPDATE conversations SET next_seq = next_seq WHERE conversation_id = $1");
    });
    expect(resumed).toMatchObject({ status: "duplicate", inserted: 0 });
    const { messages, conversation: after } = await storedFacts(gateway, id);
    expect(messages).toEqual([]);
    expect(after.messageCount).toBe(0);
  });

  it("apply exactly one of two compactions of one conversation planned together; the other is stale and writes nothing", async () => {
    const [first, second] = gateways as [LcmBackend, LcmBackend];
    for (let round = 1; round <= 8; round++) {
      const conversation = await first.store.getOrCreateConversation({ agentId: "main", sessionId: `race-${round}` }, NOW);
      for (let turn = 1; turn <= 4; turn++) await first.store.commitTurn(conversation.conversationId, { advancementKey: `t${turn}` }, turnOf(round, turn), NOW);
      const plan = async (backend: LcmBackend, content: string) => {
        const items = (await backend.compaction.listCompactionItems(conversation.conversationId)).slice(0, 6);
        const draft = leafDraft(await backend.store.getMessages(items.map((item) => item.messageId!)), { content, level: "normal", createdAt: NOW, tokens });
        return { items, draft };
      };
      const [a, b] = await Promise.all([plan(first, "from the first gateway"), plan(second, "from the second gateway")]);
      const results = await Promise.all([
        first.compaction.applyLeafSummary({ conversationId: conversation.conversationId, items: a.items }, a.draft, 9),
        second.compaction.applyLeafSummary({ conversationId: conversation.conversationId, items: b.items }, b.draft, 9),
      ]);
      expect(results.map((result) => result.kind).sort()).toEqual(["applied", "stale"]);
      const stale = results.find((result) => result.kind === "stale") as { reason: string };
      expect(stale.reason).toMatch(/another gateway holds the lock|the planned range changed/);
      const loser = results[0]!.kind === "stale" ? a.draft : b.draft;
      expect(await first.store.getSummary(loser.summaryId)).toBeNull();
      const items = await first.compaction.listCompactionItems(conversation.conversationId);
      expect(items.filter((item) => item.summaryRowId !== null)).toHaveLength(1);
      expect(await checkStoreInvariants(first, conversation.conversationId)).toEqual([]);
    }
  });

  it("answer stale at once, naming the lock, while another gateway holds the conversation's lock", async () => {
    const [first, second] = gateways as [LcmBackend, LcmBackend];
    const conversation = await first.store.getOrCreateConversation(KEY, NOW);
    for (let turn = 1; turn <= 3; turn++) await first.store.commitTurn(conversation.conversationId, { advancementKey: `t${turn}` }, turnOf(0, turn), NOW);
    const items = (await first.compaction.listCompactionItems(conversation.conversationId)).slice(0, 4);
    const draft = leafDraft(await first.store.getMessages(items.map((item) => item.messageId!)), { content: "leaf", level: "normal", createdAt: NOW, tokens });
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    // A third gateway holds the lock (as its retention or compaction would) until told to let go.
    const holder = (opened.reopen() as PostgresBackend).database.withConversationLock(conversation.conversationId, async () => {
      held();
      await released;
    });
    await holding;
    const blocked = await second.compaction.applyLeafSummary({ conversationId: conversation.conversationId, items }, draft, 5);
    expect(blocked).toEqual({ kind: "stale", reason: expect.stringContaining("another gateway holds the lock") });
    expect(await first.store.getSummary(draft.summaryId)).toBeNull();
    // Turns are not held up by the compaction lock.
    expect((await first.store.commitTurn(conversation.conversationId, { advancementKey: "during" }, turnOf(0, 9), NOW)).status).toBe("committed");
    release();
    expect(await holder).toMatchObject({ locked: true });
    expect(await second.compaction.applyLeafSummary({ conversationId: conversation.conversationId, items }, draft, 5)).toMatchObject({ kind: "applied" });
    expect(await checkStoreInvariants(first, conversation.conversationId)).toEqual([]);
  });

  it("play turns through engines of several gateways into one session with compaction on: nothing lost, lineage whole", async () => {
    const config = { freshTailCount: 4, leafMinFanout: 4, leafChunkTokens: 256, leafTargetTokens: 64, condensedTargetTokens: 64, condensedMinFanout: 3, condensedMinFanoutHard: 2 };
    const sessions = gateways.map((_, index) => generateSession({ seed: 280 + index, turns: 12, maxWords: 40 }));
    await Promise.all(gateways.map((gateway, index) => {
      const harness = createTestEngine({ config, tokens, backend: gateway });
      return playTurns(harness.newEngine, sessions[index]!, { sessionId: "shared", tokenBudget: 2_000 });
    }));
    const conversation = (await opened.backend.store.findConversation({ agentId: "main", sessionId: "shared" }))!;
    const expected = sessions.flat(2).length;
    const { messages } = await storedFacts(opened.backend, conversation.conversationId);
    expect(messages).toHaveLength(expected);
    expect(messages.map((message) => message.seq)).toEqual(Array.from({ length: expected }, (_, index) => index + 1));
    expect(await checkStoreInvariants(opened.backend, conversation.conversationId)).toEqual([]);
    const items = await opened.backend.compaction.listCompactionItems(conversation.conversationId);
    expect(items.some((item) => item.summaryRowId !== null)).toBe(true);
  });
});
