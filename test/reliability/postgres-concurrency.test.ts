/**
 * Four gateway processes on one PostgreSQL database (issue 28): each drives the built plugin with databaseUrl, two
 * of them serving the same session and replaying each other's turns, with compaction on (small chunks), while a fifth
 * connection holds the conversations' rows locked for a while, as a slow gateway would. Every acknowledged turn is
 * stored exactly once, seqs stay dense, and no process logs an error. Starts its own server on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PgDatabase } from "../../src/postgres/pg-database.js";
import { startPostgres, type PostgresServer } from "../postgres/postgres-server.js";
import { runChild } from "./child-process.js";

const TURNS = Number(process.env.LCM_CONCURRENCY_TURNS ?? 1_500);
const HOLD_MS = 1_500;
const SESSIONS = ["gateway-a", "gateway-b", "shared"];

let server: PostgresServer;
let url: string;

beforeAll(async () => {
  server = await startPostgres();
  const admin = new PgDatabase(server.url, { poolSize: 1 });
  await admin.run("CREATE DATABASE lcm_concurrency");
  await admin.close();
  url = server.url.replace(/\/postgres$/, "/lcm_concurrency");
});

afterAll(async () => {
  await server?.stop();
});

/** Per session, the turns whose user message is missing or stored more than once, and whether seqs are 1..N. */
async function turnAnomalies(database: PgDatabase): Promise<Record<string, { missing: number[]; duplicated: number[]; denseSeqs: boolean }>> {
  const anomalies: Record<string, { missing: number[]; duplicated: number[]; denseSeqs: boolean }> = {};
  for (const session of SESSIONS) {
    const copies = new Map<number, number>();
    const rows = await database.rows<{ content: string }>(
      `SELECT m.content FROM messages m JOIN conversations c USING (conversation_id)
       WHERE c.session_id = $1 AND m.content LIKE 'turn-%-user%'`, [session],
    );
    for (const row of rows) {
      const turn = Number(/^turn-(\d+)-/.exec(row.content)?.[1]);
      copies.set(turn, (copies.get(turn) ?? 0) + 1);
    }
    const seqs = await database.row<{ count: number; max: number; distinct: number }>(
      `SELECT count(*)::bigint AS count, max(seq) AS max, count(DISTINCT seq)::bigint AS distinct
       FROM messages m JOIN conversations c USING (conversation_id) WHERE c.session_id = $1`, [session],
    );
    const turns = Array.from({ length: TURNS }, (_, index) => index + 1);
    anomalies[session] = {
      missing: turns.filter((turn) => !copies.has(turn)),
      duplicated: [...copies].filter(([turn, count]) => count > 1 || !turns.includes(turn)).map(([turn]) => turn),
      denseSeqs: seqs !== null && seqs.count === seqs.max && seqs.count === seqs.distinct,
    };
  }
  return anomalies;
}

describe("four processes writing one PostgreSQL database (four gateways)", () => {
  it("loses no turn, duplicates nothing, keeps seqs dense and logs no error, with compaction on and a writer stalling", async () => {
    const children = Promise.all([
      runChild([url, "gateway-a", "1", String(TURNS), "commit"], null),
      runChild([url, "gateway-b", "1", String(TURNS), "mixed"], null),
      runChild([url, "shared", "1", String(TURNS), "commit"], null),
      runChild([url, "shared", "1", String(TURNS), "ingest"], null),
    ]);
    // A fifth connection locks every conversation row for HOLD_MS once they exist: writers wait, none fails.
    const holder = new PgDatabase(url, { poolSize: 1 });
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    await holder.transaction(async (tx) => {
      await tx.run("SELECT conversation_id FROM conversations FOR UPDATE");
      await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
    });
    const runs = await children;
    const delays = runs.map((run) => Number(/maxEventLoopDelayMs=([\d.]+)/.exec(run.done ?? "")?.[1] ?? NaN));
    for (const run of runs) {
      expect(run.stderr).toBe("");
      expect(run.errors).toEqual([]);
      expect(run.acked).toHaveLength(TURNS);
      expect(run.done).toMatch(/errors=0$/);
    }
    const none = { missing: [], duplicated: [], denseSeqs: true };
    expect(await turnAnomalies(holder)).toEqual({ "gateway-a": none, "gateway-b": none, shared: none });
    const summaries = await holder.row<{ count: number }>("SELECT count(*)::bigint AS count FROM summaries");
    expect(summaries!.count).toBeGreaterThan(0);
    await holder.close();
    console.log(
      `postgres concurrency suite: 4 processes × ${TURNS} turns on one database, rows locked ${HOLD_MS} ms by a fifth; ` +
        `${summaries!.count} summaries; longest event-loop block per process (ms): ${delays.join(", ")}`,
    );
  });
});
