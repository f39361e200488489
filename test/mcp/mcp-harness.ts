/**
 * For the `lcm mcp` tests: a database made through the plugin (registered on FakePluginApi, turns committed and
 * compacted by its engine, deterministic summaries) holding two agents' histories with a needle in each, and a way to
 * start `lcm mcp` as a child process (the bin under tsx) and drive it with the MCP SDK's own client over stdio.
 */
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { AgentMessage } from "../../src/host/openclaw-types.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";
import { createRecallEnv, MAIN, OTHER_AGENT, type RecallEnv, type Session } from "../helpers/recall.js";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const BIN = fileURLToPath(new URL("../../src/cli/bin.ts", import.meta.url));
/** The main agent's needle: said once, early, so compaction folds it into a summary. */
export const NEEDLE = "KEY-7781-ZULU";
/** The ops agent's secret: never readable by a server that serves only main. */
export const OPS_SECRET = "OPS-SECRET-4471";

/** `turns` exchanges; turn 3's user message holds `needle`, every message a marker word (`${prefix}N`). */
function history(turns: number, prefix: string, needle: string): AgentMessage[] {
  const messages: AgentMessage[] = [];
  for (let turn = 1; turn <= turns; turn++) {
    const filler = Array.from({ length: 40 }, (_, index) => `w${(turn * 7 + index) % 97}`).join(" ");
    const said = turn === 3 ? ` the staging deploy key is ${needle}, rotate it monthly` : "";
    messages.push(userMessage(`${prefix}${turn} question${said} ${filler}`));
    messages.push(assistantMessage(`${prefix}${turn} answer noted ${filler}`));
  }
  return messages;
}

export interface ServedDatabase {
  env: RecallEnv;
  mainConversation: number;
  opsConversation: number;
  /** A summary of main's that covers the needle's message, and one of ops'. */
  mainSummary: string;
  opsSummary: string;
  compact(session: Session): Promise<void>;
}

/** Two agents' conversations, 60 exchanges each, stored and compacted through the plugin. */
export async function buildServedDatabase(): Promise<ServedDatabase> {
  const env = createRecallEnv({ config: { leafChunkTokens: 2_000, freshTailCount: 8 } });
  const compact = async (session: Session) => {
    const engine = env.api.engine();
    await engine.assemble({ sessionId: session.sessionId, sessionKey: session.sessionKey, messages: [], tokenBudget: 8_000 });
    await engine.compact({ sessionId: session.sessionId, sessionKey: session.sessionKey, force: true, compactionTarget: "threshold" });
  };
  await env.commit(MAIN, history(60, "m", NEEDLE));
  await env.commit(OTHER_AGENT, history(60, "o", OPS_SECRET));
  await compact(MAIN);
  await compact(OTHER_AGENT);
  const mainConversation = env.conversationId(MAIN);
  const opsConversation = env.conversationId(OTHER_AGENT);
  const covering = (conversationId: number, needle: string) => env.db.get<{ summary_id: string }>(
    `SELECT s.summary_id FROM summaries s JOIN summary_messages sm ON sm.summary_id = s.id JOIN messages m ON m.message_id = sm.message_id
     WHERE s.conversation_id = ? AND instr(m.content, ?) > 0 LIMIT 1`, conversationId, needle,
  )?.summary_id;
  const mainSummary = covering(mainConversation, NEEDLE);
  const opsSummary = covering(opsConversation, OPS_SECRET);
  if (!mainSummary || !opsSummary) throw new Error("compaction did not cover the needles: the fixture needs a summary over each");
  return { env, mainConversation, opsConversation, mainSummary, opsSummary, compact };
}

export interface StdioServer {
  client: Client;
  stderr(): string;
  close(): Promise<void>;
}

/** Starts `lcm mcp <args>` as a child process and connects the SDK's client to it over stdio. */
export async function startStdioServer(args: string[], env: Record<string, string> = {}): Promise<StdioServer> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["--import", "tsx", BIN, "mcp", ...args],
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent-home", ...env },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: "lcm-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, stderr: () => stderr, close: () => client.close() };
}
