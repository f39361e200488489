/**
 * openSqliteBackend: one opening gives every store on one connection; how it opens decides who closes the connection
 * and whether it writes; a file it must not change is left as it was.
 */
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isLcmError } from "../../src/errors.js";
import { encodeMessage } from "../../src/messages/message-codec.js";
import { DefaultTokenEstimator } from "../../src/tokens/default-token-estimator.js";
import { openSqliteBackend } from "../../src/sqlite/open-sqlite-backend.js";
import type { LcmBackend } from "../../src/store/backend.js";
import { tempDatabasePath, tempDir } from "../helpers/temp-dir.js";

const STORES: (keyof LcmBackend)[] = [
  "store", "compaction", "retrieval", "searchIndex", "grants", "status", "integrity", "sessions", "retention", "operator", "repairs", "storage",
];

async function storeConversation(backend: LcmBackend, sessionId: string): Promise<number> {
  const conversation = await backend.store.getOrCreateConversation({ agentId: "main", sessionId, sessionKey: `agent:main:${sessionId}` }, 1_000);
  const message = encodeMessage({ role: "user", content: "the OPS-4471 runbook", timestamp: 1_000 }, new DefaultTokenEstimator(), 1_000);
  await backend.store.appendMessages(conversation.conversationId, [message], 1_000);
  return conversation.conversationId;
}

describe("openSqliteBackend", () => {
  it("gives every store on one connection: what one writes, the others read", async () => {
    const backend = openSqliteBackend(tempDatabasePath(), "private");
    try {
      for (const name of STORES) expect(backend[name], name).toBeTruthy();
      const conversationId = await storeConversation(backend, "s1");
      expect((await backend.operator.listConversations({ limit: 10 })).map((row) => row.conversation.conversationId)).toEqual([conversationId]);
      expect((await backend.status.databaseTotals()).messages).toBe(1);
      expect(await backend.searchIndex.pendingMessages()).toBe(1);
      expect(backend.writable).toBe(true);
      expect(backend.readOnlyNotice).toBeNull();
    } finally {
      backend.close();
    }
  });

  it("closes a connection of its own, and leaves the process's shared one open for the next opening", async () => {
    const path = tempDatabasePath();
    const first = openSqliteBackend(path, "shared");
    await storeConversation(first, "s1");
    first.close();
    const second = openSqliteBackend(path, "shared");
    expect(second.database).toBe(first.database);
    expect((await second.status.databaseTotals()).conversations).toBe(1);

    const own = openSqliteBackend(path, "private");
    own.close();
    await expect(own.status.databaseTotals()).rejects.toThrow();
    expect((await second.status.databaseTotals()).conversations).toBe(1);
  });

  it("reads a file it may not write, saying why and the fix, and refuses writes without changing it", async () => {
    const path = tempDatabasePath();
    const writer = openSqliteBackend(path, "private");
    await storeConversation(writer, "s1");
    writer.close();
    chmodSync(path, 0o444);
    const before = readFileSync(path);

    expect(() => openSqliteBackend(path, "shared")).toThrow(/cannot be written|read-only/);
    const reader = openSqliteBackend(path, "shared-readable");
    expect(reader.writable).toBe(false);
    expect(reader.readOnlyNotice).toContain(path);
    expect((await reader.status.databaseTotals()).messages).toBe(1);
    const write = storeConversation(reader, "s2");
    await expect(write).rejects.toSatisfy((error: unknown) => isLcmError(error, "unavailable"));
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it("leaves a file that is not LCM's untouched, and names the problem for the person at the shell", () => {
    const path = join(tempDir(), "notes.db");
    writeFileSync(path, "plain text, not a database\n");
    for (const access of ["shared", { command: "write", pathSource: "--db" }] as const) {
      expect(() => openSqliteBackend(path, access)).toThrow(expect.objectContaining({ code: "unavailable" }));
    }
    expect(readFileSync(path, "utf8")).toBe("plain text, not a database\n");
  });
});
