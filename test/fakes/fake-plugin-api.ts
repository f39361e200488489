/**
 * A recording fake of the OpenClaw plugin API: what `register(api)` registered, every log line, and scripted
 * `runtime.llm` / `runtime.subagent` that record their calls. Tests drive the plugin through this.
 */
import type {
  AgentTool,
  CommandDefinition,
  ContextEngine,
  ContextEngineFactoryContext,
  HostLlm,
  LlmCompleteParams,
  LlmCompleteResult,
  PluginApi,
  SubagentRuntime,
  ToolContext,
  ToolFactory,
} from "../../src/host/openclaw-types.js";

export interface LogLine {
  level: "debug" | "info" | "warn" | "error";
  message: string;
}

export class RecordingLlm implements HostLlm {
  readonly calls: LlmCompleteParams[] = [];
  constructor(private readonly respond: (params: LlmCompleteParams) => string | Promise<string> = () => "summary") {}
  async complete(params: LlmCompleteParams): Promise<LlmCompleteResult> {
    this.calls.push(params);
    return { text: await this.respond(params), provider: "fake", model: "fake-model" };
  }
}

export class FakePluginApi implements PluginApi {
  readonly engines = new Map<string, (context: ContextEngineFactoryContext) => ContextEngine>();
  readonly tools: (AgentTool | ToolFactory)[] = [];
  readonly commands: CommandDefinition[] = [];
  readonly logs: LogLine[] = [];
  readonly logger = {
    debug: (message: string) => this.logs.push({ level: "debug", message }),
    info: (message: string) => this.logs.push({ level: "info", message }),
    warn: (message: string) => this.logs.push({ level: "warn", message }),
    error: (message: string) => this.logs.push({ level: "error", message }),
  };
  runtime: { llm?: HostLlm; subagent?: SubagentRuntime };

  constructor(
    readonly pluginConfig: Record<string, unknown> = {},
    options: { registrationMode?: string; llm?: HostLlm; subagent?: SubagentRuntime } = {},
  ) {
    this.registrationMode = options.registrationMode ?? "full";
    this.runtime = { ...(options.llm ? { llm: options.llm } : {}), ...(options.subagent ? { subagent: options.subagent } : {}) };
  }
  readonly registrationMode: string;
  readonly id = "lcm";

  registerContextEngine(id: string, factory: (context: ContextEngineFactoryContext) => ContextEngine): void {
    this.engines.set(id, factory);
  }
  registerTool(tool: AgentTool | ToolFactory): void {
    this.tools.push(tool);
  }
  registerCommand(command: CommandDefinition): void {
    this.commands.push(command);
  }

  /** A new engine instance, as the host builds one per turn. */
  engine(id = "lcm"): ContextEngine {
    const factory = this.engines.get(id);
    if (!factory) throw new Error(`No context engine "${id}" was registered.`);
    return factory({});
  }

  /** The registered tool named `name`, resolved for a session as the host would. */
  tool(name: string, context: ToolContext = { agentId: "main", sessionKey: "agent:main:main", sessionId: "s1" }): AgentTool {
    for (const entry of this.tools) {
      const resolved = typeof entry === "function" ? entry(context) : entry;
      const list = Array.isArray(resolved) ? resolved : resolved ? [resolved] : [];
      const found = list.find((tool) => tool.name === name);
      if (found) return found;
    }
    throw new Error(`No tool "${name}" was registered.`);
  }

  command(name: string): CommandDefinition {
    const found = this.commands.find((command) => command.name === name);
    if (!found) throw new Error(`No command "${name}" was registered.`);
    return found;
  }

  errors(): string[] {
    return this.logs.filter((line) => line.level === "error").map((line) => line.message);
  }
}
