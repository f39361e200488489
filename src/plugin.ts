/**
 * The composition root: the only module that touches the host API, opens the database and picks the real
 * implementations of the contracts. `register` is idempotent and side-effect-free (OpenClaw calls it several
 * times per process, in several registration modes): it resolves the configuration and registers factories;
 * the database is opened lazily by the first engine or tool that needs it. When it cannot be used, the engine
 * steps aside for OpenClaw's own (unavailable-engine.ts), status and recall read it read-only where they can, and
 * the cause is logged once per process.
 */
import { createLcmCommand } from "./chat/lcm-command.js";
import { statSync } from "node:fs";
import { type LcmConfig, resolveConfig } from "./config.js";
import type { CompletionModel, Logger } from "./contracts.js";
import type { IntegrityChecker } from "./integrity/integrity-checker.js";
import { systemClock } from "./contracts.js";
import { databaseProblemOf, describeDatabaseProblem } from "./sqlite/database-problem.js";
import { openPostgresBackend } from "./postgres/open-postgres-backend.js";
import { redactUrl } from "./postgres/pg-database.js";
import { openSqliteBackend } from "./sqlite/open-sqlite-backend.js";
import type { LcmBackend } from "./store/backend.js";
import { chooseDefaultDatabasePath } from "./sqlite/default-database-path.js";
import { ENGINE_ID, LcmContextEngine } from "./engine/lcm-context-engine.js";
import { openClawTranscriptSource, type TranscriptSource } from "./ingest/transcript-source.js";
import { type CompactionDelegateLoad, RuntimeCompaction } from "./engine/runtime-compaction.js";
import { UnavailableEngine } from "./engine/unavailable-engine.js";
import { SessionFilter } from "./sessions/session-filter.js";
import { agentIdFromSessionKey, DEFAULT_AGENT_ID } from "./sessions/session-identity.js";
import { handleSessionEnded, SessionLifecycle, type SessionRecords } from "./sessions/session-lifecycle.js";
import { SessionRoutingEngine } from "./engine/session-routing-engine.js";
import { describeError } from "./errors.js";
import type { CompactParams, CompactResult, ContextEngine, HostPathContextEngine, PluginApi } from "./host/openclaw-types.js";
import type { TextCompletion } from "./large-files/text-explorer.js";
import { hostTextCompletion } from "./large-files/host-text-completion.js";
import { createRecallServices } from "./retrieval/recall-services.js";
import { LargeFileStorage } from "./large-files/large-file-storage.js";
import { hostLogger } from "./runtime/host-logger.js";
import { LiveConfig } from "./runtime/live-config.js";
import { forgetLogged, logOnce } from "./runtime/log-once.js";
import { processConnectionHolds } from "./sqlite/connection-holds.js";
import { runSerialized } from "./runtime/session-queue.js";
import { hostModelRef } from "./summarize/host-llm-summarizer.js";
import { createSummarizerSelector, type SummarizerSelector } from "./summarize/summarizer-selection.js";
import { DefaultTokenEstimator } from "./tokens/default-token-estimator.js";
import type { RecallToolDeps } from "./tools/recall-tool-deps.js";
import { RECALL_TOOLS } from "./tools/recall-tools.js";
import { CLI_DESCRIPTORS, lcmCliRegistrar } from "./cli/openclaw-cli.js";
import { createStatusRpc, STATUS_METHOD } from "./chat/lcm-status-rpc.js";
import { timedEngineFactory } from "./metrics/hook-timing.js";
import { processMetrics } from "./metrics/lcm-metrics.js";
import { createMetricsRoute, METRICS_PATH } from "./metrics/metrics-route.js";
import { countedIntegrityChecker } from "./services/integrity-service.js";
import { MetricsService } from "./services/metrics-service.js";
import { sharedSpendGuard } from "./services/spend-guard.js";
import { StatusService, statusWithoutDatabase } from "./services/status-service.js";
import { RECALL_TOOL_CATALOG } from "./tools/tool-catalog.js";
import type { RetentionService } from "./retention/retention-service.js";
import { retentionServiceOn } from "./retention/retention-wiring.js";
import { FALLBACK_REDO_PER_TURN, redoFallbackSummaries, sharedRedoBackoff } from "./repair/fallback-redo.js";
import { repairServiceOn } from "./repair/repair-wiring.js";
import { createInspectorHandler } from "./inspector/inspector-http.js";
import { inspectorApiOn } from "./inspector/inspector-wiring.js";

/** Where the gateway serves the inspector (the Control UI tab's frame). */
export const INSPECTOR_PATH = "/lcm/inspector";

export const PLUGIN_ID = "lcm";

/**
 * The backend on the process's shared connection: PostgreSQL when databaseUrl is set (its pool connects on the first
 * statement, so a server that is down fails the hooks' writes, not the opening), else the SQLite file, which throws
 * LcmError("unavailable") here when it cannot be written.
 */
export function openBackend(config: LcmConfig): LcmBackend {
  // A file another machine stored is copied from the database into this gateway's files directory to be read.
  if (config.databaseUrl) return openPostgresBackend(config.databaseUrl, "shared", { files: new LargeFileStorage(config.filesDirectory) });
  return openSqliteBackend(config.databasePath, "shared");
}

export function integrityCheckerFor(backend: LcmBackend): IntegrityChecker {
  return countedIntegrityChecker(backend.integrity, systemClock);
}

/** Retention on the backend, its background runs on a worker thread; does nothing unless the settings turn it on. */
export function retentionServiceFor(backend: LcmBackend, config: LcmConfig, logger: Logger): RetentionService {
  return retentionServiceOn(backend, { config, clock: systemClock, logger, onWorkerThread: true });
}

/** Seams for tests; OpenClaw calls `register(api)`. */
export interface RegisterOptions {
  /** Loads OpenClaw's own compaction for the engine served when the database cannot be used. Default: the SDK's. */
  loadCompactionDelegate?: () => Promise<CompactionDelegateLoad>;
  /** Where bootstrap reads the host's transcript. Default: OpenClaw's SDK reader. */
  transcriptSource?: TranscriptSource;
}

/** What the plugin builds from one configuration; rebuilt only when the settings change (runtime/live-config.ts). */
interface Wiring {
  databaseAccess: DatabaseAccess;
  summarizers: SummarizerSelector;
  textCompletion: TextCompletion | undefined;
  filter: SessionFilter;
}

export function register(api: PluginApi, options: RegisterOptions = {}): void {
  // `openclaw lcm …` (also when LCM is disabled: the stored history can still be inspected). In "cli-metadata" mode
  // OpenClaw only collects CLI descriptors, and touching api.runtime throws: nothing else is registered then.
  api.registerCli?.(lcmCliRegistrar(() => pluginModelOf(api)), { descriptors: CLI_DESCRIPTORS });
  if (api.registrationMode === "cli-metadata") return;
  const logger = hostLogger(api.logger);
  const tokens = new DefaultTokenEstimator();
  const pluginLlm = api.runtime?.llm;
  // Settings are read from the host's current config on every use: editing them applies from the next turn,
  // without OpenClaw retiring the plugin (the default export declares them a dynamic read).
  const live = new LiveConfig<Wiring>({
    read: () => pluginConfigOf(api),
    // Without a configured path, an LCM database at the old default `lcm.db` is kept; another plugin's file there is not.
    resolve: (raw, report) => resolveConfig(raw, process.env, {
      defaultDatabasePath: (env) => chooseDefaultDatabasePath(env, logger), reportProblem: report,
    }),
    build: (config) => ({
      databaseAccess: new DatabaseAccess(config, logger),
      // The session's host model (runtimeContext.llm) wins when a hook gets one; api.runtime.llm, the standalone
      // Anthropic client and the extractive summarizer follow, in that order.
      summarizers: createSummarizerSelector({ config, tokens, pluginLlm, env: process.env }),
      // Exploration summaries of large text files use the plugin-wide host model; without one they are deterministic.
      textCompletion: pluginLlm ? hostTextCompletion(pluginLlm, hostModelRef(config)) : undefined,
      filter: new SessionFilter(config),
    }),
    logger,
  });
  if (!live.current().config.enabled) {
    logger.info("LCM is disabled (enabled: false); the context engine is not registered.");
    return;
  }
  // Imported now, not at module load: the engine served when the database cannot be used hands compaction to it.
  const runtimeCompaction = new RuntimeCompaction(options.loadCompactionDelegate);
  const transcriptSource = options.transcriptSource ?? openClawTranscriptSource();
  const sessionRecords = hostSessionRecords(api);
  // Every hook of LCM's engines is timed, with the longest event-loop block while it ran (lcm_hook_* metrics).
  api.registerContextEngine(ENGINE_ID, timedEngineFactory(() => {
    const { config, wiring } = live.current();
    // Switched off while the gateway runs: step aside like an unusable database (OpenClaw's own engine runs).
    if (!config.enabled) return new UnavailableEngine(DISABLED_CAUSE, runtimeCompaction) as HostPathContextEngine as ContextEngine;
    let backend: LcmBackend;
    try {
      backend = wiring.databaseAccess.forWriting();
    } catch (error) {
      // No commitTurn, no transcriptSemantics, ownsCompaction false. The cast: our ContextEngine type lists commitTurn
      // as required because LcmContextEngine always has it (tests call it); in OpenClaw's contract it is optional.
      const degraded: HostPathContextEngine = new UnavailableEngine(wiring.databaseAccess.problemText(error), runtimeCompaction);
      return degraded as ContextEngine;
    }
    const engine = new LcmContextEngine({
      config, store: backend.store, compactionStore: backend.compaction, summarizers: wiring.summarizers, tokens,
      clock: systemClock, logger, transcriptSource, textCompletion: wiring.textCompletion, grants: backend.grants,
      integrity: integrityCheckerFor(backend), searchIndex: backend.searchIndex, commands: backend.sessions,
      retention: retentionServiceFor(backend, config, logger), storage: backend.storage,
      fallbackRedo: (request) => {
        const { service, repairs } = repairServiceOn({
          backend, config, tokens, clock: systemClock, logger, summarizers: wiring.summarizers, integrity: integrityCheckerFor(backend),
        });
        return redoFallbackSummaries(service, repairs, {
          ...request, limit: FALLBACK_REDO_PER_TURN, integrity: "recent",
          backoff: { backoff: sharedRedoBackoff(), key: `${config.databasePath}#${request.conversationId}`, now: systemClock.now() },
        });
      },
    });
    return new SessionRoutingEngine(engine, {
      filter: wiring.filter,
      delegateCompaction: (params) => delegatedCompaction(runtimeCompaction, params),
      lifecycle: sessionLifecycleFor(backend, config, logger, sessionRecords),
      store: backend.store,
      logger,
    });
  }, processMetrics()));
  // Recall tools and /lcm open the database only when they run (tool listing stays side-effect-free).
  const recallDepsOf = (config: LcmConfig, wiring: Wiring): RecallToolDeps => ({
    config, logger, clock: systemClock,
    services: () => {
      const backend = wiring.databaseAccess.forReading();
      return createRecallServices({
        store: backend.store, retrievalStore: backend.retrieval, grants: backend.grants, config, tokens,
        clock: systemClock, logger, subagent: api.runtime?.subagent, llm: api.runtime?.llm,
      });
    },
  });
  for (const tool of RECALL_TOOLS) {
    api.registerTool?.((context) => {
      const { config, wiring } = live.current();
      // Not offered in sessions LCM ignores, nor while it is switched off.
      if (!config.enabled || wiring.filter.treatmentOf(context.sessionKey) === "ignore") return null;
      return tool.create(recallDepsOf(config, wiring), context);
    }, { name: tool.name });
  }
  registerToolCatalog(api, logger);
  api.registerCommand?.(createLcmCommand({
    get config() {
      return live.current().config;
    },
    clock: systemClock, logger,
    services: () => {
      const { config, wiring } = live.current();
      const backend = wiring.databaseAccess.forReading();
      return {
        location: backend.location,
        conversations: backend.store, sessions: backend.retrieval, status: backend.status, storage: backend.retention,
        integrity: integrityCheckerFor(backend), ...(backend.readOnlyNotice ? { notice: backend.readOnlyNotice } : {}),
        endedSessions: sessionLifecycleFor(backend, config, logger, sessionRecords),
      };
    },
  }));
  registerSessionHooks(api, live, logger, sessionRecords);
  registerOperatorSurfaces(api, live);
  // The last registration of the plugin to be retired closes its database connections (and their checkpoint workers).
  const release = processConnectionHolds().hold();
  try {
    api.lifecycle?.onDispose?.(() => release());
  } catch (error) {
    logger.debug(`The host did not accept a cleanup hook (${describeError(error)}); connections close with the process.`);
  }
}

const DISABLED_CAUSE = "It is switched off (plugins.entries.lcm.config.enabled is false); set it to true to use it again.";

/** plugins.entries.lcm.config as the host has it now; the registration's copy when the host cannot say. */
function pluginConfigOf(api: PluginApi): unknown {
  const current = api.runtime?.config?.current?.();
  const entries = (current as { plugins?: { entries?: Record<string, { config?: unknown } | undefined> } } | undefined)?.plugins?.entries;
  const entry = entries?.[api.id ?? PLUGIN_ID];
  if (entry) return entry.config ?? {};
  return api.pluginConfig ?? {};
}

/** OpenClaw's own compaction for sessions LCM does not store; rejects when it cannot be loaded. */
async function delegatedCompaction(runtime: RuntimeCompaction, params: CompactParams): Promise<CompactResult> {
  const loaded = runtime.current() ?? await runtime.settled();
  if (!loaded.delegate) return { ok: true, compacted: false, reason: `nothing to compact: OpenClaw's own compaction is unavailable (${loaded.reason})` };
  return loaded.delegate(params);
}

function sessionLifecycleFor(backend: LcmBackend, config: LcmConfig, logger: Logger, records: SessionRecords | undefined): SessionLifecycle {
  return new SessionLifecycle({
    conversations: backend.store, sessions: backend.sessions, config, clock: systemClock, logger, records,
  });
}

/** The host's session records (`api.runtime.agent.session.getSessionEntry`), when it offers them. */
function hostSessionRecords(api: PluginApi): SessionRecords | undefined {
  const session = api.runtime?.agent?.session;
  if (typeof session?.getSessionEntry !== "function") return undefined;
  return {
    find: ({ agentId, sessionKey }) => {
      try {
        const entry = session.getSessionEntry!({ agentId, sessionKey });
        if (entry === undefined || entry === null) return null; // the host has no such session
        if (typeof entry.sessionId !== "string") return undefined;
        return { sessionId: entry.sessionId, ...(typeof entry.sessionStartedAt === "number" ? { sessionStartedAt: entry.sessionStartedAt } : {}) };
      } catch {
        return undefined; // not in a gateway, or the plugin is retiring: the hooks alone report new sessions
      }
    },
  };
}

/**
 * OpenClaw's session hooks: `session_end` says why a session ended ("new", "reset", "idle", "daily", "deleted"…). The
 * handler never throws (a failure is logged; the next turn notices a new session anyway).
 */
function registerSessionHooks(api: PluginApi, live: LiveConfig<Wiring>, logger: Logger, records: SessionRecords | undefined): void {
  if (typeof api.on !== "function") return;
  api.on("session_end", async (event, context) => {
    try {
      const { config, wiring } = live.current();
      const sessionKey = typeof event?.sessionKey === "string" ? event.sessionKey : undefined;
      const sessionId = typeof event?.sessionId === "string" ? event.sessionId : undefined;
      if (!config.enabled || !sessionId || wiring.filter.treatmentOf(sessionKey) !== "store") return;
      const agentId = agentIdFromSessionKey(sessionKey) ?? (typeof context?.agentId === "string" ? context.agentId : DEFAULT_AGENT_ID);
      const lifecycle = sessionLifecycleFor(wiring.databaseAccess.forWriting(), config, logger, records);
      const reason = typeof event.reason === "string" ? event.reason : undefined;
      await runSerialized(`session:${sessionId}`, () =>
        handleSessionEnded(lifecycle, { agentId, sessionId, sessionKey, reason }, logger));
    } catch (error) {
      logger.warn(`session_end not handled: ${describeError(error)}. The next turn checks the session again.`);
    }
  });
}

/** Names and one-line descriptions for OpenClaw's tool catalog (the profiles are in the manifest). */
function registerToolCatalog(api: PluginApi, logger: Logger): void {
  if (typeof api.registerToolMetadata !== "function") return;
  for (const tool of RECALL_TOOL_CATALOG) {
    try {
      api.registerToolMetadata({ toolName: tool.name, displayName: tool.displayName, description: tool.catalogDescription, risk: "low", tags: ["memory", "recall"] });
    } catch (error) {
      logger.debug(`The tool catalog entry of ${tool.name} was not accepted: ${describeError(error)}`);
    }
  }
}

/**
 * Opens the database for the engine (writing) and for status and recall (reading), and logs why it cannot, once
 * per process per cause: the factory runs every turn and every tool call opens, and a lasting cause would
 * otherwise fill the log. Once the database opens for writing again, a later recurrence is logged again.
 */
class DatabaseAccess {
  private readonly cause: string;

  constructor(private readonly config: LcmConfig, private readonly logger: Logger) {
    this.cause = `database-unavailable:${config.databaseUrl ? redactUrl(config.databaseUrl) : config.databasePath}:`;
  }

  forWriting(): LcmBackend {
    try {
      const backend = openBackend(this.config);
      forgetLogged(this.cause);
      return backend;
    } catch (error) {
      this.warn(this.problemText(error));
      throw error;
    }
  }

  /** Read-write, or read-only when the file may only be read (`readOnlyNotice` then says why and the fix). */
  forReading(): LcmBackend {
    try {
      const backend = this.config.databaseUrl ? openBackend(this.config) : openSqliteBackend(this.config.databasePath, "shared-readable");
      if (backend.readOnlyNotice) this.warn(backend.readOnlyNotice);
      return backend;
    } catch (error) {
      this.warn(this.problemText(error));
      throw error;
    }
  }

  /** What is wrong with the database, where, and the fix, for any error opening it threw. */
  problemText(error: unknown): string {
    if (databaseProblemOf(error)) return (error as Error).message;
    if (this.config.databaseUrl) {
      return `PostgreSQL at ${redactUrl(this.config.databaseUrl)} cannot be used: ${describeError(error)}. Check that the server is up and ` +
        "that databaseUrl (or LCM_DATABASE_URL) names it; turns wait in OpenClaw's outbox meanwhile.";
    }
    return describeDatabaseProblem(this.config.databasePath, { kind: "cannot-open", reason: describeError(error) });
  }

  private warn(problem: string): void {
    logOnce(this.logger, "warn", this.cause + problem, `LCM cannot use its database. ${problem}`);
  }
}

const plugin = {
  id: PLUGIN_ID,
  name: "Lossless Context Management",
  description:
    "Stores every message in SQLite, summarizes older turns into a DAG, assembles summaries plus a fresh tail within " +
    "the token budget, and gives the agent tools to recall any detail.",
  /**
   * Editing the plugin's settings is a dynamic read, not a plugin reload: OpenClaw then neither retires the plugin
   * (which stalled turns for tens of seconds) nor refuses the change while a turn runs; LCM reads the new settings
   * on the next turn (runtime/live-config.ts). Enabling or disabling the plugin entry itself still reloads it.
   */
  reload: { noopPrefixes: [`plugins.entries.${PLUGIN_ID}.config`] },
  register,
};

export default plugin;

/**
 * The operators' gateway surfaces (issue 17): the `lcm.status` RPC (what /lcm status shows, as data) and Prometheus
 * metrics at /lcm/metrics behind the gateway's auth, served while metricsEnabled is set (404 otherwise). Both open
 * the database only when called.
 */
function registerOperatorSurfaces(api: PluginApi, live: LiveConfig<Wiring>): void {
  const readable = () => {
    const { config, wiring } = live.current();
    return { config, backend: wiring.databaseAccess.forReading() };
  };
  api.registerGatewayMethod?.(STATUS_METHOD, createStatusRpc(() => {
    const { config, wiring } = live.current();
    // Asking must not create the database (opening the path would): none yet is an answer of its own.
    if (!config.databaseUrl && !hasDatabaseFile(config.databasePath)) return statusWithoutDatabase(config, systemClock);
    const { backend } = readable();
    return new StatusService({
      location: backend.location, conversations: backend.store, sessions: backend.retrieval, status: backend.status, config, clock: systemClock, readOnlyNotice: backend.readOnlyNotice,
      storage: backend.retention, sessionTreatment: (sessionKey) => wiring.filter.treatmentOf(sessionKey),
    });
  }), { scope: "operator.read" });
  registerInspectorTab(api, live);
  // Registered whatever metricsEnabled says, and answered by its current value: a live change applies from the next
  // request, as the settings-change log line promises (OpenClaw adds no route without a plugin reload).
  api.registerHttpRoute?.({
    path: METRICS_PATH, auth: "gateway", match: "exact",
    handler: createMetricsRoute({
      enabled: () => live.current().config.metricsEnabled,
      scrape: () => new MetricsService({
        metrics: processMetrics(), spendGuard: sharedSpendGuard(), clock: systemClock, config: live.current().config,
        stores: () => {
          const { backend } = readable();
          return { status: backend.status, operator: backend.operator };
        },
      }).scrape(),
    }),
  });
}

/**
 * The inspector in OpenClaw's Control UI (spec 027): a sidebar tab that renders the gateway route INSPECTOR_PATH in a
 * sandboxed frame, behind the gateway's auth; visible to connections with operator.read. Read-only: the frame's grant
 * allows only GET (repairs run from `openclaw lcm repair` or `lcm inspect --write`). The frame's origin is opaque, so
 * each view is served with its data inside the page (inlinePage). The database opens per request.
 */
function registerInspectorTab(api: PluginApi, live: LiveConfig<Wiring>): void {
  const register = api.session?.controls?.registerControlUiDescriptor;
  if (typeof api.registerHttpRoute !== "function" || typeof register !== "function") return;
  const tokens = new DefaultTokenEstimator();
  api.registerHttpRoute({
    path: INSPECTOR_PATH, auth: "gateway", match: "prefix",
    handler: createInspectorHandler({
      basePath: INSPECTOR_PATH, inlinePage: true,
      api: () => {
        const { config, wiring } = live.current();
        const backend = wiring.databaseAccess.forReading();
        return inspectorApiOn({
          backend, config, tokens, clock: systemClock, logger: hostLogger(api.logger),
          readOnlyReason: backend.readOnlyNotice ?? "the Control UI tab is read-only; repairs: openclaw lcm repair, or lcm inspect --write",
        });
      },
    }),
  });
  register.call(api.session!.controls, {
    id: "lcm-inspector", surface: "tab", label: "LCM memory", icon: "brain", group: "agent", path: `${INSPECTOR_PATH}/`,
    description: "The stored conversations, the summary DAG, the context the model sees next, search and stored files.",
    requiredScopes: ["operator.read"],
  });
}

/** Whether a file with content is at `path`: a missing or empty one is not opened by status (that would make it a database). */
function hasDatabaseFile(path: string): boolean {
  if (path === ":memory:") return true;
  return (statSync(path, { throwIfNoEntry: false })?.size ?? 0) > 0;
}

/** api.runtime.llm for `openclaw lcm compact`, or undefined where the host offers no runtime. */
function pluginModelOf(api: PluginApi): CompletionModel | undefined {
  try {
    return api.runtime?.llm;
  } catch {
    return undefined; // "cli-metadata" registration: the runtime is deliberately unavailable; the CLI summarizes without a model
  }
}
