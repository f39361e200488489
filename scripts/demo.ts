/**
 * `npm run demo`: the main job, end to end. A long scripted agent session is driven through the real plugin
 * entry (register(api) with a small fake host) and the engine hooks, turn by turn as OpenClaw 2026.9.6 does it
 * (new engine, assemble, commitTurn, maintain, dispose), on an embedded SQLite file it keeps. It prints stored vs
 * assembled tokens every 25 turns (with the compactions in between; every one with --verbose), the compactions and
 * the spend guard in numbers, the summary DAG by depth, a detail of turn 2 recalled as the agent would (through the
 * registered lcm_grep and lcm_describe tools), and how to look at the database with the `lcm` CLI. Summaries come
 * from the deterministic extractive summarizer behind a fake `runtime.llm`, or from Anthropic when ANTHROPIC_API_KEY
 * and LCM_SUMMARY_MODEL are set. Options: --db <new file> (default: a new temporary folder), --turns N, --verbose.
 */
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { resolveConfig } from "../src/config.js";
import { closeAllDatabases } from "../src/sqlite/connection-registry.js";
import type { AgentTool, ContextEngine, HostLlm, LlmCompleteParams, PluginApi, ToolContext, ToolFactory } from "../src/host/openclaw-types.js";
import { register } from "../src/plugin.js";
import { openSqliteBackend } from "../src/sqlite/open-sqlite-backend.js";
import { ExtractiveSummarizer } from "../src/summarize/extractive-summarizer.js";
import { DefaultTokenEstimator } from "../src/tokens/default-token-estimator.js";
import { RECALL_DETAIL, demoSession } from "./demo-session.js";
import { recallAsAgent } from "./demo-recall.js";

const { values: options } = parseArgs({
  options: { db: { type: "string" }, turns: { type: "string" }, verbose: { type: "boolean", default: false } },
});
const TURNS = Number(options.turns ?? process.env.DEMO_TURNS ?? 300);
/** What OpenClaw gives the first assemble of a turn on a 32k window: window - reserve - system prompt. */
const ASSEMBLE_BUDGET = 12_000;
const WINDOW = 32_000;
const SESSION = "demo-session";
/** The fake model is free and instant: the spend guard (default 100 calls an hour) would only get in the way. */
const FAKE_MODEL_CALL_CAP = 100_000;

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

/** Where the demo writes: --db (a file that must not exist yet), else a new temporary folder. */
function databasePathOf(requested: string | undefined): string {
  if (requested === undefined) return join(mkdtempSync(join(tmpdir(), "lcm-demo-")), "lcm.db");
  const path = resolve(requested);
  if (existsSync(path)) throw new Error(`--db ${path} exists; the demo writes a new database. Choose a new path or remove that file.`);
  if (!existsSync(dirname(path))) throw new Error(`--db ${path}: its folder does not exist. Create it first or choose another path.`);
  return path;
}

async function main(): Promise<void> {
  const databasePath = databasePathOf(options.db);
  const useAnthropic = Boolean(process.env.ANTHROPIC_API_KEY && process.env.LCM_SUMMARY_MODEL);
  const pluginConfig = {
    databasePath,
    freshTailCount: 16,
    leafChunkTokens: 3_000,
    leafTargetTokens: 400,
    condensedTargetTokens: 600,
    incrementalMaxDepth: 1,
    ...(useAnthropic ? {} : { maxSummaryCallsPerWindow: FAKE_MODEL_CALL_CAP }),
  };
  const llm = useAnthropic ? undefined : new ExtractiveHostLlm();
  const log = new CompactionLog(options.verbose === true);
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
  const config = resolveConfig(pluginConfig, process.env);
  const services = openSqliteBackend(config.databasePath, "shared");

  console.log(`LCM demo: ${TURNS} scripted turns, assemble budget ${ASSEMBLE_BUDGET}, database ${databasePath}`);
  console.log(`Summaries by: ${useAnthropic ? `Anthropic ${process.env.LCM_SUMMARY_MODEL}` : "the deterministic extractive summarizer (fake host llm)"}`);
  const cap = config.maxSummaryCallsPerWindow;
  console.log(`Spend guard: at most ${cap.toLocaleString("en-US")} summarizer model calls per ${config.summaryCallWindowMinutes} min` +
    (cap === FAKE_MODEL_CALL_CAP ? ", raised for the free fake model (keep the default 100 with a real one)" : "") +
    "; past it summaries are written without a model, and the summary below counts them.\n");
  console.log(" turn | messages | stored tokens | context tokens | assembled tokens | summaries | compactions");
  console.log("------+----------+---------------+----------------+------------------+-----------+------------");

  for (const [index, turn] of demoSession(TURNS).entries()) {
    const engine = newEngine();
    await engine.assemble({ sessionId: SESSION, messages: [], tokenBudget: ASSEMBLE_BUDGET });
    await engine.commitTurn({ sessionId: SESSION, advancementKey: `demo-turn-${index + 1}`, messages: turn });
    await engine.maintain({ sessionId: SESSION, runtimeContext: { tokenBudget: WINDOW, ...(llm ? { llm } : {}) } });
    await engine.dispose();
    log.flush(`turn ${index + 1}`);
    if ((index + 1) % 25 === 0 || index === 0) await printRow(index + 1, await assembledTokens(newEngine), services, log.sinceRow());
  }

  console.log("\n/compact focus on the staging deploy");
  const compacted = await newEngine().compact({
    sessionId: SESSION, sessionKey: "agent:main:demo", force: true, compactionTarget: "threshold", tokenBudget: WINDOW,
    customInstructions: "focus on the staging deploy", ...(llm ? { runtimeContext: { llm } } : {}),
  });
  log.flush("/compact");
  console.log(`  -> ok=${compacted.ok} compacted=${compacted.compacted} ${compacted.result?.tokensBefore} -> ${compacted.result?.tokensAfter} tokens`);
  const finalAssembled = await newEngine().assemble({ sessionId: SESSION, messages: [], tokenBudget: ASSEMBLE_BUDGET });
  await printRow(TURNS, finalAssembled.estimatedTokens, services, log.sinceRow());
  const stored = (await services.store.findConversation({ agentId: "main", sessionId: SESSION }))!.messageTokens;
  console.log(`\n${stored} tokens stored, ${finalAssembled.estimatedTokens} assembled: ` +
    `${(stored / Math.max(1, finalAssembled.estimatedTokens)).toFixed(1)}x smaller, every message still stored and reachable.`);
  console.log(log.summary(llm?.calls));

  await printDag(services);
  const assembledText = finalAssembled.messages.map((message) => JSON.stringify(message.content ?? "")).join("\n");
  console.log(`\nRecall: "${RECALL_DETAIL}" (said in turn 2); in the assembled context: ${assembledText.includes(RECALL_DETAIL) ? "yes" : "no (compressed away)"}`);
  await recallAsAgent((name) => toolNamed(toolEntries, name, { agentId: "main", sessionKey: "agent:main:demo", sessionId: SESSION }));
  closeAllDatabases();
  printHowToLook(databasePath, options.db === undefined);
}

/** The database stays: how to look at it with the `lcm` CLI (`npx lcm` in a clone runs the package's bin). */
function printHowToLook(databasePath: string, temporary: boolean): void {
  const db = `--db ${databasePath}`;
  console.log(`\nThe database is kept at ${databasePath}. Look at it with the lcm CLI (from this folder):`);
  for (const [command, what] of [
    [`npx lcm status 1 ${db}`, "what /lcm status shows for the demo's conversation"],
    [`npx lcm dag 1 ${db}`, "the summary DAG as a tree"],
    [`npx lcm context 1 ${db}`, "exactly what the model sees next"],
    [`npx lcm grep 'OPS-\\d+' ${db}`, "search every stored message and summary"],
    [`npx lcm doctor ${db}`, "check every invariant"],
  ] as const) console.log(`  ${command.padEnd(db.length + 30)}  ${what}`);
  console.log(`Open it in the inspector (a page on 127.0.0.1: the DAG as a graph, the context, search, repairs with --write):\n  npx lcm inspect ${db}`);
  if (temporary) console.log(`Remove it with: rm -r ${dirname(databasePath)}`);
}

type Services = ReturnType<typeof openSqliteBackend>;

/**
 * Collects the plugin's compaction log lines: counts for the table and the final summary, and with --verbose one
 * line per compaction (its trigger, tokens and passes) under the turn that ran it.
 */
class CompactionLog {
  private passes: string[] = [];
  private outcomes: string[] = [];
  private compactionsSinceRow = 0;
  private readonly triggers = new Map<string, number>();
  private readonly levels = new Map<string, number>();
  private diverted = 0;
  private readonly problems: string[] = [];

  constructor(private readonly verbose: boolean) {}

  take(line: string): void {
    const pass = /compaction pass: (\w+) d(\d+) level=(\w+) (\d+) -> (\d+) tokens/.exec(line);
    const outcome = /compaction \(([\w:]+)\): (.*?)(?: \{.*)?$/.exec(line);
    const guard = /spend guard: (\d+) summar(?:y|ies) written without a model/.exec(line);
    if (guard) this.diverted += Number(guard[1]);
    if (pass) {
      this.passes.push(`${pass[1]} d${pass[2]} ${pass[3]} ${pass[4]}->${pass[5]}`);
      this.levels.set(`${pass[1]} ${pass[3]}`, (this.levels.get(`${pass[1]} ${pass[3]}`) ?? 0) + 1);
    } else if (outcome) {
      this.compactionsSinceRow++;
      this.triggers.set(outcome[1]!, (this.triggers.get(outcome[1]!) ?? 0) + 1);
      this.outcomes.push(`${outcome[1]!.padEnd(20)} ${outcome[2]!.replace(/^\d+ passes \([^)]*\), /, "")}`);
    } else if (/fallback|circuit|failed/.test(line)) {
      this.problems.push(line.replace(/^\[lcm\] /, ""));
    }
  }

  flush(label: string): void {
    if (this.verbose) for (const outcome of this.outcomes) console.log(`   ${label.padEnd(10)} ${outcome}  [${this.passes.join("; ")}]`);
    this.passes = [];
    this.outcomes = [];
  }

  /** Compactions since the previous table row. */
  sinceRow(): number {
    const count = this.compactionsSinceRow;
    this.compactionsSinceRow = 0;
    return count;
  }

  summary(modelCalls: number | undefined): string {
    const list = (map: Map<string, number>) => [...map].map(([key, count]) => `${count} ${key}`).join(", ") || "none";
    const total = [...this.triggers.values()].reduce((sum, count) => sum + count, 0);
    return [
      `Compactions: ${total} (${list(this.triggers)}); passes: ${list(this.levels)}${modelCalls === undefined ? "" : `; ${modelCalls} calls to the fake model`}.`,
      `Spend guard: ${this.diverted === 0 ? "never reached" : `${this.diverted} summaries written without a model (the cap was reached)`}.`,
      ...(this.problems.length > 0 ? [`Problems logged: ${this.problems.length}, the first: ${this.problems[0]}`] : []),
    ].join("\n");
  }
}

async function assembledTokens(newEngine: () => ContextEngine): Promise<number> {
  return (await newEngine().assemble({ sessionId: SESSION, messages: [], tokenBudget: ASSEMBLE_BUDGET })).estimatedTokens;
}

async function printRow(turn: number, assembled: number, services: Services, compactions: number): Promise<void> {
  const conversation = (await services.store.findConversation({ agentId: "main", sessionId: SESSION }))!;
  const summaries = services.database.get<{ count: number }>("SELECT COUNT(*) AS count FROM summaries")!.count;
  console.log(
    `${String(turn).padStart(5)} | ${String(conversation.messageCount).padStart(8)} | ${String(conversation.messageTokens).padStart(13)} | ` +
      `${String(conversation.contextTokens).padStart(14)} | ${String(assembled).padStart(16)} | ${String(summaries).padStart(9)} | ${String(compactions).padStart(11)}`,
  );
}

async function printDag(services: Services): Promise<void> {
  const conversation = (await services.store.findConversation({ agentId: "main", sessionId: SESSION }))!;
  const items = await services.compaction.listCompactionItems(conversation.conversationId);
  const rows = services.database.all<{ depth: number; count: number; levels: string }>(
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
