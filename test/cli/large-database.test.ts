/**
 * The CLI on a 100,000-message conversation made by the engine's batch path (ingestBatch, 5,000 messages a call)
 * and compacted by its compact hook: every read command answers with the content it must show (the counts, the
 * newest exchange, summaries tiling the compacted history, the one message a marker names). Each reads what it
 * shows, never the whole history; the time to the first byte of output is printed for the record
 * (docs/operations.md quotes it) but not asserted: speed targets belong in the bench.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Static } from "@sinclair/typebox";
import { beforeAll, describe, expect, it } from "vitest";
import { ContextOutputSchema, ConversationsOutputSchema, DagOutputSchema, GrepOutputSchema, StatusOutputSchema } from "../../src/cli/output-schemas.js";
import type { StatusOutput } from "../../src/cli/commands/status-command.js";
import { closeSharedDatabase } from "../../src/sqlite/connection-registry.js";
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
  it("answers status, conversations, context, dag and grep, each validated and each with the content it must show", async () => {
    const status = await runJson<StatusOutput>(["status", "1", "--db", db], StatusOutputSchema);
    expect(status.status.conversation?.messages).toBe(MESSAGES);

    const listed = await runJson<Static<typeof ConversationsOutputSchema>>(["conversations", "--db", db], ConversationsOutputSchema);
    expect(listed.count).toBe(1);
    const [big] = listed.conversations;
    expect(big).toMatchObject({ sessionId: "big", messages: MESSAGES, budgetTokens: 8_000, fallbackSummaries: 0 });
    // Compacted: far fewer context items than messages, under summaries.
    expect(big!.summaries).toBeGreaterThan(0);
    expect(big!.contextItems).toBeLessThan(MESSAGES / 10);

    const context = await runJson<Static<typeof ContextOutputSchema>>(["context", "1", "--db", db], ContextOutputSchema);
    expect(context).toMatchObject({ budgetTokens: 8_000, budgetSource: "recorded" });
    expect(context.totals.estimatedTokens).toBeLessThanOrEqual(8_000);
    expect(context.totals.rawMessageCount).toBeGreaterThan(0);
    // The newest exchange is what the context ends with.
    expect(context.messages.at(-1)!.text).toMatch(/^b50000 answer detailb50000 /);

    const dag = await runJson<Static<typeof DagOutputSchema>>(["dag", "1", "--db", db], DagOutputSchema);
    expect(dag.summaries).toBe(big!.summaries);
    // The top-level summaries cover the compacted history from its first message, one after another, no gap.
    const roots = [...dag.roots].sort((left, right) => left.seqStart - right.seqStart);
    expect(roots[0]!.seqStart).toBe(1);
    for (const [index, root] of roots.entries()) if (index > 0) expect(root.seqStart).toBe(roots[index - 1]!.seqEnd + 1);

    const found = await runJson<Static<typeof GrepOutputSchema>>(["grep", "markerb49999\\b", "--db", db], GrepOutputSchema);
    expect(found.matchCount).toBe(1);
    expect(found.matches[0]).toMatchObject({ type: "message", conversationId: 1, snippet: expect.stringContaining("markerb49999") });
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
