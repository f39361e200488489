/**
 * `lcm status`, `conversations`, `context` and `dag` on a database the engine made: two agents' conversations,
 * one compacted. Output validated against the --json schemas; the human output says the same things.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { ContextOutputSchema, ConversationsOutputSchema, DagOutputSchema, ErrorOutputSchema, StatusOutputSchema } from "../../src/cli/output-schemas.js";
import type { ContextOutput } from "../../src/cli/commands/context-command.js";
import type { ConversationsOutput } from "../../src/cli/commands/conversations-command.js";
import type { DagOutput } from "../../src/cli/commands/dag-command.js";
import type { StatusOutput } from "../../src/cli/commands/status-command.js";
import { EXIT } from "../../src/cli/exit-codes.js";
import { compactedDatabase, exchanges, runJson, runLcm } from "./cli-harness.js";

let db: string;

beforeAll(async () => {
  db = await compactedDatabase([
    { sessionKey: "agent:main:main", sessionId: "s-main", messages: exchanges(60, 40, "m") },
    { sessionKey: "agent:ops:chat", sessionId: "s-ops", messages: exchanges(3, 5, "o") },
  ]);
});

describe("lcm status", () => {
  it("shows the database and its totals, with the path's source", async () => {
    const data = await runJson<StatusOutput>(["status", "--db", db], StatusOutputSchema);
    expect(data.databasePathSource).toBe("--db");
    expect(data.status.totals).toMatchObject({ conversations: 2, messages: 126 });
    expect(data.file.schemaVersion).toBeGreaterThanOrEqual(6);
    const text = (await runLcm(["status", "--db", db])).stdout;
    expect(text).toMatch(/^LCM status · database/);
    expect(text).toMatch(/Database: 2 conversations · 126 messages/);
    expect(text).toMatch(/File: schema \d+ · .* · path from --db/);
  });

  it("shows one conversation as /lcm status does", async () => {
    const data = await runJson<StatusOutput>(["status", "1", "--db", db], StatusOutputSchema);
    expect(data.status.conversation).toMatchObject({ conversationId: 1, agentId: "main", messages: 120, budgetIsDefault: false });
    expect(data.status.conversation!.summaries.length).toBeGreaterThan(0);
    const text = (await runLcm(["status", "1", "--db", db])).stdout;
    expect(text).toMatch(/^LCM status · conversation 1 \(agent main\)/);
    expect(text).toMatch(/Last compaction: .*\(compact:threshold\)/);
    expect(text).toMatch(/Spend guard: at most 100 summarizer model calls per 60 min; the count is not visible here/);
  });

  it("takes the database from LCM_DATABASE_PATH, then from openclaw.json", async () => {
    const fromEnv = await runJson<StatusOutput>(["status"], StatusOutputSchema, { env: { LCM_DATABASE_PATH: db } });
    expect(fromEnv).toMatchObject({ databasePath: db, databasePathSource: "LCM_DATABASE_PATH" });
    const { mkdtempSync, writeFileSync } = await import("node:fs");
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const state = mkdtempSync(join(tmpdir(), "lcm-state-"));
    // JSON5, as users write openclaw.json: comments and trailing commas.
    writeFileSync(join(state, "openclaw.json"), `{ // mine\n plugins: { entries: { lcm: { config: { databasePath: ${JSON.stringify(db)}, }, }, }, }, }`);
    const fromConfig = await runJson<StatusOutput>(["status"], StatusOutputSchema, { env: { OPENCLAW_STATE_DIR: state } });
    expect(fromConfig).toMatchObject({ databasePath: db, databasePathSource: "openclaw-config" });
  });

  it("exits 3 for a conversation that is not stored, 4 without a database, 2 for a bad argument", async () => {
    const missing = await runLcm(["status", "99", "--db", db]);
    expect(missing.code).toBe(EXIT.notFound);
    expect(missing.stderr).toMatch(/No conversation 99 is stored/);
    expect((await runLcm(["status", "--db", `${db}.nothing`])).code).toBe(EXIT.noDatabase);
    expect((await runLcm(["status", "first", "--db", db])).code).toBe(EXIT.usage);
    expect((await runLcm(["statuz"])).code).toBe(EXIT.usage);
  });

  it("answers --json failures with an error document", async () => {
    const data = await runJson(["status", "--db", `${db}.nothing`], ErrorOutputSchema, { code: EXIT.noDatabase });
    expect(data).toMatchObject({ error: { code: "noDatabase", exitCode: 4, message: expect.stringMatching(/No LCM database/) } });
  });
});

describe("lcm conversations", () => {
  it("lists agent, session, counts, tokens, last activity and flags", async () => {
    const data = await runJson<ConversationsOutput>(["conversations", "--db", db], ConversationsOutputSchema);
    expect(data.count).toBe(2);
    const main = data.conversations.find((row) => row.agentId === "main")!;
    expect(main).toMatchObject({ sessionKey: "agent:main:main", messages: 120, budgetTokens: expect.any(Number) });
    expect(main.summaries).toBeGreaterThan(0);
    expect(main.lastCompaction).toMatchObject({ trigger: "compact:threshold", compacted: true });
    const text = (await runLcm(["conversations", "--db", db])).stdout;
    expect(text.split("\n")[0]).toMatch(/^ID\s+AGENT\s+SESSION\s+MESSAGES\s+TOKENS\s+CONTEXT\s+BUDGET\s+SUMMARIES\s+LAST ACTIVITY\s+FLAGS$/);
    expect(text).toMatch(/agent:ops:chat/);
  });

  it("filters by agent", async () => {
    const data = await runJson<ConversationsOutput>(["conversations", "--agent", "ops", "--db", db], ConversationsOutputSchema);
    expect(data.conversations.map((row) => row.agentId)).toEqual(["ops"]);
  });
});

describe("lcm context", () => {
  it("shows exactly what the model sees next within the recorded budget, with the token breakdown", async () => {
    const data = await runJson<ContextOutput>(["context", "1", "--db", db], ContextOutputSchema);
    expect(data.budgetSource).toBe("recorded");
    expect(data.totals.summaryCount).toBeGreaterThan(0);
    expect(data.totals.estimatedTokens).toBeLessThanOrEqual(data.budgetTokens);
    // The parts add up: the addition, the summaries and the raw messages.
    expect(data.totals.estimatedTokens).toBe(data.systemPromptAddition.tokens + data.totals.summaryTokens + data.totals.rawTokens);
    expect(data.messages.reduce((total, message) => total + message.tokens, 0)).toBe(data.totals.summaryTokens + data.totals.rawTokens);
    expect(data.messages[0]!.kind).toBe("summary");
    expect(data.messages.at(-1)!.text).toMatch(/m60 answer/);
    const text = (await runLcm(["context", "1", "--db", db])).stdout;
    expect(text).toMatch(/^Context of conversation 1 \(agent main\): what the model sees next/);
    expect(text).toMatch(/Budget [\d,]+ tokens \(the last turn's\) · uses [\d,]+ = system prompt addition \d+ \+ \d+ summaries [\d,]+ \+ \d+ raw messages [\d,]+/);
  });
});

describe("lcm dag", () => {
  it("prints the summary tree, context summaries at the top", async () => {
    const data = await runJson<DagOutput>(["dag", "1", "--db", db], DagOutputSchema);
    expect(data.summaries).toBeGreaterThan(0);
    expect(data.roots.every((root) => root.inContext)).toBe(true);
    const count = (nodes: DagOutput["roots"]): number => nodes.reduce((total, node) => total + 1 + count(node.children), 0);
    expect(count(data.roots)).toBe(data.summaries);
    const text = (await runLcm(["dag", "1", "--db", db])).stdout;
    expect(text).toMatch(/^Summary DAG of conversation 1 \(agent main\): \d+ summaries/);
    expect(text).toMatch(/sum_[0-9a-f]{16} (leaf|condensed) d\d · [\d,]+ tokens \(from [\d,]+\)/);
  });

  it("says so when nothing was compacted", async () => {
    expect((await runLcm(["dag", "2", "--db", db])).stdout).toMatch(/no summaries yet/);
  });
});

describe("--help", () => {
  it.each(["status", "conversations", "context", "dag", "grep", "describe", "expand", "doctor", "compact", "backup"])("explains %s", async (command) => {
    const run = await runLcm([command, "--help"]);
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdout).toMatch(new RegExp(`Usage: lcm ${command}`));
    expect(run.stdout).toMatch(/--json/);
  });

  it("lists the exit codes", async () => {
    const run = await runLcm(["--help"]);
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdout).toMatch(/Exit codes:/);
  });
});
