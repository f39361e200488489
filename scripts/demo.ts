/**
 * `npm run demo`: the main job, end to end. A long scripted agent session is driven through the real plugin
 * entry (register(api) with a small fake host) and the engine hooks, turn by turn as OpenClaw 2026.9.6 does it
 * (new engine, assemble, commitTurn, maintain, dispose), on an embedded SQLite file in a temp directory. It
 * prints stored vs assembled tokens over time, every compaction, the summary DAG by depth, and finally recalls
 * a detail of turn 2 as the agent would: through the registered lcm_grep and lcm_describe tools, down to the
 * summary that still names it and the line of the large deploy log of turn 3. Summaries come from the
 * deterministic extractive summarizer behind a fake `runtime.llm`, or from Anthropic when ANTHROPIC_API_KEY and
 * LCM_SUMMARY_MODEL are set.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveConfig } from "../src/config.js";
import { closeAllDatabases } from "../src/db/connection-registry.js";
import type { AgentTool, ContextEngine, HostLlm, LlmCompleteParams, PluginApi, ToolContext, ToolFactory } from "../src/host/openclaw-types.js";
import { openServices, register } from "../src/plugin.js";
import { ExtractiveSummarizer } from "../src/summarize/extractive-summarizer.js";
import { DefaultTokenEstimator } from "../src/tokens/default-token-estimator.js";
import { RECALL_DETAIL, demoSession } from "./demo-session.js";
import { recallAsAgent } from "./demo-recall.js";

const TURNS = Number(process.env.DEMO_TURNS ?? 300);
/** What OpenClaw gives the first assemble of a turn on a 32k window: window - reserve - system prompt. */
const ASSEMBLE_BUDGET = 12_000;
const WINDOW = 32_000;
const SESSION = "demo-session";

/** A fake host model: answers summary prompts with the extractive summarizer applied to the prompt's data block. */
class ExtractiveHostLlm implements HostLlm {
  calls = 0;
  private readonly summarizer = new ExtractiveSummarizer({ tokens: new DefaultTokenEstimator() });
  async complete(params: LlmCompleteParams) {
    this.calls++;
    const prompt = params.messages.map((message) => message.content).join("\n");
    const sourceText = /<conversation_to_summarize>\n([\s\S]*)\n<\/conversation_to_summarize>/.exec(prompt)?.[1] ?? prompt;
    const targetTokens = Number(/about (\d+) tokens/.exec(prompt)?.[1] ?? 600);
    const mode = /much shorter/.test(prompt) ? ("aggressive" as const) : ("normal" as const);
    return { text: this.summarizer.summarizeNow({ sourceText, depth: 0, mode, targetTokens }), provider: "demo", model: "extractive" };
  }
}

async function main(): Promise<void> {
  const directory = mkdtempSync(join(tmpdir(), "lcm-demo-"));
  const pluginConfig = {
    databasePath: join(directory, "lcm.db"),
    freshTailCount: 16,
    leafChunkTokens: 3_000,
    leafTargetTokens: 400,
    condensedTargetTokens: 600,
    incrementalMaxDepth: 1,
  };
  const useAnthropic = Boolean(process.env.ANTHROPIC_API_KEY && process.env.LCM_SUMMARY_MODEL);
  const llm = useAnthropic ? undefined : new ExtractiveHostLlm();
  const log = new CompactionLog();
  const api: PluginApi = {
    id: "lcm",
    registrationMode: "full",
    pluginConfig,
    logger: { info: (line) => log.take(line), warn: (line) => log.take(line), error: (line) => console.error(line) },
    runtime: llm ? { llm } : {},
    registerContextEngine: (_id, factory) => { engineFactory = factory; },
    registerTool: (tool) => { toolEntries.push(tool); },
  };
  let engineFactory: ((context: object) => ContextEngine) | undefined;
  const toolEntries: (AgentTool | ToolFactory)[] = [];
  register(api);
  const newEngine = () => engineFactory!({});
  const services = openServices(resolveConfig(pluginConfig, process.env));

  console.log(`LCM demo: ${TURNS} scripted turns, assemble budget ${ASSEMBLE_BUDGET}, database ${pluginConfig.databasePath}`);
  console.log(`Summaries by: ${useAnthropic ? `Anthropic ${process.env.LCM_SUMMARY_MODEL}` : "the deterministic extractive summarizer (fake host llm)"}\n`);
  console.log(" turn | messages | stored tokens | context tokens | assembled tokens | summaries");
  console.log("------+----------+---------------+----------------+------------------+----------");

  for (const [index, turn] of demoSession(TURNS).entries()) {
    const engine = newEngine();
    await engine.assemble({ sessionId: SESSION, messages: [], tokenBudget: ASSEMBLE_BUDGET });
    await engine.commitTurn({ sessionId: SESSION, advancementKey: `demo-turn-${index + 1}`, messages: turn });
    await engine.maintain({ sessionId: SESSION, runtimeContext: { tokenBudget: WINDOW, ...(llm ? { llm } : {}) } });
    await engine.dispose();
    log.flush(`turn ${index + 1}`);
    if ((index + 1) % 25 === 0 || index === 0) await printRow(index + 1, await assembledTokens(newEngine), services);
  }

  console.log("\n/compact focus on the staging deploy");
  const compacted = await newEngine().compact({
    sessionId: SESSION, sessionKey: "agent:main:demo", force: true, compactionTarget: "threshold", tokenBudget: WINDOW,
    customInstructions: "focus on the staging deploy", ...(llm ? { runtimeContext: { llm } } : {}),
  });
  log.flush("/compact");
  console.log(`  -> ok=${compacted.ok} compacted=${compacted.compacted} ${compacted.result?.tokensBefore} -> ${compacted.result?.tokensAfter} tokens`);
  const finalAssembled = await newEngine().assemble({ sessionId: SESSION, messages: [], tokenBudget: ASSEMBLE_BUDGET });
  await printRow(TURNS, finalAssembled.estimatedTokens, services);
  const stored = (await services.store.findConversation({ agentId: "main", sessionId: SESSION }))!.messageTokens;
  console.log(`\n${stored} tokens stored, ${finalAssembled.estimatedTokens} assembled: ` +
    `${(stored / Math.max(1, finalAssembled.estimatedTokens)).toFixed(1)}x smaller, every message still stored and reachable.`);

  await printDag(services);
  const assembledText = finalAssembled.messages.map((message) => JSON.stringify(message.content ?? "")).join("\n");
  console.log(`\nRecall: "${RECALL_DETAIL}" (said in turn 2); in the assembled context: ${assembledText.includes(RECALL_DETAIL) ? "yes" : "no (compressed away)"}`);
  await recallAsAgent((name) => toolNamed(toolEntries, name, { agentId: "main", sessionKey: "agent:main:demo", sessionId: SESSION }));
  closeAllDatabases();
  rmSync(directory, { recursive: true, force: true });
}

type Services = ReturnType<typeof openServices>;

/** Collects the plugin's compaction log lines and prints one line per compaction. */
class CompactionLog {
  private passes: string[] = [];
  private outcomes: string[] = [];
  take(line: string): void {
    const pass = /compaction pass: (\w+) d(\d+) level=(\w+) (\d+) -> (\d+) tokens/.exec(line);
    const outcome = /compaction \(([\w:]+)\): (.*)$/.exec(line);
    if (pass) this.passes.push(`${pass[1]} d${pass[2]} ${pass[3]} ${pass[4]}->${pass[5]}`);
    else if (outcome) this.outcomes.push(`${outcome[1]!.padEnd(20)} ${outcome[2]!.replace(/^\d+ passes \([^)]*\), /, "")}`);
    else if (/fallback|circuit|failed/.test(line)) this.outcomes.push(line.replace(/^\[lcm\] /, ""));
  }
  flush(label: string): void {
    for (const outcome of this.outcomes) console.log(`   ${label.padEnd(10)} ${outcome}  [${this.passes.join("; ")}]`);
    this.passes = [];
    this.outcomes = [];
  }
}

async function assembledTokens(newEngine: () => ContextEngine): Promise<number> {
  return (await newEngine().assemble({ sessionId: SESSION, messages: [], tokenBudget: ASSEMBLE_BUDGET })).estimatedTokens;
}

async function printRow(turn: number, assembled: number, services: Services): Promise<void> {
  const conversation = (await services.store.findConversation({ agentId: "main", sessionId: SESSION }))!;
  const summaries = services.store.db.get<{ count: number }>("SELECT COUNT(*) AS count FROM summaries")!.count;
  console.log(
    `${String(turn).padStart(5)} | ${String(conversation.messageCount).padStart(8)} | ${String(conversation.messageTokens).padStart(13)} | ` +
      `${String(conversation.contextTokens).padStart(14)} | ${String(assembled).padStart(16)} | ${String(summaries).padStart(9)}`,
  );
}

async function printDag(services: Services): Promise<void> {
  const conversation = (await services.store.findConversation({ agentId: "main", sessionId: SESSION }))!;
  const items = await services.compactionStore.listCompactionItems(conversation.conversationId);
  const rows = services.store.db.all<{ depth: number; count: number; levels: string }>(
    "SELECT depth, COUNT(*) AS count, GROUP_CONCAT(DISTINCT level) AS levels FROM summaries GROUP BY depth ORDER BY depth",
  );
  console.log("\nSummary DAG by depth (all summaries / in the active context / levels used):");
  for (const row of rows) {
    const active = items.filter((item) => item.depth === row.depth).length;
    console.log(`  depth ${row.depth}: ${String(row.count).padStart(4)} summaries, ${active} in context, levels: ${row.levels}`);
  }
  console.log(`  active context: ${items.filter((item) => item.summaryRowId !== null).length} summaries + ${items.filter((item) => item.messageId !== null).length} raw messages`);
}

/** The registered tool `name` as the host would resolve it for a session. */
function toolNamed(entries: (AgentTool | ToolFactory)[], name: string, context: ToolContext): AgentTool {
  for (const entry of entries) {
    const resolved = typeof entry === "function" ? entry(context) : entry;
    const found = (Array.isArray(resolved) ? resolved : resolved ? [resolved] : []).find((tool) => tool.name === name);
    if (found) return found;
  }
  throw new Error(`no tool ${name} was registered`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
