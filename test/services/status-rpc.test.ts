/** The lcm.status gateway RPC answers what /lcm status shows, as data, and turns failures into RPC errors. */
import { describe, expect, it } from "vitest";
import { Value } from "@sinclair/typebox/value";
import { createStatusRpc } from "../../src/chat/lcm-status-rpc.js";
import { StatusOutputSchema } from "../../src/cli/output-schemas.js";
import { StatusService } from "../../src/services/status-service.js";
import { SqliteRetrievalStore } from "../../src/sqlite/sqlite-retrieval-store.js";
import { SqliteStatusStore } from "../../src/sqlite/sqlite-status-store.js";
import { createTestEngine } from "../helpers/engine.js";
import { conversation } from "../helpers/messages.js";

async function call(handler: ReturnType<typeof createStatusRpc>, params: Record<string, unknown>) {
  let answer: { ok: boolean; payload?: unknown; error?: { code: string; message: string } } | undefined;
  await handler({ params, respond: (ok, payload, error) => { answer = { ok, payload, ...(error ? { error } : {}) }; } });
  return answer!;
}

describe("lcm.status", () => {
  it("answers a session's status as data", async () => {
    const harness = createTestEngine();
    await harness.newEngine().ingestBatch({ sessionId: "s1", sessionKey: "agent:main:main", messages: conversation(4) });
    const service = new StatusService({
      location: harness.db.path, conversations: harness.store, sessions: new SqliteRetrievalStore(harness.db), status: new SqliteStatusStore(harness.db), config: harness.config, clock: harness.clock,
    });
    const handler = createStatusRpc(() => service);
    const bySession = await call(handler, { sessionKey: "agent:main:main" });
    expect(bySession.ok).toBe(true);
    expect(bySession.payload).toMatchObject({ conversation: { conversationId: 1, agentId: "main", messages: 8 }, totals: { conversations: 1, messages: 8 } });
    // The same snapshot the CLI's status prints (its `status` field): one schema for both.
    expect(Value.Check(StatusOutputSchema.properties.status, bySession.payload)).toBe(true);
    expect((await call(handler, {})).payload).toMatchObject({ conversation: null });
    expect(await call(handler, { conversationId: "one" })).toMatchObject({ ok: false, error: { code: "INVALID_REQUEST" } });
  });

  it("answers an RPC error when the database cannot be used", async () => {
    const handler = createStatusRpc(() => { throw new Error("database is gone"); });
    expect(await call(handler, {})).toMatchObject({ ok: false, error: { code: "INTERNAL", message: expect.stringMatching(/database is gone/) } });
  });
});
