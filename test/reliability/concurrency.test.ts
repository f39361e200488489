import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/connection-registry.js";
import { tempDir } from "../helpers/temp-dir.js";
import { runChild } from "./child-process.js";

const TURNS = Number(process.env.LCM_CONCURRENCY_TURNS ?? 1_500);
const HOLD_MS = 1_500;

function turnsPerSession(databasePath: string): Map<string, number> {
  const database = openDatabase(databasePath);
  try {
    const rows = database.all<{ session: string; n: number }>(
      `SELECT c.session_id AS session, count(*) AS n FROM messages m JOIN conversations c USING (conversation_id)
       WHERE m.content LIKE 'turn-%-user%' GROUP BY c.session_id`,
    );
    return new Map(rows.map((row) => [row.session, row.n]));
  } finally {
    database.close();
  }
}

describe("two processes writing one database (two gateways)", () => {
  it("loses no write, duplicates nothing, reports no failed hook, and never stalls its event loop on the lock", async () => {
    const databasePath = join(tempDir(), "shared.db");
    const children = Promise.all([
      runChild([databasePath, "gateway-a", "1", String(TURNS), "commit"], null),
      runChild([databasePath, "gateway-b", "1", String(TURNS), "mixed"], null),
      // Both processes also serve the same session and replay each other's turns.
      runChild([databasePath, "shared", "1", String(TURNS), "commit"], null),
      runChild([databasePath, "shared", "1", String(TURNS), "ingest"], null),
    ]);
    // Meanwhile this process takes the write lock and holds it for HOLD_MS, as a slow gateway would.
    await new Promise((resolve) => setTimeout(resolve, 600));
    const holder = openDatabase(databasePath);
    holder.raw.exec("BEGIN IMMEDIATE");
    await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
    holder.raw.exec("COMMIT");
    holder.close();
    const runs = await children;
    const delays = runs.map((run) => Number(/maxEventLoopDelayMs=([\d.]+)/.exec(run.done ?? "")?.[1] ?? NaN));
    for (const run of runs) {
      expect(run.stderr).toBe("");
      expect(run.acked).toHaveLength(TURNS);
      expect(run.done).toMatch(/errors=0$/);
    }
    expect(Object.fromEntries(turnsPerSession(databasePath))).toEqual({ "gateway-a": TURNS, "gateway-b": TURNS, shared: TURNS });
    console.log(
      `concurrency suite: 4 processes × ${TURNS} turns on one file, the lock held ${HOLD_MS} ms by a fifth; ` +
        `longest event-loop block per process (ms): ${delays.join(", ")}`,
    );
    // A synchronous busy wait would block each writer for the whole ${HOLD_MS} ms hold; the async retry does not.
    for (const delay of delays) expect(delay).toBeLessThan(HOLD_MS / 3);
  });
});
