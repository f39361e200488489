/**
 * A 100,000-message lossless-claw database (1.x line, one long conversation the peer compacted: a leaf summary per
 * 100 messages, a condensed one per 10 leaves, the last 100 messages fresh): the large-import test and
 * bench/import-block.ts read it.
 */
import { PeerWriter } from "./peer-fixtures.js";

export const LARGE_PEER = { messages: 100_000, perLeaf: 100, leavesPerCondensed: 10, fresh: 100 } as const;

export function buildLargePeer(path: string, messages: number = LARGE_PEER.messages): void {
  const { perLeaf, leavesPerCondensed, fresh } = LARGE_PEER;
  const peer = new PeerWriter(path, "1.x");
  const conversation = peer.conversation("large-session", { sessionKey: "agent:main:main" });
  const ids: number[] = [];
  peer.batch(() => {
    for (let index = 0; index < messages; index++) {
      const message = index % 2 === 0
        ? { role: "user", content: `question ${index} about topic${index % 977} and marker${index}`, timestamp: 0 }
        : { role: "assistant", content: [{ type: "text", text: `answer ${index}: detail${index % 613} resolved with step ${index}` }], timestamp: 0 };
      ids.push(peer.message(conversation, message, { inContext: false }));
    }
    const leaves: string[] = [];
    for (let start = 0; start + perLeaf <= messages - fresh; start += perLeaf) {
      const id = `sum_${(leaves.length + 1).toString(16).padStart(16, "0")}`;
      peer.summary(conversation, id, "leaf", `Messages ${start}-${start + perLeaf - 1}: topics and markers.`, ids.slice(start, start + perLeaf));
      leaves.push(id);
    }
    for (let start = 0; start < leaves.length; start += leavesPerCondensed) {
      const id = `sum_f${(start + 1).toString(16).padStart(15, "0")}`;
      peer.summary(conversation, id, "condensed", `Leaves ${start}-${start + leavesPerCondensed - 1} condensed.`, leaves.slice(start, start + leavesPerCondensed));
      peer.contextItem(conversation, { summaryId: id });
    }
    for (const id of ids.slice(messages - fresh)) peer.contextItem(conversation, { messageId: id });
  });
  peer.close();
}
