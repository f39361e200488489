import { describe, expect, it } from "vitest";
import type { TranscriptPage, TranscriptSource } from "../../src/ingest/transcript-source.js";
import { createTestEngine } from "../helpers/engine.js";
import { userMessage } from "../helpers/messages.js";

/** A transcript reader that blocks until released, to hold a bootstrap open. */
class GatedSource implements TranscriptSource {
  private release!: () => void;
  readonly gate = new Promise<void>((resolve) => (this.release = resolve));
  started = false;
  async readPage(): Promise<TranscriptPage> {
    this.started = true;
    await this.gate;
    return { kind: "page", messages: [userMessage("from transcript")], cursor: "1", hasMore: false };
  }
  open(): void {
    this.release();
  }
}

describe("per-session serialization", () => {
  it("runs concurrent turns of one session in call order", async () => {
    const { newEngine, db } = createTestEngine();
    await Promise.all(
      Array.from({ length: 40 }, (_, index) =>
        newEngine().commitTurn({ sessionId: "s1", advancementKey: `t${index}`, messages: [userMessage(`message ${index}`)] }),
      ),
    );
    const contents = db.all<{ content: string }>("SELECT content FROM messages ORDER BY seq").map((row) => row.content);
    expect(contents).toEqual(Array.from({ length: 40 }, (_, index) => `message ${index}`));
  });

  it("makes a session's turn wait for its running bootstrap, but not another session's turn", async () => {
    const source = new GatedSource();
    const { newEngine, db } = createTestEngine({ transcriptSource: source });
    const bootstrap = newEngine().bootstrap({ sessionId: "a", sessionFile: "agent:main:a" });
    const sameSession = newEngine().commitTurn({ sessionId: "a", advancementKey: "t1", messages: [userMessage("after bootstrap")] });
    for (let wait = 0; !source.started && wait < 200; wait++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(source.started).toBe(true);
    await newEngine().commitTurn({ sessionId: "b", advancementKey: "t1", messages: [userMessage("other session")] });
    expect(db.all("SELECT 1 FROM messages m JOIN conversations c USING (conversation_id) WHERE c.session_id = 'b'")).toHaveLength(1);
    expect(db.all("SELECT 1 FROM messages m JOIN conversations c USING (conversation_id) WHERE c.session_id = 'a'")).toHaveLength(0);
    source.open();
    await Promise.all([bootstrap, sameSession]);
    const order = db.all<{ content: string }>(
      "SELECT content FROM messages m JOIN conversations c USING (conversation_id) WHERE c.session_id = 'a' ORDER BY seq",
    );
    expect(order.map((row) => row.content)).toEqual(["from transcript", "after bootstrap"]);
  });
});
