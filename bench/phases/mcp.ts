/**
 * A recall call through `lcm mcp` over stdio against the same call to the in-process tool (issue 29): the compiled
 * `lcm` bin started as a child process on the working database (read-only, beside this process's writable
 * connection, as beside a gateway), driven by the MCP SDK's client. Each search runs once in process and once over
 * stdio, alternately, so load on the machine falls on both alike; the stdio phase records its p50 and p95 as a
 * ratio of the in-process ones (the bar: within 2×). Also timed once: starting the server until it answers.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { type BenchContext, conversationOf, wantsSample } from "../context.js";
import { RARE_PATTERN, RARE_TERM } from "../generate.js";
import { latencyOf, Phase, type PhaseResult, pending, round } from "../measure.js";
import { BUILD_DIR } from "../paths.js";

const CASES = [
  { name: "mcp.grep.fts.rare", params: { pattern: RARE_TERM, mode: "full_text", sort: "recency", limit: 20 } },
  { name: "mcp.grep.regex.rare", params: { pattern: RARE_PATTERN, mode: "regex", limit: 20 } },
];

type Outcome = { isError?: boolean; matchCount: number };

export async function runMcpPhases(context: BenchContext): Promise<PhaseResult[]> {
  const bin = join(BUILD_DIR, "src", "cli", "bin.js");
  if (!existsSync(bin)) return CASES.map((grepCase) => pending(`${grepCase.name}.stdio`, "the compiled bin is missing (run through npm run bench)"));
  const main = conversationOf(context, "main");
  const conversationId = (await context.db.get<{ id: number }>("SELECT conversation_id AS id FROM conversations WHERE session_id = ?", main.sessionId))!.id;
  const database = context.target.kind === "sqlite" ? ["--db", context.target.databasePath] : ["--database-url", context.target.url];
  const tool = context.host.tool("lcm_grep", { agentId: main.agentId, sessionKey: main.sessionKey, sessionId: main.sessionId })!;

  const start = new Phase("mcp.start");
  const client = new Client({ name: "lcm-bench", version: "1.0.0" });
  // The server's notes and errors, kept to say why it stopped should it stop.
  const transport = new StdioClientTransport({ command: process.execPath, args: [bin, "mcp", ...database, "--agent", main.agentId], stderr: "pipe" });
  let serverOutput = "";
  transport.stderr?.on("data", (chunk: Buffer) => { serverOutput = (serverOutput + chunk.toString()).slice(-2_000); });
  try {
    await start.time(async () => {
      await client.connect(transport);
      await client.listTools();
    });
  } catch (error) {
    throw new Error(`lcm mcp did not start: ${error instanceof Error ? error.message : String(error)}; its output: ${serverOutput.trim()}`);
  }
  const results: PhaseResult[] = [start.finish()];
  try {
    for (const grepCase of CASES) {
      const params = { ...grepCase.params, conversationId };
      const inProcess = async (): Promise<Outcome> => {
        const result = await tool.execute("bench-mcp", params);
        return { isError: result.isError === true, matchCount: (result.details as { matchCount?: number }).matchCount ?? 0 };
      };
      const overStdio = async (): Promise<Outcome> => {
        const result = await client.callTool({ name: "lcm_grep", arguments: params });
        return { isError: result.isError === true, matchCount: (result.structuredContent as { matchCount?: number } | undefined)?.matchCount ?? 0 };
      };
      // Warm both (the in-process call indexes any backlog first, so both then search the same index).
      await inProcess();
      await overStdio();
      const local = new Phase(`${grepCase.name}.in-process`);
      const remote = new Phase(`${grepCase.name}.stdio`);
      let last: { local: Outcome; remote: Outcome } | null = null;
      for (let index = 0; wantsSample(context, remote, index); index++) {
        last = { local: await local.time(inProcess), remote: await remote.time(overStdio) };
      }
      const localResult = local.finish({ values: { hits: last?.local.matchCount ?? 0, isError: last?.local.isError ?? false } });
      const remoteLatency = latencyOf(remote.samples);
      const ratio = (key: "p50" | "p95") => (localResult.latency?.[key] ? round(remoteLatency[key] / localResult.latency[key], 2) : 0);
      results.push(localResult, remote.finish({
        values: { hits: last?.remote.matchCount ?? 0, isError: last?.remote.isError ?? false, p50Ratio: ratio("p50"), p95Ratio: ratio("p95") },
      }));
    }
  } finally {
    await client.close();
  }
  return results;
}
