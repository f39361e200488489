/**
 * The check a peer conversation passes before anything of it is written: every row the import will read of it
 * (messages with their parts, summaries and their edges, context items, stored-file rows) is read once, in the same
 * pages and time slices as the import reads them, and thrown away. A source that cannot be read to the end (a damaged
 * page, a row SQLite refuses) fails here, with nothing of the conversation written, and the import goes on with the
 * next one; a row that reads but does not map (a message the codec refuses) is handled where it is written, so it
 * never stops a conversation half-way either. Reading twice costs little: the second read finds the pages cached.
 * (Rebuilding and encoding every message here too cost 35-45% more CPU on a 30,000-message import and would find
 * nothing more: a refusal is recorded, not thrown.)
 */
import type { TimeSlicer } from "../../runtime/time-slice.js";
import { EDGE_PAGE } from "./dag-phase.js";
import { MESSAGE_PAGE } from "./message-phase.js";
import type { PeerReader } from "./peer-reader.js";

/** Reads the whole conversation; throws what reading throws. */
export async function readWholeConversation(reader: PeerReader, conversationId: number, slicer: TimeSlicer, signal?: AbortSignal): Promise<void> {
  for (let after = { seq: Number.MIN_SAFE_INTEGER, messageId: 0 }; ;) {
    signal?.throwIfAborted();
    await slicer.checkpoint();
    const page = reader.messagesAfter(conversationId, after.seq, after.messageId, MESSAGE_PAGE);
    if (page.length === 0) break;
    reader.partsOf(page.map((message) => message.messageId));
    after = { seq: page.at(-1)!.seq, messageId: page.at(-1)!.messageId };
  }
  await slicer.checkpoint();
  reader.summaries(conversationId);
  reader.summaryParents(conversationId);
  reader.contextItems(conversationId);
  reader.largeFiles(conversationId);
  for (let page = reader.summaryMessagesAfter(conversationId, null, EDGE_PAGE); page.length === EDGE_PAGE;) {
    await slicer.checkpoint();
    page = reader.summaryMessagesAfter(conversationId, page.at(-1)!, EDGE_PAGE);
  }
}
