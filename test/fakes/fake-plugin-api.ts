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
  HostSessionEntry,
  PluginApi,
  SessionEndEvent,
  SessionHookContext,
  SubagentRuntime,
  ToolMetadataRegistration,
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
  runtime: NonNullable<PluginApi["runtime"]>;
  /** Typed hooks registered with `api.on`, by name. */
  readonly hooks = new Map<string, ((event: SessionEndEvent, context: SessionHookContext) => void | Promise<void>)[]>();
  readonly toolMetadata: ToolMetadataRegistration[] = [];
  /** Cleanups registered with `lifecycle.onDispose`; `retire()` runs them as OpenClaw does when it retires the plugin. */
  readonly disposers: (() => void | Promise<void>)[] = [];
  readonly lifecycle = { onDispose: (cleanup: () => void | Promise<void>) => this.disposers.push(cleanup) };
  /** The host's current config (api.runtime.config.current()); set to change the plugin's settings "live". */
  currentConfig: unknown;
  /** The host's session records by session key (api.runtime.agent.session.getSessionEntry). */
  readonly sessionEntries = new Map<string, HostSessionEntry>();

  constructor(
    readonly pluginConfig: Record<string, unknown> = {},
    options: { registrationMode?: string; llm?: HostLlm; subagent?: SubagentRuntime } = {},
  ) {
    this.registrationMode = options.registrationMode ?? "full";
    this.runtime = {
      ...(options.llm ? { llm: options.llm } : {}), ...(options.subagent ? { subagent: options.subagent } : {}),
      config: { current: () => this.currentConfig },
      agent: { session: { getSessionEntry: ({ sessionKey }) => this.sessionEntries.get(sessionKey) } },
    };
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
  on(hookName: "session_end", handler: (event: SessionEndEvent, context: SessionHookContext) => void | Promise<void>): void {
    this.hooks.set(hookName, [...(this.hooks.get(hookName) ?? []), handler]);
  }
  registerToolMetadata(metadata: ToolMetadataRegistration): void {
    this.toolMetadata.push(metadata);
  }

  /** Runs the handlers of a typed hook, as OpenClaw's hook runner does. */
  async emit(hookName: "session_end", event: SessionEndEvent, context: SessionHookContext = {}): Promise<void> {
    for (const handler of this.hooks.get(hookName) ?? []) await handler(event, context);
  }

  /** Sets plugins.entries.lcm.config in the host's current config (a live edit of the settings). */
  setLiveConfig(config: Record<string, unknown>): void {
    this.currentConfig = { plugins: { entries: { lcm: { enabled: true, config } } } };
  }

  async retire(): Promise<void> {
    for (const dispose of this.disposers.splice(0)) await dispose();
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
