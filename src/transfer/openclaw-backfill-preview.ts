/**
 * The dry run of `lcm import openclaw`: for one host session, what the backfill (openclaw-backfill.ts) would store,
 * found without storing anything. Reads the transcript the way bootstrap does (engine/transcript-import.ts): a file
 * from the conversation's byte cursor to its last complete line (from the start when the file shrank), the host's
 * store from its cursor, page by page. Messages are encoded as bootstrap encodes them and counted unless their
 * identity is already stored (or came earlier in the same transcript), so a session whose cursor lags behind what
 * the gateway stored counts only what is missing. The database is only read; with none yet, every session is new.
 * Large content stored aside as files is not predicted (that needs the interceptor's writes).
 */
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { createInterface } from "node:readline";
import type { Clock, Logger, TokenEstimator } from "../contracts.js";
import { describeError } from "../errors.js";
import { encodeAll } from "../engine/history-import.js";
import type { SessionFilter } from "../engine/session-filter.js";
import { messageFromTranscriptLine, PAGE_BYTES } from "../engine/transcript-import.js";
import type { TranscriptSource } from "../engine/transcript-source.js";
import type { AgentMessage } from "../host/openclaw-types.js";
import { identityKeysOf, isStoredIn } from "../messages/message-codec.js";
import type { ConversationRecord } from "../records.js";
import type { ConversationStore, MessageStore } from "../store/store.js";
import type { HostSession, SessionBackfill } from "./openclaw-backfill.js";

/** Messages encoded and checked against the store at a time. */
const BATCH_SIZE = 500;
/** Messages per page of the host reader (as bootstrap asks). */
const PAGE_MESSAGES = 250;
/** The host reader's own limit for one message (a larger one cannot be read by bootstrap either). */
const MAX_PAGE_BYTES = 64 * 1024 * 1024;

export interface BackfillPreviewDeps {
  /** The database, read only; null when there is none yet (every session would be new). */
  store: Pick<ConversationStore & MessageStore, "findConversation" | "findExistingIdentities"> | null;
  tokens: TokenEstimator;
  clock: Clock;
  logger: Logger;
  transcriptSource?: TranscriptSource;
  filter: Pick<SessionFilter, "treatmentOf">;
}

/**
 * What `backfillSession` would do with the session: the same statuses, `imported` counting the messages it would
 * store, `conversationId` null for a conversation it would create. Contract: never throws, never writes; a failure
 * to read is reported in the result.
 */
export async function previewSessionBackfill(session: HostSession, deps: BackfillPreviewDeps): Promise<SessionBackfill> {
  const result: SessionBackfill = {
    agentId: session.agentId, sessionId: session.sessionId, sessionKey: session.sessionKey,
    source: session.transcriptFile ? "file" : deps.transcriptSource ? "host" : null, conversationId: null, status: "up-to-date", imported: 0, note: null,
  };
  if (deps.filter.treatmentOf(session.sessionKey ?? undefined) !== "store") {
    return { ...result, status: "ignored", note: "the session's key matches ignoreSessionPatterns or statelessSessionPatterns" };
  }
  if (result.source === null) {
    return { ...result, status: "unavailable", note: "no transcript file, and the host's transcript reader is not available here (run it as `openclaw lcm import openclaw`)" };
  }
  try {
    const existing = (await deps.store?.findConversation({ agentId: session.agentId, sessionId: session.sessionId })) ?? null;
    if (!existing && session.transcriptFile && (await stat(session.transcriptFile)).size === 0) return { ...result, status: "empty" };
    result.conversationId = existing?.conversationId ?? null;
    const counter = new FreshMessageCounter(existing, deps);
    const read = session.transcriptFile
      ? await readFile(session.transcriptFile, existing, counter, deps.logger)
      : await readHost(session, existing, deps.transcriptSource!, counter);
    result.imported = counter.fresh;
    if (read.note !== null) {
      result.note = read.note;
      if (counter.fresh === 0 && !read.advanced) result.status = "unavailable";
    }
    if (result.status === "up-to-date" && result.imported > 0) result.status = "imported";
    return result;
  } catch (error) {
    return { ...result, status: "failed", note: describeError(error) };
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

  async add(messages: AgentMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const { encoded } = await encodeAll(messages, this.deps);
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

interface ReadOutcome {
  /** Whether anything past the cursor was read. */
  advanced: boolean;
  note: string | null;
}

/** From the bootstrap cursor to the last complete line, as importFile reads it (without its per-call bound). */
async function readFile(file: string, conversation: ConversationRecord | null, counter: FreshMessageCounter, logger: Logger): Promise<ReadOutcome> {
  const size = (await stat(file)).size;
  const state = conversation?.bootstrapState;
  const previous = state?.source === "file" && state.file === file ? state : null;
  const start = previous && previous.size <= size ? previous.offset : 0;
  if (start >= size) return { advanced: false, note: null };
  let consumed = start;
  let batch: AgentMessage[] = [];
  const stream = createReadStream(file, { start, end: size - 1, encoding: "utf8" });
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  try {
    for await (const line of lines) {
      const lineBytes = Buffer.byteLength(line, "utf8") + 1;
      if (consumed + lineBytes > size) break; // a line still being written: bootstrap reads it next time
      consumed += lineBytes;
      const message = parseLine(line, logger);
      if (message) batch.push(message);
      if (batch.length >= BATCH_SIZE) {
        await counter.add(batch);
        batch = [];
      }
    }
    await counter.add(batch);
  } finally {
    lines.close();
    stream.destroy();
  }
  return { advanced: consumed > start, note: null };
}

/** From the host cursor to the end of the host's transcript, page by page, as importFromHost reads it. */
async function readHost(
  session: HostSession, conversation: ConversationRecord | null, source: TranscriptSource, counter: FreshMessageCounter,
): Promise<ReadOutcome> {
  const state = conversation?.bootstrapState;
  let cursor = state?.source === "host" ? state.cursor : undefined;
  const scope = { agentId: session.agentId, sessionId: session.sessionId, ...(session.sessionKey ? { sessionKey: session.sessionKey } : {}) };
  let advanced = false;
  let resets = 0;
  for (;;) {
    let page = await source.readPage(scope, cursor, PAGE_MESSAGES, PAGE_BYTES);
    if (page.kind === "page" && page.messages.length === 0 && page.requiredBytes !== undefined && page.requiredBytes <= MAX_PAGE_BYTES) {
      page = await source.readPage(scope, cursor, 1, Math.max(PAGE_BYTES, page.requiredBytes));
    }
    if (page.kind === "reset") {
      if (++resets > 1) return { advanced, note: `transcript reader reset twice (${page.reason})` };
      cursor = page.cursor;
      continue;
    }
    if (page.kind !== "page") return { advanced, note: `host transcript ${page.kind}: ${page.reason}` };
    if (page.messages.length === 0 && page.hasMore) {
      return { advanced, note: `host transcript reader returned no message at the cursor (${page.requiredBytes ?? "unknown"} bytes required)` };
    }
    await counter.add(page.messages);
    advanced ||= page.cursor !== cursor;
    cursor = page.cursor;
    if (!page.hasMore) return { advanced, note: null };
  }
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
