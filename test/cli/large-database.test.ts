/**
 * The CLI on a 100,000-message conversation made by the engine's batch path (ingestBatch, 5,000 messages a call)
 * and compacted by its compact hook: every read command answers, and quickly, because each reads what it shows
 * (counters, one conversation's summaries, the context's newest pages), never the whole history. The time to the
 * first byte of output is printed for the record (docs/operations.md quotes it); no timing is asserted here.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { ContextOutputSchema, ConversationsOutputSchema, DagOutputSchema, GrepOutputSchema, StatusOutputSchema } from "../../src/cli/output-schemas.js";
import type { StatusOutput } from "../../src/cli/commands/status-command.js";
import { closeSharedDatabase } from "../../src/db/connection-registry.js";
import { tempDatabasePath } from "../helpers/temp-dir.js";
import { buildDatabase, exchanges, runJson, runLcm } from "./cli-harness.js";

const MESSAGES = 100_000;
let db: string;
const figures: Record<string, number> = {};

beforeAll(async () => {
  db = tempDatabasePath();
  const started = performance.now();
  await buildDatabase({
    databasePath: db,
    compact: true,
    config: { leafChunkTokens: 20_000 },
    sessions: [{ sessionKey: "agent:main:big", sessionId: "big", messages: exchanges(MESSAGES / 2, 12, "b") }],
  });
  figures.buildSeconds = Math.round((performance.now() - started) / 100) / 10;
  closeSharedDatabase(db);
}, 600_000);

describe(`a ${MESSAGES.toLocaleString("en-US")}-message conversation`, () => {
  it("answers status, conversations, context, dag and grep, each validated", async () => {
    const status = await runJson<StatusOutput>(["status", "1", "--db", db], StatusOutputSchema);
    expect(status.status.conversation?.messages).toBe(MESSAGES);
    await runJson(["conversations", "--db", db], ConversationsOutputSchema);
    await runJson(["context", "1", "--db", db], ContextOutputSchema);
    await runJson(["dag", "1", "--db", db], DagOutputSchema);
    await runJson(["grep", "markerb49999\\b", "--db", db], GrepOutputSchema);
    for (const args of [["status"], ["status", "1"], ["conversations"], ["context", "1"], ["dag", "1"], ["grep", "markerb49999\\b"]]) {
      const run = await runLcm([...args, "--db", db]);
      expect(run.code, run.stderr).toBe(0);
      figures[`firstOutputMs ${args.join(" ")}`] = Math.round(run.firstOutputMs);
    }
  }, 300_000);

  it("starts the real bin and prints status (time to first output, whole process)", () => {
    const root = fileURLToPath(new URL("../..", import.meta.url));
    const started = performance.now();
    const output = execFileSync(process.execPath, ["--import", "tsx", join(root, "src/cli/bin.ts"), "status", "--db", db], { cwd: root, encoding: "utf8" });
    figures["bin status (tsx, whole process) ms"] = Math.round(performance.now() - started);
    expect(output).toMatch(/Database: 1 conversation · 100,000 messages/);
    console.log(`[large-database] ${JSON.stringify(figures)}`);
  }, 120_000);
});
