/**
 * LcmContextEngine: the OpenClaw context-engine hooks. It orchestrates only: storage, assembly, transcript
 * import and compaction live in their own components. The host builds one instance per turn, so construction
 * stores references and nothing else. Every hook is guarded: a failure is logged and turned into a truthful
 * result (a throw makes OpenClaw quarantine the engine for the whole process), with one exception: `commitTurn`
 * rethrows a storage failure, which OpenClaw answers by keeping the turn in its outbox and committing it again
 * (docs/reliability.md); that throw never quarantines. Mutating hooks of one session run in order through the
 * shared per-session queue.
 */
import { Assembler } from "../assembly/assembler.js";
import type { RetentionService } from "../retention/retention-service.js";
import { TurnBudgets } from "../assembly/turn-budget.js";
import { scaledSettings } from "../compaction/compaction-targets.js";
import type { Clock, Logger, TokenEstimator } from "../contracts.js";
import type { LcmConfig } from "../config.js";
import { describeError, LcmError } from "../errors.js";
import { SYSTEM_PROMPT_ADDITION, systemPromptAdditionTokens } from "../assembly/system-prompt.js";
import type {
  AfterTurnParams,
  AssembleParams,
  AssembleResult,
  BootstrapParams,
  BootstrapResult,
  CommitTurnParams,
  CompactParams,
  CompactResult,
  ContextEngine,
  ContextEngineInfo,
  HostLlm,
  IngestBatchParams,
  IngestParams,
  MaintainParams,
  MaintenanceResult,
} from "../host/openclaw-types.js";
import type { IntegrityChecker } from "../integrity/integrity-checker.js";
import { LargeFileInterceptor } from "../large-files/large-file-interceptor.js";
import { LargeFileStorage } from "../large-files/large-file-storage.js";
import type { TextCompletion } from "../large-files/text-explorer.js";
import type { EncodedMessage } from "../messages/message-codec.js";
import type { ConversationRecord } from "../records.js";
import { runSerialized } from "../runtime/session-queue.js";
import type { StorageControl } from "../store/backend.js";
import type { CompactionStore } from "../store/compaction-store.js";
import { isExpansionSessionKey, type GrantStore } from "../store/grant-store.js";
import type { SearchIndex } from "../store/search-index.js";
import type { SessionLifecycleStore } from "../store/session-store.js";
import type { BudgetRecord, LcmStore } from "../store/store.js";
import { budgetChanges } from "../store/turn-chunks.js";
import type { SummarizerSelector } from "../summarize/summarizer-selection.js";
import { compactionBudget } from "../services/compaction-service.js";
import { runCompact, runMaintain } from "./compaction-hooks.js";
import { encodeAll, importHostHistory, storeEncoded } from "../ingest/history-import.js";
import { assemblyRecord, HostShareReport } from "./host-share-report.js";
import { hostMessagesOf } from "./hook-params.js";
import { conversationKeyOf } from "../sessions/session-identity.js";
import { importTranscript } from "../ingest/transcript-import.js";
import type { TranscriptSource } from "../ingest/transcript-source.js";

export const ENGINE_ID = "lcm";
export const ENGINE_VERSION = "0.1.0";


export interface EngineDeps {
  config: LcmConfig;
  store: LcmStore;
  tokens: TokenEstimator;
  clock: Clock;
  logger: Logger;
  /** The host transcript reader used by bootstrap (absent outside OpenClaw). */
  transcriptSource?: TranscriptSource;
  /** The model that writes exploration summaries of large text files (absent: deterministic summaries). */
  textCompletion?: TextCompletion;
  /** Summary writes (same database as `store`). */
  compactionStore: CompactionStore;
  /** Write deadlines and which errors are storage failures, for the same database. */
  storage: StorageControl;
  /** Picks the summarizer of one compaction (the session's host model when a hook received one). */
  summarizers: SummarizerSelector;
  /** Bounded per-turn integrity check in maintain (absent: skipped). */
  integrity?: Pick<IntegrityChecker, "checkRecent">;
  /** Delegated-expansion grants, revoked when their helper sub-agent ends (absent: nothing to revoke). */
  grants?: Pick<GrantStore, "revokeGrantsForChild">;
  /** The messages' full-text index, brought up to date in batches by maintain (absent: searches do it). */
  searchIndex?: SearchIndex;
  /** Takes a host command out of the context when the gateway's answer to it is imported later (absent: kept). */
  commands?: Pick<SessionLifecycleStore, "excludeHostCommand">;
  /** Retention, started by maintain at a bounded rate in the background (absent or off: nothing is removed). */
  retention?: Pick<RetentionService, "runInBackground">;
  /** Redoes a few fallback summaries of the conversation with the model, when one answers (absent: never). */
  fallbackRedo?: (request: { conversationId: number; model?: HostLlm | undefined; signal?: AbortSignal | undefined }) => Promise<{ redone: unknown[] }>;
  /** How long maintain works before it answers and finishes in the background (default MAINTAIN_ANSWER_MS). */
  maintainAnswerMs?: number;
}

/**
 * maintain indexes new messages for full-text search once this many wait (about 40 turns): one FTS5 segment
 * per batch instead of one per turn. A search indexes whatever is still waiting before it reads.
 */
export const INDEX_BATCH_MESSAGES = 200;
/** At most this many messages indexed per maintain (~12 ms per 500, the event loop running between chunks). */
export const INDEX_ROWS_PER_MAINTAIN = 5_000;
/**
 * Content stored aside indexed per maintain, at most (64 KB per transaction of ~10 ms): a turn's pastes and tool
 * outputs are searchable through the index by the next turn; a larger backlog (an import) is read directly by
 * searches meanwhile.
 */
export const INDEX_FILE_BYTES_PER_MAINTAIN = 1024 * 1024;
/**
 * How long bootstrap and maintain wait for a lock another process holds before giving up: both are recoverable on
 * the next turn (the transcript cursor and compaction state only advance with their writes), and the turn waits
 * for them. commitTurn waits the full DEFAULT_WRITE_DEADLINE_MS: a turn it cannot store goes back to the host.
 */
export const RECOVERABLE_WRITE_DEADLINE_MS = 2_000;
/** assemble's one write, the turn's budget, is skipped when the file stays locked this long. */
export const BUDGET_WRITE_DEADLINE_MS = 250;
/**
 * maintain answers the host within this long; a compaction still summarizing then finishes in the background,
 * holding the session's queue as before (the next hook of the session waits for it). OpenClaw 2026.9.6 announces a
 * turn maintenance running longer than 10 s to the session (TURN_MAINTENANCE_LONG_WAIT_MS): a "still running" and
 * a "done" system event, each waking the agent for a model turn of its own. A real model often takes that long
 * to summarize a 20k-token chunk; the host's first summarizer call after its start took 4-10 s in every gateway
 * of the host suite (loading its model runtime).
 */
export const MAINTAIN_ANSWER_MS = 5_000;

export class LcmContextEngine implements ContextEngine {
  readonly info: ContextEngineInfo = {
    id: ENGINE_ID,
    name: "Lossless Context Management",
    version: ENGINE_VERSION,
    ownsCompaction: true,
    // OpenClaw runs the turn's maintain after the reply, as a task of the session, instead of before the turn ends:
    // summarizing (seconds with a real model) never delays an answer (test/host/turn-latency.test.ts).
    turnMaintenanceMode: "background",
    transcriptSemantics: {
      currentTurnFence: "before-current-turn-entry-v1",
      turnAdvancementIdempotency: "atomic-idempotent-v1",
    },
  };

  private readonly assembler: Assembler;
  /** The budget of each assemble call of this turn (one instance = one turn). */
  private readonly turnBudgets = new TurnBudgets();
  /** The turn's first model call: recorded, and logged once the host states its window when history got too little. */
  private readonly hostShare: HostShareReport;
  /** Tokens of SYSTEM_PROMPT_ADDITION: part of what the host's budget must hold, though the host does not count it. */
  private readonly additionTokens: number;

  /** Stores large files and tool output aside on every ingest path (see encodeForStorage and importDeps). */
  private readonly largeFiles: LargeFileInterceptor;
  private readonly importDeps: EngineDeps & { largeFiles: LargeFileInterceptor };

  constructor(private readonly deps: EngineDeps) {
    this.assembler = new Assembler({ store: deps.store, tokens: deps.tokens });
    this.hostShare = new HostShareReport(deps.logger, deps.config.databasePath);
    this.additionTokens = systemPromptAdditionTokens(deps.tokens);
    this.largeFiles = new LargeFileInterceptor({
      ...deps,
      storage: new LargeFileStorage(deps.config.filesDirectory),
      ...(deps.textCompletion ? { completion: deps.textCompletion } : {}),
      // Small windows store large content aside sooner: a share of the conversation's budget (spec 011), measured
      // against half the model's window at least: where OpenClaw's own prompt leaves history nothing, an ordinary
      // message is still an ordinary message (spec 023: at 8k, 1.5k-token messages were all stored aside).
      thresholdFor: (conversation) => {
        const budget = compactionBudget(conversation, undefined, deps.config).tokens;
        return scaledSettings(Math.max(budget, Math.floor((conversation.lastWindowTokens ?? 0) / 2)), deps.config).largeMessageTokens;
      },
    });
    this.importDeps = { ...deps, largeFiles: this.largeFiles };
  }

  async bootstrap(params: BootstrapParams): Promise<BootstrapResult> {
    return this.guard<BootstrapResult>("bootstrap", (reason) => ({ bootstrapped: false, reason }), () =>
      this.serialized(params.sessionId, () => this.deps.storage.withWriteDeadline(RECOVERABLE_WRITE_DEADLINE_MS, async (): Promise<BootstrapResult> => {
        const conversation = await this.conversationFor(params);
        const result = await importTranscript(conversation, params.sessionFile, this.importDeps);
        return { bootstrapped: true, importedMessages: result.imported, ...(result.note ? { reason: result.note } : {}) };
      })),
    );
  }

  async ingest(params: IngestParams): Promise<{ ingested: boolean }> {
    return this.guard("ingest", () => ({ ingested: false }), async () => {
      if (params.isHeartbeat) return { ingested: false };
      return this.serialized(params.sessionId, async () => {
        const { inserted } = await this.append(params, [params.message]);
        return { ingested: inserted > 0 };
      });
    });
  }

  async ingestBatch(params: IngestBatchParams): Promise<{ ingestedCount: number }> {
    return this.guard("ingestBatch", () => ({ ingestedCount: 0 }), async () => {
      if (params.isHeartbeat) return { ingestedCount: 0 };
      return this.serialized(params.sessionId, async () => ({ ingestedCount: (await this.append(params, params.messages)).inserted }));
    });
  }

  async afterTurn(params: AfterTurnParams): Promise<void> {
    await this.guard("afterTurn", () => undefined, async () => {
      if (params.isHeartbeat) return;
      await this.serialized(params.sessionId, async () => {
        const conversation = await this.conversationFor(params);
        await this.importUncommittedHistory(conversation, params.messages);
      });
    });
  }

  /**
   * Stores one accepted turn atomically and idempotently. A turn is acknowledged only when it is stored: when the
   * store cannot take it (locked past the write deadline, disk full, I/O error, a replaced or unopenable file),
   * commitTurn throws, and OpenClaw keeps the turn in its durable outbox and commits it again before the session's
   * next turn (a commitTurn throw never quarantines the engine; turns run while one is pending are served by
   * OpenClaw's own engine and imported by bootstrap afterwards). Anything else (no session id, messages that cannot
   * be stored) is logged and answered "committed" after storing what can be: the turn is in the host's transcript,
   * and failing it forever would keep the session off this engine.
   */
  async commitTurn(params: CommitTurnParams): Promise<{ status: "committed" | "duplicate" }> {
    return this.guard("commitTurn", () => ({ status: "committed" as const }), () =>
      this.serialized(params.sessionId, async () => {
        if (params.isHeartbeat) return { status: "committed" as const };
        const conversation = await this.recordWindow(await this.conversationFor(params), params.runtimeContext?.tokenBudget);
        this.hostShare.report(conversation.lastWindowTokens);
        const encoded = await this.encodeForStorage(conversation, params.messages);
        const admissionEntryId = typeof params.admission?.entryId === "string" ? params.admission.entryId : undefined;
        const result = await this.deps.store.commitTurn(
          conversation.conversationId,
          { advancementKey: String(params.advancementKey), ...(admissionEntryId ? { admissionEntryId } : {}) },
          encoded, this.deps.clock.now(),
        );
        if (result.status === "committed" && result.duplicates > 0) {
          this.deps.logger.info(
            `commitTurn: ${result.duplicates} of ${encoded.length} messages of turn ${String(params.advancementKey)} were stored ` +
              "already (imported from the host transcript or history before the turn was committed); stored once.",
          );
        }
        return { status: result.status };
      }),
    );
  }

  async assemble(params: AssembleParams): Promise<AssembleResult> {
    // Runs inside the guard's catch: reads params only through hostMessagesOf, which never throws.
    const passThrough = (): AssembleResult => ({ messages: hostMessagesOf(params), estimatedTokens: 0 });
    return this.guard("assemble", passThrough, () =>
      this.serialized(params.sessionId, async () => {
        const conversation = await this.conversationFor(params);
        await this.importUncommittedHistory(conversation, params.messages);
        const budget = this.turnBudgets.budgetFor(params.sessionId, {
          tokenBudget: params.tokenBudget,
          limits: params.runtimeSettings?.limits,
          runtimeTokenBudget: params.runtimeContext?.tokenBudget,
          prompt: params.prompt,
          availableTools: params.availableTools,
          fallback: () => this.deps.config.defaultTokenBudget,
        });
        // The system prompt addition is ours too: the host measured its system prompt without it. A budget too
        // small to hold it and some context goes to the context alone (the memory floor says how to recall): so does
        // one where, beside it, the context would be the memory floor alone past what is left (spec 023).
        const assembleWithin = (tokenBudget: number) => this.assembler.assemble({
          conversationId: conversation.conversationId,
          tokenBudget,
          memoryFloor: { roomTokens: budget.floorRoomTokens, storedMessages: conversation.messageCount },
        });
        let withAddition = budget.tokens >= 2 * this.additionTokens;
        let assembled = await assembleWithin(budget.tokens - (withAddition ? this.additionTokens : 0));
        if (withAddition && assembled.estimatedTokens + this.additionTokens > budget.tokens) {
          withAddition = false;
          assembled = await assembleWithin(budget.tokens);
        }
        const estimatedTokens = assembled.estimatedTokens + (withAddition ? this.additionTokens : 0);
        const assembly = budget.host ? assemblyRecord(budget.host, budget.tokens, estimatedTokens, assembled.floor) : undefined;
        await this.recordBudgetIfFree(conversation, { ...budget.record, ...(assembly ? { assembly } : {}) });
        // Reported once the window is known: from an earlier turn, or this turn's tool loop or commit.
        if (assembly) this.hostShare.hold(conversation, assembly, budget.record.reserveTokens);
        this.hostShare.report(budget.record.windowTokens ?? conversation.lastWindowTokens);
        return {
          messages: assembled.messages,
          estimatedTokens,
          ...(withAddition ? { systemPromptAddition: SYSTEM_PROMPT_ADDITION } : {}),
        };
      }),
    );
  }

  async compact(params: CompactParams): Promise<CompactResult> {
    return this.guard("compact", (reason) => ({ ok: false, compacted: false, reason }), () =>
      this.serialized(params.sessionId, () => runCompact(params, this.deps, this.turnBudgets.pendingOf(params.sessionId))),
    );
  }



  async maintain(params: MaintainParams): Promise<MaintenanceResult> {
    const unchanged = (reason: string): MaintenanceResult => ({ changed: false, bytesFreed: 0, rewrittenEntries: 0, reason });
    const answerMs = this.deps.maintainAnswerMs ?? MAINTAIN_ANSWER_MS;
    const work = this.maintainInQueue(params, unchanged);
    // A plugin retired meanwhile closes the database after it.
    this.deps.storage.keepOpenWhile(work);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<MaintenanceResult>((resolve) => {
      timer = setTimeout(() => {
        this.deps.logger.info(`maintain: still at work after ${answerMs} ms (summarizing); it finishes in the background and the session's next hook waits for it.`);
        resolve(unchanged(`still at work after ${answerMs} ms; finishing in the background`));
      }, answerMs);
      timer.unref?.();
    });
    try {
      return await Promise.race([work, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** maintain's work, in the session's queue; never rejects (guard). */
  private maintainInQueue(params: MaintainParams, unchanged: (reason: string) => MaintenanceResult): Promise<MaintenanceResult> {
    return this.guard("maintain", unchanged, () =>
      this.serialized(params.sessionId, () => this.deps.storage.withWriteDeadline(RECOVERABLE_WRITE_DEADLINE_MS, async () => {
        const result = await runMaintain(params, this.deps);
        await this.checkRecentIntegrity(params);
        await this.redoFallbackSummaries(params);
        const index = this.deps.searchIndex;
        // A large backlog (a bulk import, a long bootstrap) goes to the backend's background indexer when it has one.
        if (index && !(await index.indexBacklogInBackground?.(this.deps.logger))) {
          await index.indexPending({
            whenAtLeast: INDEX_BATCH_MESSAGES, maxRows: INDEX_ROWS_PER_MAINTAIN, maxFileBytes: INDEX_FILE_BYTES_PER_MAINTAIN,
          });
        }
        // Not awaited: a bounded run (at most once per 10 minutes per database) that never holds the turn.
        void this.deps.retention?.runInBackground();
        return result;
      })),
    );
  }

  /**
   * A bounded integrity check of the newest context items after each turn's maintenance (order and tool
   * pairing): problems are reported in the log the turn they appear, not months later. `/lcm doctor` runs the
   * full check.
   */
  private async checkRecentIntegrity(params: MaintainParams): Promise<void> {
    if (!this.deps.integrity) return;
    const conversation = await this.deps.store.findConversation(conversationKeyOf(params));
    if (!conversation) return;
    const report = await this.deps.integrity.checkRecent(conversation.conversationId);
    if (report.findings.length === 0) return;
    const listed = report.findings.slice(0, 5).map((finding) => `${finding.kind} ${finding.subject}: ${finding.detail}`);
    this.deps.logger.warn(
      `integrity: ${report.findings.length} problem(s) in the newest context of conversation ${conversation.conversationId}: ` +
        `${listed.join("; ")}. Run /lcm doctor for the full check.`,
    );
  }

  /**
   * Fallback summaries (truncations written while no model answered) are re-summarized once a model answers again:
   * a few per turn (repair/fallback-redo.ts), spend-guarded and recorded like an operator's repair. Without a model,
   * or when it fails, nothing changes and a later turn tries again.
   */
  private async redoFallbackSummaries(params: MaintainParams): Promise<void> {
    if (!this.deps.fallbackRedo) return;
    const conversation = await this.deps.store.findConversation(conversationKeyOf(params));
    if (!conversation) return;
    const outcome = await this.deps.fallbackRedo({ conversationId: conversation.conversationId, model: params.runtimeContext?.llm, signal: params.abortSignal });
    if (outcome.redone.length > 0) {
      this.deps.logger.info(`re-summarized ${outcome.redone.length} fallback summaries of conversation ${conversation.conversationId} with the model`);
    }
  }

  async onSubagentEnded(params: { childSessionKey: string; reason: string }): Promise<void> {
    const grants = this.deps.grants;
    if (!grants) return;
    await this.guard("onSubagentEnded", () => undefined, async () => {
      const childSessionKey: unknown = params.childSessionKey;
      if (typeof childSessionKey !== "string" || !isExpansionSessionKey(childSessionKey)) return;
      await grants.revokeGrantsForChild(childSessionKey, `sub-agent ended: ${String(params.reason)}`, this.deps.clock.now());
    });
  }

  async dispose(): Promise<void> {
    // The connection is shared by every engine, tool and module copy in the process: nothing to close here.
    this.turnBudgets.clear();
  }

  /**
   * Hosts that commit durable turns are the source of truth through commitTurn and bootstrap; their assemble
   * history is a sanitized view (rewritten tool-call ids, no details) that is never imported. Other hosts
   * (non-durable runs, older versions) deliver history only this way.
   */
  private async importUncommittedHistory(conversation: ConversationRecord, messages: unknown): Promise<void> {
    if (!Array.isArray(messages) || messages.length === 0) return;
    if (await this.deps.store.hasCommittedTurns(conversation.conversationId)) return;
    await importHostHistory(conversation, messages, this.importDeps);
  }

  private async append(params: { sessionId: string; sessionKey?: string }, messages: readonly unknown[]) {
    const conversation = await this.conversationFor(params);
    return storeEncoded(conversation, (await encodeAll(Array.isArray(messages) ? messages : [], this.deps)).encoded, this.importDeps);
  }

  /** Encodes host messages, then stores large file blocks and tool output aside (fail-soft, never throws). */
  private async encodeForStorage(conversation: ConversationRecord, messages: unknown): Promise<EncodedMessage[]> {
    const { encoded } = await encodeAll(Array.isArray(messages) ? messages : [], this.deps);
    return this.largeFiles.externalize(conversation, encoded);
  }

  /**
   * Records the turn's budget for compaction when it changed, unless another process holds the write lock: assemble
   * must not wait on it (the turn is about to call the model), and the next turn records its own.
   */
  private async recordBudgetIfFree(conversation: ConversationRecord, record: BudgetRecord): Promise<void> {
    if (!budgetChanges(conversation, record)) return;
    try {
      await this.deps.storage.withWriteDeadline(BUDGET_WRITE_DEADLINE_MS, () => this.deps.store.recordBudget(conversation.conversationId, record));
    } catch (error) {
      if (!this.deps.storage.isStorageFailure(error)) throw error;
      this.deps.logger.info(`assemble: the turn's budget was not recorded (${describeError(error)}); the next turn records it.`);
    }
  }

  /** Records the model window the host states (commitTurn's runtimeContext), for compaction's budget (spec 011). */
  private async recordWindow(conversation: ConversationRecord, windowTokens: unknown): Promise<ConversationRecord> {
    if (typeof windowTokens !== "number" || !Number.isFinite(windowTokens) || windowTokens <= 0) return conversation;
    if (conversation.lastWindowTokens === Math.floor(windowTokens)) return conversation;
    await this.deps.store.recordBudget(conversation.conversationId, { windowTokens: Math.floor(windowTokens) });
    return { ...conversation, lastWindowTokens: Math.floor(windowTokens) };
  }

  private conversationFor(params: Parameters<typeof conversationKeyOf>[0]): Promise<ConversationRecord> {
    if (typeof params.sessionId !== "string" || params.sessionId === "") {
      throw new Error("The host did not pass a sessionId.");
    }
    return this.deps.store.getOrCreateConversation(conversationKeyOf(params), this.deps.clock.now());
  }

  /** Runs `task` in the session's queue; throws (inside the hook's guard) when the host passed no session id. */
  private serialized<T>(sessionId: unknown, task: () => Promise<T>): Promise<T> {
    if (typeof sessionId !== "string" || sessionId === "") {
      throw new LcmError("invalid_input", "The host did not pass a sessionId (a non-empty string); nothing was read or stored.");
    }
    return runSerialized(`session:${sessionId}`, task);
  }

  /**
   * Runs a hook's body. Contract: rejects only for `commitTurn` on a storage failure (LcmError "storage"; the host
   * keeps the turn in its outbox). Any other failure is logged naming the hook and turned into the hook's truthful
   * fallback; `fallback` runs inside the catch, so it must not read params except through
   * hook-params.ts. Bodies read their params only inside `body`, where a throwing getter is caught too.
   */
  private async guard<T>(hook: string, fallback: (reason: string) => T, body: () => Promise<T>): Promise<T> {
    try {
      return await body();
    } catch (error) {
      const reason = `${hook} failed: ${describeError(error)}`;
      if (hook === "commitTurn" && this.deps.storage.isStorageFailure(error)) {
        this.deps.logger.error(`${reason.replace(/\.+$/, "")}. The turn is not stored; OpenClaw keeps it in its outbox and commits it again before the next turn.`);
        throw new LcmError("storage", `The turn could not be stored (${describeError(error).replace(/\.+$/, "")}); commit it again later.`, {}, { cause: error });
      }
      this.deps.logger.error(reason);
      return fallback(reason);
    }
  }
}

