/**
 * A plugin registered on a fresh database through FakePluginApi, with helpers to store sessions' turns and to
 * call the registered recall tools as a given session would (the host resolves tools per session context).
 */
import { openSharedDatabase } from "../../src/sqlite/connection-registry.js";
import type { AgentMessage, AgentTool, HostLlm, SubagentRuntime, ToolContext } from "../../src/host/openclaw-types.js";
import plugin from "../../src/plugin.js";
import { FakePluginApi } from "../fakes/fake-plugin-api.js";
import { assistantMessage, userMessage } from "./messages.js";
import { insertCondensedSummary, insertLeafSummary } from "./summaries.js";
import { tempDatabasePath } from "./temp-dir.js";

export interface Session {
  agentId: string;
  sessionKey: string;
  sessionId: string;
}

export const MAIN: Session = { agentId: "main", sessionKey: "agent:main:main", sessionId: "s-main" };
export const OTHER_AGENT: Session = { agentId: "ops", sessionKey: "agent:ops:main", sessionId: "s-ops" };

export function sessionOf(agentId: string, name: string): Session {
  return { agentId, sessionKey: `agent:${agentId}:${name}`, sessionId: `s-${agentId}-${name}` };
}

export interface RecallEnvOptions {
  config?: Record<string, unknown>;
  /** A database file made beforehand (an older schema, say); a fresh one by default. */
  databasePath?: string;
  subagent?: SubagentRuntime;
  llm?: HostLlm;
}

let advancement = 0;

export function createRecallEnv(options: RecallEnvOptions = {}) {
  const databasePath = options.databasePath ?? tempDatabasePath();
  const api = new FakePluginApi(
    { databasePath, ...options.config },
    { ...(options.subagent ? { subagent: options.subagent } : {}), ...(options.llm ? { llm: options.llm } : {}) },
  );
  plugin.register(api);
  const db = openSharedDatabase(databasePath);
  const contextOf = (session: Session): ToolContext => ({ agentId: session.agentId, sessionKey: session.sessionKey, sessionId: session.sessionId });
  return {
    api,
    db,
    databasePath,
    contextOf,
    /** Stores messages as one committed turn of `session`. */
    async commit(session: Session, messages: AgentMessage[]): Promise<void> {
      const engine = api.engine();
      await engine.commitTurn({ sessionId: session.sessionId, sessionKey: session.sessionKey, advancementKey: `turn-${++advancement}`, messages });
      await engine.dispose();
    },
    conversationId(session: Session): number {
      const row = db.get<{ conversation_id: number }>("SELECT conversation_id FROM conversations WHERE session_id = ?", session.sessionId);
      if (!row) throw new Error(`no conversation for ${session.sessionId}`);
      return row.conversation_id;
    },
    tool(name: string, session: Session = MAIN): AgentTool {
      return api.tool(name, contextOf(session));
    },
    call(name: string, params: unknown, session: Session = MAIN, signal?: AbortSignal) {
      return api.tool(name, contextOf(session)).execute("call-1", params, signal);
    },
  };
}

export type RecallEnv = ReturnType<typeof createRecallEnv>;

/**
 * Stores `messages` for MAIN and summarizes them the way the recall tests read them: seq 1-20 into leaf A, 21-40 into
 * leaf B, both into condensed C (written directly, no model involved); `texts` are the three summaries' contents.
 */
export async function seedTwoLeaves(
  env: RecallEnv, messages: AgentMessage[], texts: { leafA: string; leafB: string; condensed: string },
): Promise<{ leafA: string; leafB: string; condensed: string }> {
  await env.commit(MAIN, messages);
  const conversation = env.conversationId(MAIN);
  const leafA = insertLeafSummary(env.db, conversation, 1, 20, texts.leafA);
  const leafB = insertLeafSummary(env.db, conversation, 21, 40, texts.leafB);
  const condensed = insertCondensedSummary(env.db, conversation, [leafA, leafB], texts.condensed);
  return { leafA, leafB, condensed };
}

/** `pairs` user/assistant exchanges; exchange i mentions `${prefix}${i}` so every message is findable. */
export function exchanges(pairs: number, prefix = "topic", start = 1): AgentMessage[] {
  const messages: AgentMessage[] = [];
  for (let index = start; index < start + pairs; index++) {
    messages.push(userMessage(`question ${index} about ${prefix}${index}`));
    messages.push(assistantMessage(`answer ${index} explaining ${prefix}${index} in detail`));
  }
  return messages;
}

/** The text a tool result shows the model. */
export function textOf(result: { content: { text: string }[] }): string {
  return result.content.map((block) => block.text).join("\n");
}

/** The structured details of a tool result. */
export function detailsOf<T = Record<string, unknown>>(result: { details: unknown }): T {
  return result.details as T;
}
