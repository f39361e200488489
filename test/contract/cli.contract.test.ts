/**
 * The operators' `lcm` commands on each backend: the same database content (turns stored and compacted by the engine
 * on that backend), read with `--db <file>` or `--database-url <postgres://…>`, gives the same answers: status,
 * conversations, the next context, the DAG, grep (a detail compaction folded into a summary), describe and doctor.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ConversationsOutputSchema, ContextOutputSchema, DagOutputSchema, DescribeOutputSchema, DoctorOutputSchema, GrepOutputSchema,
} from "../../src/cli/output-schemas.js";
import type { ConversationsOutput } from "../../src/cli/commands/conversations-command.js";
import { backendKinds, openTestBackend, type TestBackend } from "../helpers/backends.js";
import { createTestEngine } from "../helpers/engine.js";
import { exchanges, runJson, runLcm } from "../cli/cli-harness.js";

const SESSION = { sessionKey: "agent:main:ops", sessionId: "s-ops" };

describe.each(backendKinds())("the lcm commands on %s", (kind) => {
  let opened: TestBackend;
  let target: string[];

  beforeAll(async () => {
    opened = await openTestBackend(kind);
    target = kind === "postgres" ? ["--database-url", opened.location] : ["--db", opened.location];
    const harness = createTestEngine({ backend: opened.backend, config: { leafChunkTokens: 2_000 } });
    await harness.newEngine().ingestBatch({ ...SESSION, messages: exchanges(40) });
    await harness.newEngine().assemble({ ...SESSION, messages: [], tokenBudget: 8_000 });
    await harness.newEngine().compact({ ...SESSION, force: true, compactionTarget: "threshold" });
  });
  afterAll(async () => {
    await opened?.close();
  });

  it("lists the conversation with its counts and summaries", async () => {
    const listed = await runJson<ConversationsOutput>(["conversations", ...target], ConversationsOutputSchema);
    expect(listed.conversations).toHaveLength(1);
    expect(listed.conversations[0]).toMatchObject({ agentId: "main", sessionKey: SESSION.sessionKey, messages: 80 });
    expect(listed.conversations[0]!.summaries).toBeGreaterThan(0);
    expect(listed.databasePath).toBe(opened.location);
  });

  it("shows the next context within the recorded budget, summaries first, and the DAG", async () => {
    const conversation = (await opened.backend.store.findConversation({ agentId: "main", sessionId: SESSION.sessionId }))!;
    const context = await runJson<{ budgetTokens: number; messages: { kind: string }[]; totals: { estimatedTokens: number; summaryCount: number } }>(
      ["context", String(conversation.conversationId), ...target], ContextOutputSchema,
    );
    expect(context.budgetTokens).toBe(8_000);
    expect(context.totals.estimatedTokens).toBeLessThanOrEqual(8_000);
    expect(context.totals.summaryCount).toBeGreaterThan(0);
    expect(context.messages[0]!.kind).toBe("summary");
    const dag = await runJson<{ summaries: number; roots: { summaryId: string }[] }>(["dag", String(conversation.conversationId), ...target], DagOutputSchema);
    expect(dag.summaries).toBeGreaterThan(0);
    const described = await runJson<{ type: string }>(["describe", dag.roots[0]!.summaryId, ...target], DescribeOutputSchema);
    expect(described.type).toBe("summary");
  });

  it("greps a detail compaction folded into a summary, the message first", async () => {
    const grep = await runJson<{ matches: { type: string; snippet: string }[] }>(["grep", "markert3\\b", ...target], GrepOutputSchema);
    expect(grep.matches[0]).toMatchObject({ type: "message" });
    expect(grep.matches[0]!.snippet).toContain("markert3");
    const text = await runLcm(["grep", "markert3\\b", ...target]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("markert3");
  });

  it("finds nothing wrong with doctor", async () => {
    const doctor = await runJson<{ findings: unknown[] }>(["doctor", ...target], DoctorOutputSchema);
    expect(doctor.findings).toEqual([]);
  });
});
