/**
 * The check a peer conversation passes before anything of it is written: every value the import will read of it
 * (messages with their parts, summaries and their edges, context items, stored-file rows) is read once inside SQLite
 * (summed lengths: nothing is copied out), in pages between time-slice checkpoints. A source that cannot be read to
 * the end (a damaged page, a row SQLite refuses) fails here, with nothing of the conversation written, and the import
 * goes on with the next one; a row that reads but does not map (a message the codec refuses) is handled where it is
 * written, so it never stops a conversation half-way either. The import then finds the pages cached.
 */
import type { TimeSlicer } from "../../runtime/time-slice.js";
import { EDGE_PAGE } from "./dag-phase.js";
import { MESSAGE_PAGE } from "./message-phase.js";
import type { PeerReader } from "./peer-reader.js";

/** Messages (with their parts) read per check query: nothing is copied out, so a page costs a fraction of an import's. */
const CHECK_PAGE = 2 * MESSAGE_PAGE;

/** Reads the whole conversation; throws what reading throws. */
export async function readWholeConversation(reader: PeerReader, conversationId: number, slicer: TimeSlicer, signal?: AbortSignal): Promise<void> {
  for (let after = { seq: Number.MIN_SAFE_INTEGER, messageId: 0 }; ;) {
    signal?.throwIfAborted();
    await slicer.checkpoint();
    const { last } = reader.checkMessagesAfter(conversationId, after.seq, after.messageId, CHECK_PAGE);
    if (last === null) break;
    after = last;
  }
  await slicer.checkpoint();
  reader.checkConversationRest(conversationId);
  for (let after = reader.checkSummaryMessagesAfter(conversationId, null, EDGE_PAGE); after !== null;) {
    signal?.throwIfAborted();
    await slicer.checkpoint();
    after = reader.checkSummaryMessagesAfter(conversationId, after, EDGE_PAGE);
  }
}
