/**
 * Imports a lossless-claw database into LCM's: each peer conversation becomes the conversation OpenClaw's next turn
 * of that session finds (agent from the session key, session id), with its messages (rebuilt host messages stored
 * through LCM's codec), its summary DAG, the context the model last saw (summaries and fresh messages, in order)
 * and its stored files (text and binary alike, byte for byte). Per conversation: files → messages → summaries →
 * context → done, every step recorded in import_map with the rows it wrote, so an interrupted import resumes and a
 * finished one adds nothing. The source is opened read-only and never written. Work is cut into time slices
 * (runtime/time-slice.ts): a transaction writes rows until its slice has run out and commits, reads and planning
 * stop at the slice's end too, and the event loop runs between slices, so an import can run beside a gateway.
 *
 * A dry run runs the same code against a throwaway in-memory database (no file is copied) and reports what would
 * come over; conversations the target already holds from this source are counted as already imported.
 */
import type { Clock, TokenEstimator } from "../../contracts.js";
import { agentIdFromSessionKey, DEFAULT_AGENT_ID } from "../../engine/session-identity.js";
import { describeError } from "../../errors.js";
import type { LargeFileStorage } from "../../large-files/large-file-storage.js";
import { encodeMessage } from "../../messages/message-codec.js";
import type { ConversationKey } from "../../records.js";
import { DEFAULT_SLICE_MS, TimeSlicer } from "../../runtime/time-slice.js";
import { transcriptMatchKeyOf } from "../transcript-match.js";
import { type ConversationCursor, type ContextItemInput, INITIAL_CURSOR, type MessageToStore, type SqliteImportStore } from "./import-store.js";
import { emptyWritten, type ImportReport, UnmappedTally } from "./import-report.js";
import { peerTimeToMillis, rebuildPeerMessage } from "./message-rebuild.js";
import { copyPeerFile, type FileOutcome } from "./peer-files.js";
import { type PeerConversation, PeerReader } from "./peer-reader.js";
import { detectPeerSchema, openPeerDatabase } from "./peer-schema.js";
import { type ImportedMessage, planSummaries, type SummaryEdges, summaryIdFor } from "./summary-plan.js";

/**
 * Peer messages read at once (with their parts): 3-8 ms at 200. They are then written in as many transactions as
 * their time slices need, so a page is at most this many messages per transaction, usually one transaction.
 */
export const MESSAGE_PAGE = 200;
/** Rows per read of the source's summary edges (2-5 ms each). */
const EDGE_PAGE = 2_000;
const SOURCE_KIND = "lossless-claw";

export interface LosslessClawImportOptions {
  sourcePath: string;
  /** Where rows are written: the target's store, or an in-memory one for a dry run. */
  store: SqliteImportStore;
  /** The target's store when `store` is a dry run's: conversations it holds already are skipped. */
  target?: SqliteImportStore | null;
  /** LCM's large-file store; null in a dry run (files are read and checked, not copied). */
  files: LargeFileStorage | null;
  /** The agent of conversations whose session key names none (0.x kept no session key). Default "main". */
  defaultAgentId?: string;
  tokens: TokenEstimator;
  clock: Clock;
  /** Told after each transaction that wrote messages, and after each conversation: messages handled of all the source holds. */
  onProgress?: (doneMessages: number, totalMessages: number) => void;
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
  await slicer.checkpoint();
  const unmapped = new UnmappedTally();
  const written = emptyWritten();
  const sourceId = await store.beginSource({ kind: SOURCE_KIND, fingerprint, path: options.sourcePath, schemaLine: reader.schema.line, now });
  const target = options.target === undefined ? store : options.target;
  const targetSourceId = target === store ? sourceId : target?.findSource(SOURCE_KIND, fingerprint) ?? null;
  const report: ImportReport = {
    source: { path: options.sourcePath, schemaLine: reader.schema.line, versionRange: reader.schema.versionRange, fingerprint },
    applied: options.files !== null,
    sourceCounts,
    conversations: { total: sourceCounts.conversations, imported: 0, resumed: 0, alreadyImported: 0, archived: 0 },
    written,
    unmapped: [],
    notImportedTables: reader.otherTableRows(),
    durationMs: 0,
    messagesPerSecond: 0,
  };
  let doneMessages = 0;
  let importedMessages = 0;
  const progress = () => options.onProgress?.(doneMessages, sourceCounts.messages);
  await slicer.checkpoint();

  for (const conversation of reader.conversations()) {
    options.signal?.throwIfAborted();
    await slicer.checkpoint();
    const previous = targetSourceId === null || !target ? null : target.conversationState(targetSourceId, conversation.conversationId);
    if (previous?.cursor.phase === "done") {
      report.conversations.alreadyImported++;
      doneMessages += reader.messageCount(conversation.conversationId);
      progress();
      continue;
    }
    const resumed = target === store ? previous : null;
    if (resumed) report.conversations.resumed++;
    const conversationId = resumed?.conversationId ??
      await store.createConversation(sourceId, conversation.conversationId, conversationKeyOf(conversation, options.defaultAgentId), peerTimeToMillis(conversation.createdAt) ?? now, now);
    if (!resumed) written.conversations++;
    const cursor: ConversationCursor = { ...(resumed?.cursor ?? INITIAL_CURSOR) };
    const step: Step = { reader, options, sourceId, conversation, conversationId, cursor, unmapped, written, slicer };

    if (cursor.phase === "files") await importFiles(step);
    const before = doneMessages;
    if (cursor.phase === "messages") {
      if (resumed) doneMessages += (await store.importedMessages(sourceId, conversation.conversationId)).size;
      await importMessages(step, (stored) => {
        doneMessages += stored;
        importedMessages += stored;
        progress();
      });
      await store.endMessages(sourceId, conversation.conversationId);
      cursor.phase = "summaries";
    }
    doneMessages = before + reader.messageCount(conversation.conversationId);
    options.signal?.throwIfAborted();
    // Planned again on a resumed run (cheap next to writing): the context needs the summaries' token counts.
    const messages = await store.importedMessages(sourceId, conversation.conversationId);
    await slicer.checkpoint();
    const peerSummaries = reader.summaries(conversation.conversationId);
    await slicer.checkpoint();
    const edges: SummaryEdges = { messages: await summaryMessagesOf(reader, conversation.conversationId, slicer), parents: summaryParentsOf(reader, conversation.conversationId) };
    const plan = await planSummaries(peerSummaries, edges, messages, options.tokens, () => slicer.checkpoint());
    if (cursor.phase === "summaries") {
      for (const entry of plan.unmapped) unmapped.add(`summary: ${entry.reason}`, entry.peerSummaryId);
      if (plan.droppedEdges > 0) unmapped.add("summary edge to a source not imported (another conversation's, or excluded)", `conversation ${conversation.conversationId}`, plan.droppedEdges);
      await slicer.checkpoint();
      const done = store.summaryRowIds(sourceId, plan.summaries.map((summary) => summary.peerSummaryId));
      const waiting = plan.summaries.filter((summary) => !done.has(summary.peerSummaryId));
      for (let index = 0; index < waiting.length;) {
        options.signal?.throwIfAborted();
        await slicer.checkpoint();
        const stored = await store.storeSummaries(sourceId, conversationId, waiting.slice(index), (peerId) => summaryIdFor(`${fingerprint}:${peerId}`), slicer);
        for (const summary of waiting.slice(index, index + stored)) {
          written.summaryMessages += summary.messageIds.length;
          written.summaryParents += summary.parentPeerIds.length;
        }
        written.summaries += stored;
        index += stored;
        await slicer.yield();
      }
      await store.endSummaries(sourceId, conversation.conversationId);
      cursor.phase = "context";
    }
    if (cursor.phase === "context") {
      await importContext(step, messages, new Map(plan.summaries.map((summary) => [summary.peerSummaryId, summary.contextTokens])));
    }
    const archive = conversation.active ? null : { at: peerTimeToMillis(conversation.archivedAt) ?? now, reason: `archived by lossless-claw${conversation.archiveCause ? ` (${conversation.archiveCause})` : ""}` };
    if (await store.finishConversation(sourceId, conversationId, conversation.conversationId, archive, clock.now()) === "archived") report.conversations.archived++;
    report.conversations.imported++;
    progress();
  }
  await store.finishSource(sourceId, clock.now());
  report.unmapped = unmapped.list();
  report.durationMs = Math.round(performance.now() - started);
  report.messagesPerSecond = report.durationMs > 0 ? Math.round((importedMessages * 1_000) / report.durationMs) : 0;
  return report;
}

interface Step {
  reader: PeerReader;
  options: LosslessClawImportOptions;
  sourceId: number;
  conversation: PeerConversation;
  conversationId: number;
  cursor: ConversationCursor;
  unmapped: UnmappedTally;
  written: ImportReport["written"];
  slicer: TimeSlicer;
}

/** The session key names the agent (`agent:<id>:…`); 0.x kept none, so its conversations go to the default agent. */
export function conversationKeyOf(conversation: PeerConversation, defaultAgentId = DEFAULT_AGENT_ID): ConversationKey {
  const agentId = agentIdFromSessionKey(conversation.sessionKey ?? undefined) ?? defaultAgentId;
  return conversation.sessionKey === null
    ? { agentId, sessionId: conversation.sessionId }
    : { agentId, sessionId: conversation.sessionId, sessionKey: conversation.sessionKey };
}

async function importFiles(step: Step): Promise<void> {
  const { reader, options, sourceId, conversation, conversationId, unmapped, written } = step;
  const files = reader.largeFiles(conversation.conversationId);
  const handled = options.store.mappedFiles(sourceId, files.map((file) => file.fileId));
  const outcomes: FileOutcome[] = [];
  for (const file of files.filter((entry) => !handled.has(entry.fileId))) {
    const outcome = await copyPeerFile(file, conversationId, {
      storage: options.files, tokens: options.tokens, now: options.clock.now(), sourcePath: options.sourcePath,
      fileWithHash: (hash) => options.store.fileWithHash(conversationId, hash) ??
        outcomes.find((entry) => entry.record?.contentHash === hash)?.record?.fileId ?? null,
      fileIdTaken: (fileId) => options.store.fileIdTaken(fileId),
    }).catch((error: unknown) => ({ peerFileId: file.fileId, record: null, targetFileId: null, note: `could not copy: ${describeError(error)}` }));
    if (outcome.note) unmapped.add(`file: ${outcome.note.replace(/ at .*$| \(\d+ bytes.*$|file_[a-f0-9]{16}/g, "").trim()}`, file.fileId);
    if (outcome.record) written.largeFiles++;
    outcomes.push(outcome);
  }
  await options.store.storeFiles(sourceId, conversationId, conversation.conversationId, outcomes);
  step.cursor.phase = "messages";
}

/**
 * Reads, rebuilds, encodes and stores the conversation's messages after the cursor, a page at a time; each page is
 * written in as many transactions as their time slices need, `onStored` told after each.
 */
async function importMessages(step: Step, onStored: (count: number) => void): Promise<void> {
  const { reader, options, sourceId, conversation, conversationId, cursor, unmapped, written, slicer } = step;
  for (;;) {
    options.signal?.throwIfAborted();
    await slicer.checkpoint();
    const page = reader.messagesAfter(conversation.conversationId, cursor.afterSeq, cursor.afterMessageId, MESSAGE_PAGE);
    if (page.length === 0) return;
    const parts = reader.partsOf(page.map((message) => message.messageId));
    const now = options.clock.now();
    const encoded: MessageToStore[] = [];
    for (const peer of page) {
      await slicer.checkpoint();
      const { message, inexact } = rebuildPeerMessage(peer, parts.get(peer.messageId) ?? []);
      for (const reason of inexact) unmapped.add(`message: ${reason}`, `${conversation.conversationId}/${peer.messageId}`);
      const stored = encodeMessage(message, options.tokens, peerTimeToMillis(peer.createdAt) ?? now);
      encoded.push({ peerMessageId: peer.messageId, peerSeq: peer.seq, encoded: stored, matchKey: transcriptMatchKeyOf(message) });
    }
    for (let index = 0; index < encoded.length;) {
      options.signal?.throwIfAborted();
      await slicer.checkpoint();
      const chunk = encoded.slice(index);
      const stored = (await options.store.storeMessages(sourceId, conversationId, conversation.conversationId, chunk, now, slicer)).length;
      for (const entry of chunk.slice(0, stored)) written.messageParts += entry.encoded.parts.length;
      const last = chunk[stored - 1]!;
      cursor.afterSeq = last.peerSeq;
      cursor.afterMessageId = last.peerMessageId;
      written.messages += stored;
      index += stored;
      onStored(stored);
      await slicer.yield();
    }
  }
}

/** The peer's context, in its order, as LCM context items; resumes after the items already written. */
async function importContext(step: Step, messages: ReadonlyMap<number, ImportedMessage>, summaryTokens: ReadonlyMap<string, number>): Promise<void> {
  const { reader, options, sourceId, conversation, conversationId, cursor, unmapped, written, slicer } = step;
  const peerItems = reader.contextItems(conversation.conversationId);
  const summaryRows = options.store.summaryRowIds(sourceId, peerItems.flatMap((item) => item.summaryId ?? []));
  const items: (ContextItemInput & { seq: number })[] = [];
  for (const item of peerItems) {
    const example = `${conversation.conversationId}#${item.ordinal}`;
    if (item.messageId !== null) {
      const message = messages.get(item.messageId);
      if (!message) unmapped.add("context item: message not in this conversation", example);
      else if (message.excluded) unmapped.add("context item: message LCM never assembles (system or unknown role)", example);
      else items.push({ messageId: message.messageId, summaryRowId: null, tokenCount: message.tokenCount, flags: message.itemFlags, isMessage: true, seq: message.seq });
    } else if (item.summaryId !== null) {
      const rowId = summaryRows.get(item.summaryId);
      if (rowId === undefined) unmapped.add("context item: summary not imported", example);
      else items.push({ messageId: null, summaryRowId: rowId, tokenCount: summaryTokens.get(item.summaryId) ?? 0, flags: 0, isMessage: false, seq: 0 });
    }
  }
  for (let index = cursor.contextItems; index < items.length;) {
    options.signal?.throwIfAborted();
    await slicer.checkpoint();
    const stored = await options.store.storeContext(sourceId, conversationId, conversation.conversationId, items.slice(index), index, slicer);
    written.contextItems += stored;
    index += stored;
    await slicer.yield();
  }
  cursor.contextItems = items.length;
}

/** Every leaf → message edge of the conversation, grouped by leaf, read in pages within the time slices. */
async function summaryMessagesOf(reader: PeerReader, conversationId: number, slicer: TimeSlicer): Promise<SummaryEdges["messages"]> {
  const edges = new Map<string, number[]>();
  for (let page = reader.summaryMessagesAfter(conversationId, null, EDGE_PAGE); page.length > 0;) {
    for (const edge of page) {
      const list = edges.get(edge.summaryId);
      if (list) list.push(edge.messageId);
      else edges.set(edge.summaryId, [edge.messageId]);
    }
    if (page.length < EDGE_PAGE) break;
    await slicer.checkpoint();
    page = reader.summaryMessagesAfter(conversationId, page.at(-1)!, EDGE_PAGE);
  }
  return edges;
}

/** Every condensed → summary edge of the conversation, grouped by condensed summary (one per ten summaries or so). */
function summaryParentsOf(reader: PeerReader, conversationId: number): SummaryEdges["parents"] {
  const edges = new Map<string, string[]>();
  for (const edge of reader.summaryParents(conversationId)) {
    const list = edges.get(edge.summaryId);
    if (list) list.push(edge.parentSummaryId);
    else edges.set(edge.summaryId, [edge.parentSummaryId]);
  }
  return edges;
}
