/**
 * The operators' repair, status and retention commands on each backend, through the CLI: on a conversation the engine
 * compacted on that backend while the model failed (fallback summaries, condensed ones in the context), `lcm repair`
 * rewrites, re-summarizes and dissolves with doctor clean before and after, and `lcm repair undo` restores every row
 * of the DAG and the context exactly; `lcm status --json` and `lcm retention --json` describe the database in the
 * same schema on both (bytes, and how freed room goes back).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EXIT } from "../../src/cli/exit-codes.js";
import { DoctorOutputSchema, RetentionOutputSchema, StatusOutputSchema } from "../../src/cli/output-schemas.js";
import type { StatusOutput } from "../../src/cli/commands/status-command.js";
import type { RetentionOutput } from "../../src/cli/commands/retention-command.js";
import { resetSharedCircuitBreakers } from "../../src/compaction/circuit-breaker.js";
import { PgDatabase } from "../../src/postgres/pg-database.js";
import { LCM_LOCK_NAMESPACE } from "../../src/postgres/pg-queryable.js";
import { backendKinds, openTestBackend, type TestBackend } from "../helpers/backends.js";
import { type BackendSql, backendSql } from "../helpers/backend-sql.js";
import { createTestEngine } from "../helpers/engine.js";
import { exchanges, runJson, runLcm } from "../cli/cli-harness.js";
import { FAILING_MODEL, recordingModel, SESSION, SMALL_DAG_CONFIG } from "../repair/repair-fixture.js";

/** Every row of the tables that make the DAG and the context, in a stable order. */
async function dagRows(sql: BackendSql) {
  return {
    summaries: await sql.rows("SELECT * FROM summaries ORDER BY id"),
    summaryMessages: await sql.rows("SELECT * FROM summary_messages ORDER BY summary_id, message_id"),
    summaryParents: await sql.rows("SELECT * FROM summary_parents ORDER BY summary_id, parent_summary_id"),
    contextItems: await sql.rows("SELECT * FROM context_items ORDER BY conversation_id, ordinal"),
    conversations: await sql.rows("SELECT * FROM conversations ORDER BY conversation_id"),
  };
}

describe.each(backendKinds())("lcm repair, status and retention on %s", (kind) => {
  let opened: TestBackend;
  let sql: BackendSql;
  let target: string[];
  let shown: { leaf: string; condensed: string };

  beforeEach(async () => {
    opened = await openTestBackend(kind);
    sql = backendSql(opened);
    target = kind === "postgres" ? ["--database-url", opened.location] : ["--db", opened.location];
    const harness = createTestEngine({ backend: opened.backend, pluginLlm: FAILING_MODEL, config: SMALL_DAG_CONFIG });
    await harness.newEngine().ingestBatch({ ...SESSION, messages: exchanges(60, 30) });
    await harness.newEngine().assemble({ ...SESSION, messages: [], tokenBudget: 4_000 });
    await harness.newEngine().compact({ ...SESSION, force: true, compactionTarget: "budget", tokenBudget: 1_500 });
    resetSharedCircuitBreakers();
    const inContext = async (kindOf: string, level: string | null) => (await sql.rows<{ summary_id: string }>(
      `SELECT s.summary_id FROM summaries s JOIN context_items c ON c.summary_id = s.id WHERE s.kind = $1 ${level ? "AND s.level = $2" : ""}
       ORDER BY c.ordinal LIMIT 1`, level ? [kindOf, level] : [kindOf],
    ))[0]!.summary_id;
    shown = { leaf: await inContext("leaf", "fallback"), condensed: await inContext("condensed", null) };
  });
  afterEach(async () => {
    await opened.close();
  });

  const json = async (args: string[], extra: Parameters<typeof runLcm>[2] = {}) => {
    const run = await runLcm([...args, ...target, "--json"], {}, extra);
    expect(run.code, run.stderr).toBe(EXIT.ok);
    return JSON.parse(run.stdout) as Record<string, any>;
  };
  const doctorFindings = async () => (await runJson<{ findings: unknown[] }>(["doctor", ...target], DoctorOutputSchema)).findings;

  it("rewrites and re-summarizes a fallback leaf, doctor clean, and undo restores the rows exactly", async () => {
    const before = await dagRows(sql);
    expect(await doctorFindings()).toEqual([]);
    const rewritten = await json(["repair", "rewrite", shown.leaf, "--text", "Questions t1 to t4 about markers, each answered.", "--apply"]);
    expect(rewritten.outcome).toMatchObject({ kind: "rewrite", findings: { before: 0, after: 0 } });
    const model = recordingModel();
    const resummarized = await json(["repair", "resummarize", shown.leaf, "--apply"], { model });
    expect(resummarized.outcome).toMatchObject({ kind: "resummarize", findings: { after: 0 } });
    expect(model.calls).toHaveLength(1);
    const [row] = await sql.rows<{ content: string; level: string }>("SELECT content, level FROM summaries WHERE summary_id = $1", [shown.leaf]);
    expect(row!.level).toBe("normal");
    expect(row!.content).toMatch(/^Model summary 1: quarzite1 questions were asked and answered\./);
    const listed = await json(["repair", "list"]);
    expect(listed.repairs.map((repair: { kind: string }) => repair.kind)).toEqual(["resummarize", "rewrite"]);
    await json(["repair", "undo", String(listed.repairs[0].repairId)]);
    await json(["repair", "undo", String(listed.repairs[1].repairId)]);
    const after = await dagRows(sql);
    expect(after).toEqual(before);
    expect(await doctorFindings()).toEqual([]);
  });

  it("dissolves a condensed summary into its parents, and undo puts it back exactly", async () => {
    const before = await dagRows(sql);
    const applied = await json(["repair", "dissolve", shown.condensed, "--apply"]);
    expect(applied.outcome.findings).toEqual({ before: 0, after: 0 });
    const context = (await sql.rows<{ summary_id: string }>(
      "SELECT s.summary_id FROM context_items c JOIN summaries s ON s.id = c.summary_id ORDER BY c.ordinal",
    )).map((item) => item.summary_id);
    expect(context).not.toContain(shown.condensed);
    expect(context.slice(0, applied.proposal.parents.length)).toEqual(applied.proposal.parents.map((parent: { summaryId: string }) => parent.summaryId));
    const undone = await runLcm(["repair", "undo", String(applied.outcome.repairId ?? 1), ...target]);
    expect(undone.code, undone.stderr).toBe(EXIT.ok);
    expect(await dagRows(sql)).toEqual(before);
    expect(await doctorFindings()).toEqual([]);
  });

  it.runIf(kind === "postgres")("fails a repair at once with exit 6 while another gateway holds the conversation, changing nothing", async () => {
    const before = await dagRows(sql);
    const [row] = await sql.rows<{ conversation_id: number }>("SELECT conversation_id FROM summaries WHERE summary_id = $1", [shown.leaf]);
    const other = new PgDatabase(opened.location, { poolSize: 1 });
    const client = await (await other.pool()).connect();
    try {
      await client.query("SELECT pg_advisory_lock($1, $2)", [LCM_LOCK_NAMESPACE, row!.conversation_id]);
      const run = await runLcm(["repair", "rewrite", shown.leaf, "--text", "A new text.", "--apply", ...target]);
      expect(run.code).toBe(EXIT.unavailable);
      expect(run.stderr).toContain("another gateway is compacting or repairing it; nothing was changed. Retry in a moment.");
      expect(await dagRows(sql)).toEqual(before);
    } finally {
      client.release();
      await other.close();
    }
  });

  it("states the database's size in bytes and how freed room goes back, in lcm status", async () => {
    const status = await runJson<StatusOutput>(["status", ...target], StatusOutputSchema);
    expect(status.file.backend).toBe(kind === "postgres" ? "postgresql" : "sqlite");
    expect(status.file.sizeBytes).toBeGreaterThan(0);
    expect(status.file.pageSize === null).toBe(kind === "postgres");
    expect(status.status.storage?.autoVacuum ?? null).toBe(kind === "postgres" ? "server" : "incremental");
    const text = await runLcm(["status", ...target]);
    expect(text.stdout).toContain(kind === "postgres" ? "Database (PostgreSQL): schema" : "File: schema");
  });

  it("states the bytes in use and how freed room goes back, in lcm retention", async () => {
    const retention = await runJson<RetentionOutput>(["retention", ...target], RetentionOutputSchema);
    expect(retention).toMatchObject({ enabled: false, autoVacuum: kind === "postgres" ? "server" : "incremental", busyConversations: [] });
    expect(retention.usedBytesBefore).toBeGreaterThan(0);
  });
});
