/**
 * Intercepts large content at ingest: every ingest path (commitTurn, ingest, ingestBatch, afterTurn, assemble's
 * history import, bootstrap) passes its encoded messages through `externalize` before storing them. The threshold
 * is the conversation's: `largeFileTokenThreshold`, or less where the budget is small (`thresholdFor`, spec 011).
 * A message at or above it that is not stored yet has its large `<file>` blocks, pasted text or tool output written to disk,
 * explored, and replaced by a `[LCM File: …]` reference; the rows travel with the message (EncodedMessage
 * .largeFiles) and are written in its transaction. The identity key stays that of the host's original message,
 * so a replay dedupes however the exploration came out. Fail-soft: on any error the message is stored unchanged.
 */
import type { Clock, Logger, TokenEstimator } from "../contracts.js";
import type { LcmConfig } from "../config.js";
import { describeError } from "../errors.js";
import { type EncodedMessage, decodeMessage, encodeMessage, identityKeysOf, isStoredIn } from "../messages/message-codec.js";
import type { ConversationId, ConversationRecord, LargeFileRecord } from "../records.js";
import type { LargeFileStore } from "../store/large-file-store.js";
import type { MessageStore } from "../store/store.js";
import { exploreContent } from "./exploration.js";
import { contentHashOf, fileIdFor, formatCount, formatFileReference } from "./file-reference.js";
import { classifyContent, effectiveMimeType, storedExtension } from "../text/file-types.js";
import type { LargeFileStorage } from "./large-file-storage.js";
import { type LargePiece, planRewrite } from "./message-rewrite.js";
import { type TextCompletion, modelInputCharsFor } from "./text-explorer.js";

/** Roles whose content can hold large files or tool output. */
const INTERCEPTED_ROLES = new Set(["user", "toolResult", "bashExecution"]);

/** Contract: never throws; a message that cannot be externalized is returned as it was, and the failure logged. */
export interface LargeContentExternalizer {
  externalize(conversation: ConversationRecord, messages: EncodedMessage[]): Promise<EncodedMessage[]>;
}

export interface LargeFileInterceptorDeps {
  config: Pick<LcmConfig, "largeFileTokenThreshold" | "summaryTimeoutMs">;
  store: LargeFileStore & Pick<MessageStore, "findExistingIdentities">;
  storage: LargeFileStorage;
  tokens: TokenEstimator;
  clock: Clock;
  logger: Logger;
  /** The model for text exploration summaries; absent means deterministic summaries. */
  completion?: TextCompletion;
  /** The conversation's threshold in tokens (absent: `largeFileTokenThreshold` for every conversation). */
  thresholdFor?: (conversation: ConversationRecord) => number;
}

/** Files stored during one externalize call, by content hash: their rows are not in the database yet. */
type PendingFiles = Map<string, LargeFileRecord>;

export class LargeFileInterceptor implements LargeContentExternalizer {
  constructor(private readonly deps: LargeFileInterceptorDeps) {}

  async externalize(conversation: ConversationRecord, messages: EncodedMessage[]): Promise<EncodedMessage[]> {
    const conversationId = conversation.conversationId;
    const threshold = this.deps.thresholdFor?.(conversation) ?? this.deps.config.largeFileTokenThreshold;
    const candidates = new Set(messages.filter((message) => message.tokenCount >= threshold && INTERCEPTED_ROLES.has(message.role)));
    if (candidates.size === 0) return messages;
    let stored: Set<string>;
    try {
      stored = await this.deps.store.findExistingIdentities(conversationId, [...candidates].flatMap(identityKeysOf));
    } catch (error) {
      this.deps.logger.warn(`Large-file interception skipped: could not check which messages are stored (${describeError(error)}).`);
      return messages;
    }
    const pending: PendingFiles = new Map();
    const result: EncodedMessage[] = [];
    for (const message of messages) {
      const isNew = candidates.has(message) && !isStoredIn(stored, message);
      result.push(isNew ? await this.externalizeMessage(conversation, message, pending, threshold) : message);
    }
    return result;
  }

  private async externalizeMessage(
    conversation: ConversationRecord, message: EncodedMessage, pending: PendingFiles, threshold: number,
  ): Promise<EncodedMessage> {
    const conversationId = conversation.conversationId;
    try {
      const plan = planRewrite(decodeMessage(message), (text) => this.deps.tokens.estimate(text) >= threshold);
      if (!plan) return message;
      const files: LargeFileRecord[] = [];
      for (const piece of plan.pieces) files.push(await this.storeAside(conversation, piece, pending));
      const rewritten = encodeMessage(plan.apply(files.map(formatFileReference)), this.deps.tokens, message.createdAt);
      this.deps.logger.info(
        `Stored ${files.length} large ${files.length === 1 ? "item" : "items"} aside (${files.map((file) => file.fileId).join(", ")}): ` +
          `a ${message.role} message went from ${formatCount(message.tokenCount)} to ${formatCount(rewritten.tokenCount)} tokens.`,
      );
      return {
        ...rewritten, identityKey: message.identityKey, createdAt: message.createdAt, largeFiles: files,
        ...(message.legacyIdentityKey === undefined ? {} : { legacyIdentityKey: message.legacyIdentityKey }),
      };
    } catch (error) {
      this.deps.logger.warn(
        `Large-file interception failed for a ${message.role} message of ${formatCount(message.tokenCount)} tokens; ` +
          `it is stored unchanged (${describeError(error)}).`,
      );
      return message;
    }
  }

  /** Writes the content to disk (once per content per conversation) and explores it; the row is written later. */
  private async storeAside(conversation: ConversationRecord, piece: LargePiece, pending: PendingFiles): Promise<LargeFileRecord> {
    const conversationId = conversation.conversationId;
    const contentHash = contentHashOf(piece.content);
    const known = pending.get(contentHash) ?? (await this.deps.store.findLargeFileByHash(conversationId, contentHash));
    if (known) {
      await this.restoreIfMissing(known, piece.content);
      return known;
    }
    if (pending.size === 0) await this.sweepOrphans(conversationId);
    const fileId = fileIdFor(conversationId, contentHash);
    const kind = classifyContent(piece.fileName, piece.mimeType, piece.content);
    const mimeType = effectiveMimeType(piece.fileName, piece.mimeType, kind);
    const storagePath = await this.deps.storage.write(conversationId, fileId, storedExtension(piece.fileName, mimeType), piece.content);
    // The model writes text summaries only for content past the fixed threshold: content stored aside because a
    // small budget could not hold it (a long message in an 8-32k window) gets the deterministic summary, so a
    // small window never costs a model call per long message.
    const isLargeFile = this.deps.tokens.estimate(piece.content) >= this.deps.config.largeFileTokenThreshold;
    // The model that explores is the session's: its request is sized to the window the host last stated.
    const modelInputChars = modelInputCharsFor(conversation.lastWindowTokens);
    const exploration = await exploreContent({ content: piece.content, fileName: piece.fileName, mimeType, modelInputChars }, kind, {
      ...(this.deps.completion && isLargeFile ? { completion: this.deps.completion } : {}),
      timeoutMs: this.deps.config.summaryTimeoutMs,
      onFallback: (reason) => this.deps.logger.warn(`Exploration of ${fileId}: ${reason}.`),
    });
    const file: LargeFileRecord = {
      fileId,
      conversationId,
      contentHash,
      fileName: piece.fileName,
      mimeType,
      byteSize: Buffer.byteLength(piece.content, "utf8"),
      tokenCount: this.deps.tokens.estimate(piece.content),
      storagePath,
      explorationSummary: piece.note ? `${piece.note}\n${exploration.summary}` : exploration.summary,
      explorer: exploration.explorer,
      origin: piece.origin,
      toolName: piece.toolName,
      createdAt: this.deps.clock.now(),
    };
    pending.set(contentHash, file);
    return file;
  }

  /** The same content again, but its stored copy is gone (deleted by hand): write it back where the row says. */
  private async restoreIfMissing(file: LargeFileRecord, content: string): Promise<void> {
    if (await this.deps.storage.isIntact(file.storagePath, file.byteSize)) return;
    const extension = /\.([a-z0-9]{1,10})$/.exec(file.storagePath)?.[1] ?? "txt";
    const expected = this.deps.storage.pathFor(file.conversationId, file.fileId, extension);
    if (expected !== file.storagePath) {
      this.deps.logger.warn(`Stored file ${file.fileId} is missing at ${file.storagePath}, outside the files directory; not restored.`);
      return;
    }
    await this.deps.storage.write(file.conversationId, file.fileId, extension, content);
    this.deps.logger.info(`Restored the missing stored file ${file.fileId} from a message that carried the same content.`);
  }

  /** Best effort: leftovers of crashed ingests are removed before new files are added to the directory. */
  private async sweepOrphans(conversationId: ConversationId): Promise<void> {
    try {
      const swept = await this.deps.storage.sweepOrphans(conversationId, async (fileId) => (await this.deps.store.getLargeFile(fileId)) !== null);
      const count = swept.removedFiles.length + swept.removedTempFiles.length;
      if (count > 0) this.deps.logger.info(`Removed ${count} orphaned large-file leftovers of conversation ${conversationId}.`);
    } catch (error) {
      // Safe to continue: orphans only cost disk space, and the next interception in this conversation retries.
      this.deps.logger.warn(`Could not sweep orphaned large files of conversation ${conversationId}: ${describeError(error)}.`);
    }
  }
}
