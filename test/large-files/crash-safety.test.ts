import { existsSync, readFileSync, readdirSync, rmSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isLcmError } from "../../src/errors.js";
import { LargeFileReader } from "../../src/large-files/large-file-reader.js";
import { createTestEngine } from "../helpers/engine.js";
import { userMessage } from "../helpers/messages.js";
import { fileBlock, generateLog, generateMarkdown } from "./generated-inputs.js";
import { resolveRecordedPath } from "../../src/sqlite/stored-file-path.js";

const SESSION = { sessionId: "s1", sessionKey: "agent:main:main" };

/** An engine whose store fails the next commit, as a crash between the file write and the transaction would. */
function crashingSetup() {
  const env = createTestEngine();
  const realCommit = env.store.commitTurn.bind(env.store);
  let crashNext = false;
  env.store.commitTurn = (...args) => {
    if (crashNext) {
      crashNext = false;
      return Promise.reject(new Error("simulated crash before the transaction"));
    }
    return realCommit(...args);
  };
  const conversationDirectory = () => {
    const conversation = env.db.get<{ conversation_id: number }>("SELECT conversation_id FROM conversations")!;
    return join(env.config.filesDirectory, String(conversation.conversation_id));
  };
  return {
    ...env,
    crashNextCommit: () => { crashNext = true; },
    conversationDirectory,
    rows: () => env.db.all<{ file_id: string; storage_path: string }>("SELECT file_id, storage_path FROM large_files")
      .map((row) => ({ ...row, storage_path: resolveRecordedPath(env.db.path, row.storage_path) })),
    messageCount: () => env.db.get<{ n: number }>("SELECT count(*) AS n FROM messages")!.n,
  };
}

describe("crash safety between the file write and the row", () => {
  it("leaves a file without a row, which the replay of the turn reuses: one file, one row, no temp files", async () => {
    const env = crashingSetup();
    const message = userMessage(fileBlock("app.log", null, generateLog(20_000)));
    env.crashNextCommit();
    expect(await env.newEngine().commitTurn({ ...SESSION, advancementKey: "t1", messages: [message] })).toEqual({ status: "committed" });
    expect(env.logger.errors()[0]).toContain("commitTurn failed: simulated crash before the transaction");
    const [orphan, ...others] = readdirSync(env.conversationDirectory());
    expect(others).toEqual([]);
    expect(orphan).toMatch(/^file_[a-f0-9]{16}\.log$/);
    expect(env.rows()).toEqual([]);
    expect(env.messageCount()).toBe(0);

    // The host retries the commit from its durable outbox.
    expect(await env.newEngine().commitTurn({ ...SESSION, advancementKey: "t1", messages: [message] })).toEqual({ status: "committed" });
    expect(readdirSync(env.conversationDirectory())).toEqual([orphan]);
    expect(env.rows()).toEqual([{ file_id: orphan!.replace(".log", ""), storage_path: join(env.conversationDirectory(), orphan!) }]);
    expect(env.messageCount()).toBe(1);
  });

  it("sweeps a row-less file that was never replayed once it is old, when the conversation stores its next file", async () => {
    const env = crashingSetup();
    env.crashNextCommit();
    await env.newEngine().commitTurn({ ...SESSION, advancementKey: "t1", messages: [userMessage(fileBlock("a.log", null, generateLog(20_000)))] });
    const [orphan] = readdirSync(env.conversationDirectory());
    const orphanPath = join(env.conversationDirectory(), orphan!);
    const twoHoursAgo = new Date(Date.now() - 2 * 3_600_000);
    utimesSync(orphanPath, twoHoursAgo, twoHoursAgo);

    await env.newEngine().commitTurn({ ...SESSION, advancementKey: "t2", messages: [userMessage(fileBlock("report.md", null, generateMarkdown(400)))] });
    expect(existsSync(orphanPath)).toBe(false);
    const [row] = env.rows();
    expect(readdirSync(env.conversationDirectory())).toEqual([`${row!.file_id}.md`]);
    expect(env.logger.lines.some((line) => line.message === "Removed 1 orphaned large-file leftovers of conversation 1.")).toBe(true);
  });

  it("reports a stored file deleted by hand clearly, and restores it when the same content arrives again", async () => {
    const env = crashingSetup();
    const reader = new LargeFileReader({ store: env.store });
    const log = generateLog(20_000);
    await env.newEngine().commitTurn({ ...SESSION, advancementKey: "t1", messages: [userMessage(fileBlock("app.log", null, log))] });
    const [row] = env.rows();
    rmSync(row!.storage_path);

    const described = await reader.describe(row!.file_id);
    expect(described.content).toEqual({ status: "missing", reason: `missing (moved or deleted) at ${row!.storage_path}` });
    expect(described.file.explorationSummary).toContain("Log levels:");
    const error = await reader.readLines(row!.file_id).catch((caught: unknown) => caught);
    expect(isLcmError(error, "unavailable")).toBe(true);
    expect((error as Error).message).toBe(
      `The content of ${row!.file_id} (app.log) is missing (moved or deleted) at ${row!.storage_path}. ` +
        "Its exploration summary is still available; restore the file from a backup, or send it again.",
    );

    await env.newEngine().commitTurn({ ...SESSION, advancementKey: "t2", messages: [userMessage(`again ${fileBlock("copy.log", null, log)}`)] });
    expect(readFileSync(row!.storage_path, "utf8")).toBe(log);
    expect(env.rows()).toHaveLength(1);
  });
});
