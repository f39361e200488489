/**
 * Imports a lossless-claw database into LCM's: each peer conversation becomes the conversation OpenClaw's next turn
 * of that session finds (agent from the session key, session id), with its messages (rebuilt host messages stored
 * through LCM's codec), its summary DAG, the context the model last saw (summaries and fresh messages, in order)
 * and its stored files (text and binary alike, byte for byte; tool outputs the peer stored aside become LCM's own
 * file references). Per conversation: a check (every row of it read, nothing written: conversation-check.ts) → files
 * → messages → summaries → context → done, every step recorded in import_map with the rows it wrote, so an
 * interrupted import resumes and a finished one adds nothing, also after the peer pruned other conversations (a
 * conversation is known by its identity, peer-reader.ts). The source is opened read-only and never written. Work
 * is cut into time slices (runtime/time-slice.ts): a transaction writes rows until its slice has run out and
 * commits, reads and planning stop at the slice's end too, and the event loop runs between slices, so an import can
 * run beside a gateway.
 *
 * A dry run runs the same code against a throwaway in-memory database (no file is copied) and reports what would
 * come over; conversations the target already holds from this source are counted as already imported.
 */
import type { Clock, TokenEstimator } from "../../contracts.js";
import { agentIdFromSessionKey, DEFAULT_AGENT_ID } from "../../sessions/session-identity.js";
import { describeError } from "../../errors.js";
import type { LargeFileStorage } from "../../large-files/large-file-storage.js";
import type { ConversationKey } from "../../records.js";
import { DEFAULT_SLICE_MS, TimeSlicer } from "../../runtime/time-slice.js";
import { importContext, importSummaries } from "./dag-phase.js";
import {
  type ConversationCursor, type ImportPhase, INITIAL_CURSOR, type PeerFileOutcome, type PeerImportStore, type SourceConversation,
} from "../../store/peer-import-store.js";
import { emptyWritten, type ImportReport, UnmappedTally } from "./import-report.js";
import { readWholeConversation } from "./conversation-check.js";
import { importMessages, type MessagePhase } from "./message-phase.js";
import { peerTimeToMillis } from "./message-rebuild.js";
import { copyPeerFile } from "./peer-files.js";
import { type PeerConversation, PeerReader } from "./peer-reader.js";
import { detectPeerSchema, openPeerDatabase } from "./peer-schema.js";

export { MESSAGE_PAGE } from "./message-phase.js";

const SOURCE_KIND = "lossless-claw";

export interface LosslessClawImportOptions {
  sourcePath: string;
  /** Where rows are written: the target's store, or an in-memory one for a dry run. */
  store: PeerImportStore;
  /**
   * The target's store when `store` is a dry run's: conversations it holds already are skipped. Undefined (or `store`
   * itself) when `store` is the target.
   */
  target?: PeerImportStore | null;
  /** LCM's large-file store; null in a dry run (files are read and checked, not copied). */
  files: LargeFileStorage | null;
  /** The agent of conversations whose session key names none (0.x kept no session key). Default "main". */
  defaultAgentId?: string;
  tokens: TokenEstimator;
  clock: Clock;
  /** Told after each transaction that wrote messages, and after each conversation: messages handled of all the source holds. */
  onProgress?: (doneMessages: number, totalMessages: number) => void;
  /** Told after every transaction the import commits, with the phase it was in (the last one of a conversation: "done"). */
  onTransaction?: (phase: ImportPhase) => void;
  /** Stops between two transactions (an interrupted import resumes from there next time). */
  signal?: AbortSignal;
  /** How long a transaction or a stretch of reading and planning runs before the event loop gets a turn (default DEFAULT_SLICE_MS; 0: one row per transaction). */
  sliceMs?: number;
}

export async function importLosslessClaw(options: LosslessClawImportOptions): Promise<ImportReport> {
  const started = performance.now();
  const connection = openPeerDatabase(options.sourcePath);
  try {
    return await run(new PeerReader(connection, detectPeerSchema(connection, options.sourcePath)), options, started);
  } finally {
    connection.close();
  }
}

async function run(reader: PeerReader, options: LosslessClawImportOptions, started: number): Promise<ImportReport> {
  const { store, clock } = options;
  const now = clock.now();
  const slicer = new TimeSlicer(options.sliceMs ?? DEFAULT_SLICE_MS);
  await slicer.yield(); // opening both databases (and migrating a new target) ran just before
  const fingerprint = reader.fingerprint();
  const sourceCounts = reader.counts();
  const conversations = reader.conversations();
  await slicer.checkpoint();
  const known = conversations.map((conversation): SourceConversation => ({
    peerConversationId: conversation.conversationId, identity: conversation.identity, sessionId: conversation.sessionId,
    createdAt: peerTimeToMillis(conversation.createdAt) ?? now,
  }));
  const unmapped = new UnmappedTally();
  const written = emptyWritten();
  const sourceId = await store.beginSource({ kind: SOURCE_KIND, fingerprint, path: options.sourcePath, schemaLine: reader.schema.line, now }, known);
  // The target is the store itself unless the store is a dry run's scratch database.
  const target = options.target === undefined || options.target === store ? store : options.target;
  const targetSourceId = target === store ? sourceId : await target?.findSource(SOURCE_KIND, fingerprint, known) ?? null;
  const report: ImportReport = {
    source: { path: options.sourcePath, schemaLine: reader.schema.line, versionRange: reader.schema.versionRange, fingerprint },
    applied: options.files !== null,
    sourceCounts,
    conversations: { total: sourceCounts.conversations, imported: 0, resumed: 0, alreadyImported: 0, archived: 0, notImported: 0 },
    written,
    unmapped: [],
    notImportedTables: reader.otherTableRows(),
    durationMs: 0,
    messagesPerSecond: 0,
  };
  let doneMessages = 0;
  let importedMessages = 0;
  const progress = () => options.onProgress?.(doneMessages, sourceCounts.messages);
  // Every commit is a point where the import may stop (a signal, like a kill, can land between any two transactions).
  const committed = (phase: ImportPhase) => {
    options.onTransaction?.(phase);
    options.signal?.throwIfAborted();
  };
  await slicer.checkpoint();

  for (const conversation of conversations) {
    options.signal?.throwIfAborted();
    await slicer.checkpoint();
    const peerMessages = reader.messageCount(conversation.conversationId);
    const previous = targetSourceId === null || !target ? null : await target.conversationState(targetSourceId, conversation.conversationId);
    if (previous && previous.identity !== null && previous.identity !== conversation.identity) {
      // The peer reused an id (a file rebuilt from scratch beside an old import): never mixed into the other one.
      unmapped.add("conversation: its id is another conversation's already imported from this source (not imported)", String(conversation.conversationId));
      report.conversations.notImported++;
      continue;
    }
    if (previous?.cursor.phase === "done") {
      report.conversations.alreadyImported++;
      const newer = reader.messagesAfter(conversation.conversationId, previous.cursor.afterSeq, previous.cursor.afterMessageId, 1_000).length;
      if (newer > 0) unmapped.add("conversation: messages the peer stored after it was imported (not imported: LCM's conversation went on)", `${conversation.conversationId}: ${newer}${newer === 1_000 ? "+" : ""}`);
      doneMessages += peerMessages;
      progress();
      continue;
    }
    const resumed = target === store ? previous : null;
    if (!resumed) {
      try {
        await readWholeConversation(reader, conversation.conversationId, slicer, options.signal);
      } catch (error) {
        options.signal?.throwIfAborted();
        // Nothing of it was written: the other conversations come over, the report names this one and why.
        unmapped.add("conversation: its rows could not be read to the end (nothing of it written)", `${conversation.conversationId}: ${describeError(error)}`);
        report.conversations.notImported++;
        doneMessages += peerMessages;
        continue;
      }
    }
    if (resumed) report.conversations.resumed++;
    const conversationId = resumed?.conversationId ?? await store.createConversation(
      sourceId, conversation.conversationId, conversation.identity, conversationKeyOf(conversation, options.defaultAgentId),
      peerTimeToMillis(conversation.createdAt) ?? now, now,
    );
    if (!resumed) {
      written.conversations++;
      committed("files");
    }
    const cursor: ConversationCursor = { ...(resumed?.cursor ?? INITIAL_CURSOR) };
    const phase: MessagePhase = {
      reader, store, tokens: options.tokens, now: () => clock.now(), sourceId, conversation, conversationId, cursor, unmapped, written, slicer,
      signal: options.signal,
    };

    if (cursor.phase === "files") {
      await importFiles(phase, options);
      committed("files");
    }
    const before = doneMessages;
    if (cursor.phase === "messages") {
      if (resumed) doneMessages += (await store.importedMessages(sourceId, conversation.conversationId)).size;
      await importMessages(phase, (stored) => {
        doneMessages += stored;
        importedMessages += stored;
        progress();
        committed("messages");
      });
      await store.endMessages(sourceId, conversation.conversationId);
      cursor.phase = "summaries";
      committed("messages");
    }
    doneMessages = before + peerMessages;
    options.signal?.throwIfAborted();
    const dag = await importSummaries(phase, fingerprint, committed);
    await importContext(phase, dag, committed);
    const archive = conversation.active ? null : { at: peerTimeToMillis(conversation.archivedAt) ?? now, reason: `archived by lossless-claw${conversation.archiveCause ? ` (${conversation.archiveCause})` : ""}` };
    if (await store.finishConversation(sourceId, conversationId, conversation.conversationId, archive, clock.now()) === "archived") report.conversations.archived++;
    committed("done");
    report.conversations.imported++;
    progress();
  }
  await store.finishSource(sourceId, clock.now());
  const { rows: blobRows, invalid } = reader.blobTexts;
  if (blobRows.size > 0) {
    const kind = `text: stored by the peer as a BLOB, read as UTF-8${invalid.size > 0 ? ` (${invalid.size} not valid UTF-8: U+FFFD where a byte was not)` : ""}`;
    [...blobRows].forEach((row, index) => unmapped.add(kind, row, index === 0 ? blobRows.size : 0));
  }
  report.unmapped = unmapped.list();
  report.durationMs = Math.round(performance.now() - started);
  report.messagesPerSecond = report.durationMs > 0 ? Math.round((importedMessages * 1_000) / report.durationMs) : 0;
  return report;
}

/** The session key names the agent (`agent:<id>:…`); 0.x kept none, so its conversations go to the default agent. */
export function conversationKeyOf(conversation: PeerConversation, defaultAgentId = DEFAULT_AGENT_ID): ConversationKey {
  const agentId = agentIdFromSessionKey(conversation.sessionKey ?? undefined) ?? defaultAgentId;
  return conversation.sessionKey === null
    ? { agentId, sessionId: conversation.sessionId }
    : { agentId, sessionId: conversation.sessionId, sessionKey: conversation.sessionKey };
}

async function importFiles(phase: MessagePhase, options: LosslessClawImportOptions): Promise<void> {
  const { reader, store, sourceId, conversation, conversationId, unmapped, written } = phase;
  const files = reader.largeFiles(conversation.conversationId);
  const handled = await store.mappedFiles(sourceId, files.map((file) => file.fileId));
  const outcomes: PeerFileOutcome[] = [];
  for (const file of files.filter((entry) => !handled.has(entry.fileId))) {
    options.signal?.throwIfAborted();
    const outcome = await copyPeerFile(file, conversationId, {
      storage: options.files, tokens: options.tokens, now: options.clock.now(), sourcePath: options.sourcePath,
      fileWithHash: async (hash) => await store.fileWithHash(conversationId, hash) ??
        outcomes.find((entry) => entry.record?.contentHash === hash)?.record?.fileId ?? null,
      fileIdTaken: (fileId) => store.fileIdTaken(fileId),
    }).catch((error: unknown): PeerFileOutcome => ({ peerFileId: file.fileId, record: null, targetFileId: null, noteKind: "could not copy", note: describeError(error) }));
    if (outcome.noteKind) unmapped.add(`file: ${outcome.noteKind}`, file.fileId);
    if (outcome.record) written.largeFiles++;
    outcomes.push(outcome);
  }
  await store.storeFiles(sourceId, conversationId, conversation.conversationId, outcomes);
  phase.cursor.phase = "messages";
}
