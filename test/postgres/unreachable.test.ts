/**
 * A gateway whose PostgreSQL server is down (issue 28, docs/operations.md "When the server is unreachable"): opening
 * does not fail, commitTurn throws a storage failure so that OpenClaw keeps the turn in its outbox, the other hooks
 * and the recall tools answer without throwing, and once the server is up the same turn commits, once.
 */
import { afterAll, describe, expect, it } from "vitest";
import plugin from "../../src/plugin.js";
import { FakePluginApi } from "../fakes/fake-plugin-api.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";
import { freePort, type PostgresServer, startPostgres } from "./postgres-server.js";

const SESSION = { sessionId: "s-down", sessionKey: "agent:main:down" };
const TURN = { ...SESSION, advancementKey: "turn-1", messages: [userMessage("the server was down for this one"), assistantMessage("noted")] };

let server: PostgresServer | null = null;
afterAll(async () => {
  await server?.stop();
});

describe("a PostgreSQL server that is down", () => {
  it("keeps the turn out of the acknowledged ones until the server is back, then stores it once", async () => {
    const port = await freePort();
    const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    const api = new FakePluginApi({ databaseUrl: url });
    plugin.register(api);

    const commit = await api.engine().commitTurn!(TURN).then(() => null, (error: unknown) => error);
    expect(commit).toBeInstanceOf(Error);
    const assembled = await api.engine().assemble({ ...SESSION, messages: [], tokenBudget: 8_000 });
    expect(assembled.messages).toEqual([]);
    const grep = await api.tool("lcm_grep", { agentId: "main", ...SESSION }).execute("call-1", { pattern: "down" });
    expect(JSON.stringify(grep)).toMatch(/PostgreSQL|ECONNREFUSED|connect/i);

    server = await startPostgres({ port });
    const retried = await api.engine().commitTurn!(TURN);
    expect(retried).toMatchObject({ status: "committed" });
    expect(await api.engine().commitTurn!(TURN)).toMatchObject({ status: "duplicate" });
    const after = await api.engine().assemble({ ...SESSION, messages: [], tokenBudget: 8_000 });
    expect(after.messages).toHaveLength(2);
    await api.retire();
  });
});
