/**
 * Bootstrap import of the host's transcript, so installing the plugin on a live agent loses nothing and a turn
 * whose commit failed is recovered on the next turn. Two sources:
 * - the host's transcript store, through the SDK's paged reader (OpenClaw 2026.9.6; `sessionFile` is then the
 *   session key), resuming from a persisted cursor;
 * - a JSONL transcript file (older hosts), resuming from a persisted byte offset.
 * The host calls bootstrap on every turn, so each call reads only what was appended since the last one, and at
 * most a bounded amount (the rest follows on later turns). Identity keys make every re-read idempotent.
 *
 * A conversation imported from another store (`lcm import lossless-claw`) holds the transcript's messages already,
 * under identities the transcript cannot reproduce (that store kept no idempotency keys, and timestamps only to the
 * second). Until its transcript has been read to the end once, each batch is first matched against the imported
 * messages (src/ingest/transcript-match.ts) and only what matches none of them is stored.
 */
import { stat } from "node:fs/promises";
import type { Clock, Logger, TokenEstimator } from "../contracts.js";
import type { AgentMessage } from "../host/openclaw-types.js";
import type { LargeContentExternalizer } from "../large-files/large-file-interceptor.js";
import type { ImportedHistoryStore } from "../store/imported-history-store.js";
import { ImportedHistoryMatcher } from "./transcript-match.js";
import { identityKeyOf, legacyIdentityKeyOf } from "../messages/message-codec.js";
import type { BootstrapState, ConversationRecord } from "../records.js";
import type { SessionLifecycleStore } from "../store/session-store.js";
import type { ConversationStore, MessageStore } from "../store/store.js";
import { encodeAll, storeEncoded } from "./history-import.js";
import { readTranscript, type TranscriptLocation } from "./transcript-reader.js";
import type { TranscriptSource } from "./transcript-source.js";

/** Bytes of a transcript file read per bootstrap call. */
export const MAX_IMPORT_BYTES = 16 * 1024 * 1024;
/** Messages read from the host store per bootstrap call (pages of a few hundred). */
export const MAX_IMPORT_MESSAGES = 5_000;

export interface TranscriptImportDeps {
  /** With ImportedHistoryStore when the backend holds imports (its transcript is then reconciled once). */
  store: ConversationStore & MessageStore & Partial<ImportedHistoryStore>;
  tokens: TokenEstimator;
  clock: Clock;
  logger: Logger;
  transcriptSource?: TranscriptSource;
  /** Stores large file blocks and tool output aside before the messages are stored. */
  largeFiles?: LargeContentExternalizer;
  /** Takes a host command stored in an earlier batch out of the context once its answer arrives. */
  commands?: Pick<SessionLifecycleStore, "excludeHostCommand">;
}

export interface TranscriptImportResult {
  imported: number;
  /** Set when the import did not (fully) happen, e.g. no source, or only part was read this time. */
  note?: string;
  /** True when this call stopped at its bound with more to read (the next call continues). */
  more?: boolean;
  /** Whether this call moved the conversation's cursor. */
  advanced?: boolean;
}

export async function importTranscript(
  conversation: ConversationRecord,
  sessionFile: string | undefined,
  deps: TranscriptImportDeps,
): Promise<TranscriptImportResult> {
  const location = await transcriptLocation(conversation, sessionFile, deps.transcriptSource);
  if (!location) return { imported: 0, note: "no transcript source" };
  let imported = 0;
  let reconciliation: ImportReconciliation | null = null;
  const reading = await readTranscript(location, conversation.bootstrapState, {
    start: (fromStart) => {
      reconciliation = new ImportReconciliation(conversation, deps, fromStart);
    },
    messages: async (batch) => {
      imported += await appendBatch(conversation, batch, reconciliation!, deps);
    },
    restart: () => reconciliation!.restart(),
  }, location.kind === "file"
    ? { maxBytes: MAX_IMPORT_BYTES, maxMessages: Number.POSITIVE_INFINITY }
    : { maxBytes: Number.POSITIVE_INFINITY, maxMessages: MAX_IMPORT_MESSAGES }, { now: deps.clock.now(), logger: deps.logger });
  const matched = (reconciliation as ImportReconciliation | null)?.hasMatches ?? false;
  if (reading.state && (reading.moved || matched)) await reconciliation!.save(reading.state, reading.reachedEnd);
  return {
    imported, advanced: reading.moved, ...(reading.partial ? { more: true } : {}), ...(reading.note ? { note: reading.note } : {}),
  };
}

/**
 * Where a conversation's transcript is: the JSONL file bootstrap was given (older hosts), else the host's store through
 * `source` (OpenClaw 2026.9.6 passes the session key as `sessionFile`); null when there is neither.
 */
export async function transcriptLocation(
  conversation: Pick<ConversationRecord, "agentId" | "sessionId" | "sessionKey">, sessionFile: string | undefined, source: TranscriptSource | undefined,
): Promise<TranscriptLocation | null> {
  const fileSize = sessionFile ? await sizeOf(sessionFile) : null;
  if (sessionFile && fileSize !== null) return { kind: "file", path: sessionFile, size: fileSize };
  if (!source) return null;
  return {
    kind: "host", source,
    scope: { agentId: conversation.agentId, sessionId: conversation.sessionId, ...(conversation.sessionKey ? { sessionKey: conversation.sessionKey } : {}) },
  };
}

async function sizeOf(path: string): Promise<number | null> {
  try {
    const info = await stat(path);
    return info.isFile() ? info.size : null;
  } catch {
    return null; // not a path (OpenClaw passes the session key) or not readable
  }
}

async function appendBatch(
  conversation: ConversationRecord, batch: AgentMessage[], reconciliation: ImportReconciliation, deps: TranscriptImportDeps,
): Promise<number> {
  const messages = await reconciliation.withoutImported(batch);
  if (messages.length === 0) return 0;
  const { encoded, unpairedCommandKeys } = await encodeAll(messages, deps);
  const inserted = (await storeEncoded(conversation, encoded, deps)).inserted;
  // A gateway answer whose command came in an earlier batch: the command leaves the context now.
  for (const key of unpairedCommandKeys) await deps.commands?.excludeHostCommand(conversation.conversationId, key);
  return inserted;
}

/**
 * One bootstrap reading's matching of the transcript against an imported conversation's messages. The imported
 * messages still unmatched are loaded on the first batch that has messages (a conversation from no import costs one
 * short read then, and nothing when the transcript has nothing new); when the reading starts at the transcript's
 * start, earlier matches are dropped and made again, so a transcript read twice never loses a message.
 */
class ImportReconciliation {
  private matcher: ImportedHistoryMatcher | null | undefined;
  private includeMatched: boolean;
  private restarted: boolean;

  constructor(private readonly conversation: ConversationRecord, private readonly deps: TranscriptImportDeps, fromStart: boolean) {
    this.includeMatched = fromStart;
    this.restarted = fromStart;
  }

  /** Whether this reading matched imported messages (their state must be saved even if the cursor did not move). */
  get hasMatches(): boolean {
    return (this.matcher?.matched.length ?? 0) > 0;
  }

  /** The host read again from a new cursor: matches are made again from there. */
  restart(): void {
    if (this.matcher === null) return;
    this.matcher = undefined;
    this.includeMatched = true;
    this.restarted = true;
  }

  /** The batch without the messages that are imported ones; messages stored with this identity are left to the store. */
  async withoutImported(batch: AgentMessage[]): Promise<AgentMessage[]> {
    const matcher = await this.load(batch.length > 0);
    if (!matcher) return batch;
    const identities = batch.map(identityKeysOfMessage);
    const stored = await this.deps.store.findExistingIdentities(this.conversation.conversationId, identities.flat());
    return batch.filter((message, index) => {
      const keys = identities[index]!;
      if (keys.some((key) => stored.has(key))) {
        matcher.takeIdentity(keys); // the very row (or one stored since): the store skips it, the import row is done
        return true;
      }
      return keys.length === 0 || matcher.take(message) === null;
    });
  }

  /** Saves the cursor, and with it what this reading matched and whether the transcript was read to its end. */
  async save(state: BootstrapState, reachedEnd: boolean): Promise<void> {
    const { store } = this.deps;
    if (this.matcher && store.saveTranscriptMatches) {
      await store.saveTranscriptMatches(this.conversation.conversationId, {
        refs: this.matcher.matched, restart: this.restarted, finished: reachedEnd, bootstrapState: state,
      });
      return;
    }
    await store.setBootstrapState(this.conversation.conversationId, state);
  }

  private async load(needed: boolean): Promise<ImportedHistoryMatcher | null> {
    if (this.matcher !== undefined || !needed) return this.matcher ?? null;
    const candidates = await this.deps.store.importedMessagesToMatch?.(this.conversation.conversationId, { includeMatched: this.includeMatched });
    if (!candidates) {
      this.matcher = null;
      return null;
    }
    this.matcher = new ImportedHistoryMatcher();
    this.matcher.add(candidates);
    return this.matcher;
  }
}

/** The identities a transcript message would be stored under; none for what cannot be stored (encodeAll says why). */
function identityKeysOfMessage(message: AgentMessage): string[] {
  if (message === null || typeof message !== "object" || typeof message.role !== "string") return [];
  const legacy = legacyIdentityKeyOf(message);
  return legacy === undefined ? [identityKeyOf(message)] : [identityKeyOf(message), legacy];
}
