/**
 * A session for the quality phases (recall forms, question answering), stored in a database of its own through
 * the real plugin entry: turns committed one at a time as the host does, maintain after each as the host does,
 * and a forced compaction every `compactEvery` messages (the instant model writes the summaries), so the details
 * end up in compacted history as in a long real session. Also builds a host whose model always fails, to read
 * lcm_expand_query's excerpts (the answer it gives when no model can answer).
 */
import { join } from "node:path";
import { closeSharedDatabase, openSharedDatabase } from "../src/sqlite/connection-registry.js";
import type { Database } from "../src/sqlite/database.js";
import type { AgentMessage, AgentTool, HostLlm } from "../src/host/openclaw-types.js";
import { benchConfig, removeDatabase } from "./dataset.js";
import { BenchHost } from "./host.js";
import { DATA_DIR } from "./paths.js";

export interface QualitySession {
  host: BenchHost;
  /** The same database with no model: lcm_expand_query answers with its excerpts. */
  excerptHost: BenchHost;
  database: Database;
  path: string;
  /** Stored message ids in session order. */
  messageIds: number[];
  compactions: number;
  close(): void;
}

/** A model that always fails, so lcm_expand_query returns the excerpts it gathered. */
class FailingLlm implements HostLlm {
  async complete(): Promise<never> {
    throw new Error("no model in this benchmark phase");
  }
}

export interface QualitySessionOptions {
  compactEvery: number;
  tokenBudget: number;
  startTime: number;
  /** Store the session in this database beside what it holds (a size's history); default: a database of its own. */
  databasePath?: string;
  /** Settings over the bench's (a small window's large-message threshold, a deeper DAG). */
  config?: Record<string, unknown>;
  /** Summaries by the deterministic extractive summarizer instead of the instant model. */
  extractive?: boolean;
}

export async function storeQualitySession(
  name: string,
  session: { agentId: string; sessionId: string; sessionKey: string },
  turns: readonly AgentMessage[][],
  options: QualitySessionOptions,
): Promise<QualitySession> {
  const ownDatabase = options.databasePath === undefined;
  const path = options.databasePath ?? join(DATA_DIR, `quality-${name}.db`);
  if (ownDatabase) removeDatabase(path);
  const config = { ...benchConfig(path), ...options.config };
  const host = options.extractive ? new BenchHost(config, null as never) : new BenchHost(config);
  const runtimeContext = options.extractive ? {} : { runtimeContext: { llm: host.llm } };
  let time = options.startTime;
  let stored = 0;
  let sinceCompaction = 0;
  let compactions = 0;
  for (const [index, turn] of turns.entries()) {
    for (const message of turn) {
      time += 20_000;
      message.timestamp = typeof message.timestamp === "number" && message.timestamp > time ? message.timestamp : time;
      time = message.timestamp as number;
    }
    const engine = host.engine();
    await engine.commitTurn({ sessionId: session.sessionId, sessionKey: session.sessionKey, advancementKey: `${name}-${index}`, messages: turn });
    await engine.maintain({ sessionId: session.sessionId, sessionKey: session.sessionKey });
    stored += turn.length;
    sinceCompaction += turn.length;
    if (sinceCompaction >= options.compactEvery) {
      sinceCompaction = 0;
      const result = await host.engine().compact({
        sessionId: session.sessionId, sessionKey: session.sessionKey, force: true, compactionTarget: "threshold",
        tokenBudget: options.tokenBudget, ...runtimeContext,
      });
      if (result.compacted) compactions++;
    }
  }
  const database = openSharedDatabase(path);
  const messageIds = database
    .all<{ message_id: number }>(
      "SELECT message_id FROM messages WHERE conversation_id = (SELECT conversation_id FROM conversations WHERE session_id = ?) ORDER BY seq",
      session.sessionId,
    )
    .map((row) => row.message_id);
  if (messageIds.length !== stored) throw new Error(`${name}: stored ${messageIds.length} of ${stored} messages`);
  const excerptHost = new BenchHost(config, new FailingLlm() as never);
  return {
    host, excerptHost, database, path, messageIds, compactions,
    close: () => {
      if (!ownDatabase) return; // the size's database: its process closes it
      closeSharedDatabase(path);
      removeDatabase(path);
    },
  };
}

/** The tool `name` for the session, or an error when it is not registered. */
export function sessionTool(host: BenchHost, name: string, session: { agentId: string; sessionId: string; sessionKey: string }): AgentTool {
  const tool = host.tool(name, { agentId: session.agentId, sessionKey: session.sessionKey, sessionId: session.sessionId });
  if (!tool) throw new Error(`${name} is not registered`);
  return tool;
}

/** The message ids an lcm_expand_query excerpt answer quotes, in order. */
export function quotedMessageIds(answer: string): number[] {
  return [...answer.matchAll(/\[message (\d+) ·/g)].map((match) => Number(match[1]));
}
