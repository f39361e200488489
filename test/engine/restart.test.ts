/**
 * The gateway's shared SQLite connection closed and opened again (a restart): every stored turn is found. The same
 * promise across openings of any backend is in test/contract/engine-hooks.contract.test.ts.
 */
import { describe, expect, it } from "vitest";
import type { AgentMessage } from "../../src/host/openclaw-types.js";
import { closeAllDatabases } from "../../src/sqlite/connection-registry.js";
import { createTestEngine } from "../helpers/engine.js";
import { assistantMessage, userMessage, withIdempotencyKey } from "../helpers/messages.js";

function turn(key: string, text: string): AgentMessage[] {
  return [withIdempotencyKey(userMessage(`${text} question`), `${key}:user`), assistantMessage(`${text} answer`)];
}

describe("restart", () => {
  it("finds every stored turn after the connection is closed and reopened", async () => {
    const setup = createTestEngine();
    for (let index = 1; index <= 5; index++) {
      await setup.newEngine().commitTurn({ sessionId: "s1", advancementKey: `t${index}`, messages: turn(`r${index}`, `turn${index}`) });
    }
    closeAllDatabases();
    const again = createTestEngine({ databasePath: setup.config.databasePath });
    const engine = again.newEngine();
    expect(await engine.commitTurn({ sessionId: "s1", advancementKey: "t3", messages: turn("r3", "turn3") })).toEqual({ status: "duplicate" });
    const assembled = await engine.assemble({ sessionId: "s1", messages: [] });
    expect(assembled.messages).toHaveLength(10);
  });
});
