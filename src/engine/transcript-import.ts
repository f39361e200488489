/**
 * Bootstrap import of the host's transcript file (JSONL), so installing the plugin on a live agent loses
 * nothing and a commit that failed is recovered on the next turn. The host calls bootstrap on every turn, so the
 * import remembers how far it read (byte offset and size) and reads only what was appended since; a file that
 * shrank was rewritten and is read again from the start (identity keys make that idempotent). Reading is
 * streamed and async, and each call imports at most MAX_IMPORT_BYTES so one call never stalls the gateway.
 */
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { createInterface } from "node:readline";
import type { Clock, Logger, TokenEstimator } from "../contracts.js";
import type { AgentMessage } from "../host/openclaw-types.js";
import type { ConversationRecord } from "../records.js";
import type { ConversationStore, MessageStore } from "../store/store.js";
import { encodeAll } from "./history-import.js";

/** Bytes of transcript read per bootstrap call; the rest is read by the following calls. */
export const MAX_IMPORT_BYTES = 16 * 1024 * 1024;
const BATCH_SIZE = 500;

export interface TranscriptImportDeps {
  store: ConversationStore & MessageStore;
  tokens: TokenEstimator;
  clock: Clock;
  logger: Logger;
}

export interface TranscriptImportResult {
  imported: number;
  /** Set when the import did not (fully) happen, e.g. the file is missing or only partly read. */
  note?: string;
}

/** The AgentMessage inside one transcript line, or null for lines that are not messages. */
export function messageFromTranscriptLine(entry: unknown): AgentMessage | null {
  if (entry === null || typeof entry !== "object") return null;
  const record = entry as Record<string, unknown>;
  const nested = record.message;
  if (record.type === "message" && nested && typeof nested === "object" && typeof (nested as AgentMessage).role === "string") {
    const message = nested as AgentMessage;
    if (message.__openclaw === undefined && typeof record.id === "string") return { ...message, __openclaw: { id: record.id } };
    return message;
  }
  if (typeof record.role === "string" && record.type === undefined) return record as AgentMessage;
  return null;
}

export async function importTranscript(
  conversation: ConversationRecord,
  file: string,
  deps: TranscriptImportDeps,
): Promise<TranscriptImportResult> {
  let size: number;
  try {
    size = (await stat(file)).size;
  } catch {
    return { imported: 0, note: `session file ${file} not found` };
  }
  const previous = conversation.bootstrapState?.file === file ? conversation.bootstrapState : null;
  let start = previous && previous.offset <= size ? previous.offset : 0;
  if (previous && previous.size > size) start = 0; // rewritten or truncated: re-read, identity keys dedupe
  if (start === size) return { imported: 0 };

  const end = Math.min(size, start + MAX_IMPORT_BYTES);
  let imported = 0;
  let consumed = start;
  let batch: AgentMessage[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const { encoded } = encodeAll(batch, deps);
    batch = [];
    imported += (await deps.store.appendMessages(conversation.conversationId, encoded, deps.clock.now())).inserted;
  };

  const stream = createReadStream(file, { start, end: size - 1, encoding: "utf8" });
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  try {
    for await (const line of lines) {
      const lineBytes = Buffer.byteLength(line, "utf8") + 1;
      if (consumed + lineBytes > size) break; // a line still being written: read it next time
      consumed += lineBytes;
      const message = parseLine(line, deps.logger);
      if (message) batch.push(message);
      if (batch.length >= BATCH_SIZE) await flush();
      if (consumed >= end) break;
    }
    await flush();
  } finally {
    lines.close();
    stream.destroy();
  }
  await deps.store.setBootstrapState(conversation.conversationId, {
    file, offset: consumed, size, importedAt: deps.clock.now(),
  });
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
