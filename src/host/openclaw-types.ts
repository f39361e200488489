/**
 * The subset of OpenClaw 2026.9.6 host types this plugin reads or returns (the installed package's
 * dist/*.d.ts are the host's own truth; the host suite installs it under test/host's work folder). Declared here instead of imported so the plugin never loads OpenClaw at
 * runtime and compiles without it. Only the fields we use are listed; hosts may send more.
 */
import type { CompletionRequest } from "../contracts.js";

/**
 * A host message. Roles seen live: user, assistant, toolResult, custom, compactionSummary, branchSummary,
 * bashExecution. Persisted messages also carry undeclared fields (`idempotencyKey`, `__openclaw`).
 */
export interface AgentMessage {
  role: string;
  content?: unknown;
  timestamp?: number | string;
  [field: string]: unknown;
}

export interface TranscriptEntryAnchor {
  readonly agentId: string;
  readonly sessionId: string;
  readonly sessionKey: string;
  readonly entryId: string;
  readonly rawSeq: number;
  readonly idempotencyKey?: string;
  readonly [field: string]: unknown;
}

/** `runtimeContext.llm.complete`'s parameters: the shape contracts.ts declares for services as CompletionRequest. */
export type LlmCompleteParams = CompletionRequest;
export interface LlmCompleteResult { text: string; provider?: string; model?: string; stopReason?: string }
export interface HostLlm { complete(params: LlmCompleteParams): Promise<LlmCompleteResult> }

export interface RuntimeContext {
  tokenBudget?: number;
  currentTokenCount?: number;
  llm?: HostLlm;
  [field: string]: unknown;
}

export interface RuntimeSettings {
  limits?: { promptTokenBudget?: number | null; maxOutputTokens?: number | null };
  model?: { resolved?: string | null; provider?: string | null };
  [field: string]: unknown;
}

export interface SessionTarget { agentId?: string; sessionId?: string; sessionKey?: string; [field: string]: unknown }

/** Fields every session-scoped hook receives. */
export interface SessionParams {
  sessionId: string;
  sessionKey?: string;
  sessionTarget?: SessionTarget;
  runtimeSettings?: RuntimeSettings;
  runtimeContext?: RuntimeContext;
}

export interface BootstrapParams extends SessionParams { sessionFile?: string }
export interface MaintainParams extends SessionParams { sessionFile?: string; abortSignal?: AbortSignal }
export interface IngestParams { sessionId: string; sessionKey?: string; message: AgentMessage; isHeartbeat?: boolean }
export interface IngestBatchParams { sessionId: string; sessionKey?: string; messages: AgentMessage[]; isHeartbeat?: boolean }
export interface AfterTurnParams extends SessionParams {
  sessionFile?: string;
  messages: AgentMessage[];
  prePromptMessageCount: number;
  isHeartbeat?: boolean;
  tokenBudget?: number;
}
export interface CommitTurnParams extends SessionParams {
  advancementKey: string;
  admission?: TranscriptEntryAnchor;
  terminal?: TranscriptEntryAnchor;
  messages: AgentMessage[];
  isHeartbeat?: boolean;
}
export interface AssembleParams extends SessionParams {
  messages: AgentMessage[];
  tokenBudget?: number;
  availableTools?: Set<string>;
  model?: string;
  prompt?: string;
}
export interface CompactParams extends SessionParams {
  sessionKey: string;
  agentId?: string;
  tokenBudget?: number;
  force?: boolean;
  currentTokenCount?: number;
  compactionTarget?: "budget" | "threshold";
  customInstructions?: string;
  abortSignal?: AbortSignal;
}

export interface AssembleResult {
  messages: AgentMessage[];
  estimatedTokens: number;
  systemPromptAddition?: string;
}
export interface CompactResult {
  ok: boolean;
  compacted: boolean;
  reason?: string;
  result?: { summary?: string; tokensBefore: number; tokensAfter?: number; details?: unknown };
}
export interface BootstrapResult { bootstrapped: boolean; importedMessages?: number; reason?: string }
export interface MaintenanceResult { changed: boolean; bytesFreed: number; rewrittenEntries: number; reason?: string }

export interface ContextEngineInfo {
  id: string;
  name: string;
  version?: string;
  ownsCompaction?: boolean;
  /** "background": the host runs a turn's maintain as a deferred task of the session, after the turn has ended. */
  turnMaintenanceMode?: "foreground" | "background";
  transcriptSemantics?: {
    currentTurnFence?: "before-current-turn-entry-v1";
    turnAdvancementIdempotency?: "atomic-idempotent-v1";
  };
}

export interface ContextEngine {
  readonly info: ContextEngineInfo;
  bootstrap(params: BootstrapParams): Promise<BootstrapResult>;
  maintain(params: MaintainParams): Promise<MaintenanceResult>;
  ingest(params: IngestParams): Promise<{ ingested: boolean }>;
  ingestBatch(params: IngestBatchParams): Promise<{ ingestedCount: number }>;
  afterTurn(params: AfterTurnParams): Promise<void>;
  commitTurn(params: CommitTurnParams): Promise<{ status: "committed" | "duplicate" }>;
  assemble(params: AssembleParams): Promise<AssembleResult>;
  compact(params: CompactParams): Promise<CompactResult>;
  onSubagentEnded(params: { childSessionKey: string; reason: string }): Promise<void>;
  dispose(): Promise<void>;
}

/**
 * An engine without durable turn advancement, like OpenClaw's built-in one: no `transcriptSemantics` in its info and
 * no `commitTurn` (optional in the host's contract). OpenClaw then runs its turns on its own path and keeps them in
 * its own transcript.
 */
export type HostPathContextEngine = Omit<ContextEngine, "commitTurn">;

/** OpenClaw's own compaction as the SDK exports it (`delegateCompactionToRuntime` of `openclaw/plugin-sdk/core`). */
export type CompactionDelegate = (params: CompactParams) => Promise<CompactResult>;

export interface ContextEngineFactoryContext { config?: unknown; agentDir?: string; workspaceDir?: string }

export interface PluginLogger {
  debug?(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export interface ToolResultContent { type: "text"; text: string }
export interface AgentTool {
  name: string;
  label: string;
  description: string;
  parameters: unknown;
  catalogMode?: "direct-only";
  execute(
    toolCallId: string,
    params: unknown,
    signal?: AbortSignal,
  ): Promise<{ content: ToolResultContent[]; details: unknown; isError?: boolean }>;
}
export interface ToolContext { agentId?: string; sessionKey?: string; sessionId?: string; [field: string]: unknown }
export type ToolFactory = (context: ToolContext) => AgentTool | AgentTool[] | null | undefined;

export interface CommandContext {
  agentId?: string;
  sessionKey?: string;
  sessionId?: string;
  args?: string;
  commandBody?: string;
  runtimeContext?: {
    llm?: HostLlm;
    compactCurrent?: () => Promise<{ compacted: boolean; reason?: string; tokensBefore?: number; tokensAfter?: number }>;
  };
  [field: string]: unknown;
}
export interface CommandDefinition {
  name: string;
  description: string;
  acceptsArgs?: boolean;
  requireAuth?: boolean;
  handler(context: CommandContext): Promise<{ text: string }>;
}

export interface SubagentRuntime {
  run(params: {
    sessionKey: string;
    message: string;
    toolsAlsoAllow?: string[];
    disableTools?: boolean;
    extraSystemPrompt?: string;
    deliver?: boolean;
    idempotencyKey?: string;
    model?: string;
    provider?: string;
    lightContext?: boolean;
    promptMode?: "minimal";
  }): Promise<{ runId: string; sessionKey?: string }>;
  waitForRun(params: { runId: string; timeoutMs?: number }): Promise<{ status: string; terminalReply?: { text?: string }; error?: unknown }>;
  getSessionMessages?(params: { sessionKey: string; limit?: number }): Promise<{ messages: unknown[] }>;
  deleteSession?(params: { sessionKey: string; deleteTranscript?: boolean }): Promise<void>;
}

/** `session_end` (OpenClaw's plugin hook): the session that ended and why ("new", "reset", "idle", "daily", "deleted", …). */
export interface SessionEndEvent {
  sessionId: string;
  sessionKey?: string;
  reason?: string;
  nextSessionId?: string;
  [field: string]: unknown;
}
export interface SessionHookContext { agentId?: string; sessionId?: string; sessionKey?: string; [field: string]: unknown }

/** The fields of the host's session record LCM reads (`api.runtime.agent.session.getSessionEntry`). */
export interface HostSessionEntry { sessionId?: string; sessionStartedAt?: number; lifecycleRevision?: string; [field: string]: unknown }

/** A tool's entry in OpenClaw's tool catalog (`api.registerToolMetadata`). */
export interface ToolMetadataRegistration {
  toolName: string;
  displayName?: string;
  description?: string;
  risk?: "low" | "medium" | "high";
  tags?: string[];
}

export interface PluginApi {
  id?: string;
  registrationMode?: string;
  pluginConfig?: Record<string, unknown>;
  logger?: PluginLogger;
  runtime?: {
    llm?: HostLlm;
    subagent?: SubagentRuntime;
    /** The process's current config snapshot (plugins.entries.<id>.config included). */
    config?: { current?: () => unknown };
    agent?: { session?: { getSessionEntry?: (params: { agentId?: string; sessionKey: string }) => HostSessionEntry | undefined } };
    [field: string]: unknown;
  };
  /** Disposal of this registration: OpenClaw calls the cleanups when it retires the plugin. */
  lifecycle?: { onDispose?: (cleanup: () => void | Promise<void>) => unknown };
  /** The grouped session facade; only the Control UI contribution is used (a sidebar tab rendering a gateway route). */
  session?: { controls?: { registerControlUiDescriptor?: (descriptor: ControlUiDescriptor) => void } };
  on?(hookName: "session_end", handler: (event: SessionEndEvent, context: SessionHookContext) => void | Promise<void>): void;
  registerToolMetadata?(metadata: ToolMetadataRegistration): void;
  registerContextEngine(id: string, factory: (context: ContextEngineFactoryContext) => ContextEngine): void;
  registerTool?(tool: AgentTool | ToolFactory, options?: { name?: string; names?: string[]; optional?: boolean }): void;
  registerCommand?(command: CommandDefinition): void;
  /** `openclaw <command> …`: the registrar gets OpenClaw's commander program (loaded lazily, by descriptors). */
  registerCli?(registrar: CliRegistrar, options?: { descriptors?: CliCommandDescriptor[] }): void;
  /** A gateway RPC (`openclaw gateway call <method>`). */
  registerGatewayMethod?(method: string, handler: GatewayMethodHandler, options?: { scope?: "operator.read" | "operator.write" | "operator.admin" }): void;
  /** A gateway HTTP route; `auth: "gateway"` requires the gateway's own auth (its token as a bearer token). */
  registerHttpRoute?(route: HttpRoute): void;
}

/** What a CLI registrar receives; `program` is OpenClaw's commander Command (declared loosely: commander is ours too). */
export interface CliRegistrarContext { program: unknown; config?: unknown; [field: string]: unknown }
export type CliRegistrar = (context: CliRegistrarContext) => void | Promise<void>;
export interface CliCommandDescriptor {
  name: string;
  description: string;
  hasSubcommands: boolean;
  /** Whether this invocation prints machine output on stdout (OpenClaw then routes its own notices to stderr). */
  machineOutput?: (params: { argv: readonly string[]; stdoutIsTTY: boolean }) => boolean;
}

export interface GatewayMethodContext {
  params: Record<string, unknown>;
  respond(ok: boolean, payload?: unknown, error?: { code: string; message: string; details?: unknown }): void;
  [field: string]: unknown;
}
export type GatewayMethodHandler = (context: GatewayMethodContext) => void | Promise<void>;

/** A Control UI contribution (the fields LCM sets): `surface: "tab"` with `path` renders that route in a sandboxed frame. */
export interface ControlUiDescriptor {
  id: string;
  surface: "tab";
  label: string;
  description?: string;
  icon?: string;
  path?: string;
  group?: "control" | "agent";
  requiredScopes?: ("operator.read" | "operator.write" | "operator.admin")[];
}

export interface HttpRoute {
  path: string;
  auth: "gateway" | "plugin";
  match?: "exact" | "prefix";
  handler(request: import("node:http").IncomingMessage, response: import("node:http").ServerResponse): boolean | void | Promise<boolean | void>;
}
