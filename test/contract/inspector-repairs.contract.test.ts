/**
 * The inspector's reads and repairs on each backend, through its API (what the page and the Control UI tab call):
 * the DAG of a conversation the engine compacted on that backend, a rewrite proposed, applied and undone, the DAG
 * then as it was. PostgreSQL only: while another gateway holds the conversation the repair answers 409 with "busy"
 * and changes nothing.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { resetSharedCircuitBreakers } from "../../src/compaction/circuit-breaker.js";
import { resolveConfig } from "../../src/config.js";
import { inspectorApiOn } from "../../src/inspector/inspector-wiring.js";
import type { InspectorApi } from "../../src/inspector/inspector-api.js";
import { PgDatabase } from "../../src/postgres/pg-database.js";
import { LCM_LOCK_NAMESPACE } from "../../src/postgres/pg-queryable.js";
import { DefaultTokenEstimator } from "../../src/tokens/default-token-estimator.js";
import { backendKinds, openTestBackend, type TestBackend } from "../helpers/backends.js";
import { createTestEngine, RecordingLogger } from "../helpers/engine.js";
import { exchanges } from "../cli/cli-harness.js";
import { FAILING_MODEL, SESSION, SMALL_DAG_CONFIG } from "../repair/repair-fixture.js";
import { SteppingClock } from "../fakes/clocks.js";
import { tempDatabasePath } from "../helpers/temp-dir.js";

interface DagBody { nodes: { summaryId: string; kind: string; level: string; inContext: boolean; writtenBy: string | null; preview: string }[] }

describe.each(backendKinds())("the inspector's repairs on %s", (kind) => {
  let opened: TestBackend;
  let api: InspectorApi;
  let conversationId: number;

  beforeEach(async () => {
    opened = await openTestBackend(kind);
    const harness = createTestEngine({ backend: opened.backend, pluginLlm: FAILING_MODEL, config: SMALL_DAG_CONFIG });
    await harness.newEngine().ingestBatch({ ...SESSION, messages: exchanges(60, 30) });
    await harness.newEngine().assemble({ ...SESSION, messages: [], tokenBudget: 4_000 });
    await harness.newEngine().compact({ ...SESSION, force: true, compactionTarget: "budget", tokenBudget: 1_500 });
    resetSharedCircuitBreakers();
    conversationId = (await opened.backend.store.findConversation({ agentId: "main", sessionId: SESSION.sessionId }))!.conversationId;
    api = inspectorApiOn({
      backend: opened.backend, config: resolveConfig({ databasePath: tempDatabasePath(), ...SMALL_DAG_CONFIG }, {}), tokens: new DefaultTokenEstimator(),
      clock: new SteppingClock(), logger: new RecordingLogger(), readOnlyReason: null,
    });
  });
  afterEach(async () => {
    await opened.close();
  });

  const get = async <T>(path: string) => {
    const response = await api.handle({ method: "GET", path, query: new URLSearchParams(), body: null });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body as T;
  };
  const post = (path: string, body: unknown = null) => api.handle({ method: "POST", path, query: new URLSearchParams(), body });

  it("shows the DAG, and a rewrite applied and undone through the API leaves it as it was", async () => {
    const before = await get<DagBody>(`conversations/${conversationId}/dag`);
    const leaf = before.nodes.find((node) => node.kind === "leaf" && node.level === "fallback" && node.inContext)!;
    expect(before.nodes.some((node) => node.kind === "condensed")).toBe(true);
    const proposed = await post("repairs/propose", { kind: "rewrite", summaryId: leaf.summaryId, content: "Questions about markers, answered." });
    expect(proposed.status, JSON.stringify(proposed.body)).toBe(200);
    const applied = await post(`repairs/${(proposed.body as { proposalId: string }).proposalId}/apply`);
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    const after = await get<DagBody>(`conversations/${conversationId}/dag`);
    expect(after.nodes.find((node) => node.summaryId === leaf.summaryId)).toMatchObject({ writtenBy: "hand", level: "normal", preview: "Questions about markers, answered." });
    const { repairs } = await get<{ repairs: { repairId: number }[] }>("repairs");
    expect(repairs).toHaveLength(1);
    expect((await post(`repairs/${repairs[0]!.repairId}/undo`)).status).toBe(200);
    expect(await get<DagBody>(`conversations/${conversationId}/dag`)).toEqual(before);
  });

  it.runIf(kind === "postgres")("answers 409 busy, changing nothing, while another gateway holds the conversation", async () => {
    const before = await get<DagBody>(`conversations/${conversationId}/dag`);
    const leaf = before.nodes.find((node) => node.kind === "leaf" && node.inContext)!;
    const proposed = await post("repairs/propose", { kind: "rewrite", summaryId: leaf.summaryId, content: "A new text." });
    const other = new PgDatabase(opened.location, { poolSize: 1 });
    const client = await (await other.pool()).connect();
    try {
      await client.query("SELECT pg_advisory_lock($1, $2)", [LCM_LOCK_NAMESPACE, conversationId]);
      const applied = await post(`repairs/${(proposed.body as { proposalId: string }).proposalId}/apply`);
      expect(applied).toMatchObject({ status: 409, body: { code: "busy" } });
      expect((applied.body as { error: string }).error).toContain("another gateway is compacting or repairing it");
      expect(await get<DagBody>(`conversations/${conversationId}/dag`)).toEqual(before);
    } finally {
      client.release();
      await other.close();
    }
  });
});
