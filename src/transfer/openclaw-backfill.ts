/**
 * Backfill from OpenClaw (`lcm import openclaw`): every session transfer/openclaw-sessions.ts finds is read with
 * bootstrap's own reader (ingest/transcript-reader.ts) and stored with bootstrap's importer
 * (ingest/transcript-import.ts), so history from before the plugin was installed is stored, searchable and
 * deduplicated exactly as bootstrap would have stored it. The dry run is the same reading with a counter in place of
 * the store: it counts the messages whose identity is not stored yet.
 *
 * Resumable: each conversation's bootstrap cursor (byte offset or host cursor) records how far it was read, so a run
 * that stops part-way continues there, and a finished session costs one stat or one page. Writes go through
 * appendMessages, in chunks of a few hundred messages per transaction with the event loop running between them.
 */
import { stat } from "node:fs/promises";
import type { Clock, Logger, TokenEstimator } from "../contracts.js";
import { describeError } from "../errors.js";
import { encodeAll } from "../ingest/history-import.js";
import type { SessionFilter } from "../sessions/session-filter.js";
import { importTranscript, type TranscriptImportDeps, transcriptLocation } from "../ingest/transcript-import.js";
import { readTranscript, UNBOUNDED } from "../ingest/transcript-reader.js";
import type { TranscriptSource } from "../ingest/transcript-source.js";
import type { AgentMessage } from "../host/openclaw-types.js";
import { identityKeysOf, isStoredIn } from "../messages/message-codec.js";
import type { ConversationRecord } from "../records.js";
import type { ConversationStore, MessageStore } from "../store/store.js";
import type { HostSession } from "./openclaw-sessions.js";

export type BackfillStatus = "imported" | "up-to-date" | "ignored" | "empty" | "unavailable" | "failed";

export interface SessionBackfill {
  agentId: string;
  sessionId: string;
  sessionKey: string | null;
  /** file: a JSONL transcript; host: the agent database (the host's reader, or the file read-only). */
  source: "file" | "host" | null;
  conversationId: number | null;
  status: BackfillStatus;
  /** Messages stored (a dry run: that would be stored). */
  imported: number;
  note: string | null;
}

export interface BackfillDeps extends TranscriptImportDeps {
  filter: Pick<SessionFilter, "treatmentOf">;
}

export interface BackfillPreviewDeps {
  /** The database, read only; null when there is none yet (every session would be new). */
  store: Pick<ConversationStore & MessageStore, "findConversation" | "findExistingIdentities"> | null;
  tokens: TokenEstimator;
  clock: Clock;
  logger: Logger;
  transcriptSource?: TranscriptSource;
  filter: Pick<SessionFilter, "treatmentOf">;
}

const NO_READER = "the session's transcript is in OpenClaw's store and no reader for it is available here";

/**
 * Imports one session completely (bootstrap reads a bounded amount per call; this calls it until the transcript is
 * read to its end or stops making progress). Contract: never throws; a failure is reported in the result.
 */
export async function backfillSession(session: HostSession, deps: BackfillDeps): Promise<SessionBackfill> {
  const start = await begin(session, deps, deps.store);
  if ("done" in start) return start.done;
  const { result } = start;
  try {
    let conversation = start.existing ?? await deps.store.getOrCreateConversation(
      { agentId: session.agentId, sessionId: session.sessionId, ...(session.sessionKey ? { sessionKey: session.sessionKey } : {}) }, deps.clock.now(),
    );
    result.conversationId = conversation.conversationId;
    for (;;) {
      const step = await importTranscript(conversation, session.transcriptFile ?? undefined, deps);
      result.imported += step.imported;
      conversation = (await deps.store.getConversation(conversation.conversationId)) ?? conversation;
      if (step.more && step.advanced) continue;
      if (step.note) {
        result.note = step.note;
        if (!step.advanced && result.imported === 0) result.status = "unavailable";
      }
      break;
    }
    if (result.status === "up-to-date" && result.imported > 0) result.status = "imported";
    return result;
  } catch (error) {
    return { ...result, status: "failed", note: describeError(error) };
  }
}

/**
 * The dry run of `backfillSession`: the same reading from the same cursor, the messages counted unless their
 * identity is stored already (or came earlier in the transcript). `conversationId` null: a conversation it would
 * create. Contract: never throws, never writes.
 */
export async function previewSessionBackfill(session: HostSession, deps: BackfillPreviewDeps): Promise<SessionBackfill> {
  const start = await begin(session, deps, deps.store);
  if ("done" in start) return start.done;
  const { result, existing } = start;
  try {
    result.conversationId = existing?.conversationId ?? null;
    const location = await transcriptLocation(
      { agentId: session.agentId, sessionId: session.sessionId, sessionKey: session.sessionKey }, session.transcriptFile ?? undefined, deps.transcriptSource,
    );
    const counter = new FreshMessageCounter(existing, deps);
    const reading = await readTranscript(location!, existing?.bootstrapState ?? null, counter, UNBOUNDED, { now: deps.clock.now(), logger: deps.logger });
    result.imported = counter.fresh;
    if (reading.note) {
      result.note = reading.note;
      if (counter.fresh === 0 && !reading.moved) result.status = "unavailable";
    }
    if (result.status === "up-to-date" && result.imported > 0) result.status = "imported";
    return result;
  } catch (error) {
    return { ...result, status: "failed", note: describeError(error) };
  }
}

/** What both runs decide before reading: the session filter, whether there is a reader, an empty file. */
async function begin(
  session: HostSession, deps: Pick<BackfillPreviewDeps, "filter" | "transcriptSource">,
  store: Pick<ConversationStore, "findConversation"> | null,
): Promise<{ done: SessionBackfill } | { result: SessionBackfill; existing: ConversationRecord | null }> {
  const result: SessionBackfill = {
    agentId: session.agentId, sessionId: session.sessionId, sessionKey: session.sessionKey,
    source: session.transcriptFile ? "file" : deps.transcriptSource ? "host" : null, conversationId: null, status: "up-to-date", imported: 0, note: null,
  };
  if (deps.filter.treatmentOf(session.sessionKey ?? undefined) !== "store") {
    return { done: { ...result, status: "ignored", note: "the session's key matches ignoreSessionPatterns or statelessSessionPatterns" } };
  }
  if (result.source === null) return { done: { ...result, status: "unavailable", note: NO_READER } };
  try {
    const existing = (await store?.findConversation({ agentId: session.agentId, sessionId: session.sessionId })) ?? null;
    // A transcript file that is gone since it was listed fails here, rather than be looked for elsewhere.
    const size = session.transcriptFile ? (await stat(session.transcriptFile)).size : null;
    if (!existing && size === 0) return { done: { ...result, status: "empty" } };
    return { result, existing };
  } catch (error) {
    return { done: { ...result, status: "failed", note: describeError(error) } };
  }
}

/** Counts the messages the store does not hold yet, one batch at a time (encoded as bootstrap encodes them). */
class FreshMessageCounter {
  fresh = 0;
  private readonly seen = new Set<string>();

  constructor(
    private readonly conversation: ConversationRecord | null,
    private readonly deps: Pick<BackfillPreviewDeps, "store" | "tokens" | "clock" | "logger">,
  ) {}

  /** The host's reader started over: what was counted is read again, and counted once. */
  restart(): void {
    this.fresh = 0;
    this.seen.clear();
  }

  async messages(batch: AgentMessage[]): Promise<void> {
    const { encoded } = await encodeAll(batch, this.deps);
    const keys = encoded.flatMap(identityKeysOf);
    const stored = this.conversation && this.deps.store
      ? await this.deps.store.findExistingIdentities(this.conversation.conversationId, keys)
      : new Set<string>();
    for (const message of encoded) {
      if (isStoredIn(stored, message) || isStoredIn(this.seen, message)) continue;
      this.fresh++;
      for (const key of identityKeysOf(message)) this.seen.add(key);
    }
  }
}
