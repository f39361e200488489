/**
 * Everything one end-to-end suite needs, wired together: a folder `runs/<name>/` (in paths.ts WORK_DIR) holding an
 * isolated HOME, OpenClaw's log, the plugin database and the fake model's request log; the fake model server;
 * the CLI and one gateway on a free loopback port. `dispose()` stops what was started; the folder stays for
 * reading after the run (the next run's global setup clears it).
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { FakeModelServer } from "../fake-model-server.js";
import { createSuiteDatabase, ON_POSTGRES } from "./host-backend.js";
import { hostConfig, type HostConfigOptions, writeHostConfig } from "./host-config.js";
import { hostEnv, OpenClawCli } from "./openclaw-cli.js";
import { freePort, OpenClawGateway } from "./openclaw-gateway.js";
import { engineHealthProblems, type LogLine, readGatewayOutput, readOpenClawLog } from "./openclaw-log.js";
import { RUNS_DIR } from "./paths.js";
import { PluginDatabase } from "./plugin-database.js";

export interface HostSuiteOptions {
  /** Folder name under RUNS_DIR. */
  name: string;
  contextEngine?: HostConfigOptions["contextEngine"];
  /** Default 16000 tokens: with the trimmed host this leaves a few thousand tokens of history. */
  contextWindow?: number;
  maxOutputTokens?: number;
  /**
   * plugins.entries.lcm.config; databasePath is set to the suite folder unless given. "defaults" leaves the entry
   * without any config, as a new user has it: the database is then the default one in the isolated HOME. With
   * LCM_HOST_BACKEND=postgres, `databaseUrl` is added (the suite's own database, host-backend.ts) unless given.
   */
  pluginConfig?: Record<string, unknown> | "defaults";
  /** Host tools offered beside the plugin's (tools.alsoAllow), e.g. "read". */
  extraTools?: string[];
  /** The fake model refuses requests that do not fit its window, as providers do. */
  enforceWindow?: boolean;
  /** Replaces the trimmed tool policy (see host-config.ts). */
  tools?: Record<string, unknown>;
  /** agents.entries of openclaw.json. */
  agentEntries?: Record<string, Record<string, unknown>>;
  /** More of OpenClaw's agents.defaults.compaction (e.g. `{ midTurnPrecheck: { enabled: true } }`). */
  hostCompaction?: Record<string, unknown>;
}

/** One message of the host's own transcript view (`chat.history`). */
export interface HostMessage {
  role: string;
  text: string;
  raw: Record<string, unknown>;
}

const GATEWAY_TOKEN = "lcm-e2e-token";

export class HostSuite {
  readonly home: string;
  readonly logFile: string;
  readonly database: PluginDatabase;
  readonly cli: OpenClawCli;
  readonly gateway: OpenClawGateway;
  private config: HostConfigOptions;
  private chats = 0;

  private constructor(
    readonly dir: string, readonly model: FakeModelServer, port: number, options: HostSuiteOptions, databaseUrl: string | null,
  ) {
    this.home = join(dir, "home");
    this.logFile = join(dir, "openclaw.log");
    const isDefaults = options.pluginConfig === "defaults";
    const pluginConfig = isDefaults ? {} : (options.pluginConfig as Record<string, unknown> | undefined) ?? {};
    const databasePath = isDefaults
      ? join(this.home, ".openclaw", "lcm-context.db") // the default database file (src/config.ts DEFAULT_DATABASE_FILE)
      : String(pluginConfig.databasePath ?? join(dir, "lcm.db"));
    this.database = new PluginDatabase(databasePath, databaseUrl);
    this.config = {
      logFile: this.logFile,
      workspaceDir: join(dir, "workspace"),
      gatewayPort: port,
      gatewayToken: GATEWAY_TOKEN,
      modelBaseUrl: model.baseUrl,
      contextWindow: options.contextWindow ?? 16_000,
      maxOutputTokens: options.maxOutputTokens ?? 1_024,
      contextEngine: options.contextEngine ?? "lcm",
      // On PostgreSQL the defaults are a new user's who set only databaseUrl.
      pluginConfig: isDefaults ? this.databaseSettings({}) : this.databaseSettings({ ...pluginConfig, databasePath }),
      extraTools: options.extraTools ?? [],
      ...(options.tools ? { tools: options.tools } : {}),
      ...(options.agentEntries ? { agentEntries: options.agentEntries } : {}),
      ...(options.hostCompaction ? { hostCompaction: options.hostCompaction } : {}),
    };
    mkdirSync(this.config.workspaceDir, { recursive: true });
    writeHostConfig(this.home, hostConfig(this.config));
    this.cli = new OpenClawCli({ env: hostEnv(this.home, GATEWAY_TOKEN), workDir: dir });
    this.gateway = new OpenClawGateway({ cli: this.cli, port, workDir: dir });
  }

  static async create(options: HostSuiteOptions): Promise<HostSuite> {
    const dir = uniqueDir(join(RUNS_DIR, options.name));
    const contextWindow = options.contextWindow ?? 16_000;
    const model = await FakeModelServer.start({
      logFile: join(dir, "model-requests.jsonl"), contextWindow, enforceWindow: options.enforceWindow ?? false,
    });
    // A suite that names its PostgreSQL database (postgres.test.ts: two gateways on one) keeps it on either backend.
    const given = typeof options.pluginConfig === "object" ? options.pluginConfig.databaseUrl : undefined;
    const databaseUrl = typeof given === "string" ? given : ON_POSTGRES ? await createSuiteDatabase(dir) : null;
    return new HostSuite(dir, model, await freePort(), options, databaseUrl);
  }

  /** The plugin config with the suite's database: `databaseUrl` added when the run stores in PostgreSQL. */
  private databaseSettings(pluginConfig: Record<string, unknown>): Record<string, unknown> {
    return this.database.url === null ? pluginConfig : { ...pluginConfig, databaseUrl: this.database.url };
  }

  /** Rewrites openclaw.json; a running gateway picks it up on its next start. */
  reconfigure(changes: Partial<Pick<HostConfigOptions, "contextEngine" | "pluginConfig" | "hostCompaction">>): void {
    this.config = {
      ...this.config,
      ...changes,
      pluginConfig: this.databaseSettings({ ...(changes.pluginConfig ?? this.config.pluginConfig), databasePath: this.database.path }),
    };
    writeHostConfig(this.home, hostConfig(this.config));
  }

  /** openclaw.json as it is on disk now (OpenClaw and `openclaw config set` may have rewritten it). */
  readConfigFile(): Record<string, unknown> {
    return JSON.parse(readFileSync(join(this.home, ".openclaw", "openclaw.json"), "utf8")) as Record<string, unknown>;
  }

  /** Writes openclaw.json as given (for example with a value OpenClaw's validation refuses). */
  writeConfigFile(config: Record<string, unknown>): void {
    writeHostConfig(this.home, config);
  }

  /**
   * Turns OpenClaw still holds in its durable outbox for this engine (`context_engine_turn_outbox` in the agent's
   * own database): committed turns leave it; a commitTurn that threw keeps its turn there until a retry succeeds.
   */
  pendingCommits(agentId = "main"): number {
    const path = join(this.home, ".openclaw", "agents", agentId, "agent", "openclaw-agent.sqlite");
    if (!existsSync(path)) return 0;
    const db = new DatabaseSync(path, { readOnly: true });
    try {
      return Number((db.prepare("SELECT count(*) AS n FROM context_engine_turn_outbox WHERE engine_id = 'lcm'").get() as { n: number }).n);
    } finally {
      db.close();
    }
  }

  /** The agents' workspace (files the host's `read` tool may open). */
  get workspaceDir(): string {
    return this.config.workspaceDir;
  }

  logLines(): LogLine[] {
    return [...readOpenClawLog(this.logFile), ...readGatewayOutput(this.dir)];
  }

  /** Waits until a log line matches `pattern` (OpenClaw applies a config change when its watcher sees the file). */
  async waitForLog(pattern: RegExp, timeoutMs = 30_000): Promise<LogLine> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.logLines().find((line) => pattern.test(line.text));
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`No log line matched ${pattern} within ${timeoutMs} ms (${this.logFile}).`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** Log lines showing the engine was bypassed, quarantined or failed (expected: none). */
  healthProblems(): string[] {
    return engineHealthProblems(this.logLines());
  }

  /** The host's transcript for a session, through the gateway (`chat.history`). */
  async hostHistory(sessionKey: string): Promise<HostMessage[]> {
    const history = await this.cli.callGateway<{ messages?: Record<string, unknown>[]; hasMore?: boolean }>(
      "chat.history", { sessionKey, limit: 1_000 },
    );
    if (history.hasMore) throw new Error(`chat.history for ${sessionKey} has more than one page; raise the limit.`);
    return (history.messages ?? []).map((raw) => ({ role: String(raw.role), text: hostMessageText(raw), raw }));
  }

  /**
   * Sends a chat message through the gateway (`chat.send`, how chat surfaces deliver slash commands such as
   * /compact and /lcm) and waits for its run to finish (`agent.wait`).
   */
  async sendChat(sessionKey: string, message: string): Promise<{ runId: string; wait: Record<string, unknown> }> {
    const idempotencyKey = `e2e-chat-${++this.chats}-${Date.now()}`;
    const sent = await this.cli.callGateway<{ runId?: string; status?: string }>(
      "chat.send", { sessionKey, message, idempotencyKey },
    );
    const runId = sent.runId ?? idempotencyKey;
    const wait = await this.cli.callGateway<Record<string, unknown>>("agent.wait", { runId, timeoutMs: 150_000 }, 170_000);
    return { runId, wait };
  }

  async dispose(): Promise<void> {
    await this.cli.close();
    await this.gateway.stop();
    await this.model.close();
    await this.database.close();
  }
}

/** The visible text of a host message: a string content, or its text blocks joined. */
export function hostMessageText(message: Record<string, unknown>): string {
  const content = message.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.flatMap((block: { type?: string; text?: string }) => (block.type === "text" && block.text ? [block.text] : []))
    .join("\n");
}

function uniqueDir(base: string): string {
  let dir = base;
  for (let attempt = 2; existsSync(dir); attempt++) dir = `${base}-${attempt}`;
  mkdirSync(dir, { recursive: true });
  return dir;
}
