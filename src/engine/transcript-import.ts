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
 * messages (src/import/transcript-match.ts) and only what matches none of them is stored.
 */
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { createInterface } from "node:readline";
import type { Clock, Logger, TokenEstimator } from "../contracts.js";
import type { AgentMessage } from "../host/openclaw-types.js";
import type { LargeContentExternalizer } from "../large-files/large-file-interceptor.js";
import { type ImportedHistoryStore, ImportedHistoryMatcher } from "../import/transcript-match.js";
import { identityKeyOf, legacyIdentityKeyOf } from "../messages/message-codec.js";
import type { BootstrapState, ConversationRecord } from "../records.js";
import type { SessionLifecycleStore } from "../store/session-store.js";
import type { ConversationStore, MessageStore } from "../store/store.js";
import { encodeAll, storeEncoded } from "./history-import.js";
import type { TranscriptSource } from "./transcript-source.js";

/** Bytes of a transcript file read per bootstrap call. */
export const MAX_IMPORT_BYTES = 16 * 1024 * 1024;
/** Messages read from the host store per bootstrap call (pages of PAGE_MESSAGES). */
export const MAX_IMPORT_MESSAGES = 5_000;
const PAGE_MESSAGES = 250;
/**
 * Bytes per page of the host reader (its default is 1 MB). A single message larger than a page comes back as an
 * empty page naming the bytes it needs; that page is read again with room for it, up to the reader's own 64 MiB
 * (OpenClaw caps one transcript event at 4 MiB).
 */
export const PAGE_BYTES = 4 * 1024 * 1024;
const MAX_PAGE_BYTES = 64 * 1024 * 1024;
const BATCH_SIZE = 500;

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
}

export async function importTranscript(
  conversation: ConversationRecord,
  sessionFile: string | undefined,
  deps: TranscriptImportDeps,
): Promise<TranscriptImportResult> {
  const fileSize = sessionFile ? await sizeOf(sessionFile) : null;
  if (sessionFile && fileSize !== null) return importFile(conversation, sessionFile, fileSize, deps);
  if (deps.transcriptSource) return importFromHost(conversation, deps.transcriptSource, deps);
  return { imported: 0, note: "no transcript source" };
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

async function importFromHost(
  conversation: ConversationRecord,
  source: TranscriptSource,
  deps: TranscriptImportDeps,
): Promise<TranscriptImportResult> {
  const state = conversation.bootstrapState;
  let cursor = state?.source === "host" ? state.cursor : undefined;
  const scope = {
    agentId: conversation.agentId,
    sessionId: conversation.sessionId,
    ...(conversation.sessionKey ? { sessionKey: conversation.sessionKey } : {}),
  };
  let imported = 0;
  let read = 0;
  let resets = 0;
  let note: string | undefined;
  let reachedEnd = false;
  const startCursor = cursor;
  const reconciliation = new ImportReconciliation(conversation, deps, cursor === undefined);
  while (read < MAX_IMPORT_MESSAGES) {
    let page = await source.readPage(scope, cursor, PAGE_MESSAGES, PAGE_BYTES);
    if (page.kind === "page" && page.messages.length === 0 && page.requiredBytes !== undefined && page.requiredBytes <= MAX_PAGE_BYTES) {
      page = await source.readPage(scope, cursor, 1, Math.max(PAGE_BYTES, page.requiredBytes));
    }
    if (page.kind === "reset") {
      if (++resets > 1) {
        note = `transcript reader reset twice (${page.reason})`;
        break;
      }
      cursor = page.cursor;
      reconciliation.restart();
      continue;
    }
    if (page.kind !== "page") {
      note = `host transcript ${page.kind}: ${page.reason}`;
      break;
    }
    if (page.messages.length === 0 && page.hasMore) {
      // No progress is possible from here (a message the reader will not return): stop instead of asking again.
      note = `host transcript reader returned no message at the cursor (${page.requiredBytes ?? "unknown"} bytes required)`;
      break;
    }
    read += page.messages.length;
    imported += await appendBatch(conversation, page.messages, reconciliation, deps);
    cursor = page.cursor;
    if (!page.hasMore) {
      reachedEnd = true;
      break;
    }
    if (read >= MAX_IMPORT_MESSAGES) note = `read ${read} messages; the rest follows on later turns`;
  }
  if (cursor !== undefined && (cursor !== startCursor || reconciliation.hasMatches)) {
    await reconciliation.save({ source: "host", cursor, importedAt: deps.clock.now() }, reachedEnd);
  }
  return note ? { imported, note } : { imported };
}

/** The AgentMessage inside one JSONL transcript line, or null for lines that are not messages. */
export function messageFromTranscriptLine(entry: unknown): AgentMessage | null {
  if (entry === null || typeof entry !== "object") return null;
  const record = entry as Record<string, unknown>;
  const nested = record.message;
  if (record.type === "message" && nested && typeof nested === "object" && typeof (nested as AgentMessage).role === "string") {
    return nested as AgentMessage;
  }
  if (typeof record.role === "string" && record.type === undefined) return record as AgentMessage;
  return null;
}

async function importFile(
  conversation: ConversationRecord,
  file: string,
  size: number,
  deps: TranscriptImportDeps,
): Promise<TranscriptImportResult> {
  const state = conversation.bootstrapState;
  const previous = state?.source === "file" && state.file === file ? state : null;
  // A file that shrank was rewritten or truncated: read it again from the start (identity keys dedupe).
  const start = previous && previous.size <= size ? previous.offset : 0;
  if (start === size) return { imported: 0 };

  const end = Math.min(size, start + MAX_IMPORT_BYTES);
  let imported = 0;
  let consumed = start;
  let batch: AgentMessage[] = [];
  const reconciliation = new ImportReconciliation(conversation, deps, start === 0);
  const stream = createReadStream(file, { start, end: size - 1, encoding: "utf8" });
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  try {
    for await (const line of lines) {
      const lineBytes = Buffer.byteLength(line, "utf8") + 1;
      if (consumed + lineBytes > size) break; // a line still being written: read it next time
      consumed += lineBytes;
      const message = parseLine(line, deps.logger);
      if (message) batch.push(message);
      if (batch.length >= BATCH_SIZE) {
        imported += await appendBatch(conversation, batch, reconciliation, deps);
        batch = [];
      }
      if (consumed >= end) break;
    }
    imported += await appendBatch(conversation, batch, reconciliation, deps);
  } finally {
    lines.close();
    stream.destroy();
  }
  await reconciliation.save({ source: "file", file, offset: consumed, size, importedAt: deps.clock.now() }, consumed === size);
  return consumed < size ? { imported, note: `read ${consumed} of ${size} bytes; the rest follows on later turns` } : { imported };
}

function parseLine(line: string, logger: Logger): AgentMessage | null {
  if (line.trim() === "") return null;
  try {
    return messageFromTranscriptLine(JSON.parse(line));
  } catch {
    logger.warn("Skipped a transcript line that is not valid JSON.");
    return null;
  }
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
