/**
 * Databases for the repair and inspector tests, made by the real engine: a conversation compacted while the model
 * failed (so its summaries are fallback truncations), deep enough to have condensed summaries; and a model fake
 * that records what it was asked and answers with a short summary naming the call.
 */
import { resetSharedCircuitBreakers } from "../../src/compaction/circuit-breaker.js";
import type { HostLlm, LlmCompleteParams } from "../../src/host/openclaw-types.js";
import type { Database } from "../../src/sqlite/database.js";
import { exchanges } from "../cli/cli-harness.js";
import { createTestEngine } from "../helpers/engine.js";
import { tempDatabasePath } from "../helpers/temp-dir.js";

export const SESSION = { sessionKey: "agent:main:main", sessionId: "s1" };

/** Small sizes, so that 60 exchanges give leaves and condensed summaries. */
export const SMALL_DAG_CONFIG = {
  leafChunkTokens: 600, leafMinFanout: 4, leafTargetTokens: 64, condensedMinFanout: 2, condensedMinFanoutHard: 2,
  condensedTargetTokens: 96, freshTailCount: 4, incrementalMaxDepth: 3,
};

/** A host model that fails every call (compaction then writes fallback truncations). */
export const FAILING_MODEL: HostLlm = { complete: async () => { throw new Error("the provider is down"); } };

/** A host model answering every call with a short summary; `calls` holds each request. */
export function recordingModel(text = (call: number) => `Model summary ${call}: quarzite${call} questions were asked and answered.`) {
  const calls: LlmCompleteParams[] = [];
  const model = {
    calls,
    complete: async (params: LlmCompleteParams) => {
      calls.push(params);
      return { text: text(calls.length), provider: "fake", model: "fake-model", agentId: "main", usage: {}, execution: { mode: "direct-provider" }, audit: { caller: { kind: "plugin" } } };
    },
  };
  return model as typeof model & HostLlm;
}

/** A database whose one conversation was compacted with a failing model: fallback leaves and condensed summaries. */
export async function fallbackDatabase(options: { databasePath?: string; turns?: number } = {}) {
  const databasePath = options.databasePath ?? tempDatabasePath();
  const harness = createTestEngine({ databasePath, pluginLlm: FAILING_MODEL, config: SMALL_DAG_CONFIG });
  await harness.newEngine().ingestBatch({ ...SESSION, messages: exchanges(options.turns ?? 60, 30) });
  await harness.newEngine().assemble({ ...SESSION, messages: [], tokenBudget: 4_000 });
  await harness.newEngine().compact({ ...SESSION, force: true, compactionTarget: "budget", tokenBudget: 1_500 });
  // The failures opened the process-wide circuit of the host model; a later process (the CLI) starts closed.
  resetSharedCircuitBreakers();
  return { ...harness, databasePath };
}

/** Every row of the tables that make the DAG and the context, in a stable order, for byte-for-byte comparisons. */
export function dagRows(db: Database): Record<"summaries" | "summary_messages" | "summary_parents" | "context_items" | "conversations", Record<string, unknown>[]> {
  const all = (sql: string) => db.all<Record<string, unknown>>(sql).map((row) => ({ ...row }));
  return {
    summaries: all("SELECT * FROM summaries ORDER BY id"),
    summary_messages: all("SELECT * FROM summary_messages ORDER BY summary_id, message_id"),
    summary_parents: all("SELECT * FROM summary_parents ORDER BY summary_id, parent_summary_id"),
    context_items: all("SELECT * FROM context_items ORDER BY conversation_id, ordinal"),
    conversations: all("SELECT * FROM conversations ORDER BY conversation_id"),
  };
}
