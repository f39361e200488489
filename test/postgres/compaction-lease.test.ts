/**
 * Compaction leases on PostgreSQL (issue 28: "leases with fencing for work that spans transactions"). A compaction run
 * spans many transactions with model calls between them; two gateways compacting one conversation at once would each
 * pay for the same summaries and throw one away. The run takes the conversation's lease first: another gateway's run
 * does not start (no model call, no wait) and says so; a lease whose holder died ends at its expiry; a run whose lease
 * was taken over writes nothing more (its applies are fenced) and ends at once instead of re-planning.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { resetSharedCircuitBreakers } from "../../src/compaction/circuit-breaker.js";
import { CompactionEngine } from "../../src/compaction/compaction-engine.js";
import { leafDraft } from "../../src/compaction/summary-draft.js";
import type { LcmBackend } from "../../src/store/backend.js";
import type { CompactionLeases } from "../../src/store/compaction-store.js";
import type { Summarizer } from "../../src/contracts.js";
import { RecordingLlm } from "../fakes/fake-plugin-api.js";
import { WordTokenEstimator } from "../fakes/word-token-estimator.js";
import { openTestBackend, type TestBackend } from "../helpers/backends.js";
import { configuredSizes, createTestEngine, RecordingLogger } from "../helpers/engine.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";
import { checkStoreInvariants } from "../helpers/store-invariants.js";
import { playTurns } from "../helpers/turn-driver.js";
import { SteppingClock } from "../fakes/clocks.js";
import { CompactOutputSchema } from "../../src/cli/output-schemas.js";
import type { CompactOutput } from "../../src/cli/commands/compact-command.js";
import { runJson } from "../cli/cli-harness.js";
import { CircuitBreaker } from "../../src/compaction/circuit-breaker.js";

const tokens = new WordTokenEstimator();
const CONFIG = {
  freshTailCount: 2, leafMinFanout: 2, leafChunkTokens: 256, leafTargetTokens: 64, condensedTargetTokens: 64,
  condensedMinFanout: 3, condensedMinFanoutHard: 2, autocompactDisabled: true,
};
const SESSION = { sessionId: "shared", sessionKey: "agent:main:shared" };
const SUMMARY = "The user and assistant exchanged notes.\nExpand for details about: the notes";

function exchange(turn: number) {
  const words = (prefix: string) => Array.from({ length: 36 }, (_, index) => `${prefix}${turn}w${index}`).join(" ");
  return [userMessage(words("u")), assistantMessage(words("a"))];
}

/** A model whose answers wait until `release()`; `calls` records every request. */
function heldLlm() {
  let release!: () => void;
  const released = new Promise<void>((resolve) => { release = resolve; });
  const llm = new RecordingLlm(async () => {
    await released;
    return SUMMARY;
  });
  return { llm, release };
}

function leasesOf(backend: LcmBackend): CompactionLeases {
  const leases = backend.compaction.leases;
  if (!leases) throw new Error("the PostgreSQL compaction store has leases");
  return leases;
}

describe("compaction leases across gateways on one PostgreSQL database", () => {
  let opened: TestBackend;
  let alpha: LcmBackend;
  let beta: LcmBackend;
  beforeEach(async () => {
    opened = await openTestBackend("postgres");
    alpha = opened.reopen();
    beta = opened.reopen();
  });
  afterEach(async () => {
    resetSharedCircuitBreakers();
    await opened.close();
  });

  it("another gateway's compaction of the conversation does not start while one runs: no model call, no wait", async () => {
    const held = heldLlm();
    const first = createTestEngine({ config: CONFIG, tokens, backend: alpha, pluginLlm: held.llm });
    await playTurns(first.newEngine, [1, 2, 3, 4, 5, 6].map(exchange), SESSION);
    const id = (await alpha.store.findConversation({ agentId: "main", sessionId: "shared" }))!.conversationId;

    const running = first.newEngine().compact({ ...SESSION, force: true, compactionTarget: "threshold" });
    await expect.poll(() => held.llm.calls.length).toBeGreaterThan(0);
    // The other gateway: `lcm compact` on its own pool, with its own model.
    const otherModel = new RecordingLlm(() => SUMMARY);
    const startedAt = Date.now();
    const refused = await runJson<CompactOutput>(["compact", String(id), "--database-url", opened.location], CompactOutputSchema, {
      environment: { model: otherModel },
    });
    expect(Date.now() - startedAt).toBeLessThan(5_000);
    expect(refused).toMatchObject({ ok: true, compacted: false });
    expect(refused.reason).toMatch(/another compaction of this conversation is running/);
    expect(otherModel.calls).toHaveLength(0);

    held.release();
    expect(await running).toMatchObject({ ok: true, compacted: true });
    // Released at the end: the next run anywhere takes the lease.
    const next = await leasesOf(beta).take(id, "gateway-beta", 1_000);
    expect(next).not.toBeNull();
    await leasesOf(beta).release(next!);
    expect(await checkStoreInvariants(alpha, id)).toEqual([]);
  });

  it("a lease ends at its expiry when its holder never releases it; the old holder's applies are fenced off", async () => {
    const harness = createTestEngine({ config: CONFIG, tokens, backend: alpha });
    await playTurns(harness.newEngine, [1, 2, 3, 4].map(exchange), SESSION);
    const conversation = (await alpha.store.findConversation({ agentId: "main", sessionId: "shared" }))!;
    const id = conversation.conversationId;

    const dead = await leasesOf(alpha).take(id, "gateway-that-dies", 300);
    expect(dead).not.toBeNull();
    expect(await leasesOf(beta).take(id, "gateway-beta", 60_000)).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 400));
    const taken = await leasesOf(beta).take(id, "gateway-beta", 60_000);
    expect(taken!.fence).toBeGreaterThan(dead!.fence);

    // The first holder wakes up with its planned pass: nothing written, and it is told why.
    const items = (await alpha.compaction.listCompactionItems(id)).slice(0, 2);
    const messages = await alpha.store.getMessages(items.map((item) => item.messageId!));
    const draft = leafDraft(messages, { content: SUMMARY, level: "normal", createdAt: Date.now(), tokens });
    const range = { conversationId: id, items };
    const before = await alpha.compaction.listCompactionItems(id);
    expect(await leasesOf(alpha).fencedBy(dead!).applyLeafSummary(range, draft, 12)).toMatchObject({ kind: "superseded" });
    expect(await alpha.compaction.listCompactionItems(id)).toEqual(before);
    // The new holder writes; releasing the old lease afterwards does not end the new one.
    await leasesOf(alpha).release(dead!);
    expect(await leasesOf(beta).fencedBy(taken!).applyLeafSummary(range, draft, 12)).toMatchObject({ kind: "applied" });
    expect(await leasesOf(alpha).take(id, "gateway-alpha", 60_000)).toBeNull();
    await leasesOf(beta).release(taken!);
    expect(await leasesOf(alpha).take(id, "gateway-alpha", 60_000)).not.toBeNull();
  });

  it("a run whose lease was taken over ends at its next apply instead of summarizing again", async () => {
    const harness = createTestEngine({ config: CONFIG, tokens, backend: alpha });
    await playTurns(harness.newEngine, [1, 2, 3, 4, 5, 6, 7, 8].map(exchange), SESSION);
    const id = (await alpha.store.findConversation({ agentId: "main", sessionId: "shared" }))!.conversationId;
    const lease = (await leasesOf(alpha).take(id, "slow-gateway", 200))!;
    const calls: string[] = [];
    const summarizer: Summarizer = {
      async summarize(request) {
        calls.push(request.sourceText);
        // The first call outlives the lease, and another gateway takes it meanwhile.
        if (calls.length === 1) {
          await new Promise((resolve) => setTimeout(resolve, 300));
          expect(await leasesOf(beta).take(id, "gateway-beta", 60_000)).not.toBeNull();
        }
        return SUMMARY;
      },
    };
    const logger = new RecordingLogger();
    const engine = new CompactionEngine({
      store: alpha.store, compactionStore: leasesOf(alpha).fencedBy(lease), summarizer, breaker: new CircuitBreaker(), tokens,
      clock: new SteppingClock(), config: { ...harness.config }, logger,
    });
    const run = await engine.sweep(id, { deadlineMs: 60_000, sizes: configuredSizes(harness.config), hard: false });
    expect(run).toMatchObject({ stopReason: "superseded", passes: [] });
    expect(calls).toHaveLength(1);
    expect((await alpha.compaction.listCompactionItems(id)).every((item) => item.summaryRowId === null)).toBe(true);
  });
});
