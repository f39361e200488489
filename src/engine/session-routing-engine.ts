/**
 * The engine the factory hands to OpenClaw: it routes each hook by the session it belongs to
 * (specs/016-session-lifecycle.md). Sessions LCM stores go to LcmContextEngine, after a check that the host has not
 * started a new session under the conversation's key since the last turn (session-lifecycle.ts). Sessions the
 * configuration ignores or keeps stateless get what OpenClaw's own engine gives them: their own messages as they
 * are, OpenClaw's own compaction, and nothing stored; their turns are acknowledged, since LCM was told not to keep
 * them and OpenClaw keeps them in its transcript.
 *
 * The host reads `info` once per turn and the factory cannot see the session, so `info` stays LcmContextEngine's;
 * the routing happens per hook, from the hook's session key. Contract: no hook rejects except commitTurn where the
 * wrapped engine's does (a storage failure).
 */
import type { Logger } from "../contracts.js";
import { describeError } from "../errors.js";
import type { CompactionDelegate, ContextEngine, ContextEngineInfo } from "../host/openclaw-types.js";
import type { ConversationStore } from "../store/store.js";
import { runSerialized } from "../runtime/session-queue.js";
import { hostMessagesOf, sessionKeyOf } from "./hook-params.js";
import type { SessionFilter, SessionTreatment } from "../sessions/session-filter.js";
import type { SessionLifecycle } from "../sessions/session-lifecycle.js";
import { conversationKeyOf } from "../sessions/session-identity.js";

export interface SessionRoutingDeps {
  filter: SessionFilter;
  /** OpenClaw's own compaction, for the sessions LCM does not store (absent: they are answered "nothing to compact"). */
  delegateCompaction?: CompactionDelegate | undefined;
  /** Notices new sessions the hooks did not report (absent: hooks only). */
  lifecycle?: SessionLifecycle | undefined;
  store?: Pick<ConversationStore, "findConversation"> | undefined;
  logger: Logger;
}

/** A hook of the engine, by name: its parameters and what it resolves to (each method is typed as the host declares it). */
type Hook = Exclude<keyof ContextEngine, "info">;
type ParamsOf<Name extends Hook> = Parameters<ContextEngine[Name]>[0];
type ResultOf<Name extends Hook> = ReturnType<ContextEngine[Name]>;

/** Why a session is not stored, as hooks report it. */
function notStored(treatment: SessionTreatment): string {
  return treatment === "ignore"
    ? "LCM ignores this session (ignoreSessionPatterns): OpenClaw's own engine runs it"
    : "LCM does not store this session (statelessSessionPatterns): OpenClaw's own engine runs it";
}

export class SessionRoutingEngine implements ContextEngine {
  readonly info: ContextEngineInfo;
  /** One new-session check per instance: the host builds an instance per turn. */
  private checkedSession = false;

  constructor(private readonly inner: ContextEngine, private readonly deps: SessionRoutingDeps) {
    this.info = inner.info;
  }

  async bootstrap(params: ParamsOf<"bootstrap">): ResultOf<"bootstrap"> {
    const treatment = this.treatmentOf(params);
    if (treatment !== "store") return { bootstrapped: false, reason: notStored(treatment) };
    await this.checkNewSession(params);
    return this.inner.bootstrap(params);
  }

  async maintain(params: ParamsOf<"maintain">): ResultOf<"maintain"> {
    const treatment = this.treatmentOf(params);
    if (treatment !== "store") return { changed: false, bytesFreed: 0, rewrittenEntries: 0, reason: notStored(treatment) };
    return this.inner.maintain(params);
  }

  async ingest(params: ParamsOf<"ingest">): ResultOf<"ingest"> {
    return this.treatmentOf(params) === "store" ? this.inner.ingest(params) : { ingested: false };
  }

  async ingestBatch(params: ParamsOf<"ingestBatch">): ResultOf<"ingestBatch"> {
    return this.treatmentOf(params) === "store" ? this.inner.ingestBatch(params) : { ingestedCount: 0 };
  }

  async afterTurn(params: ParamsOf<"afterTurn">): ResultOf<"afterTurn"> {
    if (this.treatmentOf(params) === "store") await this.inner.afterTurn(params);
  }

  /** A session LCM was told not to store is acknowledged: OpenClaw keeps it in its own transcript. */
  async commitTurn(params: ParamsOf<"commitTurn">): ResultOf<"commitTurn"> {
    return this.treatmentOf(params) === "store" ? this.inner.commitTurn(params) : { status: "committed" };
  }

  async assemble(params: ParamsOf<"assemble">): ResultOf<"assemble"> {
    if (this.treatmentOf(params) !== "store") return { messages: hostMessagesOf(params), estimatedTokens: 0 };
    await this.checkNewSession(params);
    return this.inner.assemble(params);
  }

  async compact(params: ParamsOf<"compact">): ResultOf<"compact"> {
    const treatment = this.treatmentOf(params);
    if (treatment === "store") return this.inner.compact(params);
    const delegate = this.deps.delegateCompaction;
    if (!delegate) return { ok: true, compacted: false, reason: `nothing to compact: ${notStored(treatment)}` };
    try {
      return await delegate(params);
    } catch (error) {
      // OpenClaw's own compaction failed: report it like OpenClaw would, without quarantining this engine.
      return { ok: false, compacted: false, reason: `OpenClaw's own compaction failed: ${describeError(error)}` };
    }
  }

  async onSubagentEnded(params: ParamsOf<"onSubagentEnded">): ResultOf<"onSubagentEnded"> {
    await this.inner.onSubagentEnded(params);
  }

  async dispose(): ResultOf<"dispose"> {
    await this.inner.dispose();
  }

  private treatmentOf(params: unknown): SessionTreatment {
    return this.deps.filter.treatmentOf(sessionKeyOf(params));
  }

  /**
   * Before the turn reads or writes the conversation: a new session OpenClaw started under its key that no hook
   * reported is applied first (the earlier session's context is set aside). Never throws: on a failure the turn
   * goes on with the conversation as it is, and the next turn checks again.
   */
  private async checkNewSession(params: { sessionId: string; sessionKey?: string }): Promise<void> {
    const { lifecycle, store } = this.deps;
    if (this.checkedSession || !lifecycle || !store) return;
    this.checkedSession = true;
    try {
      if (typeof params.sessionId !== "string" || params.sessionId === "") return;
      const key = conversationKeyOf(params);
      await runSerialized(`session:${params.sessionId}`, async () => {
        const conversation = await store.findConversation(key);
        if (conversation) await lifecycle.reconcile(conversation);
      });
    } catch (error) {
      this.deps.logger.warn(`Could not check for a new session: ${describeError(error)}. The turn goes on; the next turn checks again.`);
    }
  }
}
