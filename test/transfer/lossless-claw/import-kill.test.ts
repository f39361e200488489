/**
 * `lcm import lossless-claw --apply` killed with SIGKILL in the middle of its work, as the bin runs in its own process,
 * then run again: the second run finishes the conversation where the first stopped and ends with the same rows a
 * run that was never killed writes (every message once), and `lcm doctor` finds nothing. The first version's rerun
 * failed on the import map's uniqueness: the CLI handed the import two store objects on one database, so the
 * interrupted conversation was never recognised as its own.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { ImportLosslessClawOutput } from "../../../src/cli/commands/import-lossless-claw-command.js";
import { DoctorOutputSchema, ImportLosslessClawOutputSchema } from "../../../src/cli/output-schemas.js";
import { runJson } from "../../cli/cli-harness.js";
import { tempDir } from "../../helpers/temp-dir.js";
import { PeerWriter } from "./peer-fixtures.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const PER_CONVERSATION = 2_000;

/** Three 1.x conversations of 2,000 messages, each compacted by the peer and holding a tool output it stored aside. */
function buildSource(): string {
  const path = join(tempDir("peer-kill-"), "lcm.db");
  const peer = new PeerWriter(path, "1.x");
  peer.batch(() => {
    for (let index = 0; index < 3; index++) {
      const conversation = peer.conversation(`session-${index}`, { sessionKey: `agent:main:chat-${index}` });
      const ids: number[] = [];
      for (let turn = 0; turn < PER_CONVERSATION / 2 - 2; turn++) {
        ids.push(peer.message(conversation, { role: "user", content: `c${index} question ${turn} marker${turn}`, timestamp: 0 }, { inContext: false }));
        ids.push(peer.message(conversation, { role: "assistant", content: [{ type: "text", text: `c${index} answer ${turn} detail${turn}` }], timestamp: 0 }, { inContext: false }));
      }
      peer.summary(conversation, `sum_${index}a${"0".repeat(14)}`, "leaf", `conversation ${index}: the early turns`, ids.slice(0, ids.length / 2));
      peer.summary(conversation, `sum_${index}b${"0".repeat(14)}`, "leaf", `conversation ${index}: the later turns`, ids.slice(ids.length / 2));
      peer.contextItem(conversation, { summaryId: `sum_${index}a${"0".repeat(14)}` });
      peer.contextItem(conversation, { summaryId: `sum_${index}b${"0".repeat(14)}` });
      peer.message(conversation, { role: "assistant", content: [{ type: "toolCall", id: `call_${index}`, name: "exec", arguments: { command: "make" } }], timestamp: 0 });
      peer.storedToolOutput(conversation, `call_${index}`, "exec", `file_${index}${"f".repeat(15)}`, `build log ${index}\n`.repeat(800));
      peer.message(conversation, { role: "assistant", content: [{ type: "text", text: `c${index} the build passed` }], timestamp: 0 });
    }
  });
  peer.close();
  return path;
}

/** Runs the bin on its own, kills its process group once the target holds messages; resolves with what it saw. */
function runKilledOnceWriting(source: string, target: string): Promise<{ killed: boolean; messagesAtKill: number; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(
      process.execPath, ["--import", "tsx", join(ROOT, "src", "cli", "bin.ts"), "import", "lossless-claw", source, "--db", target, "--apply", "--no-index"],
      { cwd: ROOT, stdio: ["ignore", "ignore", "pipe"], detached: true },
    );
    let stderr = "";
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    let messagesAtKill = 0;
    let killed = false;
    const poll = setInterval(() => {
      if (killed || !existsSync(target)) return;
      let database: DatabaseSync | null = null;
      try {
        database = new DatabaseSync(target, { readOnly: true });
        const count = (database.prepare("SELECT count(*) AS n FROM messages").get() as { n: number }).n;
        if (count > 0) {
          process.kill(-child.pid!, "SIGKILL");
          killed = true;
          messagesAtKill = count;
        }
      } catch {
        // The child is still creating the database (no messages table yet): the next poll looks again.
      } finally {
        database?.close();
      }
    }, 5);
    child.on("error", reject);
    child.on("close", (_code, signal) => {
      clearInterval(poll);
      resolve({ killed: killed && signal === "SIGKILL", messagesAtKill, stderr });
    });
  });
}

/** A count, on a connection that may write: the first open after a kill recovers the write-ahead log, as LCM's would. */
function count(db: string, sql: string): number {
  const database = new DatabaseSync(db, { timeout: 10_000 });
  try {
    return (database.prepare(sql).get() as { n: number }).n;
  } finally {
    database.close();
  }
}

describe("an import killed with SIGKILL", () => {
  it("is finished by the next run, with every row once, as a run never killed writes it", async () => {
    const source = buildSource();
    const total = 3 * (PER_CONVERSATION - 1); // 998 exchanges, the call, its output, the answer
    const clean = join(tempDir(), "lcm-context.db");
    await runJson<ImportLosslessClawOutput>(["import", "lossless-claw", source, "--db", clean, "--apply", "--no-index"], ImportLosslessClawOutputSchema);
    expect(count(clean, "SELECT count(*) AS n FROM messages")).toBe(total);

    const target = join(tempDir(), "lcm-context.db");
    const killed = await runKilledOnceWriting(source, target);
    expect(killed.killed, killed.stderr).toBe(true);
    const partial = count(target, "SELECT count(*) AS n FROM messages");
    expect(partial).toBeGreaterThan(0);
    expect(partial).toBeLessThan(total);
    expect(count(target, "SELECT count(*) AS n FROM conversations WHERE archive_reason = 'importing from lossless-claw'")).toBe(1);

    const again = await runJson<ImportLosslessClawOutput>(["import", "lossless-claw", source, "--db", target, "--apply", "--no-index"], ImportLosslessClawOutputSchema);
    expect(again.conversations).toMatchObject({ total: 3, resumed: 1, notImported: 0 });
    expect(again.conversations.imported).toBe(3 - again.conversations.alreadyImported);
    const rows = (db: string) => ({
      messages: count(db, "SELECT count(*) AS n FROM messages"),
      identities: count(db, "SELECT count(DISTINCT conversation_id || ' ' || identity_key) AS n FROM messages"),
      summaries: count(db, "SELECT count(*) AS n FROM summaries"),
      context: count(db, "SELECT count(*) AS n FROM context_items"),
      files: count(db, "SELECT count(*) AS n FROM large_files WHERE origin = 'tool-result'"),
      importing: count(db, "SELECT count(*) AS n FROM conversations WHERE archived_at IS NOT NULL"),
    });
    expect(rows(target)).toEqual(rows(clean));
    expect(rows(target)).toMatchObject({ messages: total, identities: total, files: 3, importing: 0 });
    const doctor = await runJson<{ healthy: boolean; findings: unknown[] }>(["doctor", "--db", target], DoctorOutputSchema);
    expect(doctor.findings).toEqual([]);
  }, 300_000); // three imports of 6,000 messages and a child process that compiles the CLI at start-up
});
