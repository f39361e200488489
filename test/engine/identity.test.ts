/**
 * A row an older version stored under its old identity (written here with SQLite's own SQL) is not stored again.
 * The other identity rules run on every backend: test/contract/identity.contract.test.ts.
 */
import { describe, expect, it } from "vitest";
import { createTestEngine } from "../helpers/engine.js";
import { userMessage, withIdempotencyKey } from "../helpers/messages.js";

const SESSION = { sessionId: "s1", sessionKey: "agent:main:main" };

describe("message identity", () => {
  it("recognises a message an older version stored under its key alone", async () => {
    const { newEngine, db } = createTestEngine();
    const message = withIdempotencyKey(userMessage("hello"), "run-9:user");
    await newEngine().commitTurn({ ...SESSION, advancementKey: "t1", messages: [message] });
    // What a version before schema 5 wrote: the identity without the content fingerprint.
    db.run("UPDATE messages SET identity_key = 'key:run-9:user'");
    await newEngine().ingest({ ...SESSION, message });
    await newEngine().commitTurn({ ...SESSION, advancementKey: "t2", messages: [message] });
    expect(db.get<{ n: number }>("SELECT count(*) AS n FROM messages")!.n).toBe(1);
  });
});
