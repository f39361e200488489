/**
 * Status names where the history is: on PostgreSQL the server's URL without its password, never the databasePath
 * setting, which then names a file that holds nothing (found by the real-host suite on PostgreSQL, issue 28).
 */
import { afterEach, describe, expect, it } from "vitest";
import { redactUrl } from "../../src/postgres/pg-database.js";
import plugin from "../../src/plugin.js";
import { FakePluginApi } from "../fakes/fake-plugin-api.js";
import { createTestPostgresDatabase } from "../helpers/backends.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";
import { tempDir } from "../helpers/temp-dir.js";

const SESSION = { sessionId: "s-status", sessionKey: "agent:main:status" };

let api: FakePluginApi | null = null;
afterEach(async () => {
  await api?.retire();
  api = null;
});

describe("status on PostgreSQL", () => {
  it("names the PostgreSQL database in /lcm status, not the unused databasePath file", async () => {
    const url = await createTestPostgresDatabase();
    const unusedFile = `${tempDir()}/never-opened.db`;
    api = new FakePluginApi({ databaseUrl: url, databasePath: unusedFile });
    plugin.register(api);
    await api.engine().commitTurn!({ ...SESSION, advancementKey: "turn-1", messages: [userMessage("where is this stored?"), assistantMessage("in PostgreSQL")] });

    const reply = await api.command("lcm").handler({ args: "status", ...SESSION, agentId: "main", channel: "test", isAuthorizedSender: true, commandBody: "/lcm status" });
    const text = String((reply as { text: string }).text);
    expect(text).toContain(redactUrl(url));
    expect(text).not.toContain(unusedFile);
  });
});
