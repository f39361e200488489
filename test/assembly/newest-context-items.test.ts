/**
 * One assemble call's context items (NewestContextItems): every request is answered as the store answers it, and the
 * store is asked only for items the call has not read yet (the selection, the memory floor's search and the second
 * selection walk down from the newest item again).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { NewestContextItems } from "../../src/assembly/newest-context-items.js";
import type { ContextItemRecord } from "../../src/records.js";
import { openTestBackend, type TestBackend } from "../helpers/backends.js";
import { createTestEngine } from "../helpers/engine.js";
import { conversation } from "../helpers/messages.js";

describe("an assemble call's context items", () => {
  let opened: TestBackend;
  beforeEach(async () => {
    opened = await openTestBackend("sqlite");
  });
  afterEach(async () => {
    await opened.close();
  });

  /** A conversation of 20 exchanges (40 context items) committed in one turn; its id. */
  async function storeConversation(): Promise<number> {
    const harness = createTestEngine({ backend: opened.backend });
    await harness.newEngine().commitTurn({ sessionId: "s1", advancementKey: "k1", messages: conversation(20) });
    return (await harness.store.findConversation({ agentId: "main", sessionId: "s1" }))!.conversationId;
  }

  /** The store's listContextNewestFirst answering after `delayMs`, each item it serves recorded in `served`. */
  function recordingStore(served: number[], delayMs: number) {
    return {
      listContextNewestFirst: async (id: number, before: number | null, limit: number): Promise<ContextItemRecord[]> => {
        if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
        const page = await opened.backend.store.listContextNewestFirst(id, before, limit);
        served.push(...page.map((item) => item.ordinal));
        return page;
      },
    };
  }

  it("answers each request as the store does and reads each item from the store once", async () => {
    const conversationId = await storeConversation();
    const store = opened.backend.store;
    const served: number[] = [];
    const items = new NewestContextItems(recordingStore(served, 0), conversationId);
    const all = await store.listContextNewestFirst(conversationId, null, 100);
    expect(all).toHaveLength(40);
    const ordinal = (index: number) => all[index]!.ordinal;
    // A selection's pages, the floor's search from inside them, a lookup of one item, a second selection, past the end.
    const requests: [number | null, number][] = [
      [null, 8], [ordinal(7), 16], [ordinal(20) + 1, 16], [ordinal(12) + 1, 1], [null, 8], [ordinal(7), 16], [ordinal(30), 16], [ordinal(39), 4], [ordinal(0) + 5, 3], [null, 0],
    ];
    for (const [before, limit] of requests) {
      expect(await items.page(before, limit)).toEqual(await store.listContextNewestFirst(conversationId, before, limit));
    }
    // Each item came from the store once, in one walk from the newest down.
    expect(served).toEqual(all.map((item) => item.ordinal));
  });

  it("answers requests made at once (the memory floor's two reads) as the store does, reading each item once", async () => {
    const conversationId = await storeConversation();
    const store = opened.backend.store;
    const served: number[] = [];
    // A server's answer arrives later: the requests made at once overlap.
    const items = new NewestContextItems(recordingStore(served, 5), conversationId);
    const all = await store.listContextNewestFirst(conversationId, null, 100);
    const requests: [number | null, number][] = [[null, 8], [null, 16], [all[20]!.ordinal + 1, 16], [null, 40]];
    const answers = await Promise.all(requests.map(([before, limit]) => items.page(before, limit)));
    for (const [index, [before, limit]] of requests.entries()) {
      expect(answers[index]).toEqual(await store.listContextNewestFirst(conversationId, before, limit));
    }
    expect(served).toEqual(all.map((item) => item.ordinal));
  });
});
