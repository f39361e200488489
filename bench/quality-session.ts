/**
 * A session for the quality phases (recall forms, question answering), stored in a database of its own through
 * the real plugin entry: turns committed one at a time as the host does, maintain after each as the host does,
 * and a forced compaction every `compactEvery` messages (the instant model writes the summaries), so the details
 * end up in compacted history as in a long real session. Also builds a host whose model always fails, to read
 * lcm_expand_query's excerpts (the answer it gives when no model can answer). Either backend: the session's database
 * is a target (a SQLite file or a PostgreSQL database) read through bench-database.ts.
 */
import type { AgentMessage, AgentTool, HostLlm } from "../src/host/openclaw-types.js";
import { type BenchDatabase, openBenchDatabase, targetConfig } from "./bench-database.js";
import type { ScratchDatabase } from "./context.js";
import { BenchHost } from "./host.js";

export interface QualitySession {
  host: BenchHost;
  /** The same database with no model: lcm_expand_query answers with its excerpts. */
  excerptHost: BenchHost;
  database: BenchDatabase;
  /** Stored message ids in session order. */
  messageIds: number[];
  compactions: number;
  close(): Promise<void>;
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
  /**
   * Where the session is stored: the size's database beside the history it holds (`drop` absent: its process closes
   * it), or a scratch database of its own, dropped by `close`.
   */
  database: Pick<ScratchDatabase, "target"> & { drop?: ScratchDatabase["drop"] };
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
  const config = { ...targetConfig(options.database.target), ...options.config };
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
  const database = openBenchDatabase(options.database.target);
  const messageIds = (await database.all<{ message_id: number }>(
    "SELECT message_id FROM messages WHERE conversation_id = (SELECT conversation_id FROM conversations WHERE session_id = ?) ORDER BY seq",
    session.sessionId,
  )).map((row) => Number(row.message_id));
  if (messageIds.length !== stored) throw new Error(`${name}: stored ${messageIds.length} of ${stored} messages`);
  const excerptHost = new BenchHost(config, new FailingLlm() as never);
  return {
    host, excerptHost, database, messageIds, compactions,
    close: async () => {
      await options.database.drop?.();
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
