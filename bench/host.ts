/**
 * The host side of the benchmark: a minimal OpenClaw plugin API that `register(api)` fills in, and an instant
 * fake model behind `api.runtime.llm` / `runtimeContext.llm`, so that what is measured is the engine, not a
 * provider. The fake answers with a short deterministic summary and counts the time spent inside it, so
 * compaction phases can report engine time excluding the summarizer.
 */
import { performance } from "node:perf_hooks";
import type {
  AgentTool,
  ContextEngine,
  ContextEngineFactoryContext,
  HostLlm,
  LlmCompleteParams,
  LlmCompleteResult,
  PluginApi,
  ToolContext,
  ToolFactory,
} from "../src/host/openclaw-types.js";
import { register } from "../src/plugin.js";

/**
 * Answers at once with "Summary <n>: <first words of the input> … Expand for details about: …", after one turn
 * of the event loop (a real model call is network I/O, so the engine's work between calls is never one block).
 */
export class InstantLlm implements HostLlm {
  calls = 0;
  millis = 0;

  async complete(params: LlmCompleteParams): Promise<LlmCompleteResult> {
    const started = performance.now();
    this.calls++;
    await new Promise((resolve) => setImmediate(resolve));
    const source = params.messages.at(-1)?.content ?? "";
    const words = source.slice(0, 400).split(/\s+/).filter((word) => /^[a-z]{3,}$/i.test(word)).slice(0, 24);
    const text =
      `Summary ${this.calls}: the session covered ${words.join(" ")}.\n` +
      `Decisions were recorded and files were edited.\nExpand for details about: ${words.slice(0, 6).join(", ")}`;
    this.millis += performance.now() - started;
    return { text, provider: "bench", model: "instant" };
  }
}

export class BenchHost implements PluginApi {
  readonly id = "lcm";
  readonly registrationMode = "full";
  readonly logger = {
    info: (_message: string) => {},
    warn: (message: string) => this.warnings.push(message),
    error: (message: string) => this.errors.push(message),
  };
  readonly warnings: string[] = [];
  readonly errors: string[] = [];
  readonly runtime: { llm: HostLlm };
  private factory: ((context: ContextEngineFactoryContext) => ContextEngine) | undefined;
  private readonly tools: (AgentTool | ToolFactory)[] = [];

  constructor(readonly pluginConfig: Record<string, unknown>, readonly llm = new InstantLlm()) {
    this.runtime = { llm };
    register(this);
  }

  registerContextEngine(_id: string, factory: (context: ContextEngineFactoryContext) => ContextEngine): void {
    this.factory = factory;
  }

  registerTool(tool: AgentTool | ToolFactory): void {
    this.tools.push(tool);
  }

  registerCommand(): void {}

  /** A new engine, as the host builds one per turn. */
  engine(): ContextEngine {
    if (!this.factory) throw new Error("register(api) did not register a context engine.");
    return this.factory({});
  }

  /** The registered tool `name` resolved for a session, or undefined when the feature has not landed. */
  tool(name: string, context: ToolContext): AgentTool | undefined {
    for (const entry of this.tools) {
      const resolved = typeof entry === "function" ? entry(context) : entry;
      const list = Array.isArray(resolved) ? resolved : resolved ? [resolved] : [];
      const found = list.find((tool) => tool.name === name);
      if (found) return found;
    }
    return undefined;
  }
}
