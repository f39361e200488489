/**
 * The messages of one peer conversation: read in pages, rebuilt as the host messages they were (message-rebuild.ts),
 * encoded by LCM's codec and stored, a time slice per transaction. A message the codec refuses (a role it cannot
 * take, content nested too deeply to serialize) is not stored: its map row says why, the report names it, and the
 * import goes on with the next one, so one bad row never stops the rest or a later run.
 */
import { describeError } from "../../errors.js";
import { formatFileReference } from "../../large-files/file-reference.js";
import { encodeMessage } from "../../messages/message-codec.js";
import type { TimeSlicer } from "../../runtime/time-slice.js";
import { transcriptMatchKeyOf } from "../../ingest/transcript-match.js";
import type { ConversationCursor, ImportedFile, MessageToStore, PeerImportStore } from "../../store/peer-import-store.js";
import type { ImportReport, UnmappedTally } from "./import-report.js";
import { type FileReferenceOf, peerTimeToMillis, rebuildPeerMessage } from "./message-rebuild.js";
import type { PeerConversation, PeerMessage, PeerPart, PeerReader } from "./peer-reader.js";
import type { TokenEstimator } from "../../contracts.js";

/**
 * Peer messages read at once (with their parts): 3-8 ms at 200. They are then written in as many transactions as
 * their time slices need, so a page is at most this many messages per transaction, usually one transaction.
 */
export const MESSAGE_PAGE = 200;

export interface MessagePhase {
  reader: PeerReader;
  store: PeerImportStore;
  tokens: TokenEstimator;
  now: () => number;
  sourceId: number;
  conversation: PeerConversation;
  conversationId: number;
  cursor: ConversationCursor;
  unmapped: UnmappedTally;
  written: ImportReport["written"];
  slicer: TimeSlicer;
  signal?: AbortSignal | undefined;
}

/**
 * Reads, rebuilds, encodes and stores the conversation's messages after the cursor, a page at a time; each page is
 * written in as many transactions as their time slices need, `onHandled` told after each with the messages stored.
 */
export async function importMessages(phase: MessagePhase, onHandled: (stored: number) => void): Promise<void> {
  const { reader, store, sourceId, conversation, conversationId, cursor, unmapped, written, slicer } = phase;
  const files = await store.importedFiles(sourceId, conversationId);
  const reference: FileReferenceOf = (peerFileId) => {
    const file: ImportedFile | undefined = files.get(peerFileId);
    return file ? formatFileReference(file) : null;
  };
  for (;;) {
    phase.signal?.throwIfAborted();
    await slicer.checkpoint();
    const page = reader.messagesAfter(conversation.conversationId, cursor.afterSeq, cursor.afterMessageId, MESSAGE_PAGE);
    if (page.length === 0) return;
    const parts = reader.partsOf(page.map((message) => message.messageId));
    const now = phase.now();
    const toStore: MessageToStore[] = [];
    for (const peer of page) {
      await slicer.checkpoint();
      const example = `${conversation.conversationId}/${peer.messageId}`;
      const rebuilt = encodePeer(peer, parts.get(peer.messageId) ?? [], reference, phase.tokens, now);
      for (const reason of rebuilt.inexact) unmapped.add(`message: ${reason}`, example);
      if (rebuilt.encoded === null) unmapped.add("message: refused by LCM's codec (not imported; the report's example names it)", `${example}: ${rebuilt.refused}`);
      toStore.push(rebuilt.encoded === null
        ? { peerMessageId: peer.messageId, peerSeq: peer.seq, encoded: null, refused: rebuilt.refused }
        : { peerMessageId: peer.messageId, peerSeq: peer.seq, encoded: rebuilt.encoded, matchKey: rebuilt.matchKey, toolOutputs: rebuilt.toolOutputs });
    }
    for (let index = 0; index < toStore.length;) {
      phase.signal?.throwIfAborted();
      await slicer.checkpoint();
      const chunk = toStore.slice(index);
      const { stored, handled } = await store.storeMessages(sourceId, conversationId, conversation.conversationId, chunk, now, slicer);
      for (const entry of chunk.slice(0, handled)) written.messageParts += entry.encoded?.parts.length ?? 0;
      const last = chunk[handled - 1]!;
      cursor.afterSeq = last.peerSeq;
      cursor.afterMessageId = last.peerMessageId;
      written.messages += stored.length;
      index += handled;
      onHandled(stored.length);
      await slicer.yield();
    }
  }
}

type EncodedPeer =
  | { encoded: NonNullable<MessageToStore["encoded"]>; matchKey: string; inexact: string[]; toolOutputs: { fileId: string; toolName: string | null }[]; refused?: undefined }
  | { encoded: null; refused: string; inexact: string[] };

/** One peer message rebuilt and encoded, or why the codec (or the rebuild) refused it. */
function encodePeer(peer: PeerMessage, parts: readonly PeerPart[], reference: FileReferenceOf, tokens: TokenEstimator, now: number): EncodedPeer {
  let inexact: string[] = [];
  try {
    const rebuilt = rebuildPeerMessage(peer, parts, reference);
    inexact = rebuilt.inexact;
    const encoded = encodeMessage(rebuilt.message, tokens, peerTimeToMillis(peer.createdAt) ?? now);
    return {
      encoded, matchKey: transcriptMatchKeyOf(rebuilt.message), inexact,
      toolOutputs: rebuilt.toolOutputs.map((output) => ({ fileId: output.peerFileId, toolName: output.toolName })),
    };
  } catch (error) {
    return { encoded: null, refused: describeError(error), inexact };
  }
}
